//! The persistent reply cache: a local SQLite file (through `rusqlite`, bundled; WAL mode,
//! synchronous NORMAL), optionally in front of a shared cache in object storage or a shared
//! folder (module `remote`), which it reads through: a reply missing locally is looked for
//! there and kept locally, and a reply stored locally is uploaded there (module `pending`).

mod maintenance;
mod pending;
mod remote;
mod segment;

pub use maintenance::{
    compact as compact_shared, stats as shared_cache_stats, Compacted, SharedCacheStats,
    MERGED_ROWS, SMALL_ROWS,
};
pub use pending::FLUSH_ROWS;
pub use remote::SharedStats;
pub use segment::{BLOOM_FPP, GROUP_ROWS, INDEX_BYTES_PER_ROW};

use crate::Key;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// A cached reply: the assistant message's text and the tokens the request cost.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CachedReply {
    pub content: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("judge cache `{path}`: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot create the folder of the judge cache `{path}`: {source}")]
    Folder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}, line {line}: {message}")]
    BatchLine {
        file: String,
        line: usize,
        message: String,
    },
    #[error("`{0}` is not a judge cache key (64 lower-case hex digits)")]
    NotAKey(String),
    #[error("cannot read `{file}`: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read `{file}`: not a regular file (a {kind})")]
    NotAFile { file: String, kind: &'static str },
    /// A reply could not be stored; kept, so that every later window fails with it at once.
    #[error("judge cache `{path}`: cannot store a reply: {message}")]
    Store { path: PathBuf, message: String },
    /// An object-storage URL given as the cache's path: the cache is a local file, and a
    /// local path named after the URL would look shared while it is not.
    #[error("judge cache `{url}`: an object-storage URL is a shared cache, which `Cache::open_shared` opens in front of a local SQLite file; nothing was written")]
    Remote { url: String },
    /// The shared cache failed: it could not be listed, read or written.
    #[error("shared judge cache {0}")]
    Shared(evalscore_storage::StorageError),
    /// A segment could not be made.
    #[error("shared judge cache `{url}`: cannot write a segment: {message}")]
    Segment { url: String, message: String },
    /// The table was made by another version, with columns this one cannot fill or read.
    #[error("judge cache `{path}` was made by another version of evalscore: its table `judge_replies` {problem}")]
    Schema { path: PathBuf, problem: String },
}

/// What [`Cache::import_batch_output`] stored and skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImportStats {
    pub stored: u64,
    /// Lines whose request failed (an `error`, or a status other than 200): not stored, so a
    /// later run sends them again.
    pub failed: u64,
}

/// Whether `path` reads as a URL (`scheme://...`, a scheme of letters, digits, `+`, `-` or
/// `.`), which no local cache path is meant to be.
fn is_url(path: &str) -> bool {
    path.split_once("://").is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// `$XDG_CACHE_HOME/evalscore/judge.sqlite`, else `~/.cache/evalscore/judge.sqlite`.
pub fn default_cache_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("evalscore").join("judge.sqlite"))
}

/// The SQLite page cache at most, in KiB.
pub const PAGE_CACHE_KIB: i64 = 16 * 1024;

/// How long a cache call waits for another connection's lock (another run writing, another
/// process creating the cache) before it fails.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The replies, one row per key. `id` is the key's first 8 bytes (little-endian), so the
/// table is SQLite's rowid B-tree, whose inner pages hold only integers: a lookup walks a few
/// cached pages and reads one leaf. Two keys sharing their first 8 bytes (unlikely below
/// billions of keys) share a row: the latest reply wins, and `key` tells them apart, so the
/// other is only a cache miss (sent again).
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS judge_replies (
    id INTEGER PRIMARY KEY,
    key BLOB NOT NULL,
    content TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL
);";

const GET: &str = "SELECT content, prompt_tokens, completion_tokens FROM judge_replies
    WHERE id = ?1 AND key = ?2";

const PUT: &str = "INSERT OR REPLACE INTO judge_replies
    (id, key, content, prompt_tokens, completion_tokens) VALUES (?1, ?2, ?3, ?4, ?5)";

/// A row of [`GET`].
fn reply(r: &rusqlite::Row<'_>) -> rusqlite::Result<CachedReply> {
    Ok(CachedReply {
        content: r.get(0)?,
        prompt_tokens: r.get::<_, i64>(1)?.max(0) as u64,
        completion_tokens: r.get::<_, i64>(2)?.max(0) as u64,
    })
}

/// The row id of `key`.
fn row_id(key: &Key) -> i64 {
    key.head() as i64
}

