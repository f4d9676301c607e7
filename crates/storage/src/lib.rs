//! Object storage for evalscore: `s3://`, `gs://`, `az://`/`abfss://` and `http(s)://`
//! locations, read and written through the `object_store` crate (the version parquet builds
//! on).
//!
//! [`Location::parse`] turns a URL and the `--storage-option KEY=VALUE` pairs into a store and
//! an object path. Credentials and settings come first from each cloud's usual environment
//! variables (`AWS_*`, `AZURE_*`, `GOOGLE_*`, read by `object_store`'s `from_env`), then from
//! the options, which override them. The pipeline is synchronous (rayon workers), so every
//! call here blocks on one small shared tokio runtime; the requests themselves run
//! concurrently on it: [`Object::get_ranges`] sends one ranged GET per range (large ranges in
//! parts), all at once, and never merges ranges across a gap, so a read fetches only the
//! bytes it asked for. Errors ([`StorageError`]) name the URL and never carry credentials:
//! messages are built from the URL the user gave and the store's error, which holds paths, not
//! keys.

use bytes::Bytes;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientConfigKey, ObjectStore, ObjectStoreExt, ObjectStoreScheme, PutMode,
    PutOptions, PutPayload, RetryConfig, WriteMultipart,
};
use std::fmt;
use std::io::{Read, Write};
use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The URL schemes evalscore reads and writes through object storage.
pub const SCHEMES: [&str; 9] = [
    "s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "http", "https",
];

/// Whether `s` is a URL this crate handles (`scheme://...` with a known scheme), rather than
/// a local path.
pub fn is_url(s: &str) -> bool {
    s.split_once("://")
        .is_some_and(|(scheme, _)| SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
}

/// Bytes of one ranged GET: a longer range is fetched in parts of this size, concurrently.
const PART: u64 = 8 << 20;
/// Bytes of one part of a multipart upload (S3's minimum is 5 MiB).
const UPLOAD_PART: usize = 10 << 20;
/// Parts of one upload in flight at once.
const UPLOAD_CONCURRENCY: usize = 4;

/// An object storage failure: what was being done, on which URL, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageError {
    /// The URL as the user gave it (or the object's URL under a prefix).
    pub url: String,
    pub message: String,
    pub hint: Option<String>,
    /// The object was not there (or the bucket/container does not exist).
    pub not_found: bool,
    /// A create-only write found the object already there.
    pub already_exists: bool,
}

impl StorageError {
    fn new(url: &str, message: impl Into<String>) -> StorageError {
        StorageError {
            url: url.to_owned(),
            message: message.into(),
            hint: None,
            not_found: false,
            already_exists: false,
        }
    }

    fn with_hint(mut self, hint: impl Into<String>) -> StorageError {
        self.hint = Some(hint.into());
        self
    }

    /// `what` failed on `url` with the store's error `e`.
    fn from_store(url: &str, what: &str, e: object_store::Error) -> StorageError {
        use object_store::Error as E;
        match &e {
            E::NotFound { .. } => {
                let mut err = StorageError::new(url, format!("cannot {what}: not found"))
                    .with_hint("check the bucket (or container) and the key");
                err.not_found = true;
                err
            }
            E::AlreadyExists { .. } | E::Precondition { .. } | E::NotModified { .. } => {
                let mut err = StorageError::new(url, format!("cannot {what}: it already exists"));
                err.already_exists = true;
                err
            }
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => StorageError::new(
                url,
                format!("cannot {what}: access denied: {}", chain(&e)),
            )
            .with_hint(
                "check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AZURE_STORAGE_ACCOUNT_KEY, GOOGLE_SERVICE_ACCOUNT, or `--storage-option`)",
            ),
            _ => {
                let text = chain(&e);
                // S3 reports a wrong key or signature as 403 inside a generic error.
                let denied = ["403", "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "AuthenticationFailed", "401"]
                    .iter()
                    .any(|m| text.contains(m));
                let err = StorageError::new(url, format!("cannot {what}: {text}"));
                if denied {
                    err.with_hint("check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AZURE_STORAGE_ACCOUNT_KEY, GOOGLE_SERVICE_ACCOUNT, or `--storage-option`)")
                } else {
                    err.with_hint("check the URL, the endpoint and the network; requests were retried with backoff before giving up")
                }
            }
        }
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.message)
    }
}

impl std::error::Error for StorageError {}

/// An error and its sources on one line, without repeating a source the error already shows.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = s.source();
    }
    text
}

