//! The persistent reply cache (SQLite through `rusqlite`, bundled; WAL mode, synchronous
//! NORMAL).

use rusqlite::{params, Connection, OptionalExtension};
use std::io::BufRead;
use std::path::{Path, PathBuf};

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

/// The reply cache, keyed by [`crate::ChatRequest::key`].
#[derive(Debug)]
pub struct Cache {
    conn: Connection,
    path: PathBuf,
}

impl Cache {
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
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS replies (
                key TEXT PRIMARY KEY,
                content TEXT NOT NULL,
                prompt_tokens INTEGER NOT NULL,
                completion_tokens INTEGER NOT NULL
            ) WITHOUT ROWID;",
        )
        .map_err(sql)?;
        Ok(Cache {
            conn,
            path: path.to_path_buf(),
        })
    }

    fn sql(&self, source: rusqlite::Error) -> CacheError {
        CacheError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// The journal mode SQLite reports (`wal`).
    pub fn journal_mode(&self) -> Result<String, CacheError> {
        self.conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(|e| self.sql(e))
    }

    /// The cached reply of `key`, if any.
    pub fn get(&self, key: &str) -> Result<Option<CachedReply>, CacheError> {
        self.conn
            .prepare_cached(
                "SELECT content, prompt_tokens, completion_tokens FROM replies WHERE key = ?1",
            )
            .and_then(|mut st| {
                st.query_row(params![key], |r| {
                    Ok(CachedReply {
                        content: r.get(0)?,
                        prompt_tokens: r.get::<_, i64>(1)?.max(0) as u64,
                        completion_tokens: r.get::<_, i64>(2)?.max(0) as u64,
                    })
                })
                .optional()
            })
            .map_err(|e| self.sql(e))
    }

    /// The cached replies of `keys`, in order, read in one transaction.
    pub fn get_many<'k>(
        &self,
        keys: impl Iterator<Item = &'k str>,
    ) -> Result<Vec<Option<CachedReply>>, CacheError> {
        self.conn
            .execute_batch("BEGIN DEFERRED")
            .map_err(|e| self.sql(e))?;
        let got: Result<Vec<_>, _> = keys.map(|k| self.get(k)).collect();
        self.conn.execute_batch("COMMIT").map_err(|e| self.sql(e))?;
        got
    }

    /// Stores the reply of `key`, committed at once (its own transaction).
    pub fn put(&self, key: &str, reply: &CachedReply) -> Result<(), CacheError> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO replies (key, content, prompt_tokens, completion_tokens)
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    key,
                    reply.content,
                    i64::try_from(reply.prompt_tokens).unwrap_or(i64::MAX),
                    i64::try_from(reply.completion_tokens).unwrap_or(i64::MAX),
                ])
            })
            .map(|_| ())
            .map_err(|e| self.sql(e))
    }

    /// How many replies the cache holds.
    pub fn len(&self) -> Result<u64, CacheError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM replies", [], |r| r.get::<_, i64>(0))
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
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.sql(e))?;
        let result = self.import_lines(name, reader);
        let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
        self.conn.execute_batch(end).map_err(|e| self.sql(e))?;
        result
    }

    fn import_lines(&self, name: &str, reader: impl BufRead) -> Result<ImportStats, CacheError> {
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
            let body = &v["response"]["body"];
            let content = body["choices"][0]["message"]["content"]
                .as_str()
                .ok_or_else(|| bad("no `response.body.choices[0].message.content`".to_owned()))?;
            let reply = CachedReply {
                content: content.to_owned(),
                prompt_tokens: body["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
                completion_tokens: body["usage"]["completion_tokens"].as_u64().unwrap_or(0),
            };
            self.put(key, &reply)?;
            stats.stored += 1;
        }
        Ok(stats)
    }
}