pub(crate) fn put_on(conn: &Connection, key: &Key, reply: &CachedReply) -> rusqlite::Result<()> {
    conn.prepare_cached(PUT)?
        .execute(params![
            row_id(key),
            &key.0[..],
            reply.content,
            i64::try_from(reply.prompt_tokens).unwrap_or(i64::MAX),
            i64::try_from(reply.completion_tokens).unwrap_or(i64::MAX),
        ])
        .map(|_| ())
}

/// Runs `op` again, for up to [`BUSY_TIMEOUT`], while it fails at once with `SQLITE_BUSY`:
/// SQLite's busy timeout does not wait when a statement that has read must then write (two
/// such connections would wait for each other), which is what turning WAL on does while
/// another connection turns it on too.
fn patiently<T>(mut op: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let started = std::time::Instant::now();
    loop {
        match op() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            r => return r,
        }
    }
}

/// Why `judge_replies` (as found) cannot serve this version: a column it reads or writes is
/// missing, or a column it does not know must be given a value (`NOT NULL` without a
/// default), so that every store would fail.
fn schema_problem(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let mut st = conn
        .prepare("SELECT name, \"notnull\", dflt_value FROM pragma_table_info('judge_replies')")?;
    let columns: Vec<(String, bool, Option<String>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    const KNOWN: [&str; 5] = ["id", "key", "content", "prompt_tokens", "completion_tokens"];
    if let Some(missing) = KNOWN.iter().find(|k| !columns.iter().any(|c| c.0 == **k)) {
        return Ok(Some(format!("has no column `{missing}`")));
    }
    Ok(columns
        .iter()
        .find(|(name, not_null, default)| {
            *not_null && default.is_none() && !KNOWN.contains(&name.as_str())
        })
        .map(|(name, _, _)| {
            format!("has a column `{name}` that this version does not fill (NOT NULL, no default)")
        }))
}

/// Moves the rows of a cache written before [`SCHEMA`] (table `replies`, keyed by the hex key)
/// into `judge_replies`, once, in one transaction.
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let old = |conn: &Connection| -> rusqlite::Result<bool> {
        conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'replies'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
    };
    if !old(conn)? {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let moved = (|| {
        // Another process may have moved them meanwhile.
        if !old(conn)? {
            return Ok(());
        }
        // The columns of `GET` first, so that `reply` reads them.
        let mut st =
            conn.prepare("SELECT content, prompt_tokens, completion_tokens, key FROM replies")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            // Keys that are not hex SHA-256s were never asked for: left behind.
            if let Some(key) = Key::from_hex(&r.get::<_, String>(3)?) {
                put_on(conn, &key, &reply(r)?)?;
            }
        }
        drop(rows);
        drop(st);
        conn.execute_batch("DROP TABLE replies")
    })();
    let end = if moved.is_ok() { "COMMIT" } else { "ROLLBACK" };
    conn.execute_batch(end)?;
    moved
}

/// The reply cache, keyed by [`crate::ChatRequest::key`]. One connection, shared by the
/// threads that use the cache (each call takes it in turn): the bundled SQLite puts the page
/// caches of all connections in one pool, in which two busy connections evict each other's
/// pages, so one connection reads less from the file than two.
#[derive(Debug)]
pub struct Cache {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// Why storing a reply failed, once it did.
    store_failed: Mutex<Option<String>>,
    /// The shared cache this one reads through and uploads to.
    remote: Option<remote::Remote>,
}

