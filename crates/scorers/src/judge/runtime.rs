//! The judge side of a bound task: the reply cache, each model's endpoint (its API key, rate
//! limits and concurrency gate) and counters, and the fetch of a window's replies into a
//! batch's memo (identical requests sent once, cached replies reused). Module `replay`:
//! requests listed ahead and sent on their own, and a runtime that scores from replies got
//! so (a Spark or Ray job's distinct requests, judged once).

use crate::row_error::RowError;
use evalscore_judge::{
    judge_keyed, Cache, CacheError, CachedReply, ChatRequest, Endpoint, Gate, JudgeError, Key,
    KeyMap, Live, Pace, RetryPolicy, Stats, WindowError, WindowRequest,
};
use evalscore_task::{ModelSpec, RowContext};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod replay;

/// A batch's replies of one scorer with a model, by request key: what the scorer reads of
/// each ([`Kept`]), made as the reply arrives; the replies' text is not held (it is in the
/// cache).
#[derive(Debug)]
pub struct Memo {
    replies: Mutex<KeyMap<Result<Kept, JudgeError>>>,
    /// Whether the replies' reasoning is kept: only when the scorer writes it.
    pub(crate) keep_reasoning: bool,
}

/// Keeps everything a scorer may read (reasoning included).
impl Default for Memo {
    fn default() -> Self {
        Memo {
            replies: Mutex::default(),
            keep_reasoning: true,
        }
    }
}

impl Memo {
    /// The memo of a scorer that computes the fields `needed`: a reply's reasoning is kept only
    /// when `reasoning` is one of them.
    pub fn for_fields(needed: &BTreeSet<&str>) -> Memo {
        Memo {
            replies: Mutex::default(),
            keep_reasoning: needed.contains("reasoning"),
        }
    }

    /// The replies, by request key.
    pub(crate) fn entries(&self) -> std::sync::MutexGuard<'_, KeyMap<Result<Kept, JudgeError>>> {
        lock(&self.replies)
    }

    /// How many replies (and failures) it holds.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of text it holds (labels and reasoning; 8 bytes a number of a vector).
    pub fn text_bytes(&self) -> usize {
        self.entries()
            .values()
            .map(|r| match r {
                Ok(Kept::Reading(r)) => {
                    r.label.as_ref().map_or(0, String::len)
                        + r.reasoning.as_ref().map_or(0, String::len)
                }
                Ok(Kept::Vectors(Ok(v))) => v.iter().map(|v| 8 * v.len()).sum(),
                Ok(Kept::Vectors(Err(e))) => e.len(),
                Err(_) => 0,
            })
            .sum()
    }
}

/// What a batch keeps of one reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Kept {
    /// A chat reply as the scorer's kind read it.
    Reading(Reading),
    /// An embeddings reply's vectors, or why they cannot be read.
    Vectors(Result<Vec<Vec<f64>>, String>),
}

/// A chat reply as a judge kind reads it: its grade or label (and the label's reasoning and
/// confidence), and how it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub(crate) from: evalscore_kernels::judge::ParsedFrom,
    pub(crate) grade: Option<f64>,
    pub(crate) label: Option<String>,
    /// Only when the scorer writes it.
    pub(crate) reasoning: Option<String>,
    pub(crate) confidence: Option<f64>,
}

impl Reading {
    /// A graded reply.
    pub(crate) fn graded(
        (grade, from): (Option<f64>, evalscore_kernels::judge::ParsedFrom),
        reasoning: Option<String>,
    ) -> Reading {
        Reading {
            from,
            grade,
            label: None,
            reasoning,
            confidence: None,
        }
    }

    /// A reply read as a label, its reasoning kept when `keep_reasoning`.
    pub(crate) fn labelled(
        r: evalscore_kernels::judge::LabelReply,
        keep_reasoning: bool,
    ) -> Reading {
        Reading {
            from: r.from,
            grade: None,
            label: r.label,
            reasoning: r.reasoning.filter(|_| keep_reasoning),
            confidence: r.confidence,
        }
    }
}

