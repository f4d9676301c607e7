//! Where judge replies are cached, as the user gave it (`--cache VALUE`, `--no-cache`, or
//! neither), told apart once where it enters ([`JudgeCache::parse`]), and opened.

use super::runtime::RuntimeError;
use evalscore_judge::{Cache, CacheError};
use evalscore_storage::{Location, StorePath};
use std::path::PathBuf;

/// Where judge replies are cached.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum JudgeCache {
    /// `$XDG_CACHE_HOME/evalscore/judge.sqlite`, else `~/.cache/evalscore/judge.sqlite`.
    #[default]
    Default,
    /// `--cache PATH`: a SQLite file.
    Path(PathBuf),
    /// `--cache URL/` or `--cache FOLDER/`: a shared cache (segments in object storage, or in
    /// a folder other machines see), read through the default SQLite file.
    Shared {
        at: Location,
        /// `--storage-option KEY=VALUE`, for an object-storage URL.
        storage_options: Vec<(String, String)>,
    },
    /// `--no-cache`: every request is sent (identical ones of a window still once).
    Off,
}

impl JudgeCache {
    /// `--cache VALUE`: an object-storage URL (`s3://`, `gs://`, `az://`, `abfss://`), or a
    /// local path that names a folder (it ends in `/`, or is an existing directory), is a
    /// shared cache; any other path is the SQLite file.
    pub fn parse(value: &str, storage_options: Vec<(String, String)>) -> JudgeCache {
        match Location::parse(value) {
            Location::Remote(url) => JudgeCache::Shared {
                at: Location::Remote(url),
                storage_options,
            },
            Location::Local(p) if value.ends_with('/') || p.is_dir() => JudgeCache::Shared {
                at: Location::Local(p),
                storage_options,
            },
            Location::Local(p) => JudgeCache::Path(p),
        }
    }

    /// `VALUE` of `judge cache stats|compact VALUE`: always a shared cache (a local path is
    /// a folder).
    pub fn shared(value: &str, storage_options: Vec<(String, String)>) -> JudgeCache {
        JudgeCache::Shared {
            at: Location::parse(value),
            storage_options,
        }
    }

    /// The shared cache's store; `None` for any other cache.
    pub fn shared_store(&self) -> Result<Option<StorePath>, RuntimeError> {
        let JudgeCache::Shared {
            at,
            storage_options,
        } = self
        else {
            return Ok(None);
        };
        let store = match at {
            Location::Remote(url) if url.is_web() => Err(evalscore_storage::StorageError::new(
                url.as_str(),
                "a web server cannot hold a shared judge cache (it is read-only)",
            )
            .with_hint("use an s3://, gs://, az:// or abfss:// prefix, or a shared folder")),
            Location::Remote(url) => url.as_prefix().connect(storage_options),
            Location::Local(dir) => StorePath::local_folder(dir),
        };
        store
            .map(Some)
            .map_err(|e| RuntimeError::Cache(CacheError::Shared(e)))
    }

    /// The cache opened; `None` when it is off.
    pub fn open(&self) -> Result<Option<Cache>, RuntimeError> {
        let default = || evalscore_judge::default_cache_path().ok_or(RuntimeError::NoCachePath);
        let cache = match self {
            JudgeCache::Off => return Ok(None),
            JudgeCache::Path(p) => Cache::open(p),
            JudgeCache::Default => Cache::open(&default()?),
            JudgeCache::Shared { .. } => {
                let local = default()?;
                match self.shared_store()? {
                    Some(store) => Cache::open_shared(&local, store),
                    None => Cache::open(&local),
                }
            }
        };
        cache.map(Some).map_err(RuntimeError::Cache)
    }
}
