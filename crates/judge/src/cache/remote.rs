//! The shared layer of a judge cache: segments (module `segment`) under one prefix of object
//! storage or one shared folder, each written once, create-only, under a unique name, and never
//! changed; no lock service. Any number of processes on any number of machines read and
//! write it at once: a writer adds a segment, `compact` adds a merged one before it removes
//! what it merged, and a reader sees only whole objects (a PUT is atomic; a local write is a
//! hard link of a finished file).
//!
//! A lookup lists the prefix once per process (newest segment first), reads the index of a
//! segment only while some key is still missing (sixteen segments at a time, concurrently),
//! and fetches only the row groups whose range and bloom filter admit a missing key; their
//! replies all go to the local layer, so the rows near a needed one are found there next.
//! A segment that cannot be read as one (a partial or foreign object) is skipped with a
//! warning; one removed since the listing (compacted) makes the lookup list again once.

use super::segment::{self, Index, Tail};
use crate::{CacheError, CachedReply, Key};
use evalscore_storage::{Object, StorageError, StorePath};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Segments whose indexes are read at once.
const INDEX_AT_ONCE: usize = 16;

/// What a process read from and wrote to the shared layer (run.json's `judge.shared`).
#[derive(Debug, Default)]
pub struct SharedStats {
    pub segments_listed: AtomicU64,
    pub segments_indexed: AtomicU64,
    pub row_groups_fetched: AtomicU64,
    pub replies_fetched: AtomicU64,
    pub requests: AtomicU64,
    pub bytes_read: AtomicU64,
    pub segments_written: AtomicU64,
    pub replies_written: AtomicU64,
    pub bytes_written: AtomicU64,
}

impl SharedStats {
    fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// The counters as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        serde_json::json!({
            "segments_listed": g(&self.segments_listed),
            "segments_indexed": g(&self.segments_indexed),
            "row_groups_fetched": g(&self.row_groups_fetched),
            "replies_fetched": g(&self.replies_fetched),
            "requests": g(&self.requests),
            "bytes_read": g(&self.bytes_read),
            "segments_written": g(&self.segments_written),
            "replies_written": g(&self.replies_written),
            "bytes_written": g(&self.bytes_written),
        })
    }
}

enum Status {
    Unread,
    Indexed {
        index: Index,
        fetched: Vec<bool>,
    },
    /// Not a readable segment, and why; warned of once.
    Skipped(String),
    /// Removed since it was listed.
    Gone,
}

struct Segment {
    object: Object,
    status: Status,
}

/// A segment's name: its URL's last part.
pub(crate) fn name_of(o: &Object) -> &str {
    o.url().rsplit('/').next().unwrap_or_default()
}

/// A segment and its index, or why it is not readable.
pub(crate) type Indexes = (Object, Result<Index, String>);

/// The shared layer at one prefix.
pub(crate) struct Remote {
    store: StorePath,
    segments: Mutex<Vec<Segment>>,
    pub(crate) stats: SharedStats,
    warnings: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("url", &self.store.url())
            .finish()
    }
}

fn storage(e: StorageError) -> CacheError {
    CacheError::Shared(e)
}

/// What reading one segment's index gave.
enum Indexed {
    Index(Index, u64, u64),
    Skip(String),
    Gone,
    Failed(StorageError),
}

/// The index of `object`: its tail read (once more if the footer or the filters start
/// before it), parsed; the requests and bytes it took.
fn read_index(object: &Object) -> Indexed {
    let size = object.size();
    let mut start = size - segment::tail_guess(size);
    let (mut requests, mut bytes) = (0u64, 0u64);
    for _ in 0..3 {
        let tail = match object.get_range(start..size) {
            Ok(t) => t,
            Err(e) if e.not_found => return Indexed::Gone,
            Err(e) => return Indexed::Failed(e),
        };
        requests += 1;
        bytes += tail.len() as u64;
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            segment::index(size, start, tail)
        }));
        match parsed {
            Ok(Ok(Tail::Index(index))) => return Indexed::Index(index, requests, bytes),
            Ok(Ok(Tail::From(s))) if s < start => start = s,
            Ok(Ok(Tail::From(_))) => return Indexed::Skip("its footer is inconsistent".into()),
            Ok(Err(e)) => return Indexed::Skip(e.to_string()),
            Err(_) => return Indexed::Skip("its footer could not be parsed".into()),
        }
    }
    Indexed::Skip("its index does not fit where its footer says".into())
}

