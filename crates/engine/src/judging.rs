//! Model-graded scorers in the engine: a batch's rows are judged in windows of requests.
//!
//! Per batch, judge scorer and window of at most [`WINDOW_ROWS`] rows: the prompt templates
//! are rendered ([`Prompts`]), each row's request key is computed from the rendered texts
//! without building the request (a row whose submission or another prompt part is null is
//! *missing* and sends nothing), the window's replies are fetched into the batch's memo by
//! [`JudgeRuntime::fetch`] (identical requests sent once, cached replies reused, only the
//! requests to send built and sent by the judge crate's own threads, at most the model's
//! `concurrency` in flight over all workers together), and each reply is read by the
//! deterministic parsers of `evalscore_kernels::judge`. While a batch's windows are sent (by
//! a helper thread, [`prefetch`]), its worker scores the batch's other scorers. A reply that
//! cannot be read scores 0.0 with `judge_status = invalid` and is counted; a request that
//! fails after its retries (or, `--offline`, is not cached) is a row error.
//!
//! Memory: one window's prompts at a time, and the keys and replies of one record batch (the
//! reader's batch size); the cache is on disk.

use crate::row_error::{CellRef, RowError};
use crate::scorers::{text, Scored, Text};
use crate::Error;
use arrow::array::{ArrayRef, Float64Array, StringArray};
use evalscore_judge::{
    embeddings_of, judge_keyed, Cache, CachedReply, ChatKeys, ChatRequest, EmbeddingRequest,
    Endpoint, Gate, JudgeError, Key, KeyMap, Live, Message, Pace, RetryPolicy, Stats,
    WindowRequest,
};
use evalscore_kernels::judge::{parse_grade, parse_label, reasoning, ParsedFrom};
use evalscore_task::judge::{
    classifier_instruction, grader_instruction, GradedFamily, JudgeKind, JudgeScorer,
    JUDGE_PARSER_VERSION,
};
use evalscore_task::{RowContext, Task};
use evalscore_text::TextColumn;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where judge replies are cached.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum JudgeCache {
    /// `$XDG_CACHE_HOME/evalscore/judge.sqlite`, else `~/.cache/evalscore/judge.sqlite`.
    #[default]
    Default,
    /// `--cache PATH`.
    Path(PathBuf),
    /// `--no-cache`: every request is sent (identical ones of a window still once).
    Off,
}

/// How a run's judge scorers reach their models.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeOptions {
    pub cache: JudgeCache,
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

/// The judge side of a bound task: the cache, each model's endpoint and counters.
pub struct JudgeRuntime {
    /// The cache, shared by every window (it takes its one connection in turn).
    cache: Option<Cache>,
    offline: bool,
    models: BTreeMap<String, ModelRuntime>,
    rows_judged: AtomicU64,
}

