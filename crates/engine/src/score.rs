//! Scoring one work item (one or more consecutive units of input): decode, evaluate
//! templates, run kernels, fold metric states.

use crate::model_output::model_output_text;
use crate::output::EncodedRowGroup;
use crate::plan::Plan;
use crate::row_error::{internal, RowError, RowErrorRecord};
use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use arrow::compute::cast;
use evalscore_kernels::BatchMemo;
use evalscore_metrics::{FoldMemo, GroupKeys, Grouped};
use evalscore_scorers::judge::{JudgeCtx, JudgeRuntime, Memo};
use evalscore_scorers::{BatchInput, ScoreColumns, ScorerSpec, Task, UserFunctions};
use evalscore_task::RowContext;
use std::collections::BTreeMap;
use std::sync::Arc;

mod item;
pub(crate) use item::{copy_from, score_units, ItemScoring, UnitChunks};

/// What one work item produced: the score batches to write, partial metric states, missing
/// counts.
#[derive(Debug)]
pub struct UnitResult {
    /// The item's scores, encoded and compressed on the worker.
    pub(crate) row_groups: Vec<EncodedRowGroup>,
    pub states: Vec<Vec<Grouped>>,
    pub missing: Vec<u64>,
    pub rows: u64,
    /// Rows that failed and scored 0.0, per scorer.
    pub row_errors: Vec<u64>,
    /// Judge replies that could not be read, per scorer.
    pub invalid: Vec<u64>,
    /// The first [`ROW_ERRORS_LISTED`] of them, in input order.
    pub row_error_list: Vec<RowErrorRecord>,
}

/// The run's allowance of row errors, shared by the workers: the first `limit` row errors
/// are scored 0.0 and listed; one more stops the run.
#[derive(Debug)]
pub(crate) struct RowBudget {
    pub limit: u64,
    used: std::sync::atomic::AtomicU64,
}

