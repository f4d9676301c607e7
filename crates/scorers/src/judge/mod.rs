//! Model-graded scorers: a [`JudgeScorer`] asks the endpoint of `models:` that its
//! `model_key` names, with a prompt its [`JudgeKind`] renders, and its kind reads the replies
//! with the deterministic parsers of `evalscore_kernels::judge`.
//!
//! Per batch, judge scorer and window of at most 4,096 rows ([`window`]): the prompts are
//! rendered, each row's request key is computed from the rendered texts, the window's replies
//! are fetched into the batch's memo by the [`JudgeRuntime`] (identical requests sent once,
//! cached replies reused, at most the model's `concurrency` in flight over all workers), and
//! each reply is read. While a batch's windows are sent (by a helper thread, [`prefetch`]),
//! its worker scores the batch's other scorers. A reply that cannot be read scores 0.0 with
//! `judge_status = invalid` and is counted; a request that fails after its retries (or,
//! `--offline`, is not cached) is a row error.
//!
//! Memory: one window's prompts at a time, and the keys and replies of one record batch (the
//! reader's batch size); the cache is on disk.

mod choice;
mod embed;
pub(crate) mod parse;
mod runtime;
mod window;

pub(crate) use choice::{choice_scores, ChoiceFamily, ChoiceJudge};
pub(crate) use embed::embeddings;
pub use runtime::{
    JudgeCache, JudgeOptions, JudgeProgress, JudgeRuntime, ModelStats, RuntimeError,
};

use crate::row_error::RowError;
use crate::task::Task;
use crate::{BatchInput, Fields, ScoreColumns, Scorer};
use arrow::array::StringArray;
use evalscore_judge::{CachedReply, ChatRequest, JudgeError, Key, KeyMap};
use evalscore_kernels::judge::ParsedFrom;
use evalscore_task::{ModelSpec, RowContext, ScorerField, Template};
pub(crate) use runtime::lock;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use window::{RowMessages, SlicedCtx, WINDOW_ROWS};

/// The version of the reply parsers (`evalscore_kernels::judge`), part of every request's cache
/// key: a parser that reads replies differently must not reuse scores cached for another.
pub const JUDGE_PARSER_VERSION: u32 = 1;

/// A batch's replies of one judge scorer, by request key.
pub type Memo = Mutex<KeyMap<Result<CachedReply, JudgeError>>>;

/// What a scorer with a model reads besides the rows: the runtime and this batch's replies
/// so far.
#[derive(Clone, Copy)]
pub struct JudgeCtx<'a> {
    pub runtime: &'a JudgeRuntime,
    pub memo: &'a Memo,
}

/// How a judge kind asks and how it reads the replies.
pub(crate) trait JudgeKind: std::fmt::Debug + Send + Sync + 'static {
    /// Every field it produces, written ones first.
    fn fields(&self) -> &'static [ScorerField];
    /// Every template, in a fixed order.
    fn templates(&self) -> Vec<&Template>;
    /// The text whose absence makes a row missing: the submission (`None`: the model
    /// output), or the user prompt.
    fn value(&self) -> Option<&Template>;
    /// The prompt of one window.
    fn prompt(&self) -> Prompt<'_>;
    /// Reads the replies (`None`: a missing row) into fields, one status per row.
    fn read(&self, replies: &Replies<'_>, out: &mut ReadOut) -> Result<(), RowError>;
}

/// A judge kind's prompt: its templates and how their texts make the messages.
pub(crate) enum Prompt<'a> {
    /// A system message (the template's text, then `instruction`) and a user message.
    SystemUser {
        system: Option<&'a Template>,
        user: &'a Template,
        instruction: String,
    },
    /// One user message, `message` of the parts' texts (`None`: the model output).
    User {
        parts: Vec<Option<&'a Template>>,
        message: Box<dyn Fn(&[&str]) -> String + 'a>,
    },
}

/// A batch's replies, as a judge kind reads them.
pub(crate) struct Replies<'a> {
    pub ctx: &'a RowContext<'a>,
    pub rows: usize,
    pub needed: &'a BTreeSet<&'static str>,
    pub replies: &'a [Option<&'a CachedReply>],
}

impl Replies<'_> {
    pub fn want(&self, field: &str) -> bool {
        self.needed.contains(field)
    }
}

/// What a judge kind's reading gives: its fields, each row's `judge_status`, and how many
/// replies could not be read.
pub(crate) struct ReadOut {
    pub fields: Fields,
    statuses: Vec<&'static str>,
    invalid: u64,
}

impl ReadOut {
    /// Records a row's status: how its reply was read (`None`: a missing row).
    pub fn status(&mut self, from: Option<ParsedFrom>) {
        self.invalid += u64::from(from == Some(ParsedFrom::Invalid));
        self.statuses.push(match from {
            None => "missing",
            Some(f) => f.status(),
        });
    }
}