/// What a scorer with a model reads besides the rows: the runtime and this batch's replies
/// so far.
#[derive(Clone, Copy)]
pub struct JudgeCtx<'a> {
    pub runtime: &'a JudgeRuntime,
    pub memo: &'a Memo,
}

/// The judge side of a model-graded scorer (`Scorer::judge`).
pub trait Judged: Send + Sync {
    /// Sends this batch's windows into `memo` ahead of scoring. Failures are left for the
    /// scoring pass to meet again and report (a prompt that cannot be rendered, a cache that
    /// fails): nothing is lost here.
    fn prefetch(&self, runtime: &JudgeRuntime, ctx: &RowContext<'_>, rows: usize, memo: &Memo);
    /// Every row's request (`None`: a missing row), for `evalscore judge export`.
    fn requests(
        &self,
        ctx: &RowContext<'_>,
        rows: usize,
    ) -> Result<Vec<Option<ChatRequest>>, RowError>;
}

/// The judge side of a run could not be set up, or a fetch failed outside any one row.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("no judge cache path: neither XDG_CACHE_HOME nor HOME is set")]
    NoCachePath,
    #[error("--offline needs the judge cache, and --no-cache turns it off")]
    OfflineWithoutCache,
    /// A task problem: the model's `api_key_env` names a variable that is not set.
    #[error("the environment variable `{var}` (models.{model_key}.api_key_env) is not set")]
    MissingApiKey { var: String, model_key: String },
    /// A task problem: the key in `api_key_env` holds a byte an HTTP header cannot carry. The
    /// message says which byte and where, never the key.
    #[error("the API key in `{var}` (models.{model_key}.api_key_env) {problem}")]
    BadApiKey {
        var: String,
        model_key: String,
        problem: String,
    },
    #[error("the judge cache failed")]
    Cache(#[source] CacheError),
    /// A signal stopped the requests of a window.
    #[error("interrupted; the requests in flight were abandoned")]
    Interrupted,
    /// The endpoint is down: connection attempts failed one after another.
    #[error("judge model `{model_key}` ({base_url}) is unreachable: {detail}")]
    Unreachable {
        model_key: String,
        base_url: String,
        detail: String,
    },
    /// A bug: a model the runtime did not set up.
    #[error("internal error: judge model `{0}` not set up")]
    ModelNotSetUp(String),
}

impl RuntimeError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            RuntimeError::NoCachePath => {
                Some("give one with --cache PATH, or run with --no-cache".to_owned())
            }
            RuntimeError::OfflineWithoutCache => Some(
                "drop --no-cache (or give --cache PATH) to score from cached replies".to_owned(),
            ),
            RuntimeError::MissingApiKey { var, model_key } => Some(format!(
                "export {var}=... with the API key of model `{model_key}`"
            )),
            RuntimeError::BadApiKey { .. } => Some(
                "remove the line ending or the pasted space from the key (a key file saved on Windows ends its line with a carriage return)".to_owned(),
            ),
            RuntimeError::Unreachable { .. } => Some(
                "check the model's base_url and that its server is up; the replies received so far are in the judge cache, so a rerun sends only the rest".to_owned(),
            ),
            RuntimeError::Interrupted => None,
            RuntimeError::Cache(e) => evalscore_error::Diagnostic::hint(e).or_else(|| {
                Some(
                    "check the --cache path (a SQLite file on a local disk), or run with --no-cache"
                        .to_owned(),
                )
            }),
            RuntimeError::ModelNotSetUp(_) => None,
        }
    }

    /// The message and its cause on one line, for a row error's message.
    pub(crate) fn text(&self) -> String {
        match self {
            RuntimeError::Cache(e) => format!("{self}: {e}"),
            other => other.to_string(),
        }
    }
}

impl evalscore_error::Diagnostic for RuntimeError {
    /// A task problem (an API key variable unset or unusable), a signal, a bug, or another
    /// failure (the cache, the endpoint).
    fn kind(&self) -> evalscore_error::ErrorKind {
        use evalscore_error::ErrorKind;
        match self {
            RuntimeError::MissingApiKey { .. } | RuntimeError::BadApiKey { .. } => ErrorKind::Task,
            RuntimeError::Interrupted => ErrorKind::Interrupted,
            RuntimeError::ModelNotSetUp(_) => ErrorKind::Internal,
            _ => ErrorKind::Other,
        }
    }