impl Remote {
    /// The shared layer at `store` (a prefix), listed at once: a prefix that cannot be
    /// listed (no bucket, no access) fails here, before any row is read.
    pub(crate) fn open(store: StorePath) -> Result<Remote, CacheError> {
        let remote = Remote {
            store,
            segments: Mutex::new(Vec::new()),
            stats: SharedStats::default(),
            warnings: Mutex::new(Vec::new()),
        };
        let listed = remote.list()?;
        *remote.lock() = listed;
        Ok(remote)
    }

    /// The prefix's URL.
    pub(crate) fn url(&self) -> &str {
        self.store.url()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Segment>> {
        self.segments.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The segments under the prefix, newest (greatest name) first.
    fn list(&self) -> Result<Vec<Segment>, CacheError> {
        let listing = self.store.list(".parquet").map_err(storage)?;
        SharedStats::add(&self.stats.requests, 1);
        let mut found: Vec<Segment> = listing
            .found
            .into_iter()
            .map(|object| Segment {
                object,
                status: Status::Unread,
            })
            .collect();
        found.sort_by(|a, b| name_of(&b.object).cmp(name_of(&a.object)));
        SharedStats::add(&self.stats.segments_listed, found.len() as u64);
        Ok(found)
    }

    /// The warnings so far (segments skipped), taken.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn warn(&self, object: &Object, why: &str) {
        let w = format!(
            "judge cache segment `{}` is not readable ({why}); skipped",
            object.url()
        );
        self.warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(w);
    }

    /// Reads the indexes of the unread segments among `which`, concurrently.
    fn index(&self, segments: &mut [Segment], which: &[usize]) -> Result<(), CacheError> {
        let results: Vec<Indexed> = std::thread::scope(|s| {
            let handles: Vec<_> = which
                .iter()
                .map(|&i| {
                    let object = &segments[i].object;
                    s.spawn(move || read_index(object))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Indexed::Skip("its index could not be read".into()))
                })
                .collect()
        });
        for (&i, result) in which.iter().zip(results) {
            let seg = &mut segments[i];
            seg.status = match result {
                Indexed::Index(index, requests, bytes) => {
                    SharedStats::add(&self.stats.segments_indexed, 1);
                    SharedStats::add(&self.stats.requests, requests);
                    SharedStats::add(&self.stats.bytes_read, bytes);
                    let fetched = vec![false; index.groups.len()];
                    Status::Indexed { index, fetched }
                }
                Indexed::Skip(why) => {
                    self.warn(&seg.object, &why);
                    Status::Skipped(why)
                }
                Indexed::Gone => Status::Gone,
                Indexed::Failed(e) => return Err(storage(e)),
            };
        }
        Ok(())
    }

