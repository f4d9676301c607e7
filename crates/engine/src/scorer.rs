//! [`Scorer`]: a task bound to an input schema, which scores in-memory record batches from
//! any thread into score batches and [`States`], and reports their figures. Module
//! `judge_requests`: a batch's judge requests listed ahead, sent once per job elsewhere
//! ([`TaskJudge`]), and the batch scored with exactly those replies ([`JudgeReplies`]).

use crate::plan::{Plan, PlanError, PlanOptions};
use crate::score::{score_batch, RowBudget, UnitResult};
use crate::{EngineError, Error, Report, RunIdentity, States};
use arrow::array::{ArrayRef, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{Schema, SchemaRef};
use evalscore_scorers::judge::JudgeRuntime;
use evalscore_scorers::Task;
use std::path::Path;

mod judge_requests;
pub use judge_requests::{JudgeReplies, JudgeRequest, TaskJudge};

/// How a task is bound to a schema: the library's form of `--keep`, `--output-column` and
/// `--max-row-errors`.
#[derive(Debug, Clone, Default)]
pub struct BindOptions {
    /// Input columns copied into the scores; `None` keeps `id` when the schema has it.
    pub keep: Option<Vec<String>>,
    /// The model output column; `None`: the task's `output_column`, else `output`.
    pub output_column: Option<String>,
    /// Row errors allowed over the scorer's lifetime (all threads together); 0 makes the
    /// first one an error, as the CLI's default does.
    pub max_row_errors: u64,
    /// Where model-graded scorers' replies are cached, and whether requests may be sent.
    pub judge: evalscore_scorers::judge::JudgeOptions,
    /// The user functions the task names (`custom` with `function:`, `python` metrics);
    /// a task naming one that is not here is refused when bound.
    pub functions: Option<crate::functions::Functions>,
}

/// A task bound to an input schema: every template, column and type checked once, with the
/// same load-time errors as the CLI. `Sync`: score batches from many threads at once.
#[derive(Debug)]
pub struct Scorer {
    pub(crate) task: Task,
    pub(crate) plan: Plan,
    pub(crate) budget: RowBudget,
    /// Whether the report has `row_errors` rows.
    pub(crate) allow_row_errors: bool,
    /// The run identity the report's tables carry ([`Scorer::set_run`]).
    pub(crate) run: RunIdentity,
    /// The task's `filter:` over the batches' columns; `None` for a run over files, which
    /// prunes the files instead.
    rows: Option<evalscore_reader::RowFilter>,
    /// [`Scorer::input_columns`]: the plan's columns and the filter's, in schema order.
    columns: Vec<String>,
}

impl Scorer {
    /// Binds `task` to `schema`, with the same load-time errors as the CLI; they name no
    /// file ([`Scorer::with_source`] names the task's and the schema's).
    pub fn new(task: Task, schema: &Schema, opts: &BindOptions) -> Result<Scorer, Error> {
        Scorer::with_source(task, schema, opts, None)
    }

    /// [`Scorer::new`], naming the task file and the schema's file in messages. The task's
    /// `filter:` keeps the rows of each batch whose columns match it (a column it names
    /// must be in `schema`); the others are not scored.
    pub fn with_source(
        task: Task,
        schema: &Schema,
        opts: &BindOptions,
        source: Option<(&Path, &Path)>,
    ) -> Result<Scorer, Error> {
        let mut scorer = Scorer::for_files(task, schema, opts, source)?;
        scorer.rows = crate::row_filter::bind(&scorer.task, schema, source.map(|(t, _)| t))?;
        if let Some(rows) = &scorer.rows {
            let named: Vec<&str> = rows.columns().collect();
            scorer.columns = schema
                .fields()
                .iter()
                .map(|f| f.name())
                .filter(|n| scorer.plan.columns.contains(n) || named.contains(&n.as_str()))
                .cloned()
                .collect();
        }
        Ok(scorer)
    }

    /// [`Scorer::with_source`] for a run over files, whose `filter:` prunes the files
    /// before they are read: batches are scored whole.
    pub(crate) fn for_files(
        task: Task,
        schema: &Schema,
        opts: &BindOptions,
        source: Option<(&Path, &Path)>,
    ) -> Result<Scorer, Error> {
        let plan = Plan::new(
            &task,
            schema,
            PlanOptions {
                keep: opts.keep.as_deref(),
                output_column: opts.output_column.as_deref(),
                source: source.map(|(_, data)| data),
            },
        )
        .map_err(|e| match e {
            PlanError::Task(t) => task_error(t, source.map(|(task_path, _)| task_path)),
            PlanError::Other(e) => e.into(),
        })?;
        let mut plan = plan;
        crate::functions::check(&task, opts.functions.as_deref())
            .map_err(|t| task_error(t, source.map(|(task_path, _)| task_path)))?;
        plan.functions = opts.functions.clone();
        plan.judge = JudgeRuntime::new(
            &task.models,
            &task.model_keys(),
            &opts.judge,
            Some(crate::interrupt_flag()),
        )?
        .map(std::sync::Arc::new);
        Ok(Scorer {
            columns: plan.columns.clone(),
            task,
            plan,
            budget: RowBudget::new(opts.max_row_errors),
            allow_row_errors: opts.max_row_errors > 0,
            run: RunIdentity::starting_now(),
            rows: None,
        })
    }

    /// The input columns the task reads (templates, the model output, `group_by`, kept
    /// columns, those its `filter:` names), in schema order: a caller holding wider data can
    /// project to them first.
    pub fn input_columns(&self) -> &[String] {
        &self.columns
    }

    /// The schema of the score batches: kept columns, then `<key>__<field>` per written
    /// field, as scores.parquet.
    pub fn output_schema(&self) -> SchemaRef {
        self.plan.output_schema()
    }

    /// What each judge model cost so far (requests, cache hits, retries, failures, tokens,
    /// time waited), in `models:` order; empty when no scorer asks a model.
    pub fn judge_stats(&self) -> Vec<crate::ModelStats> {
        self.plan
            .judge
            .as_ref()
            .map_or_else(Vec::new, |j| j.stats())
    }

    /// Live judge counters for a progress display; `None` when no scorer asks a model.
    pub fn judge_progress(&self) -> Option<crate::JudgeProgress> {
        self.plan.judge.as_ref().map(|j| j.progress())
    }

    /// States with nothing folded in yet.
    pub fn empty_states(&self) -> States {
        States::unfolded(self.task.fingerprint, self.plan.empty_states())
    }

    /// Scores one batch of the bound schema: its score batch (the rows in order; with a
    /// `filter:`, those it keeps) and its folded states. Errors name the row (counted from 1
    /// within the batch).
    pub fn score(&self, batch: &RecordBatch) -> Result<(RecordBatch, States), Error> {
        self.score_asking(batch, None)
    }

    /// [`Scorer::score`], asking `judge` (when given) instead of the scorer's own judge.
    fn score_asking(
        &self,
        batch: &RecordBatch,
        judge: Option<&JudgeRuntime>,
    ) -> Result<(RecordBatch, States), Error> {
        self.check_batch(batch)?;
        if let Some(rows) = &self.rows {
            if let Some((kept, mask)) = crate::row_filter::keep(rows, batch)? {
                return self.score_rows(&kept, Some(&mask), judge);
            }
        }
        self.score_rows(batch, None, judge)
    }

    /// [`Scorer::score`] of the rows kept; `kept`: which rows of the caller's batch they are.
    fn score_rows(
        &self,
        batch: &RecordBatch,
        kept: Option<&arrow::buffer::BooleanBuffer>,
        judge: Option<&JudgeRuntime>,
    ) -> Result<(RecordBatch, States), Error> {
        let mut acc = UnitResult {
            row_groups: Vec::new(),
            states: self.plan.empty_states(),
            missing: vec![0; self.task.scorers.len()],
            rows: batch.num_rows() as u64,
            row_errors: vec![0; self.task.scorers.len()],
            invalid: vec![0; self.task.scorers.len()],
            row_error_list: Vec::new(),
        };
        let copied = vec![false; self.plan.keep.len()];
        let mut bad = Vec::new();
        let given = crate::score::Given {
            copied: &copied,
            output_text: None,
            memo: None,
            judge,
        };
        let columns = score_batch(
            &self.plan,
            &self.task,
            batch,
            given,
            &mut acc,
            &self.budget,
            &mut bad,
        )
        .map_err(|e| EngineError::Row {
            at: format!(
                "row {}",
                kept.and_then(|k| k.set_indices().nth(e.row))
                    .unwrap_or(e.row)
                    + 1
            ),
            message: e.message,
            kind: crate::ErrorKind::Other,
            hint: e.hint,
        })?;
        // Row errors are counted in `acc.row_errors`; their details are the CLI's (run.json).
        drop(bad);
        let schema = self.plan.output_schema();
        let columns: Vec<ArrayRef> = columns
            .iter()
            .zip(schema.fields())
            .map(|(c, f)| {
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else {
                    cast(c, f.data_type()).map_err(|source| EngineError::ArrowColumn {
                        column: f.name().clone(),
                        source,
                    })
                }
            })
            .collect::<Result<_, _>>()?;
        let scores = RecordBatch::try_new_with_options(
            schema,
            columns,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )
        .map_err(EngineError::Arrow)?;
        Ok((scores, States::folded(self.task.fingerprint, acc)))
    }

    /// The figures of `states`, in the order and shape of metrics.parquet (a `row_errors`
    /// row per scorer when row errors are allowed) and confusion.parquet. With a shared
    /// judge cache, the replies bought so far are uploaded first ([`Scorer::flush_cache`]).
    pub fn finish(&self, states: &States) -> Result<Report, Error> {
        self.flush_cache()?;
        let finished;
        let states = match self.plan.functions.as_deref() {
            Some(f) if states.has_user_metrics() => {
                let mut s = states.clone();
                s.finish_user(&self.task, f)?;
                finished = s;
                &finished
            }
            _ => states,
        };
        Ok(states.figures(
            &self.task,
            self.plan.group_columns.clone(),
            self.allow_row_errors,
            self.run.clone(),
        ))
    }

    /// Uploads the judge replies this scorer bought that a shared judge cache does not hold
    /// yet (nothing without one): a worker that scores batches and never finishes calls it
    /// when its last batch is done.
    pub fn flush_cache(&self) -> Result<(), Error> {
        if let Some(rt) = self.plan.judge.as_deref() {
            rt.flush_cache()?;
        }
        Ok(())
    }

    /// The run identity [`Scorer::finish`]'s reports carry: by default a fresh UUIDv7 made
    /// when the scorer was bound, that time, and no labels.
    pub fn set_run(&mut self, run: RunIdentity) {
        self.run = run;
    }

    /// The run identity reports carry.
    pub fn run(&self) -> &RunIdentity {
        &self.run
    }

    /// Every column the plan reads must be in the batch with the bound type.
    fn check_batch(&self, batch: &RecordBatch) -> Result<(), Error> {
        if let Some(rows) = &self.rows {
            if let Some(name) = rows.columns().find(|n| batch.column_by_name(n).is_none()) {
                return Err(EngineError::BatchColumnMissing(name.to_owned()).into());
            }
        }
        for name in &self.plan.columns {
            match (
                batch.schema().field_with_name(name),
                self.plan.input_type(name),
            ) {
                (Ok(f), Some(t)) if f.data_type() == t => {}
                (Ok(f), Some(t)) => {
                    return Err(EngineError::BatchColumnType {
                        column: name.clone(),
                        found: f.data_type().clone(),
                        bound: t.clone(),
                    }
                    .into())
                }
                (Err(_), _) => return Err(EngineError::BatchColumnMissing(name.clone()).into()),
                (Ok(_), None) => {}
            }
        }
        Ok(())
    }
}

/// A task error as the library reports it: located in the task file when its path is known.
fn task_error(t: evalscore_task::TaskError, task_path: Option<&Path>) -> Error {
    EngineError::Task {
        path: task_path.map(Path::to_path_buf),
        error: t,
    }
    .into()
}
