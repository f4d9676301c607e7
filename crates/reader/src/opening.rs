//! Opening many files at once: footers read concurrently, a bounded number at a time, the
//! files handed back in the order they were listed, and the first error in that order
//! returned, as if they were opened one after another.
//!
//! Local files are opened on [`LOCAL_OPENERS`] threads; files in object storage on
//! [`REMOTE_OPENERS`] threads, each waiting on its tail's GET (the requests run on the
//! storage runtime), so that many GETs are in flight and a prefix of tiny objects takes
//! seconds instead of one round trip per object after another. A remote JSON Lines file is
//! staged one at a time (each download holds up to 32 MiB in memory).
//!
//! Memory per file is bounded: in object storage the first [`FOOTERS_KEPT`] files of a run
//! keep their parsed footer and fetched tail, so that each unit's decoder starts from them;
//! the files after them, and local files, keep only what scoring needs (row counts per row
//! group, the footer's SHA-256, the schema, shared by all files whose schema is equal) and
//! each of their units reads (fetches) and parses the footer again. A local footer is read
//! again from the page cache for less than keeping it costs (the parsed footers of 1,000
//! small files cost more in allocations and a larger heap than reading them again saved, and
//! a large file's footer is read again once per unit and worker), so none is kept; a remote
//! one costs a round trip. `EVALSCORE_FOOTERS_KEPT=N` sets the number for both
//! (docs/storage.md gives the memory per file either way).
//!
//! A small remote Parquet object is read whole when opened and its bytes kept for its units
//! (module `remote`), so it costs one GET; the objects read so are the small ones in listing
//! order while their sizes add up to at most [`remote::WHOLE_BYTES`], which bounds the bytes
//! held whatever the number of objects (64 MiB: 65,536 objects of 1 KiB, or 64 of 1 MiB).

use crate::{local, remote, Format, InputFile, ReadError};
use arrow::datatypes::SchemaRef;
use evalscore_storage::Object;
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Threads opening local files: reading a footer is a few small reads and a parse, so a
/// few more threads than cores keep the cores busy while others wait on the disk.
pub const LOCAL_OPENERS: usize = 8;

/// Threads opening files in object storage, so GETs in flight: each waits on a round trip
/// of the network, not on a core. A prefix of tiny objects is opened at the pace of the
/// requests in flight; 128 keeps the connections (one socket each) well under the usual
/// limit of 256 open files of a process on macOS.
pub const REMOTE_OPENERS: usize = 128;

/// How many files of a remote run keep their parsed footer (module docs). A narrow table's
/// parsed footer with statistics and its fetched tail take some KiB, so the footers kept
/// hold some tens of MiB at most (docs/storage.md gives the memory per file either way).
pub const FOOTERS_KEPT: usize = 1_000;

/// How many files of a local run keep their parsed footer (module docs).
pub const LOCAL_FOOTERS_KEPT: usize = 0;

/// How far opening the inputs has got ([`crate::OpenOptions::progress`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenStep {
    /// An input (a folder, prefix or glob's base, as messages show it) is being listed.
    Listing(String),
    /// `done` of the `total` files listed (and not pruned) are open.
    Opened { done: usize, total: usize },
}

/// A callback told each [`OpenStep`], from the opening threads.
#[derive(Clone)]
pub struct OpenProgress(pub Arc<dyn Fn(OpenStep) + Send + Sync>);

impl std::fmt::Debug for OpenProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OpenProgress")
    }
}

/// Files opened between two reports of [`OpenStep::Opened`] (and the last one).
const PROGRESS_EVERY: usize = 64;

/// A file listed, to be opened.
pub(crate) enum ToOpen {
    Local(PathBuf, Format),
    Remote(Object, Format),
}

impl ToOpen {
    /// The path messages name it by (an object's URL).
    pub(crate) fn path(&self) -> PathBuf {
        match self {
            ToOpen::Local(p, _) => p.clone(),
            ToOpen::Remote(o, _) => PathBuf::from(o.url()),
        }
    }
}