struct ModelRuntime {
    model: String,
    base_url: String,
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
    /// The runtime of `task`'s judge scorers; `None` when it has none. Opens the cache (so a
    /// cache that cannot be opened fails the run before any row is read) and reads each used
    /// model's API key from its `api_key_env`.
    pub fn new(task: &Task, opts: &JudgeOptions) -> Result<Option<JudgeRuntime>, Error> {
        let used: BTreeSet<&str> = task
            .scorers
            .iter()
            .filter_map(|s| s.kind.model_key())
            .collect();
        if used.is_empty() {
            return Ok(None);
        }
        let cache_path = match &opts.cache {
            JudgeCache::Off => None,
            JudgeCache::Path(p) => Some(p.clone()),
            JudgeCache::Default => {
                Some(evalscore_judge::default_cache_path().ok_or_else(|| {
                    Error::new("no judge cache path: neither XDG_CACHE_HOME nor HOME is set")
                        .hint("give one with --cache PATH, or run with --no-cache")
                })?)
            }
        };
        let cache = cache_path
            .as_deref()
            .map(Cache::open)
            .transpose()
            .map_err(cache_error)?;
        if cache.is_none() && opts.offline {
            return Err(
                Error::new("--offline needs the judge cache, and --no-cache turns it off")
                    .hint("drop --no-cache (or give --cache PATH) to score from cached replies"),
            );
        }
        let mut models = BTreeMap::new();
        for key in used {
            let Some(spec) = task.models.get(key) else {
                continue;
            };
            let api_key = match &spec.api_key_env {
                None => None,
                Some(var) if opts.offline => std::env::var(var).ok(),
                Some(var) => Some(std::env::var(var).map_err(|_| {
                    Error::new(format!(
                        "the environment variable `{var}` (models.{key}.api_key_env) is not set"
                    ))
                    .kind(crate::ErrorKind::Task)
                    .hint(format!(
                        "export {var}=... with the API key of model `{key}`"
                    ))
                })?),
            };
            if let (Some(k), Some(var), false) = (&api_key, &spec.api_key_env, opts.offline) {
                if let Some(problem) = evalscore_judge::api_key_problem(k) {
                    return Err(Error::new(format!("the API key in `{var}` (models.{key}.api_key_env) {problem}"))
                        .kind(crate::ErrorKind::Task)
                        .hint("remove the line ending or the pasted space from the key (a key file saved on Windows ends its line with a carriage return)"));
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
                interrupt: Some(crate::interrupt_flag()),
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

    /// The cache file, unless the cache is off.
    pub fn cache_path(&self) -> Option<&std::path::Path> {
        self.cache.as_ref().map(Cache::path)
    }

    /// Whether `key` is cached (false without a cache).
    pub(crate) fn is_cached(&self, key: &str) -> Result<bool, Error> {
        match &self.cache {
            Some(c) => c.get(key).map(|r| r.is_some()).map_err(cache_error),
            None => Ok(false),
        }
    }

    /// Gets into `memo` the reply of every request of `keys` (to model `model_key`) that it
    /// does not hold yet; `request(i)` builds request `i` when it has to be sent. `memo` holds
    /// this batch's replies: a batch scored again around a failed row asks nothing twice.
    fn fetch<R: WindowRequest>(
        &self,
        model_key: &str,
        keys: &[Key],
        request: impl Fn(usize) -> R,
        memo: &Memo,
    ) -> Result<(), Error> {
        let model = self.models.get(model_key).ok_or_else(|| {
            Error::new(format!(
                "internal error: judge model `{model_key}` not set up"
            ))
            .kind(crate::ErrorKind::Internal)
        })?;
        // Rows whose request repeats an earlier row's of this window are counted once here;
        // a window scored again (around a failed row) finds every key in `memo`.
        let mut repeated = 0u64;
        let fresh: Vec<usize> = {
            let memo = lock(memo);
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
        )
        .map_err(|e| window_error(model_key, &model.base_url, e));
        *lock(&model.waited) += started.elapsed();
        // Counted even when the cache failed midway: those requests were sent.
        add_stats(&mut lock(&model.stats), &stats);
        let mut memo = lock(memo);
        for (key, r) in fresh_keys.into_iter().zip(got?) {
            memo.insert(key, r);
        }
        Ok(())
    }
}

/// The value behind a mutex, even if a thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// run.json's `judge` object: the cache, `--offline`, per model what it cost, and per judge
/// scorer the replies that could not be read.
pub(crate) fn stats_json(
    rt: &JudgeRuntime,
    invalid: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let models: serde_json::Map<String, serde_json::Value> = rt
        .stats()
        .into_iter()
        .map(|m| {
            let s = m.stats;
            (
                m.model_key,
                serde_json::json!({
                    "model": m.model,
                    "requests_sent": s.requests_sent,
                    "cache_hits": s.cache_hits,
                    "deduplicated": s.deduplicated,
                    "retries": s.retries,
                    "failures": s.failures,
                    "prompt_tokens": s.prompt_tokens,
                    "completion_tokens": s.completion_tokens,
                    "wait_seconds": m.waited.as_secs_f64(),
                    "backoff_seconds": s.waited.as_secs_f64(),
                }),
            )
        })
        .collect();
    serde_json::json!({
        "cache": rt.cache_path().map(|p| p.display().to_string()),
        "offline": rt.offline,
        "models": models,
        "invalid": invalid,
    })
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

/// An error's message and causes on one line, for a row error's message.
fn error_text(e: &Error) -> String {
    let mut s = e.message.clone();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// A window that stopped early: the cache failed, a signal, or the endpoint is down.
fn window_error(model_key: &str, base_url: &str, e: evalscore_judge::WindowError) -> Error {
    use evalscore_judge::WindowError;
    match e {
        WindowError::Cache(e) => cache_error(e),
        WindowError::Interrupted => Error::new(e.to_string()).kind(crate::ErrorKind::Interrupted),
        WindowError::Unreachable { .. } => Error::new(format!("judge model `{model_key}` ({base_url}) is unreachable: {e}"))
            .hint("check the model's base_url and that its server is up; the replies received so far are in the judge cache, so a rerun sends only the rest"),
    }
}

fn cache_error(e: evalscore_judge::CacheError) -> Error {
    Error::new("the judge cache failed")
        .caused_by(e.to_string())
        .hint("check the --cache path (a SQLite file on a local disk), or run with --no-cache")
}

/// A batch's replies of one judge scorer, by request key.
pub(crate) type Memo = Mutex<KeyMap<Result<CachedReply, JudgeError>>>;

/// What score_judge reads besides the rows: the runtime and this batch's replies so far.
pub(crate) struct JudgeCtx<'a> {
    pub runtime: &'a JudgeRuntime,
    pub memo: &'a Memo,
}

/// The embedding of each of `texts` (distinct) from model `model_key`, one request per text
/// (so each text is cached on its own), through the same window, cache and limits as the
/// judges. A text whose request failed is a row error at `first_row[text]`.
pub(crate) fn embeddings(
    judge: &JudgeCtx<'_>,
    model_key: &str,
    texts: &[String],
    first_row: &BTreeMap<String, usize>,
) -> Result<HashMap<String, Vec<f64>>, RowError> {
    let model = judge
        .runtime
        .models
        .get(model_key)
        .ok_or_else(|| RowError {
            message: format!("internal error: model `{model_key}` not set up"),
            ..RowError::default()
        })?;
    let spec_url = model.base_url.clone();
    let requests: Vec<EmbeddingRequest> = texts
        .iter()
        .map(|t| EmbeddingRequest {
            base_url: spec_url.clone(),
            model: model.model.clone(),
            input: vec![t.clone()],
        })
        .collect();
    let keys: Vec<Key> = requests.iter().map(WindowRequest::key).collect();
    judge
        .runtime
        .fetch(model_key, &keys, |i| &requests[i], judge.memo)
        .map_err(|e| RowError {
            message: error_text(&e),
            hint: e.hint.clone(),
            ..RowError::default()
        })?;
    let memo = lock(judge.memo);
    let mut out = HashMap::with_capacity(texts.len());
    for (t, key) in texts.iter().zip(&keys) {
        let fail = |message: String| RowError {
            row: first_row.get(t).copied().unwrap_or(0),
            message: format!("embedding model `{model_key}` ({spec_url}): {message}"),
            per_row: true,
            ..RowError::default()
        };
        let reply = match memo.get(key) {
            Some(Ok(reply)) => reply,
            Some(Err(e)) => return Err(fail(e.to_string())),
            None => return Err(fail("internal error: no reply was fetched".to_owned())),
        };
        let mut v = embeddings_of(&reply.content).map_err(fail)?;
        if v.len() != 1 {
            return Err(fail(format!("{} vectors for one text", v.len())));
        }
        out.insert(t.clone(), v.remove(0));
    }
    Ok(out)
}

/// Sends every judge scorer's window of this batch into `memos` (by scorer index), while the
/// caller scores the other scorers. Failures are left for the scoring pass to meet again and
/// report (a prompt that cannot be rendered, a cache that fails): nothing is lost here.
pub(crate) fn prefetch(
    task: &Task,
    runtime: &JudgeRuntime,
    ctx: &RowContext<'_>,
    rows: usize,
    memos: &[Memo],
) {
    for (spec, memo) in task.scorers.iter().zip(memos) {
        let Some(j) = spec.kind.judge() else {
            continue;
        };
        let mut chat_keys = chat_keys(j);
        for start in (0..rows).step_by(WINDOW_ROWS) {
            let len = WINDOW_ROWS.min(rows - start);
            let part = slice_ctx(ctx, start, len);
            let Ok(prompts) = Prompts::render(j, &part.ctx(), len) else {
                continue;
            };
            if let Ok(keys) = prompts.keys(&mut chat_keys) {
                let _ = fetch_window(j, runtime, memo, &prompts, &keys);
            }
        }
    }
}

/// The keys of a judge scorer's requests (they differ only in their messages).
fn chat_keys(j: &JudgeScorer) -> ChatKeys {
    ChatKeys::new(
        &j.model.base_url,
        &j.model.model,
        j.model.temperature,
        j.model.seed,
        j.model.max_tokens,
        JUDGE_PARSER_VERSION,
    )
}

/// One window's rendered prompt parts, from which each row's messages (its request, its key)
/// are read without copying the texts.
struct Prompts<'j> {
    j: &'j JudgeScorer,
    texts: Vec<Text>,
    shape: Shape<'j>,
    rows: usize,
}

enum Shape<'j> {
    /// A system message (`texts[0]`, then the instruction) and a user message (`texts[1]`);
    /// `fixed` is the system message when it is the same on every row.
    SystemUser {
        instruction: String,
        fixed: Option<String>,
    },
    /// One user message: the family's prompt around `texts`.
    Graded {
        family: GradedFamily,
        choices: &'j [(String, f64)],
    },
}

/// A row's messages, borrowing the window's texts where it can.
enum RowMessages<'a> {
    SystemUser(Cow<'a, str>, &'a str),
    User(String),
}

impl RowMessages<'_> {
    fn key(&self, keys: &mut ChatKeys) -> Key {
        match self {
            RowMessages::SystemUser(s, u) => keys.key(&[("system", s), ("user", u)]),
            RowMessages::User(p) => keys.key(&[("user", p)]),
        }
    }

    fn into_messages(self) -> Vec<Message> {
        let message = |role: &str, content: String| Message {
            role: role.to_owned(),
            content,
        };
        match self {
            RowMessages::SystemUser(s, u) => vec![
                message("system", s.into_owned()),
                message("user", u.to_owned()),
            ],
            RowMessages::User(p) => vec![message("user", p)],
        }
    }
}

/// A classifier's labels: the correct ones, then the incorrect ones.
fn all_labels<'a>(correct: &'a [String], incorrect: &'a [String]) -> Vec<&'a str> {
    correct
        .iter()
        .chain(incorrect)
        .map(String::as_str)
        .collect()
}

/// The system message: the scorer's system prompt, then the instruction.
fn system_message(system: &str, instruction: &str) -> String {
    if system.is_empty() {
        instruction.to_owned()
    } else {
        format!("{system}\n\n{instruction}")
    }
}

impl<'j> Prompts<'j> {
    /// Renders the prompt templates of judge scorer `j` over the `rows` rows of `ctx`.
    fn render(j: &'j JudgeScorer, ctx: &RowContext<'_>, rows: usize) -> Result<Self, RowError> {
        let system_user = |system: &Option<evalscore_task::Template>,
                           user: &evalscore_task::Template,
                           instruction: String|
         -> Result<Self, RowError> {
            let system = match system {
                Some(t) => text(Some(t), ctx)?,
                None => Text::Scalar(String::new()),
            };
            let fixed = match &system {
                Text::Scalar(s) => Some(system_message(s, &instruction)),
                _ => None,
            };
            Ok(Prompts {
                j,
                texts: vec![system, text(Some(user), ctx)?],
                shape: Shape::SystemUser { instruction, fixed },
                rows,
            })
        };
        match &j.kind {
            JudgeKind::Classifier {
                system_prompt,
                user_prompt,
                correct_labels,
                incorrect_labels,
                ..
            } => system_user(
                system_prompt,
                user_prompt,
                classifier_instruction(&all_labels(correct_labels, incorrect_labels)),
            ),
            JudgeKind::Grader {
                system_prompt,
                user_prompt,
                score_min,
                score_max,
                ..
            } => system_user(
                system_prompt,
                user_prompt,
                grader_instruction(*score_min, *score_max),
            ),
            JudgeKind::Graded {
                family,
                parts,
                choices,
                ..
            } => Ok(Prompts {
                j,
                texts: parts
                    .iter()
                    .map(|(_, t)| text(t.as_ref(), ctx))
                    .collect::<Result<_, _>>()?,
                shape: Shape::Graded {
                    family: *family,
                    choices,
                },
                rows,
            }),
        }
    }

