//! Judging a job's rows apart from scoring them: a batch's judge requests listed ahead
//! ([`Scorer::judge_requests`]), sent by a [`TaskJudge`] (each distinct request once, wherever
//! the job gathered them), and the batch scored with exactly the replies got so
//! ([`JudgeReplies`], [`Scorer::score_with_replies`]). A job whose rows are spread over many
//! processes (Spark partitions, Ray blocks) so sends a request repeated across them once:
//!
//! ```text
//! let asked = scorer.judge_requests(&batch)?;              // where the rows are
//! // the job keeps one request per key (a shuffle), then where they went:
//! let replies = TaskJudge::new(&task, &opts)?.send(&distinct)?;
//! // the replies by key go back to where the rows are:
//! let given = JudgeReplies::new(&task, keyed)?;
//! let (scores, states) = scorer.score_with_replies(&batch, &given)?;   // sends nothing
//! ```

use super::Scorer;
use crate::model_output::model_output_text;
use crate::row_error::RowError;
use crate::{EngineError, Error, ErrorKind, States, Task};
use arrow::array::{ArrayRef, RecordBatch};
use evalscore_judge::{Cache, CachedReply, ChatRequest, JudgeError, Key, KeyMap};
use evalscore_scorers::judge::{JudgeOptions, JudgeRuntime, Judged, ModelStats, RuntimeError};
use evalscore_task::RowContext;
use std::collections::BTreeMap;

/// Deepest nesting of the listing around rows whose prompt fails (as scoring's retries).
const MAX_AROUND_DEPTH: usize = 16;

/// One judge request of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRequest {
    /// The batch row that asks it (from 0, counting the rows a `filter:` leaves out).
    pub row: usize,
    /// The `models:` key of the endpoint it goes to.
    pub model_key: String,
    /// Its cache key ([`ChatRequest::cache_key`]).
    pub key: Key,
    /// The request as it would be sent.
    pub request: ChatRequest,
}

impl Scorer {
    /// The judge requests scoring `batch` needs: per model-graded scorer in task order, its
    /// rows' requests (a missing row asks nothing, nor does a row the task's `filter:` leaves
    /// out), repeats included. They are all the requests scoring sends when
    /// [`Task::lists_judge_requests`] holds. A row whose prompt cannot be rendered asks nothing here:
    /// scoring meets its error again and reports it as a row error. Other errors are those of
    /// [`Scorer::score`].
    pub fn judge_requests(&self, batch: &RecordBatch) -> Result<Vec<JudgeRequest>, Error> {
        self.check_batch(batch)?;
        let filtered = match &self.rows {
            Some(rows) => crate::row_filter::keep(rows, batch)?,
            None => None,
        };
        // Which row of the caller's batch each row scored is.
        let (batch, rows) = match filtered {
            Some((kept, mask)) => (kept, Some(mask.set_indices().collect::<Vec<_>>())),
            None => (batch.clone(), None),
        };
        let row_of = |r: usize| rows.as_ref().and_then(|k| k.get(r).copied()).unwrap_or(r);
        let at = |e: RowError, key: Option<&str>| -> Error {
            EngineError::Row {
                at: format!("row {}", row_of(e.row) + 1),
                message: match key {
                    Some(k) => format!("scorer `{k}`: {}", e.message),
                    None => e.message,
                },
                kind: ErrorKind::Other,
                hint: e.hint,
            }
            .into()
        };
        let raw = match &self.plan.output_column {
            Some(name) => Some(
                batch
                    .column_by_name(name)
                    .ok_or_else(|| EngineError::BatchColumnMissing(name.clone()))?,
            ),
            None => None,
        };
        let model_output = match (&self.plan.output_column, raw) {
            (Some(name), Some(col)) => Some(model_output_text(col, name).map_err(|e| at(e, None))?),
            _ => None,
        };
        let ctx = RowContext {
            batch: &batch,
            model_output: model_output.as_ref(),
            model_output_raw: raw,
        };
        let mut out = Vec::new();
        for spec in &self.task.scorers {
            let (Some(judged), Some(model_key)) = (spec.scorer.judge(), spec.scorer.model_key())
            else {
                continue;
            };
            let mut found = Vec::new();
            requests_around(judged, &ctx, 0, 0, &mut found).map_err(|e| at(e, Some(&spec.key)))?;
            out.extend(found.into_iter().map(|(row, request)| JudgeRequest {
                row: row_of(row),
                model_key: model_key.to_owned(),
                key: request.cache_key(),
                request,
            }));
        }
        Ok(out)
    }

    /// [`Scorer::score`] with the judge replies of `replies` alone: nothing is sent, and a
    /// row whose reply is not there is a row error (as with `--offline`; a request that
    /// failed when it was sent fails as it did). The scorer's judge statistics do not change.
    pub fn score_with_replies(
        &self,
        batch: &RecordBatch,
        replies: &JudgeReplies,
    ) -> Result<(RecordBatch, States), Error> {
        self.score_asking(batch, replies.runtime.as_ref())
    }
}