/// The number of files whose parsed footer is kept when `EVALSCORE_FOOTERS_KEPT` sets it;
/// `None` for the defaults ([`FOOTERS_KEPT`] remotely, [`LOCAL_FOOTERS_KEPT`] locally).
pub(crate) fn footers_kept() -> Option<usize> {
    std::env::var("EVALSCORE_FOOTERS_KEPT")
        .ok()
        .and_then(|v| v.trim().parse().ok())
}

/// Opens `jobs`, a run's files, concurrently (module docs); files from index `kept` on
/// (by default [`FOOTERS_KEPT`] when any is remote, else [`LOCAL_FOOTERS_KEPT`]) drop their
/// parsed footer; the small remote objects whose sizes add up to at most `whole_bytes` are
/// read whole ([`read_whole`]). The files come back in the order of `jobs`; on failure, the error of the
/// first job (in that order) that failed.
pub(crate) fn open_all(
    jobs: Vec<ToOpen>,
    kept: Option<usize>,
    whole_bytes: u64,
    progress: Option<&OpenProgress>,
) -> Result<Vec<InputFile>, ReadError> {
    let remote = jobs.iter().any(|j| matches!(j, ToOpen::Remote(..)));
    let kept = kept.unwrap_or(if remote {
        FOOTERS_KEPT
    } else {
        LOCAL_FOOTERS_KEPT
    });
    let threads = if remote {
        REMOTE_OPENERS
    } else {
        LOCAL_OPENERS
    }
    .min(jobs.len());
    let staging = Mutex::new(());
    let (total, done) = (jobs.len(), AtomicUsize::new(0));
    let report = |file: Result<InputFile, ReadError>| {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(p) = progress.filter(|_| n % PROGRESS_EVERY == 0 || n == total) {
            (p.0)(OpenStep::Opened { done: n, total });
        }
        file
    };
    let whole = read_whole(&jobs, whole_bytes);
    let open = |(i, job): (usize, ToOpen)| {
        let keep = i < kept;
        let whole = whole.get(i).copied().unwrap_or(false);
        let file = match job {
            ToOpen::Local(path, format) => local::open_file(&path, format, keep),
            ToOpen::Remote(object, Format::Jsonl) => {
                let _one_at_a_time = staging.lock().unwrap_or_else(|e| e.into_inner());
                remote::open_remote(object, Format::Jsonl, keep, false)
            }
            ToOpen::Remote(object, format) => remote::open_remote(object, format, keep, whole),
        };
        report(file)
    };
    let opened: Vec<Result<InputFile, ReadError>> = if threads <= 1 {
        jobs.into_iter().enumerate().map(open).collect()
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("evalscore-open-{i}"))
            .build()
            .map_err(|e| ReadError::new(format!("cannot start threads to open the inputs: {e}")))?;
        // An indexed parallel iterator collects in order, whichever thread opened what.
        pool.install(|| {
            jobs.into_par_iter()
                .enumerate()
                .with_max_len(1)
                .map(open)
                .collect()
        })
    };
    let mut files = opened.into_iter().collect::<Result<Vec<_>, _>>()?;
    share_schemas(&mut files);
    Ok(files)
}

/// Which of `jobs` are read whole (module docs): the small remote Parquet objects, in order,
/// while their sizes add up to at most `budget` ([`remote::WHOLE_BYTES`] but in tests).
fn read_whole(jobs: &[ToOpen], mut budget: u64) -> Vec<bool> {
    jobs.iter()
        .map(|job| match job {
            ToOpen::Remote(o, Format::Parquet)
                if o.size() <= remote::SMALL_OBJECT && o.size() <= budget =>
            {
                budget -= o.size();
                true
            }
            _ => false,
        })
        .collect()
}

/// Makes files with equal schemas hold one shared copy: a run of many files of one schema
/// keeps one schema, not one per file. Each file is compared with the last few distinct
/// schemas only, so files of ever new schemas cost no more than a few comparisons each.
fn share_schemas(files: &mut [InputFile]) {
    let mut distinct: Vec<SchemaRef> = Vec::new();
    for f in files {
        match distinct.iter().rev().take(4).find(|s| **s == f.schema) {
            Some(s) => f.schema = Arc::clone(s),
            None => distinct.push(Arc::clone(&f.schema)),
        }
    }
}
