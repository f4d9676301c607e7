//! One window of judged rows: identical requests sent once, cached replies reused, the rest
//! sent by at most `concurrency` threads, each reply stored in the cache as it arrives (so a
//! run killed midway keeps every reply it got and a rerun sends only the rest).
//!
//! A window stops early, abandoning its requests in flight, and fails with a
//! [`WindowError`] when the endpoint's interrupt flag is set (a signal), when
//! [`dead_after`]`(concurrency)` connection attempts in a row fail (the endpoint is down), or
//! when the cache cannot store a reply (a cache that failed so makes every later window fail
//! at once, before sending anything).

use crate::client::send_halted;
use crate::halt::{dead_after, Halt, Stop, SLICE};
use crate::{
    Cache, CacheError, CachedReply, ChatRequest, Key, KeyMap, RequestError, RetryPolicy, Sent,
};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How to call one model.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Sent as a bearer token; never logged or written.
    pub api_key: Option<String>,
    /// Requests in flight at most.
    pub concurrency: usize,
    pub policy: RetryPolicy,
    /// Requests-per-minute and tokens-per-minute limits, shared by the workers.
    pub pace: Option<std::sync::Arc<std::sync::Mutex<crate::Pace>>>,
    /// The model's limit on requests in flight, shared by every window sent at once (each
    /// window also starts at most `concurrency` threads).
    pub gate: Option<std::sync::Arc<Gate>>,
    /// Counters that a progress display reads while windows are under way.
    pub live: Option<std::sync::Arc<Live>>,
    /// A signal's number, or 0: anything else stops the windows under way within a fraction
    /// of a second (their requests in flight abandoned) with [`WindowError::Interrupted`].
    pub interrupt: Option<Arc<AtomicUsize>>,
}

/// A counting semaphore: at most `limit` holders at once.
#[derive(Debug)]
pub struct Gate {
    limit: usize,
    held: Mutex<usize>,
    freed: Condvar,
}

impl Gate {
    pub fn new(limit: usize) -> Gate {
        Gate {
            limit: limit.max(1),
            held: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// A place, once one is free; `None` when `halt` stops the wait first.
    fn enter(&self, halt: &Halt) -> Option<GateGuard<'_>> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        while *held >= self.limit {
            if halt.is_stopped() {
                return None;
            }
            held = self
                .freed
                .wait_timeout(held, SLICE)
                .map_or_else(|p| p.into_inner().0, |(g, _)| g);
        }
        *held += 1;
        Some(GateGuard(self))
    }
}

struct GateGuard<'a>(&'a Gate);

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        let mut held = self.0.held.lock().unwrap_or_else(|p| p.into_inner());
        *held -= 1;
        self.0.freed.notify_one();
    }
}

/// Live counters of one model, summed over the windows under way and done.
#[derive(Debug, Default)]
pub struct Live {
    pub in_flight: AtomicU64,
    pub requests_sent: AtomicU64,
    pub cache_hits: AtomicU64,
    pub retries: AtomicU64,
    pub tokens: AtomicU64,
}

/// What judging cost, per model; summed over windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub requests_sent: u64,
    pub cache_hits: u64,
    /// Rows whose request was identical to an earlier one of the same window.
    pub deduplicated: u64,
    pub retries: u64,
    pub failures: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub waited: Duration,
}

/// A request a window can send and cache: a chat completion or an embeddings request.
pub trait WindowRequest: Sync {
    /// The cache key.
    fn key(&self) -> Key;
    /// Sends it with the retries of `policy`, giving up when `halt` stops; the reply as the
    /// cache stores it.
    fn send(
        &self,
        agent: &ureq::Agent,
        api_key: Option<&str>,
        policy: &RetryPolicy,
        halt: &Halt,
    ) -> Result<Sent, RequestError>;
}

impl<T: WindowRequest> WindowRequest for &T {
    fn key(&self) -> Key {
        (**self).key()
    }

    fn send(
        &self,
        agent: &ureq::Agent,
        api_key: Option<&str>,
        policy: &RetryPolicy,
        halt: &Halt,
    ) -> Result<Sent, RequestError> {
        (**self).send(agent, api_key, policy, halt)
    }
}

impl WindowRequest for ChatRequest {
    fn key(&self) -> Key {
        self.cache_key()
    }

    fn send(
        &self,
        agent: &ureq::Agent,
        api_key: Option<&str>,
        policy: &RetryPolicy,
        halt: &Halt,
    ) -> Result<Sent, RequestError> {
        send_halted(agent, self, api_key, policy, halt)
    }
}

impl WindowRequest for crate::EmbeddingRequest {
    fn key(&self) -> Key {
        self.cache_key()
    }