impl RowBudget {
    pub fn new(limit: u64) -> RowBudget {
        RowBudget {
            limit,
            used: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Takes one row error from the allowance; `Err(count)` when that is one too many.
    fn take(&self) -> Result<(), u64> {
        let n = self.used.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if n > self.limit {
            Err(n)
        } else {
            Ok(())
        }
    }
}

/// What the caller of [`score_batch`] already has for the batch.
pub(crate) struct Given<'a> {
    /// Per kept column, whether the encoder copies it (it is not taken from the batch).
    pub copied: &'a [bool],
    /// The model output column as text, when a suite's other task has made it for this
    /// batch (else it is made here).
    pub output_text: Option<&'a ArrayRef>,
    /// What the batch's other scorers and metrics (a suite's other tasks) derive from its
    /// columns too.
    pub memo: Option<&'a Memos>,
    /// The judge runtime to ask instead of the plan's: one replaying replies got ahead
    /// (`Scorer::score_with_replies`).
    pub judge: Option<&'a JudgeRuntime>,
}

/// What a suite's tasks derive from one batch's columns once for all: the scorers' values
/// and the metrics' counts.
#[derive(Debug, Default)]
pub(crate) struct Memos {
    pub batch: BatchMemo,
    pub folds: FoldMemo,
}

/// Scores one batch and folds it into `acc`'s metric states. Returns the score columns in
/// the order of the plan's output schema; an `is_correct` column is the kernel's pass mask
/// (Boolean) where the schema says Float64, and the encoder writes it as 0.0/1.0.
pub(crate) fn score_batch(
    plan: &Plan,
    task: &Task,
    batch: &RecordBatch,
    given: Given<'_>,
    acc: &mut UnitResult,
    budget: &RowBudget,
    bad: &mut Vec<(usize, usize, RowError)>,
) -> Result<Vec<ArrayRef>, RowError> {
    let Given {
        copied,
        output_text,
        memo,
        judge: replaying,
    } = given;
    let runtime = replaying.or(plan.judge.as_deref());
    let raw_output = match &plan.output_column {
        Some(name) => Some(batch.column_by_name(name).ok_or_else(|| RowError {
            row: 0,
            message: format!("the input has no column `{name}`"),
            hint: None,
            ..RowError::default()
        })?),
        None => None,
    };
    let model_output = match (&plan.output_column, raw_output, output_text) {
        (Some(_), Some(_), Some(text)) => Some(Arc::clone(text)),
        (Some(name), Some(col), None) => Some(model_output_text(col, name)?),
        _ => None,
    };
    // Metric inputs read from the data, once per batch however many metrics read them.
    let data = plan.metric_data.evaluate(batch)?;
    let mut columns: Vec<ArrayRef> = Vec::new();
    // Group keys of this batch, computed once per distinct `group_by` list.
    let mut groups: BTreeMap<Vec<String>, GroupKeys> = BTreeMap::new();
    for ((name, field), _) in plan.keep.iter().zip(copied).filter(|(_, &c)| !c) {
        let col = batch.column_by_name(name).ok_or_else(|| RowError {
            row: 0,
            message: format!("the input has no column `{name}`"),
            hint: None,
            ..RowError::default()
        })?;
        let col = if col.data_type() == field.data_type() {
            Arc::clone(col)
        } else {
            // A value the field cannot hold is an error, never a silent null.
            let strict = &crate::output::STRICT;
            arrow::compute::cast_with_options(col, field.data_type(), strict).map_err(|e| {
                RowError {
                    row: 0,
                    message: format!("cannot convert kept column `{name}`: {e}"),
                    hint: None,
                    ..RowError::default()
                }
            })?
        };
        columns.push(col);
    }
    // Each judge scorer's replies for this batch, kept while its rows are scored (again
    // around a failed row), so no request goes twice.
    let memos: Vec<Memo> = plan
        .scorers
        .iter()
        .map(|sp| Memo::for_fields(&sp.needed))
        .collect();
    let judged = |i: &usize| task.scorers[*i].scorer.judge().is_some();
    // The other scorers first, then the judge scorers, whose windows a helper thread sends
    // meanwhile: the CPU work of this batch does not wait for the judge.
    let order: Vec<usize> = (0..task.scorers.len())
        .filter(|i| !judged(i))
        .chain((0..task.scorers.len()).filter(judged))
        .collect();
    let mut per_scorer: Vec<Vec<ArrayRef>> = vec![Vec::new(); task.scorers.len()];
    let prefetch = runtime.filter(|_| {
        let n = order.iter().filter(|i| judged(i)).count();
        n > 0 && n < order.len()
    });
    std::thread::scope(|scope| -> Result<(), RowError> {
        let mut fetching = prefetch.map(|runtime| {
            let (memos, model_output) = (&memos, model_output.as_ref());
            scope.spawn(move || {
                let ctx = RowContext {
                    batch,
                    model_output,
                    model_output_raw: raw_output,
                };
                evalscore_scorers::judge::prefetch(task, runtime, &ctx, batch.num_rows(), memos);
            })
        });
        for i in order.iter().copied() {
            let (spec, sp) = (&task.scorers[i], &plan.scorers[i]);
            if spec.scorer.judge().is_some() {
                if let Some(f) = fetching.take() {
                    f.join()
                        .map_err(|_| internal(&"the judge prefetch thread panicked"))?;
                }
            }
            let judge = match (spec.scorer.model_key(), runtime) {
                (Some(_), Some(runtime)) => Some(JudgeCtx {
                    runtime,
                    memo: &memos[i],
                }),
                _ => None,
            };
            let input = ScorerInput {
                batch,
                model_output: model_output.as_ref(),
                raw_output,
                judge: judge.as_ref(),
                functions: plan.functions.as_deref(),
                memo: memo.map(|m| &m.batch),
            };
            let mut errors = Vec::new();
            let scored =
                score_rows(spec, &input, &sp.needed, budget, &mut errors, 0).map_err(|mut e| {
                    e.message = format!("scorer `{}`: {}", spec.key, e.message);
                    e
                })?;
            acc.row_errors[i] += errors.len() as u64;
            bad.extend(errors.into_iter().map(|(row, e)| (i, row, e)));
            acc.missing[i] += scored.missing;
            acc.invalid[i] += scored.invalid;
            for (mi, (m, state)) in spec
                .metrics
                .iter()
                .zip(acc.states[i].iter_mut())
                .enumerate()
            {
                let inputs = plan.metric_data.inputs((i, mi), m, &scored.fields, &data)?;
                let keys = if m.group_by.is_empty() {
                    None
                } else {
                    if !groups.contains_key(&m.group_by) {
                        let cols: Vec<ArrayRef> = m
                            .group_by
                            .iter()
                            .filter_map(|c| batch.column_by_name(c).cloned())
                            .collect();
                        let k = GroupKeys::compute(&cols).map_err(|e| RowError {
                            row: 0,
                            message: format!("scorer `{}`: metric `{}`: {e}", spec.key, m.name),
                            hint: None,
                            ..RowError::default()
                        })?;
                        groups.insert(m.group_by.clone(), k);
                    }
                    groups.get(&m.group_by)
                };
                let folded = match &m.python {
                    // Binding refuses a task whose python metrics have no functions.
                    Some(spec) => state.update_user(
                        inputs
                            .first()
                            .copied()
                            .ok_or_else(|| internal(&"metric input"))?,
                        keys,
                        &crate::functions::Fold {
                            functions: plan
                                .functions
                                .as_deref()
                                .ok_or_else(|| internal(&"python metric functions"))?,
                            spec,
                        },
                    ),
                    None => state.update_shared(&inputs, keys, memo.map(|m| &m.folds)),
                };
                // A user function's failure is its own message; the built-in folds fail only
                // on their bounds.
                folded.map_err(|e| RowError {
                row: 0,
                message: format!("scorer `{}`: metric `{}`: {e}", spec.key, m.name),
                hint: m.python.is_none().then(|| "metric states are bounded (docs/errors-and-limits.md, Limits): fold a field with fewer distinct values, or group by fewer columns".to_owned()),
                whole_file: true,
                ..RowError::default()
            })?;
            }
            for name in &sp.written {
                if let Some(a) = scored.fields.get(name) {
                    per_scorer[i].push(Arc::clone(a));
                }
            }
        }
        Ok(())
    })?;
    columns.extend(per_scorer.into_iter().flatten());
    Ok(columns)
}

/// What a scorer reads from a batch: the rows and the model output (as text and as stored).
struct ScorerInput<'a> {
    batch: &'a RecordBatch,
    model_output: Option<&'a ArrayRef>,
    raw_output: Option<&'a ArrayRef>,
    judge: Option<&'a JudgeCtx<'a>>,
    functions: Option<&'a dyn UserFunctions>,
    /// For the whole batch only: its slices are other arrays.
    memo: Option<&'a BatchMemo>,
}

