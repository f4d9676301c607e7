//! The engine without files: a task bound to an input schema scores in-memory record
//! batches, and the metric states of many batches (threads, Spark partitions, machines) merge
//! in any order, in one process or as bytes.
//!
//! ```text
//! let scorer = Scorer::new(task, &schema, &BindOptions::default())?;   // checked once
//! let (scores, states) = scorer.score(&batch)?;                        // from any thread
//! total.merge(&States::from_bytes(&states.to_bytes()?)?)?;             // anywhere
//! let report = scorer.finish(&total)?;                                  // metrics rows
//! ```
//!
//! `cargo run --example score_batches` runs a complete example.

use crate::plan::{Plan, PlanError, PlanOptions};
pub use crate::report::Report;
use crate::score::{score_batch, RowBudget, UnitResult};
use crate::{EngineError, Error, RunIdentity};
use arrow::array::{ArrayRef, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{Schema, SchemaRef};
use evalscore_metrics::Grouped;
use evalscore_scorers::judge::JudgeRuntime;
use evalscore_scorers::Task;
use std::path::Path;

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

/// Partial metric states: what [`Scorer::score`] folds from a batch, mergeable with
/// [`States::merge`] in any order and across machines with [`States::to_bytes`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct States {
    /// The task's fingerprint ([`Task::fingerprint`]); in the byte form's header, not its body.
    #[serde(skip)]
    fingerprint: [u8; 32],
    /// Per scorer, per metric.
    metrics: Vec<Vec<Grouped>>,
    /// Per scorer: rows with a null value or ground truth.
    missing: Vec<u64>,
    /// Per scorer: rows that failed and scored 0.0.
    row_errors: Vec<u64>,
    rows: u64,
    /// Per scorer: judge replies that could not be read.
    invalid: Vec<u64>,
}

/// The figures of `states` without an input schema: what [`Scorer::finish`] gives for the
/// scorer of `task` that folded them, wherever that was (a Spark executor, another
/// process). `allow_row_errors` adds the `row_errors` rows, as a scorer bound with
/// `max_row_errors > 0` does. `functions` finish the task's `python` metrics (required when
/// it has any). States of another task are an error.
pub fn report(
    task: &Task,
    states: &States,
    allow_row_errors: bool,
    functions: Option<&dyn crate::functions::UserFunctions>,
) -> Result<Report, Error> {
    check_task(task, states)?;
    let finished;
    let states = if states.has_user_metrics() {
        let functions = functions.ok_or(EngineError::NeedsFunctions)?;
        let mut s = states.clone();
        s.finish_user(task, functions)?;
        finished = s;
        &finished
    } else {
        states
    };
    Ok(states.report(
        task,
        crate::plan::group_columns(task),
        allow_row_errors,
        // Merged states belong to no one run: a fresh identity, as a new scorer gets.
        RunIdentity::starting_now(),
    ))
}

/// metrics.json's content for `report`, the figures of `states` for `task` (see [`report`]).
pub fn metrics_json(
    task: &Task,
    states: &States,
    report: &Report,
    allow_row_errors: bool,
) -> Result<serde_json::Value, Error> {
    check_task(task, states)?;
    let row_errors = named(task, &states.row_errors);
    Ok(crate::output::tables::metrics_json(
        task,
        &report.metrics,
        &report.confusion,
        &report.group_columns,
        &named(task, &states.missing),
        allow_row_errors.then_some(row_errors.as_slice()),
        states.rows,
        &report.run,
    ))
}

/// States of `task` with nothing folded in yet, as [`Scorer::empty_states`] gives without
/// an input schema.
pub fn empty_states(task: &Task) -> Result<States, Error> {
    let n = task.scorers.len();
    Ok(States {
        fingerprint: task.fingerprint,
        metrics: crate::plan::state_template(task)?,
        missing: vec![0; n],
        row_errors: vec![0; n],
        rows: 0,
        invalid: vec![0; n],
    })
}

/// Per-scorer `counts` named by the scorers' keys, in task order.
pub(crate) fn named(task: &Task, counts: &[u64]) -> Vec<(String, u64)> {
    task.scorers
        .iter()
        .map(|s| s.key.clone())
        .zip(counts.iter().copied())
        .collect()
}

/// States folded by another task cannot be read with this one's scorers.
fn check_task(task: &Task, states: &States) -> Result<(), Error> {
    let shape: Vec<usize> = task.scorers.iter().map(|s| s.metrics.len()).collect();
    if states.fingerprint != task.fingerprint {
        return Err(EngineError::StatesOfAnotherTask {
            states: short(&states.fingerprint),
            task: short(&task.fingerprint),
        }
        .into());
    }
    if states.metrics.iter().map(Vec::len).collect::<Vec<_>>() != shape {
        return Err(EngineError::StatesDoNotFit.into());
    }
    Ok(())
}