    /// The texts as columns.
    fn columns(&self) -> Result<Vec<TextColumn<'_>>, RowError> {
        self.texts
            .iter()
            .map(|t| {
                t.column().map_err(|e| RowError {
                    row: 0,
                    message: e.to_string(),
                    ..RowError::default()
                })
            })
            .collect()
    }

    /// Row `r`'s messages; `None` when a prompt part is null (the row is missing: nothing is
    /// sent).
    fn messages<'a>(&'a self, columns: &[TextColumn<'a>], r: usize) -> Option<RowMessages<'a>> {
        match &self.shape {
            Shape::SystemUser { instruction, fixed } => {
                let system = columns[0].get(r)?;
                let user = columns[1].get(r)?;
                let system = match fixed {
                    Some(f) => Cow::Borrowed(f.as_str()),
                    None => Cow::Owned(system_message(system, instruction)),
                };
                Some(RowMessages::SystemUser(system, user))
            }
            Shape::Graded { family, choices } => {
                let parts: Option<Vec<&str>> = columns.iter().map(|c| c.get(r)).collect();
                Some(RowMessages::User(family.prompt(&parts?, choices)))
            }
        }
    }

    /// Each row's request key; `None` for a missing row.
    fn keys(&self, chat_keys: &mut ChatKeys) -> Result<Vec<Option<Key>>, RowError> {
        let columns = self.columns()?;
        Ok((0..self.rows)
            .map(|r| self.messages(&columns, r).map(|m| m.key(chat_keys)))
            .collect())
    }

    /// The request of `messages`.
    fn build(&self, messages: Vec<Message>) -> ChatRequest {
        let j = self.j;
        ChatRequest {
            base_url: j.model.base_url.clone(),
            model: j.model.model.clone(),
            messages,
            temperature: j.model.temperature,
            seed: j.model.seed,
            max_tokens: j.model.max_tokens,
            parser_version: JUDGE_PARSER_VERSION,
        }
    }
}

/// Builds every row's request of a judge scorer (`None`: a missing row).
pub(crate) fn requests(
    j: &JudgeScorer,
    ctx: &RowContext<'_>,
    rows: usize,
) -> Result<Vec<Option<ChatRequest>>, RowError> {
    let prompts = Prompts::render(j, ctx, rows)?;
    let columns = prompts.columns()?;
    Ok((0..rows)
        .map(|r| {
            let messages = prompts.messages(&columns, r)?;
            Some(prompts.build(messages.into_messages()))
        })
        .collect())
}

/// Gets into `memo` the replies of a window's rows (`keys`, `None` for a missing row).
fn fetch_window(
    j: &JudgeScorer,
    runtime: &JudgeRuntime,
    memo: &Memo,
    prompts: &Prompts<'_>,
    keys: &[Option<Key>],
) -> Result<(), Error> {
    let rows: Vec<usize> = (0..keys.len()).filter(|&r| keys[r].is_some()).collect();
    let sent: Vec<Key> = keys.iter().flatten().copied().collect();
    let columns = prompts.columns().map_err(|e| Error::new(e.message))?;
    runtime.fetch(
        &j.model_key,
        &sent,
        |i| {
            // A row with a key has messages (a missing row has neither).
            let messages = prompts.messages(&columns, rows[i]);
            prompts.build(messages.map_or_else(Vec::new, RowMessages::into_messages))
        },
        memo,
    )
}

/// Scores a judge scorer over one batch.
pub(crate) fn score_judge(
    j: &JudgeScorer,
    ctx: &RowContext<'_>,
    rows: usize,
    needed: &BTreeSet<&'static str>,
    judge: Option<&JudgeCtx<'_>>,
) -> Result<Scored, RowError> {
    let judge = judge.ok_or_else(|| RowError {
        row: 0,
        message: "internal error: a judge scorer without a judge runtime".to_owned(),
        ..RowError::default()
    })?;
    let mut chat_keys = chat_keys(j);
    let mut keys: Vec<Option<Key>> = Vec::with_capacity(rows);
    // Prompts are rendered and answered WINDOW_ROWS rows at a time, so a large record batch
    // holds one window's prompts, not the whole batch's; the batch keeps only its keys.
    for start in (0..rows).step_by(WINDOW_ROWS) {
        let len = WINDOW_ROWS.min(rows - start);
        let part = slice_ctx(ctx, start, len);
        let sub = part.ctx();
        let at = |mut e: RowError| {
            e.row += start;
            e
        };
        let prompts = Prompts::render(j, &sub, len).map_err(at)?;
        let window = prompts.keys(&mut chat_keys).map_err(at)?;
        fetch_window(j, judge.runtime, judge.memo, &prompts, &window).map_err(|e| RowError {
            row: 0,
            message: error_text(&e),
            hint: e.hint.clone(),
            ..RowError::default()
        })?;
        check_window(j, judge.memo, start, &window)?;
        keys.extend(window);
    }
    judge
        .runtime
        .rows_judged
        .fetch_add(rows as u64, Ordering::Relaxed);
    let memo = lock(judge.memo);
    let replies: Vec<Option<&CachedReply>> = keys
        .iter()
        .map(|k| k.and_then(|k| memo.get(&k)?.as_ref().ok()))
        .collect();
    read_replies(j, ctx, rows, needed, &replies)
}

/// Rows a judge window holds at most.
const WINDOW_ROWS: usize = 4096;

/// A slice of a batch and its model output, owning what a [`RowContext`] borrows.
struct SlicedCtx {
    batch: arrow::array::RecordBatch,
    model_output: Option<ArrayRef>,
    raw: Option<ArrayRef>,
}

impl SlicedCtx {
    fn ctx(&self) -> RowContext<'_> {
        RowContext {
            batch: &self.batch,
            model_output: self.model_output.as_ref(),
            model_output_raw: self.raw.as_ref(),
        }
    }
}