/// A model-graded scorer: the `models:` entry it asks, and its kind.
#[derive(Debug)]
pub(crate) struct JudgeScorer<K> {
    pub model_key: String,
    pub model: ModelSpec,
    pub kind: K,
}

/// The judge side of a model-graded scorer ([`Scorer::judge`]).
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

impl<K: JudgeKind> Scorer for JudgeScorer<K> {
    fn fields(&self) -> &'static [ScorerField] {
        self.kind.fields()
    }

    fn templates(&self) -> Vec<&Template> {
        self.kind.templates()
    }

    fn value(&self) -> Option<&Template> {
        self.kind.value()
    }

    fn model_key(&self) -> Option<&str> {
        Some(&self.model_key)
    }

    fn judge(&self) -> Option<&dyn Judged> {
        Some(self)
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let (ctx, rows) = (input.ctx, input.rows);
        let judge = input.judge.ok_or_else(|| RowError {
            row: 0,
            message: "internal error: a judge scorer without a judge runtime".to_owned(),
            ..RowError::default()
        })?;
        let mut chat_keys = self.chat_keys();
        let mut keys: Vec<Option<Key>> = Vec::with_capacity(rows);
        // Prompts are rendered and answered WINDOW_ROWS rows at a time, so a large record
        // batch holds one window's prompts, not the whole batch's; the batch keeps only its
        // keys.
        for start in (0..rows).step_by(WINDOW_ROWS) {
            let len = WINDOW_ROWS.min(rows - start);
            let part = SlicedCtx::new(ctx, start, len);
            let sub = part.ctx();
            let at = |mut e: RowError| {
                e.row += start;
                e
            };
            let prompts = self.prompts(&sub, len).map_err(at)?;
            let window = prompts.keys(&mut chat_keys).map_err(at)?;
            self.fetch_window(judge.runtime, judge.memo, &prompts, &window)?;
            self.check_window(judge.memo, start, &window)?;
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
        let missing = replies.iter().filter(|r| r.is_none()).count() as u64;
        let mut out = ReadOut {
            fields: Fields::new(),
            statuses: Vec::with_capacity(rows),
            invalid: 0,
        };
        let read = Replies {
            ctx,
            rows,
            needed: input.needed,
            replies: &replies,
        };
        self.kind.read(&read, &mut out)?;
        let ReadOut {
            mut fields,
            statuses,
            invalid,
        } = out;
        if input.want("judge_status") {
            fields.insert("judge_status", Arc::new(StringArray::from(statuses)));
        }
        fields.retain(|name, _| input.needed.contains(name));
        Ok(ScoreColumns {
            fields,
            missing,
            invalid,
        })
    }
}

impl<K: JudgeKind> Judged for JudgeScorer<K> {
    fn prefetch(&self, runtime: &JudgeRuntime, ctx: &RowContext<'_>, rows: usize, memo: &Memo) {
        let mut chat_keys = self.chat_keys();
        for start in (0..rows).step_by(WINDOW_ROWS) {
            let len = WINDOW_ROWS.min(rows - start);
            let part = SlicedCtx::new(ctx, start, len);
            let Ok(prompts) = self.prompts(&part.ctx(), len) else {
                continue;
            };
            if let Ok(keys) = prompts.keys(&mut chat_keys) {
                let _ = self.fetch_window(runtime, memo, &prompts, &keys);
            }
        }
    }

    fn requests(
        &self,
        ctx: &RowContext<'_>,
        rows: usize,
    ) -> Result<Vec<Option<ChatRequest>>, RowError> {
        let prompts = self.prompts(ctx, rows)?;
        let columns = prompts.columns()?;
        Ok((0..rows)
            .map(|r| {
                let messages = prompts.messages(&columns, r)?;
                Some(prompts.build(RowMessages::into_messages(messages)))
            })
            .collect())
    }
}

/// Sends every judge scorer's windows of this batch into `memos` (by scorer index), while
/// the caller scores the other scorers.
pub fn prefetch(
    task: &Task,
    runtime: &JudgeRuntime,
    ctx: &RowContext<'_>,
    rows: usize,
    memos: &[Memo],
) {
    for (spec, memo) in task.scorers.iter().zip(memos) {
        if let Some(j) = spec.scorer.judge() {
            j.prefetch(runtime, ctx, rows, memo);
        }
    }
}

/// The Batch API request lines of every row of a batch whose reply is not cached, per judge
/// scorer, for `evalscore judge export`. Duplicates within the call are left out; `seen`
/// carries the keys written so far across calls.
pub fn uncached_requests(
    task: &Task,
    runtime: &JudgeRuntime,
    ctx: &RowContext<'_>,
    rows: usize,
    seen: &mut std::collections::HashSet<String>,
) -> Result<Vec<String>, RowError> {
    let mut lines = Vec::new();
    for spec in &task.scorers {
        let Some(j) = spec.scorer.judge() else {
            continue;
        };
        for r in j
            .requests(ctx, rows)
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
                message: e.text(),
                hint: e.hint(),
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
