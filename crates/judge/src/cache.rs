//! The persistent reply cache (SQLite through `rusqlite`, bundled; WAL mode, synchronous
//! NORMAL).

use crate::Key;
use rusqlite::{params, Connection, OptionalExtension};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// A cached reply: the assistant message's text and the tokens the request cost.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// What [`Cache::import_batch_output`] stored and skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImportStats {
    pub stored: u64,
    /// Lines whose request failed (an `error`, or a status other than 200): not stored, so a
    /// later run sends them again.
    pub failed: u64,
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

fn put_on(conn: &Connection, key: &Key, reply: &CachedReply) -> rusqlite::Result<()> {
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
}

impl Cache {
    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens (creating if needed) the cache at `path`, in WAL mode, so readers never block the
    /// writer and a killed process loses at most the reply being written.
    pub fn open(path: &Path) -> Result<Cache, CacheError> {
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
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql)?;
        // In WAL mode, NORMAL syncs at checkpoints, not at every commit: a killed process
        // still keeps every committed reply (they are in the WAL file); only a power loss can
        // take the last ones, which a rerun sends again.
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(sql)?;
        // The B-tree's inner pages stay cached, and as many leaves as fit; the cache fills
        // only as pages are read.
        conn.pragma_update(None, "cache_size", -PAGE_CACHE_KIB)
            .map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        migrate(&conn).map_err(sql)?;
        Ok(Cache {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    fn sql(&self, source: rusqlite::Error) -> CacheError {
        CacheError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// The connection, even if a thread panicked holding it (SQLite rolls back what it left).
    fn conn(&self) -> MutexGuard<'_, Connection> {
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
        read.map(|()| got)
    }

    /// Stores the reply of `key`, committed at once (its own transaction).
    pub fn put_key(&self, key: &Key, reply: &CachedReply) -> Result<(), CacheError> {
        put_on(&self.conn(), key, reply).map_err(|e| self.sql(e))
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

    /// Stores every successful line of an OpenAI Batch API output file (`custom_id` = the
    /// cache key, `response.body` a chat completion); failed lines are counted, not stored. A
    /// line that is not such a record is an error naming the file and line.
    /// The whole file is one transaction: stored all at once (one sync, not one per line),
    /// or, on an error, not at all.
    pub fn import_batch_output(
        &self,
        name: &str,
        reader: impl BufRead,
    ) -> Result<ImportStats, CacheError> {
        let conn = self.conn();
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.sql(e))?;
        let result = self.import_lines(&conn, name, reader);
        let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
        conn.execute_batch(end).map_err(|e| self.sql(e))?;
        result
    }

    fn import_lines(
        &self,
        conn: &Connection,
        name: &str,
        reader: impl BufRead,
    ) -> Result<ImportStats, CacheError> {
        let mut stats = ImportStats::default();
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(|source| CacheError::Read {
                file: name.to_owned(),
                source,
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let bad = |message: String| CacheError::BatchLine {
                file: name.to_owned(),
                line: i + 1,
                message,
            };
            let v: serde_json::Value =
                serde_json::from_str(&line).map_err(|e| bad(format!("not JSON: {e}")))?;
            let key = v["custom_id"]
                .as_str()
                .ok_or_else(|| bad("no `custom_id`".to_owned()))?;
            let status = v["response"]["status_code"].as_u64();
            if !v["error"].is_null() || status != Some(200) {
                stats.failed += 1;
                continue;
            }
            let key = Key::from_hex(key).ok_or_else(|| {
                bad(format!(
                    "`custom_id` {key:?} is not a judge cache key (64 lower-case hex digits, as `judge export` writes)"
                ))
            })?;
            let body = &v["response"]["body"];
            let content = body["choices"][0]["message"]["content"]
                .as_str()
                .ok_or_else(|| bad("no `response.body.choices[0].message.content`".to_owned()))?;
            let reply = CachedReply {
                content: content.to_owned(),
                prompt_tokens: body["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
                completion_tokens: body["usage"]["completion_tokens"].as_u64().unwrap_or(0),
            };
            put_on(conn, &key, &reply).map_err(|e| self.sql(e))?;
            stats.stored += 1;
        }
        Ok(stats)
    }
}