    /// The vectors are cached as their JSON text (a list of lists), read back by
    /// [`crate::embeddings_of`].
    fn send(
        &self,
        agent: &ureq::Agent,
        api_key: Option<&str>,
        policy: &RetryPolicy,
        halt: &Halt,
    ) -> Result<Sent, RequestError> {
        let e = crate::embed::send_embeddings_halted(agent, self, api_key, policy, halt)?;
        Ok(Sent {
            reply: CachedReply {
                content: serde_json::Value::from(e.vectors).to_string(),
                prompt_tokens: e.prompt_tokens,
                completion_tokens: 0,
            },
            attempts: e.attempts,
            waited: e.waited,
        })
    }
}

/// Why a row has no reply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JudgeError {
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error("the reply is not in the judge cache, and --offline forbids sending the request")]
    Offline,
}

/// Why a window stopped without the replies of all its rows.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// The endpoint's interrupt flag was set.
    #[error("interrupted; the requests in flight were abandoned")]
    Interrupted,
    /// The endpoint is down: `failures` connection attempts in a row failed.
    #[error("{failures} connection attempts in a row failed, the last: {last}")]
    Unreachable { failures: u32, last: String },
}

/// The reply of every request of `requests`, in order.
pub fn judge_window<R: WindowRequest>(
    requests: &[R],
    cache: Option<&Cache>,
    endpoint: &Endpoint,
    offline: bool,
    stats: &mut Stats,
) -> Result<Vec<Result<CachedReply, JudgeError>>, WindowError> {
    let keys: Vec<Key> = requests.iter().map(WindowRequest::key).collect();
    judge_keyed(
        &keys,
        |i| &requests[i],
        cache,
        endpoint,
        offline,
        stats,
        |r| r,
    )
}

/// Cache lookups per read transaction: a window's cached replies are read and reduced this
/// many at a time, not all held at once.
const LOOKUP_KEYS: usize = 256;

/// [`judge_window`] of a window known by its keys (`keys[i]` of request `i`): `request(i)`
/// builds request `i`, and is called only for the requests to send (not for those cached,
/// repeated or, offline, missing). Each reply, cached or sent, is stored in the cache whole
/// and handed to `keep` as it arrives; the window holds only what `keep` returns (a judge
/// scorer's score and label, not the reply's text).
pub fn judge_keyed<R: WindowRequest, T: Clone>(
    keys: &[Key],
    request: impl Fn(usize) -> R,
    cache: Option<&Cache>,
    endpoint: &Endpoint,
    offline: bool,
    stats: &mut Stats,
    keep: impl Fn(CachedReply) -> T,
) -> Result<Vec<Result<T, JudgeError>>, WindowError> {
    // A cache that could not store fails every window at once: their replies would be lost.
    if let Some(e) = cache.and_then(Cache::store_failure) {
        return Err(e.into());
    }
    // Each row's distinct request (`slot`), and the first row of each (`distinct`).
    let mut index: KeyMap<usize> = KeyMap::default();
    let mut slot: Vec<usize> = Vec::with_capacity(keys.len());
    let mut distinct: Vec<usize> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let d = *index.entry(*key).or_insert_with(|| {
            distinct.push(i);
            distinct.len() - 1
        });
        stats.deduplicated += u64::from(distinct[d] != i);
        slot.push(d);
    }
    drop(index);
    // One read transaction per LOOKUP_KEYS keys (one lock, not one per key).
    let distinct_keys: Vec<Key> = distinct.iter().map(|&i| keys[i]).collect();
    let mut replies: Vec<Option<Result<T, JudgeError>>> = Vec::new();
    replies.resize_with(distinct.len(), || None);
    let mut to_send: Vec<usize> = Vec::new();
    for (part, part_keys) in distinct_keys.chunks(LOOKUP_KEYS).enumerate() {
        let cached = match cache {
            Some(c) => c.get_many(part_keys)?,
            None => vec![None; part_keys.len()],
        };
        for (j, hit) in cached.into_iter().enumerate() {
            let d = part * LOOKUP_KEYS + j;
            match hit {
                Some(reply) => {
                    stats.cache_hits += 1;
                    if let Some(live) = &endpoint.live {
                        live.cache_hits.fetch_add(1, Ordering::Relaxed);
                    }
                    replies[d] = Some(Ok(keep(reply)));
                }
                None if offline => replies[d] = Some(Err(JudgeError::Offline)),
                None => to_send.push(d),
            }
        }
    }
    // All answered from the cache: no request to build, no client (its TLS setup costs more
    // than a window's lookups), no thread.
    if !to_send.is_empty() {
        if endpoint
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed) != 0)
        {
            return Err(WindowError::Interrupted);
        }
        let requests: Vec<R> = to_send.iter().map(|&d| request(distinct[d])).collect();
        send_all(
            &requests,
            &to_send,
            &distinct_keys,
            cache,
            endpoint,
            stats,
            &mut replies,
            &keep,
        )?;
    }
    // Each row's reply: moved to the last row of its request, cloned for the rows before.
    let mut left = vec![0usize; distinct.len()];
    for &d in &slot {
        left[d] += 1;
    }
    Ok(slot
        .into_iter()
        .map(|d| {
            left[d] -= 1;
            let reply = if left[d] == 0 {
                replies[d].take()
            } else {
                replies[d].clone()
            };
            reply.unwrap_or(Err(JudgeError::Offline))
        })
        .collect())
}