    fn hint(&self) -> Option<String> {
        RuntimeError::hint(self)
    }
}

/// How a run's judge scorers reach their models.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeOptions {
    pub cache: super::JudgeCache,
    /// `--offline`: send nothing; a reply missing from the cache is a row error.
    pub offline: bool,
}

/// What judging cost one model, for run.json and the library's caller.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelStats {
    /// The `models:` key.
    pub model_key: String,
    /// The model name sent in requests.
    pub model: String,
    pub stats: Stats,
    /// Wall time workers spent waiting for this model's replies (summed over workers).
    pub waited: Duration,
}

/// Live counters over every model, for a progress line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JudgeProgress {
    pub rows_judged: u64,
    pub in_flight: u64,
    pub requests_sent: u64,
    pub cache_hits: u64,
    pub retries: u64,
    pub tokens: u64,
}

impl std::ops::AddAssign for JudgeProgress {
    /// Counters of several runtimes (a suite's tasks) summed.
    fn add_assign(&mut self, o: JudgeProgress) {
        self.rows_judged += o.rows_judged;
        self.in_flight += o.in_flight;
        self.requests_sent += o.requests_sent;
        self.cache_hits += o.cache_hits;
        self.retries += o.retries;
        self.tokens += o.tokens;
    }
}

/// The judge side of a bound task: the cache, each model's endpoint and counters.
pub struct JudgeRuntime {
    /// The cache, shared by every window (it takes its one connection in turn).
    cache: Option<Cache>,
    offline: bool,
    /// Requests judged elsewhere that failed there, by key ([`JudgeRuntime::replaying`]):
    /// a row asking one fails as it would have, not as a reply missing from the cache.
    failed: KeyMap<JudgeError>,
    pub(crate) models: BTreeMap<String, ModelRuntime>,
    pub(crate) rows_judged: AtomicU64,
}

pub(crate) struct ModelRuntime {
    pub(crate) model: String,
    pub(crate) base_url: String,
    endpoint: Endpoint,
    live: Arc<Live>,
    stats: Mutex<Stats>,
    /// Wall time workers spent waiting for this model's windows (summed over workers).
    waited: Mutex<Duration>,
}

