//! An ordered parallel map over units: workers on a rayon pool, results handed to the caller
//! in input order, with at most `2 × threads` units in flight.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

struct State<T, E> {
    done: BTreeMap<usize, Result<T, E>>,
    next_to_sink: usize,
    failed: bool,
    /// A worker's panic, re-raised on the calling thread so it is reported, not hung on.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

/// Runs `work` over `units` on `threads` rayon workers and feeds each result to `sink` in
/// unit order on the calling thread. Stops at the first error (from `work` or `sink`) and
/// returns it; units not yet started are skipped.
pub fn scan_ordered<U, T, E, W, S>(
    units: &[U],
    threads: usize,
    work: W,
    mut sink: S,
) -> Result<(), E>
where
    U: Sync,
    T: Send,
    E: Send,
    W: Fn(&U) -> Result<T, E> + Sync,
    S: FnMut(T) -> Result<(), E>,
{
    let threads = threads.max(1);
    let window = threads * 2;
    let next_unit = AtomicUsize::new(0);
    let state = Mutex::new(State {
        done: BTreeMap::new(),
        next_to_sink: 0,
        failed: false,
        panic: None,
    });
    let changed = Condvar::new();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("evalscore-worker-{i}"))
        .build();
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());

    let worker = || loop {
        let idx = next_unit.fetch_add(1, Ordering::SeqCst);
        if idx >= units.len() {
            return;
        }
        {
            let mut s = lock();
            while !s.failed && idx >= s.next_to_sink + window {
                s = changed.wait(s).unwrap_or_else(|p| p.into_inner());
            }
            if s.failed {
                return;
            }
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&units[idx])));
        let mut s = lock();
        match result {
            Ok(r) => {
                s.done.insert(idx, r);
            }
            Err(p) => {
                s.failed = true;
                s.panic.get_or_insert(p);
            }
        }
        changed.notify_all();
    };

    let mut outcome = Ok(());
    std::thread::scope(|scope| {
        let run_workers = || match &pool {
            Ok(pool) => pool.scope(|ps| {
                for _ in 0..threads {
                    ps.spawn(|_| worker());
                }
            }),
            // No pool could be built (thread limit): work on one plain thread.
            Err(_) => worker(),
        };
        let handle = scope.spawn(run_workers);
        for idx in 0..units.len() {
            let result = {
                let mut s = lock();
                loop {
                    if let Some(r) = s.done.remove(&idx) {
                        s.next_to_sink = idx + 1;
                        changed.notify_all();
                        break Some(r);
                    }
                    if s.panic.is_some() {
                        break None;
                    }
                    s = changed.wait(s).unwrap_or_else(|p| p.into_inner());
                }
            };
            let Some(result) = result else { break };
            if let Err(e) = result.and_then(&mut sink) {
                outcome = Err(e);
                break;
            }
        }
        let mut s = lock();
        s.failed = true;
        changed.notify_all();
        drop(s);
        let _ = handle.join();
    });
    let panic = state.lock().unwrap_or_else(|p| p.into_inner()).panic.take();
    if let Some(p) = panic {
        std::panic::resume_unwind(p);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_order() {
        let units: Vec<u64> = (0..100).collect();
        let mut seen = Vec::new();
        scan_ordered(
            &units,
            4,
            |u| {
                // Later units finish first.
                std::thread::sleep(std::time::Duration::from_micros(200 - 2 * u));
                Ok::<u64, String>(u * 10)
            },
            |r| {
                seen.push(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, units.iter().map(|u| u * 10).collect::<Vec<_>>());
    }

    #[test]
    fn a_worker_panic_reaches_the_caller() {
        let units: Vec<u64> = (0..20).collect();
        let r = std::panic::catch_unwind(|| {
            scan_ordered(
                &units,
                2,
                |u| {
                    if *u == 5 {
                        panic!("boom")
                    } else {
                        Ok::<u64, String>(*u)
                    }
                },
                |_| Ok(()),
            )
        });
        assert!(r.is_err());
    }

    #[test]
    fn first_error_in_order_wins() {
        let units: Vec<u64> = (0..50).collect();
        let mut seen = 0;
        let r = scan_ordered(
            &units,
            2,
            |u| {
                if *u == 7 || *u == 30 {
                    Err(format!("bad {u}"))
                } else {
                    Ok(*u)
                }
            },
            |_| {
                seen += 1;
                Ok(())
            },
        );
        assert_eq!(r, Err("bad 7".to_string()));
        assert_eq!(seen, 7);
    }
}
