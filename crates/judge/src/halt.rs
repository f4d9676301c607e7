//! What stops a window's requests before they are all answered: a signal (the caller's
//! interrupt flag), a dead endpoint (too many connection failures in a row), or the window
//! itself (its cache cannot store). Every wait of a request (its HTTP exchange, the backoff
//! between attempts, `Retry-After`, the pace, the concurrency gate) checks it at least every
//! [`SLICE`], so a stop takes effect within a fraction of a second even while requests wait.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a wait looks at its [`Halt`].
pub(crate) const SLICE: Duration = Duration::from_millis(100);

/// Connection failures in a row (over all of a window's requests and attempts) after which an
/// endpoint counts as down: twice its concurrency, at least 4. With the default backoff every
/// worker has failed twice, a second apart, before the window gives up.
pub fn dead_after(concurrency: usize) -> u32 {
    u32::try_from(concurrency.saturating_mul(2))
        .unwrap_or(u32::MAX)
        .max(4)
}

/// Why requests stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The interrupt flag was set (a signal).
    Interrupted,
    /// `failures` connection attempts in a row failed; `last` is the last one's error.
    Unreachable { failures: u32, last: String },
    /// The window stopped its own requests (its cache failed).
    Window,
}

/// The stop state shared by a window's workers (or one lone request's, never stopped).
#[derive(Debug)]
pub struct Halt {
    interrupt: Option<Arc<AtomicUsize>>,
    stopped: AtomicBool,
    reason: Mutex<Option<Stop>>,
    refused: AtomicU32,
    /// 0: never counts an endpoint as down.
    dead_after: u32,
}

impl Halt {
    /// Stops when `interrupt` holds anything but 0, or after `dead_after` connection failures
    /// in a row (0: never).
    pub(crate) fn new(interrupt: Option<Arc<AtomicUsize>>, dead_after: u32) -> Halt {
        Halt {
            interrupt,
            stopped: AtomicBool::new(false),
            reason: Mutex::new(None),
            refused: AtomicU32::new(0),
            dead_after,
        }
    }

    /// A halt that never stops: one request on its own ([`crate::send`]).
    pub(crate) fn never() -> Halt {
        Halt::new(None, 0)
    }

    /// Whether requests must stop now.
    pub(crate) fn is_stopped(&self) -> bool {
        if self.stopped.load(Ordering::Relaxed) {
            return true;
        }
        if self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed) != 0)
        {
            self.stop(Stop::Interrupted);
            return true;
        }
        false
    }

    /// Stops every request; the first reason given is kept.
    pub(crate) fn stop(&self, why: Stop) {
        let mut reason = self.reason.lock().unwrap_or_else(|p| p.into_inner());
        reason.get_or_insert(why);
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Why requests stopped, if they did.
    pub(crate) fn reason(&self) -> Option<Stop> {
        self.is_stopped();
        self.reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// An attempt could not connect (`message` says why); enough of them in a row stop.
    pub(crate) fn connect_failed(&self, message: &str) {
        let failures = self
            .refused
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        // Exactly at the limit: the count in the reason is the limit, whichever worker got there.
        if self.dead_after > 0 && failures == self.dead_after {
            self.stop(Stop::Unreachable {
                failures,
                last: message.to_owned(),
            });
        }
    }

    /// An attempt reached the server: the failures in a row start again from 0.
    pub(crate) fn connected(&self) {
        self.refused.store(0, Ordering::Relaxed);
    }

    /// Sleeps for `d`, waking every [`SLICE`]; false when stopped first.
    pub(crate) fn sleep(&self, d: Duration) -> bool {
        self.sleep_until(Instant::now() + d)
    }

    /// Sleeps until `t`, waking every [`SLICE`]; false when stopped first.
    pub(crate) fn sleep_until(&self, t: Instant) -> bool {
        loop {
            if self.is_stopped() {
                return false;
            }
            let left = t.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(SLICE));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_failures_in_a_row_stop_and_a_success_resets_them() {
        let h = Halt::new(None, 3);
        h.connect_failed("refused 1");
        h.connect_failed("refused 2");
        h.connected();
        h.connect_failed("refused 3");
        h.connect_failed("refused 4");
        assert!(!h.is_stopped());
        h.connect_failed("refused 5");
        assert!(h.is_stopped());
        assert_eq!(
            h.reason(),
            Some(Stop::Unreachable {
                failures: 3,
                last: "refused 5".to_owned()
            })
        );
        // The first reason stays.
        h.stop(Stop::Window);
        assert!(matches!(h.reason(), Some(Stop::Unreachable { .. })));
        assert!(!h.sleep(Duration::from_secs(3600)));
    }

    #[test]
    fn the_interrupt_flag_stops_and_never_does_not() {
        let flag = Arc::new(AtomicUsize::new(0));
        let h = Halt::new(Some(Arc::clone(&flag)), 0);
        assert!(h.sleep(Duration::from_millis(1)));
        for _ in 0..1000 {
            h.connect_failed("refused");
        }
        assert_eq!(h.reason(), None);
        flag.store(2, Ordering::Relaxed);
        assert_eq!(h.reason(), Some(Stop::Interrupted));
        assert!(!Halt::never().is_stopped());
        assert_eq!(dead_after(1), 4);
        assert_eq!(dead_after(8), 16);
    }
}
