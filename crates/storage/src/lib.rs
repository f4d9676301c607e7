//! Object storage for evalscore: `s3://`, `gs://`, `az://`/`abfss://` and `http(s)://`
//! locations, read and written through the `object_store` crate (the version parquet builds
//! on).
//!
//! A user's path or URL is told apart once, where it enters, as a [`Location`]: a local path,
//! or a [`StoreUrl`]. [`StoreUrl::connect`] turns the URL and the `--storage-option
//! KEY=VALUE` pairs into a [`StorePath`], a store and a path in it (module `store`).
//! Credentials and settings come first from each cloud's usual environment variables
//! (`AWS_*`, `AZURE_*`, `GOOGLE_*`, read by `object_store`'s `from_env`), then from the
//! options, which override them. The pipeline is synchronous (rayon workers), so every call
//! here blocks on one small shared tokio runtime (module `runtime`); the requests themselves
//! run concurrently on it: [`Object::get_ranges`] sends one ranged GET per run of adjacent
//! ranges (large ranges in parts), all at once, and never merges ranges across a gap, so a
//! read fetches only the bytes it asked for (module `read`). Listings are in module `list`,
//! PUTs, multipart uploads and deletes in `write`.
//!
//! Errors ([`StorageError`]) name the URL and never carry credentials: messages are built
//! from the URL the user gave and the store's error, which holds paths, not keys, and whose
//! text goes through one redaction (module `redact`) of every secret-looking setting.

mod error;
mod list;
mod location;
mod read;
mod redact;
mod runtime;
mod store;
mod write;

pub use error::StorageError;
pub use list::{Listing, LISTERS};
pub use location::{without_credentials, Location, StoreUrl, SCHEMES};
pub use read::Object;
pub use runtime::block_on;
pub use store::StorePath;