    /// Fetches, from segment `seg`, the row groups not fetched yet that may hold one of
    /// `missing`; their replies are added to `found`. Whether the segment was gone.
    fn fetch(
        &self,
        seg: &mut Segment,
        missing: &[Key],
        found: &mut Vec<(Key, CachedReply)>,
    ) -> Result<bool, CacheError> {
        let (wanted, ranges): (Vec<usize>, Vec<_>) = match &seg.status {
            Status::Indexed { index, fetched } => (0..index.groups.len())
                .filter(|&g| !fetched[g] && missing.iter().any(|k| index.groups[g].may_hold(k)))
                .map(|g| (g, index.groups[g].range.clone()))
                .unzip(),
            _ => return Ok(false),
        };
        if wanted.is_empty() {
            return Ok(false);
        }
        // One GET per run of adjacent ranges (module `read` of the storage crate).
        let gets = 1 + ranges.windows(2).filter(|w| w[0].end != w[1].start).count();
        SharedStats::add(&self.stats.requests, gets as u64);
        let parts = match seg.object.get_ranges(&ranges) {
            Ok(p) => p,
            Err(e) if e.not_found => {
                seg.status = Status::Gone;
                return Ok(true);
            }
            Err(e) => return Err(storage(e)),
        };
        let size = seg.object.size();
        let Status::Indexed { index, fetched } = &mut seg.status else {
            return Ok(false);
        };
        let mut problem = None;
        for (&g, bytes) in wanted.iter().zip(parts) {
            SharedStats::add(&self.stats.bytes_read, bytes.len() as u64);
            fetched[g] = true;
            let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                segment::decode_group(index, size, g, bytes)
            }));
            match decoded {
                Ok(Ok(rows)) => {
                    SharedStats::add(&self.stats.row_groups_fetched, 1);
                    SharedStats::add(&self.stats.replies_fetched, rows.len() as u64);
                    found.extend(rows);
                }
                Ok(Err(e)) => problem = Some(e.to_string()),
                Err(_) => problem = Some("a row group could not be decoded".into()),
            }
        }
        if let Some(why) = problem {
            self.warn(&seg.object, &why);
            seg.status = Status::Skipped(why);
        }
        Ok(false)
    }

    /// The replies of the row groups that may hold `keys`, from the newest segment on,
    /// until every key is found or every segment looked at. Each row group is fetched once
    /// per process.
    pub(crate) fn lookup(&self, keys: &[Key]) -> Result<Vec<(Key, CachedReply)>, CacheError> {
        let mut missing: Vec<Key> = keys.to_vec();
        missing.sort_unstable();
        missing.dedup();
        let mut found = Vec::new();
        let mut segments = self.lock();
        let mut listed_again = false;
        loop {
            let mut gone = false;
            let mut at = 0;
            while at < segments.len() && !missing.is_empty() {
                let end = (at + INDEX_AT_ONCE).min(segments.len());
                let unread: Vec<usize> = (at..end)
                    .filter(|&i| matches!(segments[i].status, Status::Unread))
                    .collect();
                self.index(&mut segments, &unread)?;
                for i in at..end {
                    if missing.is_empty() {
                        break;
                    }
                    let before = found.len();
                    gone |= self.fetch(&mut segments[i], &missing, &mut found)?;
                    if found.len() > before {
                        let mut got: Vec<Key> = found[before..].iter().map(|(k, _)| *k).collect();
                        got.sort_unstable();
                        missing.retain(|k| got.binary_search(k).is_err());
                    }
                    gone |= matches!(segments[i].status, Status::Gone);
                }
                at = end;
            }
            if missing.is_empty() || !gone || listed_again {
                break;
            }
            // Compacted meanwhile: its replies are in a newer segment.
            listed_again = true;
            let old = std::mem::take(&mut *segments);
            let mut fresh = self.list()?;
            let mut old: std::collections::HashMap<String, Segment> = old
                .into_iter()
                .map(|s| (name_of(&s.object).to_owned(), s))
                .collect();
            for seg in &mut fresh {
                if let Some(prev) = old.remove(name_of(&seg.object)) {
                    seg.status = prev.status;
                }
            }
            *segments = fresh;
        }
        Ok(found)
    }

    /// Every segment with its index, or why it is not readable (`judge cache stats` and
    /// `compact`). A segment removed since the listing is left out.
    pub(crate) fn indexes(self) -> Result<Vec<Indexes>, CacheError> {
        let mut segments = std::mem::take(&mut *self.lock());
        let all: Vec<usize> = (0..segments.len()).collect();
        for part in all.chunks(INDEX_AT_ONCE) {
            self.index(&mut segments, part)?;
        }
        Ok(segments
            .into_iter()
            .filter_map(|s| match s.status {
                Status::Indexed { index, .. } => Some((s.object, Ok(index))),
                Status::Skipped(why) => Some((s.object, Err(why))),
                Status::Unread | Status::Gone => None,
            })
            .collect())
    }

    /// Writes `rows` as a new segment, create-only, under a name no other writer picks.
    pub(crate) fn upload(&self, rows: Vec<(Key, CachedReply)>) -> Result<(), CacheError> {
        if rows.is_empty() {
            return Ok(());
        }
        let n = rows.len() as u64;
        let bytes = segment::encode(rows).map_err(|e| CacheError::Segment {
            url: self.store.url().to_owned(),
            message: e.to_string(),
        })?;
        let len = bytes.len() as u64;
        let mut last = None;
        for _ in 0..3 {
            let target = self.store.child(&segment_name());
            match target.put(bytes.clone(), false) {
                Ok(()) => {
                    SharedStats::add(&self.stats.segments_written, 1);
                    SharedStats::add(&self.stats.replies_written, n);
                    SharedStats::add(&self.stats.bytes_written, len);
                    return Ok(());
                }
                Err(e) if e.already_exists => last = Some(e),
                Err(e) => return Err(storage(e)),
            }
        }
        Err(storage(last.unwrap_or_else(|| {
            StorageError::new(self.store.url(), "cannot write a segment")
        })))
    }
}

/// `seg-<milliseconds since 1970, 13 digits>-<16 random hex digits>.parquet`: names sort by
/// time, and two writers never pick the same one (and a clash is only refused, not lost).
pub(crate) fn segment_name() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("seg-{ms:013}-{:016x}.parquet", fastrand::u64(..))
}