impl ScorerInput<'_> {
    fn slice(
        &self,
        offset: usize,
        len: usize,
    ) -> (RecordBatch, Option<ArrayRef>, Option<ArrayRef>) {
        (
            self.batch.slice(offset, len),
            self.model_output.map(|a| a.slice(offset, len)),
            self.raw_output.map(|a| a.slice(offset, len)),
        )
    }
}

/// Scores one scorer over `rows` rows of `ctx`: the fields in `needed`.
fn score_scorer(
    spec: &ScorerSpec,
    ctx: &RowContext<'_>,
    rows: usize,
    needed: &std::collections::BTreeSet<&'static str>,
    judge: Option<&JudgeCtx<'_>>,
    functions: Option<&dyn UserFunctions>,
    memo: Option<&BatchMemo>,
) -> Result<ScoreColumns, RowError> {
    spec.scorer.score(&BatchInput {
        ctx,
        rows,
        needed,
        judge,
        functions,
        memo,
    })
}

/// Deepest nesting of [`score_rows`]: each level is a stage of a scorer (value, ground
/// truth, choices, kernel) that failed on an earlier row than the one before it.
const MAX_RETRY_DEPTH: usize = 16;

/// Scores one scorer over a batch, allowing row errors: when a row fails (and the budget
/// allows it), the rows before it are scored again on their own, the row is scored 0.0
/// (MCQA: `INVALID`) and recorded in `errors` as (row in the batch, error), and the rows
/// after it go on. A row's result does not depend on the other rows, so the scores of the
/// good rows are what one pass would give them. Without an allowance, the first error ends
/// the run as it always did.
fn score_rows(
    spec: &ScorerSpec,
    input: &ScorerInput<'_>,
    needed: &std::collections::BTreeSet<&'static str>,
    budget: &RowBudget,
    errors: &mut Vec<(usize, RowError)>,
    depth: usize,
) -> Result<ScoreColumns, RowError> {
    let rows = input.batch.num_rows();
    let whole = RowContext {
        batch: input.batch,
        model_output: input.model_output,
        model_output_raw: input.raw_output,
    };
    let first = match score_scorer(
        spec,
        &whole,
        rows,
        needed,
        input.judge,
        input.functions,
        input.memo,
    ) {
        Ok(s) => return Ok(s),
        Err(e) if !e.per_row || budget.limit == 0 || e.row >= rows => {
            return Err(take_or_stop(e, budget))
        }
        Err(e) => e,
    };
    // Pieces in row order: scored runs of rows, and single failed rows.
    let mut pieces: Vec<Option<ScoreColumns>> = Vec::new();
    let mut start = 0;
    let mut pending = Some(first);
    while start < rows {
        let e = match pending.take() {
            Some(e) => e,
            None => {
                let (b, m, r) = input.slice(start, rows - start);
                let ctx = RowContext {
                    batch: &b,
                    model_output: m.as_ref(),
                    model_output_raw: r.as_ref(),
                };
                match score_scorer(
                    spec,
                    &ctx,
                    rows - start,
                    needed,
                    input.judge,
                    input.functions,
                    None,
                ) {
                    Ok(s) => {
                        pieces.push(Some(s));
                        break;
                    }
                    Err(mut e) => {
                        if !e.per_row || e.row >= rows - start {
                            e.row += start;
                            return Err(e);
                        }
                        e.row += start;
                        e
                    }
                }
            }
        };
        let row = e.row;
        let mut e = e;
        if let Err(n) = budget.take() {
            e.over_limit = Some(n);
            return Err(e);
        }
        if row > start {
            if depth >= MAX_RETRY_DEPTH {
                return Err(e);
            }
            let (b, m, r) = input.slice(start, row - start);
            let sub = ScorerInput {
                batch: &b,
                model_output: m.as_ref(),
                raw_output: r.as_ref(),
                judge: input.judge,
                functions: input.functions,
                memo: None,
            };
            let mut sub_errors = Vec::new();
            let s = score_rows(spec, &sub, needed, budget, &mut sub_errors, depth + 1)?;
            errors.extend(sub_errors.into_iter().map(|(r, e)| (r + start, e)));
            pieces.push(Some(s));
        }
        errors.push((row, e));
        pieces.push(None);
        start = row + 1;
    }
    errors.sort_by_key(|(r, _)| *r);
    assemble(spec, input, needed, pieces)
}

