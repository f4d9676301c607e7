//! Replies stored in the local layer that the shared layer does not hold yet, by the shared
//! cache's URL. They are uploaded as a segment at the end of a run (and every
//! [`FLUSH_ROWS`] replies); a run killed before that leaves them here, and the next run on
//! this machine with the same shared cache uploads them.

use crate::{CachedReply, Key};
use rusqlite::{params, Connection};

/// Replies that make a segment during a run.
pub const FLUSH_ROWS: u64 = 65_536;

pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS judge_pending (
    remote TEXT NOT NULL,
    key BLOB NOT NULL,
    id INTEGER NOT NULL,
    PRIMARY KEY (remote, key)
) WITHOUT ROWID;";

/// Marks `key` as not yet in the shared cache at `remote`.
pub(crate) fn mark(conn: &Connection, remote: &str, key: &Key) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO judge_pending (remote, key, id) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![remote, &key.0[..], key.head() as i64])
    .map(|_| ())
}

/// Takes up to `limit` pending replies of `remote` off the list, in one transaction: two
/// processes flushing at once never take the same one. Keys whose reply is gone from the
/// local layer are dropped from the list.
pub(crate) fn claim(
    conn: &Connection,
    remote: &str,
    limit: u64,
) -> rusqlite::Result<Vec<(Key, CachedReply)>> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let claimed = (|| {
        let mut st = conn.prepare_cached(
            "SELECT p.key, r.content, r.prompt_tokens, r.completion_tokens
             FROM judge_pending p LEFT JOIN judge_replies r ON r.id = p.id AND r.key = p.key
             WHERE p.remote = ?1 LIMIT ?2",
        )?;
        let mut keys = Vec::new();
        let mut rows = Vec::new();
        let mut q = st.query(params![remote, i64::try_from(limit).unwrap_or(i64::MAX)])?;
        while let Some(r) = q.next()? {
            let key: Vec<u8> = r.get(0)?;
            let Ok(k) = <[u8; 32]>::try_from(key.as_slice()) else {
                keys.push(key);
                continue;
            };
            keys.push(key);
            if let Some(content) = r.get::<_, Option<String>>(1)? {
                rows.push((
                    Key(k),
                    CachedReply {
                        content,
                        prompt_tokens: r.get::<_, Option<i64>>(2)?.unwrap_or(0).max(0) as u64,
                        completion_tokens: r.get::<_, Option<i64>>(3)?.unwrap_or(0).max(0) as u64,
                    },
                ));
            }
        }
        drop(q);
        let mut del =
            conn.prepare_cached("DELETE FROM judge_pending WHERE remote = ?1 AND key = ?2")?;
        for k in &keys {
            del.execute(params![remote, k])?;
        }
        Ok(rows)
    })();
    let end = if claimed.is_ok() {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    conn.execute_batch(end)?;
    claimed
}

/// Puts `keys` back on the list (their upload failed).
pub(crate) fn unclaim(conn: &Connection, remote: &str, keys: &[Key]) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let r = keys.iter().try_for_each(|k| mark(conn, remote, k));
    conn.execute_batch(if r.is_ok() { "COMMIT" } else { "ROLLBACK" })?;
    r
}

/// How many replies of `remote` are pending.
pub(crate) fn count(conn: &Connection, remote: &str) -> rusqlite::Result<u64> {
    conn.query_row(
        "SELECT COUNT(*) FROM judge_pending WHERE remote = ?1",
        params![remote],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n.max(0) as u64)
}