/// The first bytes of serialized [`States`].
pub const STATES_MAGIC: &[u8; 4] = b"ESST";
/// The layout version of serialized [`States`] this build writes and reads.
pub const STATES_FORMAT_VERSION: u16 = 6;

impl Scorer {
    /// Binds `task` to `schema`. `source` names where the schema came from in messages.
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
        let n = self.task.scorers.len();
        States {
            fingerprint: self.task.fingerprint,
            metrics: self.plan.empty_states(),
            missing: vec![0; n],
            row_errors: vec![0; n],
            rows: 0,
            invalid: vec![0; n],
        }
    }

    /// Scores one batch of the bound schema: its score batch (the rows in order; with a
    /// `filter:`, those it keeps) and its folded states. Errors name the row (counted from 1
    /// within the batch).
    pub fn score(&self, batch: &RecordBatch) -> Result<(RecordBatch, States), Error> {
        self.check_batch(batch)?;
        if let Some(rows) = &self.rows {
            if let Some((kept, mask)) = crate::row_filter::keep(rows, batch)? {
                return self.score_rows(&kept, Some(&mask));
            }
        }
        self.score_rows(batch, None)
    }

    /// [`Scorer::score`] of the rows kept; `kept`: which rows of the caller's batch they are.
    fn score_rows(
        &self,
        batch: &RecordBatch,
        kept: Option<&arrow::buffer::BooleanBuffer>,
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
        Ok((
            scores,
            States {
                fingerprint: self.task.fingerprint,
                metrics: acc.states,
                missing: acc.missing,
                row_errors: acc.row_errors,
                rows: acc.rows,
                invalid: acc.invalid,
            },
        ))
    }

    /// The figures of `states`, in the order and shape of metrics.parquet (a `row_errors`
    /// row per scorer when row errors are allowed) and confusion.parquet.
    pub fn finish(&self, states: &States) -> Result<Report, Error> {
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
        Ok(states.report(
            &self.task,
            self.plan.group_columns.clone(),
            self.allow_row_errors,
            self.run.clone(),
        ))
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

impl States {
    /// The figures of these (finished) states over `group_columns`, carrying `run`.
    fn report(
        &self,
        task: &Task,
        group_columns: Vec<String>,
        allow_row_errors: bool,
        run: RunIdentity,
    ) -> Report {
        Report {
            metrics: crate::plan::metric_rows(
                &group_columns,
                task,
                &self.metrics,
                &self.missing,
                &self.invalid,
                allow_row_errors.then_some(self.row_errors.as_slice()),
                self.rows,
            ),
            confusion: crate::plan::confusion_rows(&group_columns, task, &self.metrics),
            group_columns,
            rows: self.rows,
            run,
        }
    }

    /// Whether any metric is a `python` metric (folded by user functions).
    pub fn has_user_metrics(&self) -> bool {
        self.metrics.iter().flatten().any(Grouped::is_user)
    }

    /// Calls `f` with each `python` metric's state and its functions' spec.
    fn each_user(
        &mut self,
        task: &Task,
        mut f: impl FnMut(
            &mut Grouped,
            &evalscore_task::PythonMetric,
        ) -> Result<(), evalscore_metrics::MetricError>,
    ) -> Result<(), Error> {
        for (scorer, states) in task.scorers.iter().zip(self.metrics.iter_mut()) {
            for (m, state) in scorer.metrics.iter().zip(states.iter_mut()) {
                if let Some(spec) = &m.python {
                    f(state, spec).map_err(|source| EngineError::UserMetric {
                        scorer: scorer.key.clone(),
                        metric: m.name.clone(),
                        source,
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Merges the pending partial states of `task`'s `python` metrics with their `merge`
    /// function once more than [`evalscore_metrics::USER_PARTS_PENDING`] are pending, so
    /// that states merged from many batches stay small.
    pub fn compact_user(
        &mut self,
        task: &Task,
        functions: &dyn crate::functions::UserFunctions,
    ) -> Result<(), Error> {
        self.each_user(task, |state, spec| {
            state.compact_user(
                evalscore_metrics::USER_PARTS_PENDING,
                &crate::functions::Fold { functions, spec },
            )
        })
    }

    /// Runs the `finish` function of each of `task`'s `python` metrics.
    fn finish_user(
        &mut self,
        task: &Task,
        functions: &dyn crate::functions::UserFunctions,
    ) -> Result<(), Error> {
        self.each_user(task, |state, spec| {
            state.finish_user(&crate::functions::Fold { functions, spec })
        })
    }

    /// Folds `other` (states of the same scorer, from any batch, thread or machine) into
    /// these. The result does not depend on the order of merges.
    pub fn merge(&mut self, other: &States) -> Result<(), Error> {
        if self.fingerprint != other.fingerprint {
            return Err(EngineError::MergeAnotherTask {
                other: short(&other.fingerprint),
                these: short(&self.fingerprint),
            }
            .into());
        }
        let shape = |s: &States| -> Vec<usize> { s.metrics.iter().map(Vec::len).collect() };
        if shape(self) != shape(other) || self.missing.len() != other.missing.len() {
            return Err(EngineError::MergeDifferentTasks.into());
        }
        for (a, b) in self.metrics.iter_mut().zip(&other.metrics) {
            for (x, y) in a.iter_mut().zip(b) {
                x.merge(y).map_err(EngineError::MergeMetric)?;
            }
        }
        for (a, b) in self.missing.iter_mut().zip(&other.missing) {
            *a += b;
        }
        for (a, b) in self.row_errors.iter_mut().zip(&other.row_errors) {
            *a += b;
        }
        for (a, b) in self.invalid.iter_mut().zip(&other.invalid) {
            *a += b;
        }
        self.rows += other.rows;
        Ok(())
    }

    /// Rows folded in.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Per scorer, rows with a null value or ground truth.
    pub fn missing(&self) -> &[u64] {
        &self.missing
    }

    /// Per scorer, rows that failed and scored 0.0.
    pub fn row_errors(&self) -> &[u64] {
        &self.row_errors
    }

    /// A warning per classification metric that excluded more than half of its rows:
    /// `scorer `KEY`: metric `NAME` excluded ...`, in task order.
    pub fn exclusion_warnings(&self, task: &Task) -> Vec<String> {
        let mut out = Vec::new();
        for (spec, states) in task.scorers.iter().zip(&self.metrics) {
            for (m, state) in spec.metrics.iter().zip(states) {
                if let Some(w) = state.exclusion_warning() {
                    out.push(format!("scorer `{}`: metric `{}` {w}", spec.key, m.name));
                }
            }
        }
        out
    }

    /// Per scorer, judge replies that could not be read (0 for other scorers).
    pub fn invalid(&self) -> &[u64] {
        &self.invalid
    }

    /// States as the pipeline folds them from one work item.
    pub(crate) fn folded(fingerprint: [u8; 32], r: crate::score::UnitResult) -> States {
        States {
            fingerprint,
            metrics: r.states,
            missing: r.missing,
            row_errors: r.row_errors,
            rows: r.rows,
            invalid: r.invalid,
        }
    }

    /// The task fingerprint these states belong to.
    pub fn fingerprint(&self) -> [u8; 32] {
        self.fingerprint
    }

    /// The states as bytes. Layout, version 6: `ESST`; the format version as a little-endian
    /// `u16` ([`STATES_FORMAT_VERSION`]); the task's 32-byte fingerprint (SHA-256 of the task
    /// text after placeholder substitution); then, in postcard's wire format, per scorer its
    /// metric states (see `evalscore_metrics::bytes`: each names its metric type and holds
    /// its type's own bytes), per scorer the missing and the row-error counts, the rows
    /// folded, and per scorer the invalid judge replies. Versions 1 to 3, whose metric states
    /// were of a closed set of types, and 4, whose `mean` and `win_rate` had no bootstrap,
    /// are refused with an error naming the version. Equal
    /// states give equal bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(128);
        out.extend_from_slice(STATES_MAGIC);
        out.extend_from_slice(&STATES_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&self.fingerprint);
        Ok(postcard::to_extend(self, out).map_err(EngineError::SerializeStates)?)
    }

    /// States from [`States::to_bytes`]; other magic bytes, another version or damaged
    /// bytes are an error saying which.
    pub fn from_bytes(bytes: &[u8]) -> Result<States, Error> {
        let Some(rest) = bytes.strip_prefix(STATES_MAGIC.as_slice()) else {
            return Err(EngineError::NotStates.into());
        };
        let Some((version, body)) = rest.split_first_chunk::<2>() else {
            return Err(EngineError::StatesEndBeforeVersion.into());
        };
        let version = u16::from_le_bytes(*version);
        if version != STATES_FORMAT_VERSION {
            return Err(EngineError::StatesVersion {
                version,
                newest: STATES_FORMAT_VERSION,
            }
            .into());
        }
        let Some((fingerprint, body)) = body.split_first_chunk::<32>() else {
            return Err(EngineError::StatesEndBeforeFingerprint.into());
        };
        let read = postcard::take_from_bytes::<States>(body);
        match read {
            Ok((s, [])) => Ok(States {
                fingerprint: *fingerprint,
                ..s
            }),
            Ok((_, extra)) => Err(EngineError::StatesTrailing(extra.len()).into()),
            Err(e) => Err(EngineError::DamagedStates(e).into()),
        }
    }
}

/// The first 12 hex digits of a fingerprint (a SHA-256), for messages.
fn short(f: &[u8; 32]) -> String {
    format!(
        "{:.12x}",
        sha2::digest::Output::<sha2::Sha256>::from_slice(f)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_is_the_first_twelve_hex_digits() {
        let mut f = [0u8; 32];
        f[..7].copy_from_slice(&[0x01, 0xab, 0x00, 0xff, 0x10, 0x0c, 0xee]);
        assert_eq!(super::short(&f), "01ab00ff100c");
    }
}