/// The runtime every call blocks on: two threads are enough to drive many requests.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("evalscore-storage")
            .enable_all()
            .build()
            // Building a runtime fails only when the OS refuses threads or an epoll fd; there
            // is nothing to fall back to.
            .unwrap_or_else(|e| panic!("cannot start the storage runtime: {e}"))
    })
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    runtime().block_on(f)
}

/// Retries: a few, quickly. A dropped connection or a 5xx is retried with exponential
/// backoff (and jitter) up to 5 times, for at most a minute, then reported.
fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: 5,
        retry_timeout: Duration::from_secs(60),
    }
}

/// A place in object storage: a store and a path in it (an object, or a prefix).
#[derive(Clone)]
pub struct Location {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    /// The URL as given, for messages.
    url: String,
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Only the URL: the store's builder holds credentials.
        f.debug_struct("Location").field("url", &self.url).finish()
    }
}

impl Location {
    /// The store and path of `url`, configured from the environment and then `options`
    /// (`--storage-option KEY=VALUE`; the keys are `object_store`'s, e.g. `aws_endpoint`,
    /// `aws_allow_http`, `azure_storage_account_key`, `google_service_account`, `timeout`).
    pub fn parse(url: &str, options: &[(String, String)]) -> Result<Location, StorageError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| StorageError::new(url, format!("not a valid URL: {e}")))?;
        let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| {
            StorageError::new(url, format!("not a storage URL: {e}"))
                .with_hint("use s3://BUCKET/KEY, gs://BUCKET/KEY, az://CONTAINER/KEY, abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/KEY or https://HOST/PATH")
        })?;
        let unknown = |key: &str, what: &str| {
            StorageError::new(url, format!("unknown storage option `{key}` for {what}"))
                .with_hint("the keys are object_store's configuration keys (docs/storage.md lists the common ones)")
        };
        let built: Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme {
            ObjectStoreScheme::AmazonS3 => {
                let mut b = AmazonS3Builder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in options {
                    let key: AmazonS3ConfigKey = k
                        .to_ascii_lowercase()
                        .parse()
                        .map_err(|_| unknown(k, "S3"))?;
                    b = b.with_config(key, v);
                }
                b.build().map(|s| Arc::new(s) as _)
            }
            ObjectStoreScheme::GoogleCloudStorage => {
                let mut b = GoogleCloudStorageBuilder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in options {
                    let key: GoogleConfigKey = k
                        .to_ascii_lowercase()
                        .parse()
                        .map_err(|_| unknown(k, "Google Cloud Storage"))?;
                    b = b.with_config(key, v);
                }
                b.build().map(|s| Arc::new(s) as _)
            }
            ObjectStoreScheme::MicrosoftAzure => {
                let mut b = MicrosoftAzureBuilder::from_env()
                    .with_url(url)
                    .with_retry(retry());
                for (k, v) in options {
                    let key: AzureConfigKey = k
                        .to_ascii_lowercase()
                        .parse()
                        .map_err(|_| unknown(k, "Azure Blob Storage"))?;
                    b = b.with_config(key, v);
                }
                b.build().map(|s| Arc::new(s) as _)
            }
            ObjectStoreScheme::Http => {
                let root = format!(
                    "{}://{}",
                    parsed.scheme(),
                    &parsed[url::Position::BeforeHost..url::Position::AfterPort]
                );
                let mut b = HttpBuilder::new().with_url(root).with_retry(retry());
                if parsed.scheme() == "http" {
                    b = b.with_config(ClientConfigKey::AllowHttp, "true");
                }
                for (k, v) in options {
                    let key: ClientConfigKey = k
                        .to_ascii_lowercase()
                        .parse()
                        .map_err(|_| unknown(k, "HTTP"))?;
                    b = b.with_config(key, v);
                }
                b.build().map(|s| Arc::new(s) as _)
            }
            _ => {
                return Err(StorageError::new(url, "not a storage URL")
                    .with_hint("use s3://, gs://, az://, abfss:// or https:// URLs"))
            }
        };
        let store = built.map_err(|e| {
            StorageError::new(url, format!("cannot set up the store: {}", chain(&e)))
                .with_hint("check the URL and the storage settings (environment variables and `--storage-option`)")
        })?;
        let path = ObjectPath::from_url_path(path)
            .map_err(|e| StorageError::new(url, format!("not a valid object path: {e}")))?;
        Ok(Location {
            store,
            path,
            url: url.to_owned(),
        })
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the URL names a prefix (ends in `/`) rather than one object.
    pub fn is_prefix(&self) -> bool {
        self.url.ends_with('/')
    }

    /// The location `name` under this prefix.
    pub fn child(&self, name: &str) -> Location {
        let url = if self.url.ends_with('/') {
            format!("{}{name}", self.url)
        } else {
            format!("{}/{name}", self.url)
        };
        Location {
            store: Arc::clone(&self.store),
            path: self.path.clone().join(name),
            url,
        }
    }

    /// The object here: its size, from a HEAD request.
    pub fn object(&self) -> Result<Object, StorageError> {
        let meta = block_on(self.store.head(&self.path))
            .map_err(|e| StorageError::from_store(&self.url, "read input", e))?;
        Ok(Object {
            loc: self.clone(),
            size: meta.size,
        })
    }

    /// Whether an object is here (a HEAD that finds nothing is `false`; other failures are
    /// errors).
    pub fn exists(&self) -> Result<bool, StorageError> {
        match block_on(self.store.head(&self.path)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(StorageError::from_store(&self.url, "check the output", e)),
        }
    }

    /// The objects directly under this prefix whose names end in `suffix` (ASCII case
    /// ignored), sorted by key, as a local directory's files are. Deeper keys are not listed,
    /// as a local directory's subdirectories are not.
    pub fn list(&self, suffix: &str) -> Result<Vec<Object>, StorageError> {
        let prefix = (!self.path.as_ref().is_empty()).then_some(&self.path);
        let listed = block_on(self.store.list_with_delimiter(prefix))
            .map_err(|e| StorageError::from_store(&self.url, "list the prefix", e))?;
        let suffix = suffix.to_ascii_lowercase();
        let mut found: Vec<Object> = listed
            .objects
            .into_iter()
            .filter_map(|m| {
                let name = m.location.filename()?.to_owned();
                name.to_ascii_lowercase().ends_with(&suffix).then(|| {
                    let mut loc = self.child(&name);
                    loc.path = m.location.clone();
                    Object { loc, size: m.size }
                })
            })
            .collect();
        found.sort_by(|a, b| a.loc.path.as_ref().cmp(b.loc.path.as_ref()));
        Ok(found)
    }

    /// Writes `bytes` here in one PUT: create-only (a conditional PUT, `If-None-Match: *`)
    /// unless `overwrite`.
    pub fn put(&self, bytes: Vec<u8>, overwrite: bool) -> Result<(), StorageError> {
        let mode = if overwrite {
            PutMode::Overwrite
        } else {
            PutMode::Create
        };
        let opts = PutOptions {
            mode,
            ..PutOptions::default()
        };
        block_on(
            self.store
                .put_opts(&self.path, PutPayload::from(bytes), opts),
        )
        .map(|_| ())
        .map_err(|e| StorageError::from_store(&self.url, "write", e))
    }

    /// Uploads the local file `from` here as a multipart upload, parts sent concurrently;
    /// a failure aborts the upload, so no part is left behind.
    pub fn upload(&self, from: &std::path::Path) -> Result<(), StorageError> {
        let mut file = std::fs::File::open(from).map_err(|e| {
            StorageError::new(&self.url, format!("cannot read `{}`: {e}", from.display()))
        })?;
        block_on(async {
            let upload = self
                .store
                .put_multipart(&self.path)
                .await
                .map_err(|e| StorageError::from_store(&self.url, "start the upload", e))?;
            let mut w = WriteMultipart::new_with_chunk_size(upload, UPLOAD_PART);
            let mut buf = vec![0u8; UPLOAD_PART];
            loop {
                let n = match file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) => {
                        let _ = w.abort().await;
                        return Err(StorageError::new(
                            &self.url,
                            format!("cannot read `{}`: {e}", from.display()),
                        ));
                    }
                };
                if let Err(e) = w.wait_for_capacity(UPLOAD_CONCURRENCY).await {
                    // The failed part's upload is aborted on drop; say why it failed.
                    return Err(StorageError::from_store(&self.url, "upload", e));
                }
                w.write(&buf[..n]);
            }
            w.finish()
                .await
                .map(|_| ())
                .map_err(|e| StorageError::from_store(&self.url, "finish the upload", e))
        })
    }

    /// Deletes the object here; one that is not there is no error.
    pub fn delete(&self) -> Result<(), StorageError> {
        match block_on(self.store.delete(&self.path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StorageError::from_store(&self.url, "delete", e)),
        }
    }
}