impl Cache {
    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens (creating if needed) the cache at `path`, in WAL mode, so readers never block the
    /// writer and a killed process loses at most the reply being written.
    pub fn open(path: &Path) -> Result<Cache, CacheError> {
        if let Some(url) = path.to_str().filter(|p| is_url(p)) {
            return Err(CacheError::Remote {
                url: url.to_owned(),
            });
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| CacheError::Folder {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let sql = |source| CacheError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(sql)?;
        // First: two processes opening a new cache at once wait on each other's lock (to
        // create the table) instead of failing with `database is locked`.
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        patiently(|| conn.pragma_update(None, "journal_mode", "WAL")).map_err(sql)?;
        // In WAL mode, NORMAL syncs at checkpoints, not at every commit: a killed process
        // still keeps every committed reply (they are in the WAL file); only a power loss can
        // take the last ones, which a rerun sends again.
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql)?;
        // The B-tree's inner pages stay cached, and as many leaves as fit; the cache fills
        // only as pages are read.
        conn.pragma_update(None, "cache_size", -PAGE_CACHE_KIB)
            .map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        if let Some(problem) = schema_problem(&conn).map_err(sql)? {
            return Err(CacheError::Schema {
                path: path.to_path_buf(),
                problem,
            });
        }
        migrate(&conn).map_err(sql)?;
        Ok(Cache {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            store_failed: Mutex::new(None),
            remote: None,
        })
    }

    /// Opens the local cache at `local` in front of the shared cache at `shared` (a prefix
    /// of object storage, or a shared folder), which is listed at once: one that cannot be
    /// listed fails here.
    pub fn open_shared(
        local: &Path,
        shared: evalscore_storage::StorePath,
    ) -> Result<Cache, CacheError> {
        let mut cache = Cache::open(local)?;
        cache
            .conn()
            .execute_batch(pending::SCHEMA)
            .map_err(|e| cache.sql(e))?;
        cache.remote = Some(remote::Remote::open(shared)?);
        Ok(cache)
    }

    /// The shared cache's URL, when there is one.
    pub fn shared_url(&self) -> Option<&str> {
        self.remote.as_ref().map(|r| r.url())
    }

    /// What was read from and written to the shared cache so far.
    pub fn shared_stats(&self) -> Option<&SharedStats> {
        self.remote.as_ref().map(|r| &r.stats)
    }

    /// The warnings of the shared cache so far (segments skipped), taken.
    pub fn take_warnings(&self) -> Vec<String> {
        self.remote
            .as_ref()
            .map(remote::Remote::take_warnings)
            .unwrap_or_default()
    }

    /// Stores `reply` on `conn` (in its transaction), marked for upload when there is a
    /// shared cache.
    pub(crate) fn put_in(
        &self,
        conn: &Connection,
        key: &Key,
        reply: &CachedReply,
    ) -> rusqlite::Result<()> {
        put_on(conn, key, reply)?;
        match &self.remote {
            Some(r) => pending::mark(conn, r.url(), key),
            None => Ok(()),
        }
    }

    /// Uploads the replies stored here and not yet in the shared cache, as segments of at
    /// most [`FLUSH_ROWS`]; nothing without a shared cache. A failed upload leaves them
    /// pending, for the next flush.
    pub fn flush(&self) -> Result<(), CacheError> {
        let Some(remote) = &self.remote else {
            return Ok(());
        };
        loop {
            let rows =
                pending::claim(&self.conn(), remote.url(), FLUSH_ROWS).map_err(|e| self.sql(e))?;
            if rows.is_empty() {
                return Ok(());
            }
            let keys: Vec<Key> = rows.iter().map(|(k, _)| *k).collect();
            if let Err(e) = remote.upload(rows) {
                pending::unclaim(&self.conn(), remote.url(), &keys).map_err(|e| self.sql(e))?;
                return Err(e);
            }
        }
    }

    /// Replies stored here and not yet uploaded to the shared cache.
    pub fn pending(&self) -> Result<u64, CacheError> {
        match &self.remote {
            Some(r) => pending::count(&self.conn(), r.url()).map_err(|e| self.sql(e)),
            None => Ok(0),
        }
    }

    /// Stores the reply of `key` for a window. The first failure is kept: after it,
    /// [`Cache::store_failure`] fails every later window before it sends anything.
    pub(crate) fn store(&self, key: &Key, reply: &CachedReply) -> Result<(), CacheError> {
        if let Some(e) = self.store_failure() {
            return Err(e);
        }
        let stored = match &self.remote {
            None => put_on(&self.conn(), key, reply),
            Some(_) => {
                let conn = self.conn();
                conn.execute_batch("BEGIN IMMEDIATE").and_then(|()| {
                    let r = self.put_in(&conn, key, reply);
                    conn.execute_batch(if r.is_ok() { "COMMIT" } else { "ROLLBACK" })?;
                    r
                })
            }
        };
        stored.map_err(|e| {
            let message = e.to_string();
            *self.store_failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(message.clone());
            CacheError::Store {
                path: self.path.clone(),
                message,
            }
        })
    }

    /// The error of the store that failed, if one did.
    pub fn store_failure(&self) -> Option<CacheError> {
        let failed = self.store_failed.lock().unwrap_or_else(|p| p.into_inner());
        failed.as_ref().map(|message| CacheError::Store {
            path: self.path.clone(),
            message: message.clone(),
        })
    }

    pub(crate) fn sql(&self, source: rusqlite::Error) -> CacheError {
        CacheError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// The connection, even if a thread panicked holding it (SQLite rolls back what it left).
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The journal mode SQLite reports (`wal`).
    pub fn journal_mode(&self) -> Result<String, CacheError> {
        self.conn()
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(|e| self.sql(e))
    }

    /// The cached reply of `key` (lower-case hex), if any.
    pub fn get(&self, key: &str) -> Result<Option<CachedReply>, CacheError> {
        let Some(key) = Key::from_hex(key) else {
            return Ok(None);
        };
        Ok(self.get_many(&[key])?.pop().flatten())
    }

    /// The cached replies of `keys`, in order, read in one transaction with one statement, in
    /// row order (keys that share a page find it in the page cache).
    pub fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<CachedReply>>, CacheError> {
        let mut order: Vec<(i64, usize)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (row_id(k), i))
            .collect();
        order.sort_unstable();
        let conn = self.conn();
        conn.execute_batch("BEGIN DEFERRED")
            .map_err(|e| self.sql(e))?;
        let mut got = vec![None; keys.len()];
        let read = conn
            .prepare_cached(GET)
            .and_then(|mut st| {
                for (id, i) in order {
                    got[i] = st
                        .query_row(params![id, &keys[i].0[..]], reply)
                        .optional()?;
                }
                Ok(())
            })
            .map_err(|e| self.sql(e));
        conn.execute_batch("COMMIT").map_err(|e| self.sql(e))?;
        drop(conn);
        let mut got = read.map(|()| got)?;
        if let Some(remote) = &self.remote {
            self.read_through(remote, keys, &mut got)?;
        }
        Ok(got)
    }

    /// Fills the misses of `got` (the replies of `keys`) from the shared cache; every reply
    /// fetched there is kept locally (without marking it for upload), in one transaction.
    fn read_through(
        &self,
        remote: &remote::Remote,
        keys: &[Key],
        got: &mut [Option<CachedReply>],
    ) -> Result<(), CacheError> {
        let missing: Vec<Key> = keys
            .iter()
            .zip(got.iter())
            .filter(|(_, g)| g.is_none())
            .map(|(k, _)| *k)
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let fetched = remote.lookup(&missing)?;
        if fetched.is_empty() {
            return Ok(());
        }
        {
            let conn = self.conn();
            conn.execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| self.sql(e))?;
            let r = fetched.iter().try_for_each(|(k, v)| put_on(&conn, k, v));
            conn.execute_batch(if r.is_ok() { "COMMIT" } else { "ROLLBACK" })
                .map_err(|e| self.sql(e))?;
            r.map_err(|e| self.sql(e))?;
        }
        let by_key: crate::KeyMap<&CachedReply> = fetched.iter().map(|(k, v)| (*k, v)).collect();
        for (k, g) in keys.iter().zip(got.iter_mut()) {
            if g.is_none() {
                *g = by_key.get(k).map(|v| (*v).clone());
            }
        }
        Ok(())
    }