impl std::fmt::Debug for JudgeRuntime {
    // The endpoints hold API keys: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgeRuntime")
            .field("cache_path", &self.cache_path())
            .field("offline", &self.offline)
            .field("models", &self.models.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl JudgeRuntime {
    /// The runtime of the `used` entries of `models` (a task's [`model_keys`]); `None` when
    /// none is used. Opens the cache (so a cache that cannot be opened fails the run before
    /// any row is read) and reads each used model's API key from its `api_key_env`. Every
    /// wait for a reply ends within a fraction of a second once `interrupt` holds anything but 0
    /// (the signal flag of the process).
    ///
    /// [`model_keys`]: crate::Task::model_keys
    pub fn new(
        models: &BTreeMap<String, ModelSpec>,
        used: &BTreeSet<&str>,
        opts: &JudgeOptions,
        interrupt: Option<Arc<AtomicUsize>>,
    ) -> Result<Option<JudgeRuntime>, RuntimeError> {
        if used.is_empty() {
            return Ok(None);
        }
        let cache = opts.cache.open()?;
        if cache.is_none() && opts.offline {
            return Err(RuntimeError::OfflineWithoutCache);
        }
        let specs = models;
        let mut models = BTreeMap::new();
        for &key in used {
            let Some(spec) = specs.get(key) else {
                continue;
            };
            let api_key = match &spec.api_key_env {
                None => None,
                Some(var) if opts.offline => std::env::var(var).ok(),
                Some(var) => Some(std::env::var(var).map_err(|_| RuntimeError::MissingApiKey {
                    var: var.clone(),
                    model_key: key.to_owned(),
                })?),
            };
            if let (Some(k), Some(var), false) = (&api_key, &spec.api_key_env, opts.offline) {
                if let Some(problem) = evalscore_judge::api_key_problem(k) {
                    return Err(RuntimeError::BadApiKey {
                        var: var.clone(),
                        model_key: key.to_owned(),
                        problem,
                    });
                }
            }
            let live = Arc::new(Live::default());
            let pace = Pace::new(spec.requests_per_minute, spec.tokens_per_minute);
            let endpoint = Endpoint {
                api_key,
                concurrency: spec.concurrency as usize,
                policy: RetryPolicy {
                    max_retries: spec.max_retries,
                    timeout: Duration::from_secs_f64(spec.timeout_s),
                    ..RetryPolicy::default()
                },
                pace: pace.is_limited().then(|| Arc::new(Mutex::new(pace))),
                gate: Some(Arc::new(Gate::new(spec.concurrency as usize))),
                live: Some(Arc::clone(&live)),
                interrupt: interrupt.clone(),
            };
            models.insert(
                key.to_owned(),
                ModelRuntime {
                    model: spec.model.clone(),
                    base_url: spec.base_url.clone(),
                    endpoint,
                    live,
                    stats: Mutex::new(Stats::default()),
                    waited: Mutex::new(Duration::ZERO),
                },
            );
        }
        Ok(Some(JudgeRuntime {
            cache,
            offline: opts.offline,
            failed: KeyMap::default(),
            models,
            rows_judged: AtomicU64::new(0),
        }))
    }

    /// What each model cost so far, in `models:` key order.
    pub fn stats(&self) -> Vec<ModelStats> {
        self.models
            .iter()
            .map(|(k, m)| ModelStats {
                model_key: k.clone(),
                model: m.model.clone(),
                stats: *m.stats.lock().unwrap_or_else(|p| p.into_inner()),
                waited: *m.waited.lock().unwrap_or_else(|p| p.into_inner()),
            })
            .collect()
    }

    /// The live counters, summed over models.
    pub fn progress(&self) -> JudgeProgress {
        let mut p = JudgeProgress {
            rows_judged: self.rows_judged.load(Ordering::Relaxed),
            ..JudgeProgress::default()
        };
        for m in self.models.values() {
            p.in_flight += m.live.in_flight.load(Ordering::Relaxed);
            p.requests_sent += m.live.requests_sent.load(Ordering::Relaxed);
            p.cache_hits += m.live.cache_hits.load(Ordering::Relaxed);
            p.retries += m.live.retries.load(Ordering::Relaxed);
            p.tokens += m.live.tokens.load(Ordering::Relaxed);
        }
        p
    }

    /// `--offline`: nothing is sent.
    pub fn offline(&self) -> bool {
        self.offline
    }

    /// The cache file, unless the cache is off.
    pub fn cache_path(&self) -> Option<&std::path::Path> {
        self.cache.as_ref().map(Cache::path)
    }

    /// The cache as run.json names it: the shared cache's URL (or folder), else the file.
    pub fn cache_name(&self) -> Option<String> {
        self.cache.as_ref().map(|c| match c.shared_url() {
            Some(url) => url.to_owned(),
            None => c.path().display().to_string(),
        })
    }

    /// The cache itself, unless it is off.
    pub fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    /// Uploads the replies stored during the run that the shared cache does not hold yet
    /// (nothing without one); the end of a run calls it.
    pub fn flush_cache(&self) -> Result<(), RuntimeError> {
        match &self.cache {
            Some(c) => c.flush().map_err(RuntimeError::Cache),
            None => Ok(()),
        }
    }

    /// What the shared cache warned of so far (segments skipped), taken.
    pub fn cache_warnings(&self) -> Vec<String> {
        self.cache
            .as_ref()
            .map(Cache::take_warnings)
            .unwrap_or_default()
    }

    /// Whether `key` is cached (false without a cache).
    pub(crate) fn is_cached(&self, key: &str) -> Result<bool, RuntimeError> {
        match &self.cache {
            Some(c) => c.get(key).map(|r| r.is_some()).map_err(RuntimeError::Cache),
            None => Ok(false),
        }
    }

    /// Gets into `memo` the reply of every request of `keys` (to model `model_key`) that it
    /// does not hold yet, as `keep` reads it when it arrives; `request(i)` builds request `i`
    /// when it has to be sent. `memo` holds this batch's replies: a batch scored again around a
    /// failed row asks nothing twice.
    pub(crate) fn fetch<R: WindowRequest>(
        &self,
        model_key: &str,
        keys: &[Key],
        request: impl Fn(usize) -> R,
        memo: &Memo,
        keep: impl Fn(CachedReply) -> Kept,
    ) -> Result<(), RuntimeError> {
        let model = self
            .models
            .get(model_key)
            .ok_or_else(|| RuntimeError::ModelNotSetUp(model_key.to_owned()))?;
        // Rows whose request repeats an earlier row's of this window are counted once here;
        // a window scored again (around a failed row) finds every key in `memo`.
        let mut repeated = 0u64;
        let fresh: Vec<usize> = {
            let memo = memo.entries();
            let mut seen: KeyMap<()> = KeyMap::default();
            (0..keys.len())
                .filter(|&i| {
                    if memo.contains_key(&keys[i]) {
                        return false;
                    }
                    let first = seen.insert(keys[i], ()).is_none();
                    repeated += u64::from(!first);
                    first
                })
                .collect()
        };
        lock(&model.stats).deduplicated += repeated;
        if fresh.is_empty() {
            return Ok(());
        }
        let fresh_keys: Vec<Key> = fresh.iter().map(|&i| keys[i]).collect();
        let mut stats = Stats::default();
        let started = std::time::Instant::now();
        let got = judge_keyed(
            &fresh_keys,
            |f| request(fresh[f]),
            self.cache.as_ref(),
            &model.endpoint,
            self.offline,
            &mut stats,
            keep,
        )
        .map_err(|e| RuntimeError::of_window(e, model_key, &model.base_url));
        *lock(&model.waited) += started.elapsed();
        // Counted even when the cache failed midway: those requests were sent.
        add_stats(&mut lock(&model.stats), &stats);
        let mut memo = memo.entries();
        for (key, r) in fresh_keys.into_iter().zip(got?) {
            let r = match (r, self.failed.get(&key)) {
                (Err(JudgeError::Offline), Some(e)) => Err(e.clone()),
                (r, _) => r,
            };
            memo.insert(key, r);
        }
        Ok(())
    }
}

impl RuntimeError {
    /// Why a window of `model_key`'s requests stopped, as the run reports it.
    fn of_window(e: WindowError, model_key: &str, base_url: &str) -> RuntimeError {
        match e {
            WindowError::Cache(e) => RuntimeError::Cache(e),
            WindowError::Interrupted => RuntimeError::Interrupted,
            WindowError::Unreachable { .. } => RuntimeError::Unreachable {
                model_key: model_key.to_owned(),
                base_url: base_url.to_owned(),
                detail: e.to_string(),
            },
        }
    }
}

/// The value behind a mutex, even if a thread panicked holding it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn add_stats(total: &mut Stats, s: &Stats) {
    total.requests_sent += s.requests_sent;
    total.cache_hits += s.cache_hits;
    total.deduplicated += s.deduplicated;
    total.retries += s.retries;
    total.failures += s.failures;
    total.prompt_tokens += s.prompt_tokens;
    total.completion_tokens += s.completion_tokens;
    total.waited += s.waited;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_add_up() {
        let mut t = Stats::default();
        let s = Stats {
            requests_sent: 3,
            cache_hits: 2,
            deduplicated: 1,
            retries: 1,
            failures: 0,
            prompt_tokens: 10,
            completion_tokens: 5,
            waited: Duration::from_millis(5),
        };
        add_stats(&mut t, &s);
        add_stats(&mut t, &s);
        assert_eq!(t.requests_sent, 6);
        assert_eq!(t.prompt_tokens, 20);
        assert_eq!(t.waited, Duration::from_millis(10));
    }
}
