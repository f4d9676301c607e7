//! One window of judged rows: identical requests sent once, cached replies reused, the rest
//! sent by at most `concurrency` threads, each reply stored in the cache as it arrives (so a
//! run killed midway keeps every reply it got and a rerun sends only the rest).

use crate::{send, Cache, CacheError, CachedReply, ChatRequest, RequestError, RetryPolicy, Sent};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
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

    fn enter(&self) -> GateGuard<'_> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        while *held >= self.limit {
            held = self.freed.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        *held += 1;
        GateGuard(self)
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
    fn key(&self) -> String;
    /// Sends it with the retries of `policy`; the reply as the cache stores it.
    fn send(
        &self,
        agent: &ureq::Agent,
        api_key: Option<&str>,
        policy: &RetryPolicy,
    ) -> Result<Sent, RequestError>;
}

impl<T: WindowRequest> WindowRequest for &T {
    fn key(&self) -> String {
        (**self).key()
    }

    fn send(
        &self,
        agent: &ureq::Agent,
        api_key: Option<&str>,
        policy: &RetryPolicy,
    ) -> Result<Sent, RequestError> {
        (**self).send(agent, api_key, policy)
    }
}

impl WindowRequest for ChatRequest {
    fn key(&self) -> String {
        ChatRequest::key(self)
    }

    fn send(
        &self,
        agent: &ureq::Agent,
        api_key: Option<&str>,
        policy: &RetryPolicy,
    ) -> Result<Sent, RequestError> {
        send(agent, self, api_key, policy)
    }
}

impl WindowRequest for crate::EmbeddingRequest {
    fn key(&self) -> String {
        crate::EmbeddingRequest::key(self)
    }

    /// The vectors are cached as their JSON text (a list of lists), read back by
    /// [`crate::embeddings_of`].
    fn send(
        &self,
        agent: &ureq::Agent,
        api_key: Option<&str>,
        policy: &RetryPolicy,
    ) -> Result<Sent, RequestError> {
        let e = crate::send_embeddings(agent, self, api_key, policy)?;
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

/// The reply of every request of `requests`, in order.
pub fn judge_window<R: WindowRequest>(
    requests: &[R],
    cache: Option<&Cache>,
    endpoint: &Endpoint,
    offline: bool,
    stats: &mut Stats,
) -> Result<Vec<Result<CachedReply, JudgeError>>, CacheError> {
    let keys: Vec<String> = requests.iter().map(WindowRequest::key).collect();
    judge_window_keyed(requests, &keys, cache, endpoint, offline, stats)
}

/// [`judge_window`] with the requests' keys already computed (`keys[i]` of `requests[i]`).
pub fn judge_window_keyed<R: WindowRequest>(
    requests: &[R],
    keys: &[String],
    cache: Option<&Cache>,
    endpoint: &Endpoint,
    offline: bool,
    stats: &mut Stats,
) -> Result<Vec<Result<CachedReply, JudgeError>>, CacheError> {
    // The first row of each distinct request, and the distinct requests to send.
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut replies: HashMap<String, Result<CachedReply, JudgeError>> = HashMap::new();
    let mut to_send: Vec<usize> = Vec::new();
    let mut distinct: Vec<usize> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        if first.contains_key(key.as_str()) {
            stats.deduplicated += 1;
            continue;
        }
        first.insert(key, i);
        distinct.push(i);
    }
    // One read transaction for the window's lookups (one lock, not one per key).
    let cached = match cache {
        Some(c) => c.get_many(distinct.iter().map(|&i| keys[i].as_str()))?,
        None => vec![None; distinct.len()],
    };
    for (i, hit) in distinct.into_iter().zip(cached) {
        let key = &keys[i];
        match hit {
            Some(reply) => {
                stats.cache_hits += 1;
                if let Some(live) = &endpoint.live {
                    live.cache_hits.fetch_add(1, Ordering::Relaxed);
                }
                replies.insert(key.clone(), Ok(reply));
            }
            None if offline => {
                replies.insert(key.clone(), Err(JudgeError::Offline));
            }
            None => to_send.push(i),
        }
    }
    // All answered from the cache: no client to build (its TLS setup costs more than a
    // window's lookups), no thread to start.
    if to_send.is_empty() {
        return Ok(keys
            .iter()
            .map(|k| replies.get(k).cloned().unwrap_or(Err(JudgeError::Offline)))
            .collect());
    }

    let agent = ureq::AgentBuilder::new()
        .max_idle_connections_per_host(endpoint.concurrency.max(1))
        .build();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    let mut stored: Result<(), CacheError> = Ok(());
    std::thread::scope(|scope| {
        for _ in 0..endpoint.concurrency.clamp(1, to_send.len().max(1)) {
            let tx = tx.clone();
            let (agent, next, to_send) = (&agent, &next, &to_send);
            scope.spawn(move || loop {
                let Some(&i) = to_send.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    return;
                };
                if let Some(pace) = &endpoint.pace {
                    let start = pace
                        .lock()
                        .map(|mut p| p.reserve(Instant::now()))
                        .unwrap_or_else(|_| Instant::now());
                    std::thread::sleep(start.saturating_duration_since(Instant::now()));
                }
                let gate = endpoint.gate.as_deref().map(Gate::enter);
                if let Some(live) = &endpoint.live {
                    live.in_flight.fetch_add(1, Ordering::Relaxed);
                }
                let r = requests[i].send(agent, endpoint.api_key.as_deref(), &endpoint.policy);
                drop(gate);
                if let Some(live) = &endpoint.live {
                    live.in_flight.fetch_sub(1, Ordering::Relaxed);
                    let (attempts, tokens) = match &r {
                        Ok(s) => (
                            s.attempts,
                            s.reply.prompt_tokens + s.reply.completion_tokens,
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
                            sent.reply.prompt_tokens + sent.reply.completion_tokens,
                            Instant::now(),
                        );
                    }
                }
                if tx.send((i, r)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        // Replies are stored here, on this thread, as they arrive.
        for (i, r) in rx {
            let key = &keys[i];
            let r = match r {
                Ok(sent) => {
                    stats.requests_sent += u64::from(sent.attempts);
                    stats.retries += u64::from(sent.attempts - 1);
                    stats.waited += sent.waited;
                    stats.prompt_tokens += sent.reply.prompt_tokens;
                    stats.completion_tokens += sent.reply.completion_tokens;
                    if let (Some(c), Ok(())) = (cache, &stored) {
                        stored = c.put(key, &sent.reply);
                    }
                    Ok(sent.reply)
                }
                Err(e) => {
                    stats.requests_sent += u64::from(e.attempts);
                    stats.retries += u64::from(e.attempts.saturating_sub(1));
                    stats.failures += 1;
                    Err(JudgeError::Request(e))
                }
            };
            replies.insert(key.clone(), r);
        }
    });
    stored?;
    Ok(keys
        .iter()
        .map(|k| replies.get(k).cloned().unwrap_or(Err(JudgeError::Offline)))
        .collect())
}
