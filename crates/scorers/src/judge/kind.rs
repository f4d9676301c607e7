//! A model-graded scorer ([`JudgeScorer`]): the endpoint it asks, and its [`JudgeKind`],
//! which renders its prompt and reads its replies. Scoring a batch sends its prompts a window
//! at a time through the judge runtime, into the batch's memo.

use crate::batch::{BatchInput, Fields, ScoreColumns};
use crate::judge::runtime::{JudgeRuntime, Judged, Kept, Memo, Reading};
use crate::judge::window::{Asked, Prompt, Prompts, RowMessages, SlicedCtx, WINDOW_ROWS};
use crate::row_error::RowError;
use crate::scorer::Scorer;
use arrow::array::StringArray;
use evalscore_judge::{ChatRequest, Key};
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

    /// Renders the prompts of the `rows` rows of `ctx`.
    fn prompts(&self, ctx: &RowContext<'_>, rows: usize) -> Result<Prompts<'_>, RowError> {
        Prompts::render(&self.asked.model, self.kind.prompt(), ctx, rows)
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
        let judge = input.judge.ok_or_else(|| RowError {
            row: 0,
            message: "internal error: a judge scorer without a judge runtime".to_owned(),
            ..RowError::default()
        })?;
        let mut chat_keys = self.asked.chat_keys();
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
            self.asked.fetch_window(
                judge.runtime,
                judge.memo,
                &prompts,
                &window,
                &|text, keep| self.kind.digest(text, keep),
            )?;
            self.asked.check_window(judge.memo, start, &window)?;
            keys.extend(window);
        }
        judge
            .runtime
            .rows_judged
            .fetch_add(rows as u64, Ordering::Relaxed);
        let memo = judge.memo.entries();
        let replies: Vec<Option<&Reading>> = keys
            .iter()
            .map(|k| match memo.get(&(*k)?)? {
                Ok(Kept::Reading(r)) => Some(r),
                _ => None,
            })
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
        let mut chat_keys = self.asked.chat_keys();
        for start in (0..rows).step_by(WINDOW_ROWS) {
            let len = WINDOW_ROWS.min(rows - start);
            let part = SlicedCtx::new(ctx, start, len);
            let Ok(prompts) = self.prompts(&part.ctx(), len) else {
                continue;
            };
            if let Ok(keys) = prompts.keys(&mut chat_keys) {
                let _ = self
                    .asked
                    .fetch_window(runtime, memo, &prompts, &keys, &|text, keep| {
                        self.kind.digest(text, keep)
                    });
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
