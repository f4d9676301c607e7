//! Remote units fetched ahead, concurrently: what a run of small objects waits on.
//!
//! A unit of a remote file is fetched when it is read: its footer again (a file past the
//! first [`crate::FOOTERS_KEPT`] dropped it) and its needed chunks. A worker reads its units
//! one after another, so over thousands of small objects each worker waits a round trip or
//! two per object: the opening phase fetches tails [`REMOTE_OPENERS`] at a time, the units
//! did not.
//! [`Inputs::prefetch`] fetches the next units of a worker at once ([`Inputs::fetching_ahead`]
//! does so window by window as it hands out a run of units), on [`REMOTE_OPENERS`]
//! threads shared by the run's workers, and leaves them to this thread's next reads of
//! them. Only small objects are fetched ahead (at most [`PREFETCH_OBJECT`] bytes each, at
//! most [`PREFETCH_BYTES`] in all at a time), so memory stays bounded; a unit not fetched
//! ahead, or whose fetch failed (its read fetches it again and reports what is wrong), is
//! read as before.

use crate::remote::Remote;
use crate::{remote, Format, Inputs, Unit, REMOTE_OPENERS};
use evalscore_parquet::Sparse;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use rayon::prelude::*;
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

/// Units whose objects are fetched at once ([`Inputs::fetching_ahead`]): two workers' windows
/// are four rounds of the fetching threads, so the slowest fetches of a window (which it
/// waits for) are a small part of it.
pub const FETCH_AHEAD: usize = 256;

/// Objects larger than this are not fetched ahead.
pub const PREFETCH_OBJECT: u64 = 1 << 20;

/// At most this many bytes of objects are fetched ahead at a time, per worker.
pub const PREFETCH_BYTES: u64 = 32 << 20;

/// A unit fetched ahead: its object (held, so that no other object of a later run can take
/// its place) and row group, the top-level columns fetched, and what
/// [`remote::fetch_unit`] gave.
type Fetched = (
    (Arc<Remote>, usize),
    Vec<usize>,
    Sparse,
    Option<ArrowReaderMetadata>,
);

thread_local! {
    /// The units this thread fetched ahead and has not read yet.
    static AHEAD: RefCell<Vec<Fetched>> = const { RefCell::new(Vec::new()) };
}

/// The threads that fetch ahead, shared by all workers; `None` when they cannot start.
fn fetchers() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(REMOTE_OPENERS)
            .thread_name(|i| format!("evalscore-fetch-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

impl Inputs {
    /// `units`, in order, each window of [`FETCH_AHEAD`] of them fetched ahead
    /// ([`Inputs::prefetch`] with `columns`) before its first is given: a reader of many
    /// small objects waits for a window's round trips at once, not one unit's after another.
    pub fn fetching_ahead<'a>(
        &'a self,
        units: &'a [Unit],
        columns: &'a [String],
    ) -> impl Iterator<Item = &'a Unit> + 'a {
        units.iter().enumerate().map(move |(i, unit)| {
            if i % FETCH_AHEAD == 0 {
                self.prefetch(&units[i..units.len().min(i + FETCH_AHEAD)], columns);
            }
            unit
        })
    }

    /// Fetches the remote Parquet units among `units` whose objects are small, concurrently,
    /// with the chunks of `columns` (names of the shared schema), for this thread's next
    /// [`Inputs::read_unit`] of each (module docs). Units fetched ahead earlier and not read
    /// are dropped. Does nothing for local inputs.
    pub fn prefetch(&self, units: &[Unit], columns: &[String]) {
        AHEAD.with(|ahead| ahead.borrow_mut().clear());
        let mut budget = PREFETCH_BYTES;
        let wanted: Vec<&Unit> = units
            .iter()
            .filter(|u| {
                let file = &self.files[u.file];
                let size = match (&file.remote, file.format) {
                    (Some(remote), Format::Parquet) => remote.object.size(),
                    _ => return false,
                };
                let fits = size <= PREFETCH_OBJECT && size <= budget;
                if fits {
                    budget -= size;
                }
                fits
            })
            .collect();
        // The threads start with the first remote run that fetches ahead, not for local ones.
        if wanted.len() < 2 {
            return;
        }
        let Some(pool) = fetchers() else {
            return;
        };
        let fetched: Vec<Fetched> = pool.install(|| {
            wanted
                .par_iter()
                .with_max_len(1)
                .filter_map(|u| {
                    let file = &self.files[u.file];
                    let remote = file.remote.as_ref()?;
                    let roots = roots(file, columns);
                    let (read, meta) = remote::fetch_unit(file, remote, u, &roots).ok()?;
                    Some(((Arc::clone(remote), u.row_group), roots, read, meta))
                })
                .collect()
        });
        AHEAD.with(|ahead| *ahead.borrow_mut() = fetched);
    }
}

/// The top-level columns of `file` among `columns`.
pub(crate) fn roots(file: &crate::InputFile, columns: &[String]) -> Vec<usize> {
    columns
        .iter()
        .filter_map(|c| file.schema.index_of(c).ok())
        .collect()
}

/// Row group `row_group` of the object `remote` if this thread fetched it ahead with at
/// least the columns `roots`; taken, so it is read once.
pub(crate) fn take(
    remote: &Arc<Remote>,
    row_group: usize,
    roots: &[usize],
) -> Option<(Sparse, Option<ArrowReaderMetadata>)> {
    AHEAD.with(|ahead| {
        let mut ahead = ahead.borrow_mut();
        let at = ahead.iter().position(|((object, group), fetched, _, _)| {
            Arc::ptr_eq(object, remote)
                && *group == row_group
                && roots.iter().all(|r| fetched.contains(r))
        })?;
        let (_, _, read, meta) = ahead.swap_remove(at);
        Some((read, meta))
    })
}