    /// Stores the reply of `key`, committed at once (its own transaction); with a shared
    /// cache, marked for upload at the next [`Cache::flush`].
    pub fn put_key(&self, key: &Key, reply: &CachedReply) -> Result<(), CacheError> {
        self.put_many(std::iter::once((*key, reply.clone())))
    }

    /// Stores `rows` in one transaction; with a shared cache, marked for upload at the next
    /// [`Cache::flush`].
    pub fn put_many(
        &self,
        rows: impl IntoIterator<Item = (Key, CachedReply)>,
    ) -> Result<(), CacheError> {
        let conn = self.conn();
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.sql(e))?;
        let r = rows
            .into_iter()
            .try_for_each(|(k, v)| self.put_in(&conn, &k, &v));
        conn.execute_batch(if r.is_ok() { "COMMIT" } else { "ROLLBACK" })
            .map_err(|e| self.sql(e))?;
        r.map_err(|e| self.sql(e))
    }

    /// [`Cache::put_key`] by the key in lower-case hex; any other text is not a cache key.
    pub fn put(&self, key: &str, reply: &CachedReply) -> Result<(), CacheError> {
        let key = Key::from_hex(key).ok_or_else(|| CacheError::NotAKey(key.to_owned()))?;
        self.put_key(&key, reply)
    }

    /// How many replies the cache holds.
    pub fn len(&self) -> Result<u64, CacheError> {
        self.conn()
            .query_row("SELECT COUNT(*) FROM judge_replies", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.sql(e))
    }

    /// Whether the cache holds no reply.
    pub fn is_empty(&self) -> Result<bool, CacheError> {
        self.len().map(|n| n == 0)
    }
}
