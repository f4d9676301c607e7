//! A model-graded scorer ([`JudgeScorer`]): the endpoint it asks, and its [`JudgeKind`],
//! which renders its prompt and reads its replies. Scoring a batch sends its prompts a window
//! at a time through the judge runtime, into the batch's memo.

use crate::batch::{BatchInput, Fields, ScoreColumns};
use crate::judge::runtime::{JudgeCtx, JudgeRuntime, Judged, Kept, Memo, Reading};
use crate::judge::window::{Asked, Prompt, Prompts, RowMessages, SlicedCtx, WINDOW_ROWS};
use crate::row_error::RowError;
use crate::scorer::Scorer;
use arrow::array::StringArray;
use evalscore_judge::{ChatRequest, JudgeError, Key, KeyMap};
use evalscore_kernels::judge::ParsedFrom;
use evalscore_task::{ModelSpec, RowContext, ScorerField, Template};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

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
    /// What the scorer keeps of a reply's text, read as the reply arrives (the text is not
    /// held); its reasoning only when `keep_reasoning`.
    fn digest(&self, content: &str, keep_reasoning: bool) -> Reading;
    /// Reads the replies (`None`: a missing row) into fields, one status per row.
    fn read(&self, replies: &Replies<'_>, out: &mut ReadOut) -> Result<(), RowError>;
}

/// A batch's replies, as a judge kind reads them.
pub(crate) struct Replies<'a> {
    pub ctx: &'a RowContext<'a>,
    pub rows: usize,
    pub needed: &'a BTreeSet<&'static str>,
    pub replies: &'a [Option<&'a Reading>],
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
    pub asked: Asked,
    pub kind: K,
}

impl<K: JudgeKind> JudgeScorer<K> {
    pub fn new(model_key: String, model: ModelSpec, kind: K) -> Self {
        JudgeScorer {
            asked: Asked { model_key, model },
            kind,
        }
    }
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
        Some(&self.asked.model_key)
    }

    fn judge(&self) -> Option<&dyn Judged> {
        Some(self)
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let (ctx, rows) = (input.ctx, input.rows);
        let judge = judge_ctx(input)?;
        let prompt = || self.kind.prompt();
        let keys = self
            .asked
            .ask(judge, ctx, rows, &[&prompt], &|text, keep| {
                self.kind.digest(text, keep)
            })?
            .remove(0);
        let memo = judge.memo.entries();
        let replies = readings(&memo, &keys);
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
        self.asked.prefetch(
            runtime,
            memo,
            ctx,
            rows,
            &[&|| self.kind.prompt()],
            &|text, keep| self.kind.digest(text, keep),
        );
    }

    fn requests(
        &self,
        ctx: &RowContext<'_>,
        rows: usize,
    ) -> Result<Vec<Option<ChatRequest>>, RowError> {
        self.asked.requests(ctx, rows, self.kind.prompt())
    }
}

/// The judge runtime and memo of a batch a judge scorer scores.
pub(crate) fn judge_ctx<'a>(input: &BatchInput<'a>) -> Result<&'a JudgeCtx<'a>, RowError> {
    input.judge.ok_or_else(|| RowError {
        row: 0,
        message: "internal error: a judge scorer without a judge runtime".to_owned(),
        ..RowError::default()
    })
}

/// The reading of each row's reply (`None`: a missing row, or a failed request).
pub(crate) fn readings<'m>(
    memo: &'m KeyMap<Result<Kept, JudgeError>>,
    keys: &[Option<Key>],
) -> Vec<Option<&'m Reading>> {
    keys.iter()
        .map(|k| match memo.get(&(*k)?)? {
            Ok(Kept::Reading(r)) => Some(r),
            _ => None,
        })
        .collect()
}

impl Asked {
    /// Asks every row of a batch (`ctx`, `rows`) each prompt `prompts` make, a window of
    /// [`WINDOW_ROWS`] rows at a time, so that a large record batch holds one window's
    /// prompts, not the whole batch's: through the judge runtime into the batch's memo, each
    /// reply read by `digest` as it arrives. Gives, per prompt, each row's request key
    /// (`None`: a missing row); a failed request is a row error at its row. Counts the rows
    /// as judged.
    pub fn ask<'j>(
        &'j self,
        judge: &JudgeCtx<'_>,
        ctx: &RowContext<'_>,
        rows: usize,
        prompts: &[&dyn Fn() -> Prompt<'j>],
        digest: &dyn Fn(&str, bool) -> Reading,
    ) -> Result<Vec<Vec<Option<Key>>>, RowError> {
        let mut chat_keys = self.chat_keys();
        let mut keys: Vec<Vec<Option<Key>>> = vec![Vec::with_capacity(rows); prompts.len()];
        for start in (0..rows).step_by(WINDOW_ROWS) {
            let len = WINDOW_ROWS.min(rows - start);
            let part = SlicedCtx::new(ctx, start, len);
            let at = |mut e: RowError| {
                e.row += start;
                e
            };
            let rendered = prompts
                .iter()
                .map(|p| Prompts::render(&self.model, p(), &part.ctx(), len))
                .collect::<Result<Vec<_>, _>>()
                .map_err(at)?;
            let window = rendered
                .iter()
                .map(|p| p.keys(&mut chat_keys))
                .collect::<Result<Vec<_>, _>>()
                .map_err(at)?;
            self.fetch_window(judge.runtime, judge.memo, &rendered, &window, digest)?;
            for (all, w) in keys.iter_mut().zip(window) {
                self.check_window(judge.memo, start, &w)?;
                all.extend(w);
            }
        }
        // Each row counts once, however many prompts it was asked.
        judge
            .runtime
            .rows_judged
            .fetch_add(rows as u64, Ordering::Relaxed);
        Ok(keys)
    }

    /// [`Asked::ask`] ahead of scoring, with failures left for the scoring pass to meet again
    /// and report.
    pub fn prefetch<'j>(
        &'j self,
        runtime: &JudgeRuntime,
        memo: &Memo,
        ctx: &RowContext<'_>,
        rows: usize,
        prompts: &[&dyn Fn() -> Prompt<'j>],
        digest: &dyn Fn(&str, bool) -> Reading,
    ) {
        let mut chat_keys = self.chat_keys();
        for start in (0..rows).step_by(WINDOW_ROWS) {
            let len = WINDOW_ROWS.min(rows - start);
            let part = SlicedCtx::new(ctx, start, len);
            let Ok(rendered) = prompts
                .iter()
                .map(|p| Prompts::render(&self.model, p(), &part.ctx(), len))
                .collect::<Result<Vec<_>, _>>()
            else {
                continue;
            };
            if let Ok(keys) = rendered
                .iter()
                .map(|p| p.keys(&mut chat_keys))
                .collect::<Result<Vec<_>, _>>()
            {
                let _ = self.fetch_window(runtime, memo, &rendered, &keys, digest);
            }
        }
    }

    /// Every row's request of `prompt` (`None`: a missing row), for `evalscore judge export`.
    pub fn requests<'j>(
        &'j self,
        ctx: &RowContext<'_>,
        rows: usize,
        prompt: Prompt<'j>,
    ) -> Result<Vec<Option<ChatRequest>>, RowError> {
        let prompts = Prompts::render(&self.model, prompt, ctx, rows)?;
        let columns = prompts.columns()?;
        Ok((0..rows)
            .map(|r| {
                let messages = prompts.messages(&columns, r)?;
                Some(prompts.build(RowMessages::into_messages(messages)))
            })
            .collect())
    }
}
