//! Model-graded scorers: a judge scorer (`kind::JudgeScorer`) asks the endpoint of `models:`
//! that its `model_key` names, with a prompt its kind (`kind::JudgeKind`) renders, and its
//! kind reads the replies with the deterministic parsers of `evalscore_kernels::judge`.
//!
//! Per batch, judge scorer and window of at most 4,096 rows (`window`, `kind`): the prompts
//! are rendered, each row's request key is computed from the rendered texts, the window's replies
//! are fetched into the batch's memo by the [`JudgeRuntime`] (identical requests sent once,
//! cached replies reused, at most the model's `concurrency` in flight over all workers), and
//! each reply is read. While a batch's windows are sent (by a helper thread, [`prefetch`]),
//! its worker scores the batch's other scorers. A reply that cannot be read scores 0.0 with
//! `judge_status = invalid` and is counted; a request that fails after its retries (or,
//! `--offline`, is not cached) is a row error.
//!
//! Memory: one window's prompts at a time, and the keys and readings of one record batch (the
//! reader's batch size): each reply is read as it arrives ([`Kept`]: a grade or label, the
//! reasoning only when it is written) and its text dropped; the cache, on disk, keeps the
//! text. A reply body is at most `evalscore_judge::MAX_REPLY_BYTES`; a longer one is a row
//! error.

pub(crate) mod cache_choice;
pub(crate) mod choice;
pub(crate) mod embed;
pub(crate) mod kind;
pub(crate) mod parse;
pub mod runtime;
pub(crate) mod window;

pub use cache_choice::JudgeCache;
pub use runtime::{
    JudgeCtx, JudgeOptions, JudgeProgress, JudgeRuntime, Judged, Kept, Memo, ModelStats, Reading,
    RuntimeError,
};
pub use window::JUDGE_PARSER_VERSION;

use crate::row_error::RowError;
use crate::task::Task;
use evalscore_task::RowContext;

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