/// Pushes `judged`'s requests of the rows of `ctx` (rows `offset..` of the batch) to `found`
/// as (row, request), leaving out the rows whose prompt fails.
fn requests_around(
    judged: &dyn Judged,
    ctx: &RowContext<'_>,
    offset: usize,
    depth: usize,
    found: &mut Vec<(usize, ChatRequest)>,
) -> Result<(), RowError> {
    let rows = ctx.batch.num_rows();
    let mut start = 0;
    while start < rows {
        let part = Slice::of(ctx, start, rows - start);
        let n = rows - start;
        match judged.requests(&part.ctx(), n) {
            Ok(requests) => {
                // Several prompts per row (a pairwise judge's two orders) follow each other,
                // `n` rows each.
                for (i, r) in requests.into_iter().enumerate() {
                    if let Some(r) = r {
                        found.push((offset + start + i % n, r));
                    }
                }
                return Ok(());
            }
            Err(e) if e.per_row && e.row < n && depth < MAX_AROUND_DEPTH => {
                let bad = start + e.row;
                if bad > start {
                    let before = Slice::of(ctx, start, bad - start);
                    requests_around(judged, &before.ctx(), offset + start, depth + 1, found)?;
                }
                start = bad + 1;
            }
            Err(mut e) => {
                e.row += offset + start;
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Rows of a batch and of its model output, owning what a [`RowContext`] borrows.
struct Slice {
    batch: RecordBatch,
    model_output: Option<ArrayRef>,
    raw: Option<ArrayRef>,
}

impl Slice {
    fn of(ctx: &RowContext<'_>, start: usize, len: usize) -> Slice {
        Slice {
            batch: ctx.batch.slice(start, len),
            model_output: ctx.model_output.map(|a| a.slice(start, len)),
            raw: ctx.model_output_raw.map(|a| a.slice(start, len)),
        }
    }

    fn ctx(&self) -> RowContext<'_> {
        RowContext {
            batch: &self.batch,
            model_output: self.model_output.as_ref(),
            model_output_raw: self.raw.as_ref(),
        }
    }
}

/// A task's judge models, to send requests listed by [`Scorer::judge_requests`] (a job's
/// distinct requests, each once) through the judge cache and each model's limits, counted as
/// a bound scorer counts them.
#[derive(Debug)]
pub struct TaskJudge {
    runtime: JudgeRuntime,
}

impl TaskJudge {
    /// The judge of `task`'s models; `None` when no scorer asks one. Opens the cache and
    /// reads the API keys as binding a scorer does, with the same errors.
    pub fn new(task: &Task, opts: &JudgeOptions) -> Result<Option<TaskJudge>, Error> {
        let runtime = JudgeRuntime::new(
            &task.models,
            &task.model_keys(),
            opts,
            Some(crate::interrupt_flag()),
        )?;
        Ok(runtime.map(|runtime| TaskJudge { runtime }))
    }

    /// The reply of each of `requests` (its model's key, the request), in order: identical
    /// ones sent once, cached ones reused, the rest sent within each model's limits and
    /// stored in the cache as they arrive. A request that still fails after its retries is
    /// [`JudgeError::Request`]; offline, one not cached is [`JudgeError::Offline`].
    pub fn send(
        &self,
        requests: &[(String, ChatRequest)],
    ) -> Result<Vec<Result<CachedReply, JudgeError>>, Error> {
        let mut by_model: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, (model_key, _)) in requests.iter().enumerate() {
            by_model.entry(model_key).or_default().push(i);
        }
        let mut out: Vec<Option<Result<CachedReply, JudgeError>>> = Vec::new();
        out.resize_with(requests.len(), || None);
        for (model_key, asked) in by_model {
            let these: Vec<&ChatRequest> = asked.iter().map(|&i| &requests[i].1).collect();
            let got = self.runtime.send(model_key, &these)?;
            for (i, reply) in asked.into_iter().zip(got) {
                out[i] = Some(reply);
            }
        }
        // A shared judge cache gets what was bought before the worker hands the replies on.
        self.runtime.flush_cache()?;
        Ok(out
            .into_iter()
            .map(|r| r.unwrap_or(Err(JudgeError::Offline)))
            .collect())
    }

    /// What each model cost so far, in `models:` order.
    pub fn stats(&self) -> Vec<ModelStats> {
        self.runtime.stats()
    }
}

/// Judge replies got ahead of scoring (a job's distinct requests, sent once), held in an
/// in-memory cache, which [`Scorer::score_with_replies`] reads instead of asking the models.
#[derive(Debug)]
pub struct JudgeReplies {
    /// `None` when the task asks no model.
    runtime: Option<JudgeRuntime>,
}

impl JudgeReplies {
    /// The replies of `task`'s requests by key. A failed request
    /// ([`JudgeError::Request`]) fails the rows that ask it as it failed;
    /// [`JudgeError::Offline`] is as no reply.
    pub fn new(
        task: &Task,
        replies: impl IntoIterator<Item = (Key, Result<CachedReply, JudgeError>)>,
    ) -> Result<JudgeReplies, Error> {
        let cache = Cache::in_memory().map_err(RuntimeError::Cache)?;
        let mut failed = KeyMap::default();
        for (key, reply) in replies {
            match reply {
                Ok(reply) => cache.put_key(&key, &reply).map_err(RuntimeError::Cache)?,
                Err(JudgeError::Offline) => {}
                Err(e) => {
                    failed.insert(key, e);
                }
            }
        }
        let runtime = JudgeRuntime::replaying(&task.models, &task.model_keys(), cache, failed);
        Ok(JudgeReplies { runtime })
    }
}
