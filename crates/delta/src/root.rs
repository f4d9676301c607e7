//! Where the four tables live: a local folder or an object-storage prefix, connected once
//! through `evalscore-storage` (the same URL parsing, credentials and `--storage-option`s as
//! every other output), and a Delta log store per table on that one store.

use crate::DeltaError;
use deltalake_core::logstore::{default_logstore, LogStoreRef, StorageConfig};
use deltalake_core::DeltaTable;
use evalscore_storage::{Location, StorePath};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use url::Url;

/// The root of a run's Delta tables (`--out` with `--format delta`).
pub struct DeltaRoot {
    /// The root as the user gave it, for messages.
    pub(crate) shown: String,
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    url: Url,
    pub(crate) place: Place,
}

impl std::fmt::Debug for DeltaRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the store: its builder holds credentials.
        f.debug_struct("DeltaRoot")
            .field("root", &self.shown)
            .finish()
    }
}

/// A local folder (its absolute path) or a prefix in object storage.
pub(crate) enum Place {
    Local(PathBuf),
    Remote(StorePath),
}

impl DeltaRoot {
    /// Connects to `root` (a local folder, made by [`DeltaRoot::staging`] when missing, or an `s3://`, `gs://`, `az://`
    /// or `abfss://` prefix) with the storage `options`.
    pub fn open(root: &Location, options: &[(String, String)]) -> Result<DeltaRoot, DeltaError> {
        match root {
            Location::Local(p) => {
                let abs = std::path::absolute(p).map_err(|e| DeltaError::io(p, "resolve", e))?;
                let path = ObjectPath::from_absolute_path(&abs)
                    .map_err(|e| DeltaError::Local(abs.clone(), e.to_string()))?;
                let url = Url::from_directory_path(&abs)
                    .map_err(|()| DeltaError::Local(abs.clone(), "not an absolute path".into()))?;
                Ok(DeltaRoot {
                    shown: p.display().to_string(),
                    store: Arc::new(LocalFileSystem::new()),
                    path,
                    url,
                    place: Place::Local(abs),
                })
            }
            Location::Remote(u) => {
                if u.is_web() {
                    return Err(DeltaError::Web(u.shown()));
                }
                let at = u
                    .as_prefix()
                    .connect(options)
                    .map_err(DeltaError::Storage)?;
                let mut text = u.as_prefix().as_str().to_owned();
                if !text.ends_with('/') {
                    text.push('/');
                }
                let url =
                    Url::parse(&text).map_err(|e| DeltaError::Url(u.shown(), e.to_string()))?;
                Ok(DeltaRoot {
                    shown: u.shown(),
                    store: at.object_store(),
                    path: at.object_path().clone(),
                    url,
                    place: Place::Remote(at),
                })
            }
        }
    }

    /// [`DeltaRoot::open`] of a path argument (a local path, or a URL as text).
    pub fn open_path(root: &Path, options: &[(String, String)]) -> Result<DeltaRoot, DeltaError> {
        DeltaRoot::open(&Location::from_path(root), options)
    }

    /// The root as the user gave it.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether the tables are in object storage.
    pub fn is_remote(&self) -> bool {
        matches!(self.place, Place::Remote(_))
    }

    /// A folder for a run's files before they are published: inside the root for a local
    /// root (so publishing is a rename), else the system's temporary folder.
    pub fn staging(&self) -> Result<tempfile::TempDir, DeltaError> {
        let b = {
            let mut b = tempfile::Builder::new();
            b.prefix(".evalscore-delta-").suffix(".tmp");
            b
        };
        match &self.place {
            Place::Local(root) => {
                std::fs::create_dir_all(root).map_err(|e| DeltaError::io(root, "create", e))?;
                b.tempdir_in(root)
                    .map_err(|e| DeltaError::io(root, "create a folder in", e))
            }
            Place::Remote(_) => b
                .tempdir()
                .map_err(|e| DeltaError::io(&std::env::temp_dir(), "create a folder in", e)),
        }
    }

