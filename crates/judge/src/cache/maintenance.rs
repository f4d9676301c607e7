//! `evalscore judge cache stats URL` and `evalscore judge cache compact URL`.
//!
//! `compact` merges the small segments (fewer than [`SMALL_ROWS`] replies) in name order,
//! so in the order they were written, into segments of at most [`MERGED_ROWS`] replies and
//! [`MERGED_INPUT_BYTES`] of input: consecutive small segments join one sorted run until it
//! holds a row group's worth, so replies written together stay together. Each merged segment
//! is written (create-only) before the segments it merges are removed: a reader that listed
//! them finds their replies in one or the other at every moment, and one that finds a
//! segment gone lists again. Two compactions at once may both merge a segment; the
//! duplicates they leave are equal replies, and the next compaction drops them.

use super::remote::{name_of, segment_name, Indexes, Remote};
use super::segment::{self, SegmentWriter, GROUP_ROWS};
use crate::{CacheError, CachedReply, Key, KeyMap};
use evalscore_storage::{Object, StorePath};

/// A segment with fewer replies is merged by `compact`.
pub const SMALL_ROWS: u64 = 262_144;

/// A merged segment holds at most this many replies.
pub const MERGED_ROWS: u64 = 1_048_576;

/// A merged segment reads at most this many bytes of segments (they are held in memory while
/// it is written).
pub const MERGED_INPUT_BYTES: u64 = 256 << 20;

/// What `judge cache stats` reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedCacheStats {
    /// Readable segments.
    pub segments: u64,
    /// Replies in them (a reply stored by two runs at once counts twice).
    pub entries: u64,
    /// Bytes of the readable segments.
    pub bytes: u64,
    /// Row groups in them.
    pub row_groups: u64,
    /// Segments that are not readable, with why.
    pub unreadable: Vec<(String, String)>,
}

/// What `judge cache compact` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compacted {
    /// Segments merged (and removed).
    pub merged: u64,
    /// Segments written.
    pub written: u64,
    /// Replies in the segments written.
    pub entries: u64,
    /// Equal replies dropped.
    pub duplicates: u64,
    /// Segments left as they were: large enough, or not readable.
    pub kept: u64,
}

fn shared(e: evalscore_storage::StorageError) -> CacheError {
    CacheError::Shared(e)
}

/// Each segment under `store` with its index, or why it cannot be read.
fn indexed(store: StorePath) -> Result<Vec<Indexes>, CacheError> {
    let remote = Remote::open(store)?;
    remote.indexes()
}

/// The figures of the shared cache at `store`: every segment's index is read, no reply.
pub fn stats(store: StorePath) -> Result<SharedCacheStats, CacheError> {
    let mut out = SharedCacheStats::default();
    for (object, index) in indexed(store)? {
        match index {
            Ok(index) => {
                out.segments += 1;
                out.bytes += object.size();
                out.row_groups += index.groups.len() as u64;
                out.entries += index.groups.iter().map(|g| g.rows).sum::<u64>();
            }
            Err(why) => out.unreadable.push((object.url().to_owned(), why)),
        }
    }
    Ok(out)
}

/// Merges the small segments of the shared cache at `store` (module docs).
pub fn compact(store: StorePath) -> Result<Compacted, CacheError> {
    let mut out = Compacted::default();
    let mut small: Vec<(Object, u64)> = Vec::new();
    for (object, index) in indexed(store.clone())? {
        match index {
            Ok(index) => {
                let rows: u64 = index.groups.iter().map(|g| g.rows).sum();
                if rows < SMALL_ROWS {
                    small.push((object, rows));
                } else {
                    out.kept += 1;
                }
            }
            Err(_) => out.kept += 1,
        }
    }
    // Oldest first: the order they were written in.
    small.sort_by(|a, b| a.0.url().cmp(b.0.url()));
    if small.len() < 2 {
        out.kept += small.len() as u64;
        return Ok(out);
    }
    let mut batches: Vec<Vec<Object>> = Vec::new();
    let (mut rows, mut bytes) = (0u64, 0u64);
    for (object, n) in small {
        let full = rows + n > MERGED_ROWS || bytes + object.size() > MERGED_INPUT_BYTES;
        if batches.is_empty() || (full && rows > 0) {
            batches.push(Vec::new());
            (rows, bytes) = (0, 0);
        }
        rows += n;
        bytes += object.size();
        if let Some(b) = batches.last_mut() {
            b.push(object);
        }
    }
    for batch in batches {
        if batch.len() < 2 {
            out.kept += batch.len() as u64;
            continue;
        }
        merge(&store, &batch, &mut out)?;
    }
    Ok(out)
}

/// Writes the replies of `batch` as one segment, then removes `batch`.
fn merge(store: &StorePath, batch: &[Object], out: &mut Compacted) -> Result<(), CacheError> {
    let segment_error = |message: String| CacheError::Segment {
        url: store.url().to_owned(),
        message,
    };
    let mut writer = SegmentWriter::new().map_err(|e| segment_error(e.to_string()))?;
    let mut seen: KeyMap<()> = KeyMap::default();
    let mut run: Vec<(Key, CachedReply)> = Vec::new();
    let mut merged: Vec<&Object> = Vec::new();
    for object in batch {
        let bytes = match object.get_range(0..object.size()) {
            Ok(b) => b,
            // Merged by another compaction meanwhile: its replies are in that one's segment.
            Err(e) if e.not_found => continue,
            Err(e) => return Err(shared(e)),
        };
        let Ok((_, rows)) = segment::decode_all(bytes) else {
            out.kept += 1;
            continue;
        };
        merged.push(object);
        for (k, v) in rows {
            if seen.insert(k, ()).is_some() {
                out.duplicates += 1;
            } else {
                run.push((k, v));
            }
        }
        if run.len() >= GROUP_ROWS {
            writer
                .run(std::mem::take(&mut run))
                .map_err(|e| segment_error(e.to_string()))?;
        }
    }
    if !run.is_empty() {
        writer.run(run).map_err(|e| segment_error(e.to_string()))?;
    }
    if merged.len() < 2 {
        out.kept += merged.len() as u64;
        return Ok(());
    }
    let entries = writer.rows();
    let bytes = writer.finish().map_err(|e| segment_error(e.to_string()))?;
    // Named after the newest segment it merges, with a later random part: it sorts among
    // the segments as the replies it holds were written.
    let newest = merged
        .iter()
        .map(|o| name_of(o))
        .max()
        .unwrap_or_default()
        .to_owned();
    let name = compacted_name(&newest);
    store.child(&name).put(bytes, false).map_err(shared)?;
    for object in &merged {
        store.child(name_of(object)).delete().map_err(shared)?;
    }
    out.merged += merged.len() as u64;
    out.written += 1;
    out.entries += entries;
    Ok(())
}

/// `NEWEST-c<16 random hex digits>.parquet` for a merge whose newest input is `NEWEST.parquet`;
/// a fresh name when that is not a segment's name.
fn compacted_name(newest: &str) -> String {
    match newest.strip_suffix(".parquet") {
        // `seg-` and the 13 digits and 16 hex digits of the newest plain segment.
        Some(stem) if stem.starts_with("seg-") && stem.len() >= 34 => {
            format!("{}-c{:016x}.parquet", &stem[..34], fastrand::u64(..))
        }
        _ => segment_name(),
    }
}
