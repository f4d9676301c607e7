//! The process's stop request, as the metrics see it: a long computation at finish (the
//! `bradley_terry` fit and its bootstrap) checks it between steps and gives up, so that a
//! signal ends the run within a step. The engine hands over its signal flag
//! ([`watch`]); without one nothing is ever requested.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Makes `flag` (non-zero once a signal asked the run to stop) the stop request. The first
/// flag handed over is kept.
pub fn watch(flag: Arc<AtomicUsize>) {
    let _ = FLAG.set(flag);
}

/// Whether a stop was requested.
pub(crate) fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed) != 0)
}