/// A row error that cannot be allowed: counted against the budget when it is about a row
/// (so the message can give the count), returned as it is otherwise.
fn take_or_stop(mut e: RowError, budget: &RowBudget) -> RowError {
    if e.per_row {
        if let Err(n) = budget.take() {
            e.over_limit = Some(n);
        }
    }
    e
}

/// Joins the pieces of [`score_rows`] into one [`ScoreColumns`]: a failed row's `is_correct` is
/// 0.0 (false), its `completion_validity` `INVALID`, its other fields null.
fn assemble(
    spec: &ScorerSpec,
    input: &ScorerInput<'_>,
    needed: &std::collections::BTreeSet<&'static str>,
    pieces: Vec<Option<ScoreColumns>>,
) -> Result<ScoreColumns, RowError> {
    use arrow::array::new_null_array;
    // The fields' names and types: from a scored piece, or from scoring no rows.
    let empty;
    let shape = match pieces.iter().flatten().next() {
        Some(s) => s,
        None => {
            let (b, m, r) = input.slice(0, 0);
            let ctx = RowContext {
                batch: &b,
                model_output: m.as_ref(),
                model_output_raw: r.as_ref(),
            };
            empty = score_scorer(spec, &ctx, 0, needed, input.judge, input.functions, None)?;
            &empty
        }
    };
    let mut fields = BTreeMap::new();
    for (&name, template) in &shape.fields {
        let data_type = template.data_type();
        let filler: ArrayRef = match name {
            "is_correct" => match data_type {
                arrow::datatypes::DataType::Boolean => Arc::new(BooleanArray::from(vec![false])),
                _ => cast(
                    &(Arc::new(BooleanArray::from(vec![false])) as ArrayRef),
                    data_type,
                )
                .map_err(|e| internal(&e))?,
            },
            "completion_validity" => cast(
                &(Arc::new(StringArray::from(vec!["INVALID"])) as ArrayRef),
                data_type,
            )
            .map_err(|e| internal(&e))?,
            // A judged row whose request failed.
            "judge_status" => cast(
                &(Arc::new(StringArray::from(vec!["error"])) as ArrayRef),
                data_type,
            )
            .map_err(|e| internal(&e))?,
            "score" => cast(
                &(Arc::new(arrow::array::Float64Array::from(vec![0.0])) as ArrayRef),
                data_type,
            )
            .map_err(|e| internal(&e))?,
            _ => new_null_array(data_type, 1),
        };
        let mut parts: Vec<ArrayRef> = Vec::with_capacity(pieces.len());
        for p in &pieces {
            match p {
                None => parts.push(Arc::clone(&filler)),
                Some(s) => {
                    let a = s.fields.get(name).ok_or_else(|| internal(&name))?;
                    parts.push(if a.data_type() == data_type {
                        Arc::clone(a)
                    } else {
                        cast(a, data_type).map_err(|e| internal(&e))?
                    });
                }
            }
        }
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        let joined = arrow::compute::concat(&refs).map_err(|e| internal(&e))?;
        fields.insert(name, joined);
    }
    Ok(ScoreColumns {
        fields,
        missing: pieces.iter().flatten().map(|s| s.missing).sum(),
        invalid: pieces.iter().flatten().map(|s| s.invalid).sum(),
    })
}