/// One object, with its size.
#[derive(Debug, Clone)]
pub struct Object {
    loc: Location,
    size: u64,
}

impl Object {
    /// The object's URL.
    pub fn url(&self) -> &str {
        &self.loc.url
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The bytes of `range`.
    pub fn get_range(&self, range: Range<u64>) -> Result<Bytes, StorageError> {
        let mut v = self.get_ranges(std::slice::from_ref(&range))?;
        Ok(v.pop().unwrap_or_default())
    }

    /// The bytes of each of `ranges`, fetched concurrently: one ranged GET per range, a range
    /// over 8 MiB in 8 MiB parts. Ranges are never merged across a gap.
    pub fn get_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>, StorageError> {
        for r in ranges {
            if r.end > self.size || r.start > r.end {
                return Err(StorageError::new(
                    &self.loc.url,
                    format!(
                        "bytes {} to {} are outside the object's {} bytes",
                        r.start, r.end, self.size
                    ),
                ));
            }
        }
        let parts: Vec<(usize, Range<u64>)> = ranges
            .iter()
            .enumerate()
            .flat_map(|(i, r)| {
                let mut at = r.start;
                let mut v = Vec::new();
                while at < r.end {
                    let end = (at + PART).min(r.end);
                    v.push((i, at..end));
                    at = end;
                }
                v
            })
            .collect();
        let fetched: Vec<Result<Bytes, object_store::Error>> = block_on(async {
            let handles: Vec<_> = parts
                .iter()
                .map(|(_, r)| {
                    let (store, path, r) = (
                        Arc::clone(&self.loc.store),
                        self.loc.path.clone(),
                        r.clone(),
                    );
                    tokio::spawn(async move { store.get_range(&path, r).await })
                })
                .collect();
            let mut out = Vec::with_capacity(handles.len());
            for h in handles {
                out.push(
                    h.await
                        .unwrap_or_else(|e| Err(object_store::Error::JoinError { source: e })),
                );
            }
            out
        });
        let mut pieces: Vec<Vec<Bytes>> = vec![Vec::new(); ranges.len()];
        for ((i, r), got) in parts.into_iter().zip(fetched) {
            let b = got.map_err(|e| StorageError::from_store(&self.loc.url, "read", e))?;
            if b.len() as u64 != r.end - r.start {
                return Err(StorageError::new(
                    &self.loc.url,
                    format!(
                        "asked for bytes {} to {} and got {} bytes",
                        r.start,
                        r.end,
                        b.len()
                    ),
                )
                .with_hint("the object may have changed during the run; run again"));
            }
            pieces[i].push(b);
        }
        Ok(pieces
            .into_iter()
            .map(|p| match p.len() {
                0 => Bytes::new(),
                1 => p.into_iter().next().unwrap_or_default(),
                _ => {
                    let mut v = Vec::with_capacity(p.iter().map(Bytes::len).sum());
                    for b in p {
                        v.extend_from_slice(&b);
                    }
                    Bytes::from(v)
                }
            })
            .collect())
    }

    /// Copies the whole object into `to`, 32 MiB at a time (four ranged GETs at once), so
    /// memory stays bounded whatever the object's size.
    pub fn download(&self, to: &mut impl Write) -> Result<(), StorageError> {
        let step = 4 * PART;
        let mut at = 0;
        while at < self.size {
            let end = (at + step).min(self.size);
            let chunk = self.get_range(at..end)?;
            to.write_all(&chunk).map_err(|e| {
                StorageError::new(&self.loc.url, format!("cannot stage the download: {e}"))
                    .with_hint("check the free space of the temporary folder (TMPDIR)")
            })?;
            at = end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        for u in [
            "s3://b/k.parquet",
            "S3://b/k",
            "gs://b/k",
            "az://c/k",
            "abfss://c@a.dfs.core.windows.net/k",
            "https://h/x.parquet",
            "http://127.0.0.1:9/x",
        ] {
            assert!(is_url(u), "{u}");
        }
        for p in ["data/x.parquet", "/tmp/s3:/x", "file.parquet", "ftp://h/x"] {
            assert!(!is_url(p), "{p}");
        }
    }

    #[test]
    fn an_unknown_option_is_named() {
        let e = Location::parse(
            "s3://bucket/key",
            &[("aws_no_such_thing".into(), "1".into())],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "s3://bucket/key: unknown storage option `aws_no_such_thing` for S3"
        );
    }

    #[test]
    fn children_and_prefixes() {
        let l = Location::parse(
            "s3://bucket/runs/run_date=d1/",
            &[("aws_region".into(), "us-east-1".into())],
        )
        .unwrap();
        assert!(l.is_prefix());
        let c = l.child("run.json");
        assert_eq!(c.url(), "s3://bucket/runs/run_date=d1/run.json");
        assert_eq!(c.path.as_ref(), "runs/run_date=d1/run.json");
    }
}