    fn table_url(&self, table: &str) -> Url {
        let mut u = self.url.clone();
        u.set_path(&format!("{}{table}/", self.url.path()));
        u
    }

    /// The log store of `table`, on the root's store.
    fn log_store(&self, table: &str) -> LogStoreRef {
        let prefixed: Arc<dyn ObjectStore> = Arc::new(PrefixStore::new(
            Arc::clone(&self.store),
            self.path.clone().join(table),
        ));
        default_logstore(
            prefixed,
            Arc::clone(&self.store),
            &self.table_url(table),
            &StorageConfig::default(),
        )
    }

    /// `table` at its latest version, or `None` when it has no Delta log yet. The log is
    /// listed once: a load that fails is told apart from a missing table afterwards (every
    /// listing of a local log costs a `stat` per entry).
    pub(crate) async fn load(&self, table: &str) -> Result<Option<DeltaTable>, DeltaError> {
        let mut t = DeltaTable::new(self.log_store(table));
        let Err(e) = t.load().await else {
            return Ok(Some(t));
        };
        let exists = t
            .log_store()
            .is_delta_table_location()
            .await
            .map_err(|e| self.delta_error(table, "read the log of", e))?;
        if !exists {
            return Ok(None);
        }
        // Created by another run since the first try, or unreadable.
        t.load()
            .await
            .map_err(|_| self.delta_error(table, "read the log of", e))?;
        Ok(Some(t))
    }

    /// A table not loaded (to create it).
    pub(crate) fn unloaded(&self, table: &str) -> DeltaTable {
        DeltaTable::new(self.log_store(table))
    }

    /// `what` failed on `table` with delta-rs's error `e`; the text goes through the storage
    /// redaction for a remote root.
    pub(crate) fn delta_error(
        &self,
        table: &str,
        what: &str,
        e: deltalake_core::DeltaTableError,
    ) -> DeltaError {
        match &self.place {
            Place::Remote(at) => {
                DeltaError::Storage(at.error(&format!("{what} the `{table}` table"), &e))
            }
            Place::Local(_) => DeltaError::Table {
                root: self.shown.clone(),
                table: table.to_owned(),
                what: what.to_owned(),
                message: evalscore_error::chain_text(&e),
            },
        }
    }

    /// Puts the local file `from` at `rel` (a `/`-separated path under the root): a rename for
    /// a local root, a multipart upload for object storage.
    pub(crate) fn put_file(&self, from: &Path, rel: &str) -> Result<(), DeltaError> {
        match &self.place {
            Place::Local(root) => {
                let to = root.join(rel);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| DeltaError::io(parent, "create", e))?;
                }
                if std::fs::rename(from, &to).is_err() {
                    std::fs::copy(from, &to).map_err(|e| DeltaError::io(&to, "write", e))?;
                }
                Ok(())
            }
            Place::Remote(at) => under(at, rel).upload(from).map_err(DeltaError::Storage),
        }
    }

    /// Removes `rel` (best effort: a data file no commit names is invisible to readers).
    pub(crate) fn delete_file(&self, rel: &str) {
        match &self.place {
            Place::Local(root) => {
                let _ = std::fs::remove_file(root.join(rel));
            }
            Place::Remote(at) => {
                let _ = under(at, rel).delete();
            }
        }
    }

    /// Reads `rel` whole.
    pub(crate) async fn read_file(&self, rel: &str) -> Result<bytes::Bytes, DeltaError> {
        let path = rel.split('/').fold(self.path.clone(), |p, seg| p.join(seg));
        let got = match self.store.get(&path).await {
            Ok(g) => g.bytes().await,
            Err(e) => Err(e),
        };
        got.map_err(|e| match &self.place {
            Place::Remote(at) => DeltaError::Storage(at.error(&format!("read `{rel}`"), &e)),
            Place::Local(root) => DeltaError::Local(root.join(rel), e.to_string()),
        })
    }
}

/// `rel` (`/`-separated) under the prefix `at`.
fn under(at: &StorePath, rel: &str) -> StorePath {
    rel.split('/').fold(at.clone(), |p, seg| p.child(seg))
}