/// Sends `requests` (of the distinct requests `to_send`, whose keys are in `keys`) from at most
/// `concurrency` threads, storing each reply in the cache as it arrives and what `keep` makes
/// of it in `replies`.
#[allow(clippy::too_many_arguments)]
fn send_all<R: WindowRequest, T>(
    requests: &[R],
    to_send: &[usize],
    keys: &[Key],
    cache: Option<&Cache>,
    endpoint: &Endpoint,
    stats: &mut Stats,
    replies: &mut [Option<Result<T, JudgeError>>],
    keep: &impl Fn(CachedReply) -> T,
) -> Result<(), WindowError> {
    // A judge request answered by a redirect is an error, never re-sent elsewhere.
    let agent = ureq::AgentBuilder::new()
        .max_idle_connections_per_host(endpoint.concurrency.max(1))
        .redirects(0)
        .build();
    let halt = Halt::new(endpoint.interrupt.clone(), dead_after(endpoint.concurrency));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    let mut stored: Result<(), CacheError> = Ok(());
    std::thread::scope(|scope| {
        for _ in 0..endpoint.concurrency.clamp(1, requests.len().max(1)) {
            let tx = tx.clone();
            let (agent, next, halt) = (&agent, &next, &halt);
            scope.spawn(move || loop {
                if halt.is_stopped() {
                    return;
                }
                let n = next.fetch_add(1, Ordering::Relaxed);
                let Some(request) = requests.get(n) else {
                    return;
                };
                if let Some(pace) = &endpoint.pace {
                    let start = pace
                        .lock()
                        .map(|mut p| p.reserve(Instant::now()))
                        .unwrap_or_else(|_| Instant::now());
                    if !halt.sleep_until(start) {
                        return;
                    }
                }
                let gate = match endpoint.gate.as_deref() {
                    Some(g) => match g.enter(halt) {
                        Some(guard) => Some(guard),
                        None => return,
                    },
                    None => None,
                };
                if let Some(live) = &endpoint.live {
                    live.in_flight.fetch_add(1, Ordering::Relaxed);
                }
                let r = request.send(agent, endpoint.api_key.as_deref(), &endpoint.policy, halt);
                drop(gate);
                if let Some(live) = &endpoint.live {
                    live.in_flight.fetch_sub(1, Ordering::Relaxed);
                    let (attempts, tokens) = match &r {
                        Ok(s) => (
                            s.attempts,
                            s.reply
                                .prompt_tokens
                                .saturating_add(s.reply.completion_tokens),
                        ),
                        Err(e) => (e.attempts, 0),
                    };
                    live.requests_sent
                        .fetch_add(u64::from(attempts), Ordering::Relaxed);
                    live.retries
                        .fetch_add(u64::from(attempts.saturating_sub(1)), Ordering::Relaxed);
                    live.tokens.fetch_add(tokens, Ordering::Relaxed);
                }
                if let (Some(pace), Ok(sent)) = (&endpoint.pace, &r) {
                    if let Ok(mut p) = pace.lock() {
                        p.spent(
                            sent.reply
                                .prompt_tokens
                                .saturating_add(sent.reply.completion_tokens),
                            Instant::now(),
                        );
                    }
                }
                if tx.send((to_send[n], r)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        // Replies are stored here, on this thread, as they arrive.
        for (d, r) in rx {
            let r = match r {
                Ok(sent) => {
                    stats.requests_sent += u64::from(sent.attempts);
                    stats.retries += u64::from(sent.attempts - 1);
                    stats.waited += sent.waited;
                    stats.prompt_tokens =
                        stats.prompt_tokens.saturating_add(sent.reply.prompt_tokens);
                    stats.completion_tokens = stats
                        .completion_tokens
                        .saturating_add(sent.reply.completion_tokens);
                    if let (Some(c), Ok(())) = (cache, &stored) {
                        stored = c.store(&keys[d], &sent.reply);
                        if stored.is_err() {
                            // The replies still to come could not be kept: stop sending.
                            halt.stop(Stop::Window);
                        }
                    }
                    Ok(keep(sent.reply))
                }
                Err(e) => {
                    stats.requests_sent += u64::from(e.attempts);
                    stats.retries += u64::from(e.attempts.saturating_sub(1));
                    // A request abandoned by a stop did not fail.
                    stats.failures += u64::from(!halt.is_stopped());
                    Err(JudgeError::Request(e))
                }
            };
            replies[d] = Some(r);
        }
    });
    stored?;
    match halt.reason() {
        None | Some(Stop::Window) => Ok(()),
        Some(Stop::Interrupted) => Err(WindowError::Interrupted),
        Some(Stop::Unreachable { failures, last }) => {
            Err(WindowError::Unreachable { failures, last })
        }
    }
}