fn slice_ctx(ctx: &RowContext<'_>, start: usize, len: usize) -> SlicedCtx {
    SlicedCtx {
        batch: ctx.batch.slice(start, len),
        model_output: ctx.model_output.map(|a| a.slice(start, len)),
        raw: ctx.model_output_raw.map(|a| a.slice(start, len)),
    }
}

/// Checks that every row of a window (rows `start..` of the batch, `keys` as in
/// [`Prompts::keys`]) has its reply in `memo`; a failed request is a row error at its row.
fn check_window(
    j: &JudgeScorer,
    memo: &Memo,
    start: usize,
    keys: &[Option<Key>],
) -> Result<(), RowError> {
    let memo = lock(memo);
    for (i, key) in keys.iter().enumerate() {
        let Some(key) = key else {
            continue;
        };
        let row = start + i;
        match memo.get(key) {
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                return Err(RowError {
                    row,
                    message: format!(
                        "judge model `{}` ({}): {e}",
                        j.model_key, j.model.base_url
                    ),
                    per_row: true,
                    hint: Some(match e {
                        JudgeError::Offline => "run without --offline to send it, or `evalscore judge export` and `judge import` it through a Batch API".to_owned(),
                        JudgeError::Request(_) => "the request was retried as `max_retries` allows; a rerun sends only the requests without a cached reply".to_owned(),
                    }),
                    cell: Some(Box::new(CellRef {
                        column: Some(j.model_key.clone()),
                        value: None,
                    })),
                    ..RowError::default()
                })
            }
            None => {
                return Err(RowError {
                    row,
                    message: "internal error: fewer judge replies than requests".to_owned(),
                    ..RowError::default()
                })
            }
        }
    }
    Ok(())
}

