//! The OpenAI Batch API files on disk: an output file stored into the cache (`judge import`),
//! and the numbered parts of a set of input files (`judge export` writes `requests.jsonl`,
//! `requests.2.jsonl`, ...).

use crate::{Cache, CacheError, CachedReply, ImportStats, Key};
use evalscore_error::file_kind;
use rusqlite::Connection;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// The longest line of a Batch API output file that `judge import` reads, in bytes: one
/// chat completion of the requests `judge export` writes is far shorter.
pub const IMPORT_LINE_LIMIT: usize = 16 << 20;

/// Opens a Batch API output file for [`Cache::import_batch_output`]: a regular file only, so
/// that a FIFO, a socket or a device (`/dev/zero`) is refused at once instead of blocking or
/// being read forever.
pub fn open_batch_output(path: &Path) -> Result<std::fs::File, CacheError> {
    let file = path.display().to_string();
    let read = |source| CacheError::Read {
        file: file.clone(),
        source,
    };
    // Checked before opening: opening a FIFO blocks until it has a writer.
    let meta = std::fs::metadata(path).map_err(read)?;
    if !meta.is_file() {
        return Err(CacheError::NotAFile {
            file,
            kind: file_kind(&meta),
        });
    }
    let f = std::fs::File::open(path).map_err(read)?;
    // And again on what was opened, in case the path was replaced meanwhile.
    let meta = f.metadata().map_err(read)?;
    if !meta.is_file() {
        return Err(CacheError::NotAFile {
            file,
            kind: file_kind(&meta),
        });
    }
    Ok(f)
}

impl Cache {
    /// Stores every successful line of an OpenAI Batch API output file (`custom_id` = the
    /// cache key, `response.body` a chat completion); failed lines are counted, not stored. A
    /// line that is not such a record (not UTF-8, not JSON, longer than
    /// [`IMPORT_LINE_LIMIT`]) is an error naming the file and line.
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
        mut reader: impl BufRead,
    ) -> Result<ImportStats, CacheError> {
        let mut stats = ImportStats::default();
        let mut buf: Vec<u8> = Vec::new();
        for i in 0.. {
            buf.clear();
            // One byte past the limit tells a line at the limit from a longer one.
            let n = (&mut reader)
                .take(IMPORT_LINE_LIMIT as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|source| CacheError::Read {
                    file: name.to_owned(),
                    source,
                })?;
            if n == 0 {
                break;
            }
            let bad = |message: String| CacheError::BatchLine {
                file: name.to_owned(),
                line: i + 1,
                message,
            };
            if buf.last() == Some(&b'\n') {
                buf.pop();
            } else if buf.len() > IMPORT_LINE_LIMIT {
                return Err(bad(format!(
                    "the line is longer than {} MiB, the limit of a Batch API output line",
                    IMPORT_LINE_LIMIT >> 20
                )));
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            let line = std::str::from_utf8(&buf).map_err(|e| {
                bad(format!(
                    "not UTF-8 (an invalid byte at column {})",
                    e.valid_up_to() + 1
                ))
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value =
                serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
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
            self.put_in(conn, &key, &reply).map_err(|e| self.sql(e))?;
            stats.stored += 1;
        }
        Ok(stats)
    }
}

/// The name of part `n` (from 1) of a set of Batch API input files: the first is `out`
/// itself, the next ones take `.2`, `.3`, ... before the extension (`requests.2.jsonl`).
pub fn batch_part_name(out: &Path, n: usize) -> PathBuf {
    if n <= 1 {
        return out.to_path_buf();
    }
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match out.extension() {
        Some(ext) => format!("{stem}.{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{n}"),
    };
    out.with_file_name(name)
}

/// The parts after the first (`requests.2.jsonl`, `requests.3.jsonl`, ...) of a set named
/// `out` that exist in its folder, by number: what an earlier export left.
pub fn batch_parts_present(out: &Path) -> Vec<(usize, PathBuf)> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut parts: Vec<(usize, PathBuf)> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name();
            let name = name.to_str()?;
            let n = part_number(out, name)?;
            Some((n, batch_part_name(out, n)))
        })
        .collect();
    parts.sort();
    parts
}

/// `n` when `name` is [`batch_part_name`]`(out, n)` for some `n` of 2 or more, written as
/// `judge export` writes it (no leading zeros).
fn part_number(out: &Path, name: &str) -> Option<usize> {
    let stem = out.file_stem()?.to_str()?;
    let rest = name.strip_prefix(stem)?.strip_prefix('.')?;
    let digits = match out.extension() {
        Some(ext) => rest.strip_suffix(ext.to_str()?)?.strip_suffix('.')?,
        None => rest,
    };
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|n| *n >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_names_and_numbers_match() {
        let out = Path::new("dir/requests.jsonl");
        assert_eq!(
            batch_part_name(out, 3),
            PathBuf::from("dir/requests.3.jsonl")
        );
        assert_eq!(part_number(out, "requests.3.jsonl"), Some(3));
        assert_eq!(part_number(out, "requests.12.jsonl"), Some(12));
        for other in [
            "requests.jsonl",
            "requests.1.jsonl",
            "requests.03.jsonl",
            "requests.x.jsonl",
            "requests..jsonl",
            "requests.3.json",
            "other.3.jsonl",
        ] {
            assert_eq!(part_number(out, other), None, "{other}");
        }
        assert_eq!(part_number(Path::new("reqs"), "reqs.4"), Some(4));
    }
}
