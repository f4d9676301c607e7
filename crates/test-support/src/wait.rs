//! Waiting for something another process or thread does.

use std::time::{Duration, Instant};

/// Polls `done` every few milliseconds until it holds; fails the test with `what` when it
/// still does not after `bound` (a bound far above what the wait needs).
pub fn until(bound: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < bound, "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