/// Turns the replies (`None`: a missing row) into the scorer's fields.
fn read_replies(
    j: &JudgeScorer,
    ctx: &RowContext<'_>,
    rows: usize,
    needed: &BTreeSet<&'static str>,
    replies: &[Option<&CachedReply>],
) -> Result<Scored, RowError> {
    let want = |f: &str| needed.contains(f);
    let mut fields: BTreeMap<&'static str, ArrayRef> = BTreeMap::new();
    let missing = replies.iter().filter(|r| r.is_none()).count() as u64;
    let mut invalid = 0u64;
    let status = |from: Option<ParsedFrom>| match from {
        None => "missing",
        Some(f) => f.status(),
    };
    let mut statuses: Vec<&'static str> = Vec::with_capacity(rows);
    match &j.kind {
        JudgeKind::Classifier {
            correct_labels,
            incorrect_labels,
            ground_truth_label,
            ..
        } => {
            let labels = all_labels(correct_labels, incorrect_labels);
            let mut correct = Vec::with_capacity(rows);
            let mut predicted = Vec::with_capacity(rows);
            let mut reasons = Vec::with_capacity(rows);
            let mut confidence = Vec::with_capacity(rows);
            for r in replies {
                let parsed = r
                    .as_ref()
                    .map(|r| parse_label(&r.content, &labels, &["prediction", "label"]));
                let from = parsed.as_ref().map(|p| p.from);
                invalid += u64::from(from == Some(ParsedFrom::Invalid));
                statuses.push(status(from));
                let label = parsed.as_ref().and_then(|p| p.label.clone());
                correct.push(Some(f64::from(u8::from(
                    label.as_ref().is_some_and(|l| correct_labels.contains(l)),
                ))));
                predicted.push(label);
                reasons.push(parsed.as_ref().and_then(|p| p.reasoning.clone()));
                confidence.push(parsed.as_ref().and_then(|p| p.confidence));
            }
            fields.insert("is_correct", Arc::new(Float64Array::from(correct)));
            if want("predicted_label") {
                fields.insert("predicted_label", Arc::new(StringArray::from(predicted)));
            }
            if want("reasoning") {
                fields.insert("reasoning", Arc::new(StringArray::from(reasons)));
            }
            if want("confidence") {
                fields.insert("confidence", Arc::new(Float64Array::from(confidence)));
            }
            if want("ground_truth_label") {
                let gt = match ground_truth_label {
                    Some(t) => text(Some(t), ctx)?.array(rows),
                    None => Arc::new(StringArray::new_null(rows)),
                };
                let gt =
                    evalscore_text::to_text(&gt, "ground_truth_label").map_err(|e| RowError {
                        row: 0,
                        message: e.to_string(),
                        ..RowError::default()
                    })?;
                fields.insert("ground_truth_label", gt);
            }
        }
        JudgeKind::Grader {
            score_min,
            score_max,
            pass_threshold,
            ..
        } => {
            let (mut score, mut correct, mut grade, mut reasons) = (
                Vec::with_capacity(rows),
                Vec::with_capacity(rows),
                Vec::with_capacity(rows),
                Vec::with_capacity(rows),
            );
            // The reasoning is a second read of the reply: only when it is written.
            let keep_reasoning = want("reasoning");
            for r in replies {
                let parsed = r
                    .as_ref()
                    .map(|r| parse_grade(&r.content, *score_min, *score_max, &["score", "grade"]));
                let from = parsed.map(|p| p.1);
                invalid += u64::from(from == Some(ParsedFrom::Invalid));
                statuses.push(status(from));
                let g = parsed.and_then(|p| p.0);
                let s = g.map_or(0.0, |g| (g - score_min) / (score_max - score_min));
                score.push(Some(s));
                correct.push(Some(f64::from(u8::from(
                    g.is_some() && s >= *pass_threshold,
                ))));
                grade.push(g);
                reasons.push(
                    r.as_ref()
                        .filter(|_| keep_reasoning)
                        .and_then(|r| reasoning(&r.content)),
                );
            }
            fields.insert("score", Arc::new(Float64Array::from(score)));
            fields.insert("is_correct", Arc::new(Float64Array::from(correct)));
            if want("grade") {
                fields.insert("grade", Arc::new(Float64Array::from(grade)));
            }
            if want("reasoning") {
                fields.insert("reasoning", Arc::new(StringArray::from(reasons)));
            }
        }
        JudgeKind::Graded {
            choices,
            pass_threshold,
            ..
        } => {
            let labels: Vec<&str> = choices.iter().map(|(l, _)| l.as_str()).collect();
            let (mut choice, mut score, mut correct) = (
                Vec::with_capacity(rows),
                Vec::with_capacity(rows),
                Vec::with_capacity(rows),
            );
            for r in replies {
                let parsed = r
                    .as_ref()
                    .map(|r| parse_label(&r.content, &labels, &["choice", "answer"]));
                let from = parsed.as_ref().map(|p| p.from);
                invalid += u64::from(from == Some(ParsedFrom::Invalid));
                statuses.push(status(from));
                let label = parsed.and_then(|p| p.label);
                let s = label
                    .as_ref()
                    .and_then(|l| choices.iter().find(|(c, _)| c == l))
                    .map_or(0.0, |(_, s)| *s);
                score.push(Some(s));
                correct.push(Some(f64::from(u8::from(
                    label.is_some() && s >= *pass_threshold,
                ))));
                choice.push(label);
            }
            fields.insert("score", Arc::new(Float64Array::from(score)));
            fields.insert("is_correct", Arc::new(Float64Array::from(correct)));
            if want("choice") {
                fields.insert("choice", Arc::new(StringArray::from(choice)));
            }
        }
    }
    if want("judge_status") {
        fields.insert("judge_status", Arc::new(StringArray::from(statuses)));
    }
    fields.retain(|name, _| needed.contains(name));
    Ok(Scored {
        fields,
        missing,
        invalid,
    })
}

/// The Batch API request lines of every row of `batch` whose reply is not cached, per judge
/// scorer, for `evalscore judge export`. Duplicates within the call are left out; `seen`
/// carries the keys written so far across calls.
pub(crate) fn uncached_requests(
    task: &Task,
    runtime: &JudgeRuntime,
    ctx: &RowContext<'_>,
    rows: usize,
    seen: &mut std::collections::HashSet<String>,
) -> Result<Vec<String>, RowError> {
    let mut lines = Vec::new();
    for spec in &task.scorers {
        let Some(j) = spec.kind.judge() else {
            continue;
        };
        for r in requests(j, ctx, rows)
            .map_err(|mut e| {
                e.message = format!("scorer `{}`: {}", spec.key, e.message);
                e
            })?
            .into_iter()
            .flatten()
        {
            let key = r.key();
            if seen.contains(&key) {
                continue;
            }
            let cached = runtime.is_cached(&key).map_err(|e| RowError {
                row: 0,
                message: error_text(&e),
                hint: e.hint.clone(),
                ..RowError::default()
            })?;
            if !cached {
                lines.push(r.batch_line());
            }
            seen.insert(key);
        }
    }
    Ok(lines)
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
