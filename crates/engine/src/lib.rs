//! The evalscore engine: the library API over in-memory batches, and the file pipeline on
//! top of it.
//!
//! - The library: a [`Task`] bound to an input schema ([`Scorer`]) scores `RecordBatch`es
//!   from any thread into score batches and partial metric [`States`], which merge in any
//!   order and travel as bytes ([`States::to_bytes`]); their figures are a [`Report`].
//!
//!   ```text
//!   let scorer = Scorer::new(task, &schema, &BindOptions::default())?;   // checked once
//!   let (scores, states) = scorer.score(&batch)?;                        // from any thread
//!   total.merge(&States::from_bytes(&states.to_bytes()?)?)?;             // anywhere
//!   let report = scorer.finish(&total)?;                                  // metrics rows
//!   ```
//!
//!   `cargo run --example score_batches` shows it end to end.
//! - [`run`]: the CLI's job (module `pipeline`, one function per step). It takes
//!   [`RunOptions`], parses the task, opens the inputs ([`evalscore_reader::Inputs`]; only the
//!   files `--where` and the task's `filter:` match, pruned by partition values), builds
//!   a plan (module `plan`: which columns to read, which columns to write, every template
//!   checked against the schema before any row is read, the metrics' columns and templates
//!   too: module `metric_inputs`), scores the input's units in parallel, small consecutive
//!   ones joined into one work item (module `score`), folds metric states as results arrive
//!   in input order, and writes `scores.parquet`, `metrics.parquet`, `confusion.parquet`,
//!   `metrics.json` and `run.json` through temporary files renamed into place only when
//!   everything succeeded (crate `evalscore-outdir`). Errors are [`Error`]s, rendered by the
//!   CLI as `error:` / `Caused by:` / `hint:`.
//! - [`run_suite`]: many tasks in one run (module `suite`): tasks that share inputs read
//!   them once, each task's outputs go to `DIR/task=NAME/`, and `DIR/suite.json` comes last.
//! - [`export_requests`]: `evalscore judge export`, the judge requests of a task over its
//!   inputs that the cache does not hold, as Batch API input files (module `export`).
//! - Judging apart from scoring, for a job spread over many processes (Spark, Ray) that sends
//!   each distinct request once: [`Scorer::judge_requests`] lists a batch's requests,
//!   [`TaskJudge`] sends requests gathered from anywhere, and [`Scorer::score_with_replies`]
//!   scores a batch with the replies got so ([`JudgeReplies`]), sending nothing.
#![warn(missing_docs)]

mod error;
mod export;
mod functions;
mod metric_inputs;
mod model_output;
mod output;
mod pipeline;
mod plan;
mod report;
mod row_error;
mod row_filter;
mod run_identity;
mod score;
mod scorer;
mod states;
mod suite;
mod time;

pub(crate) use error::ErrorExt;
pub use error::{
    printable, read_task_file, render, AvailableColumns, EngineError, Error, ErrorKind,
};
/// Delta tables of runs (`--format delta`), for `compare` and `report` of a table root.
pub use evalscore_delta::{DeltaError, DeltaRoot, Materialized};
/// Judge requests and replies, for [`Scorer::judge_requests`] and [`TaskJudge`].
pub use evalscore_judge::{CachedReply, ChatRequest, JudgeError, Key, RequestError};
use evalscore_outdir as outdir;
pub use evalscore_reader::{HivePartitioning, OpenProgress, OpenStep};
pub use evalscore_scorers::judge::{
    JudgeCache, JudgeOptions, JudgeProgress, ModelStats, RuntimeError as JudgeRuntimeError,
};
/// The scorer registry: every scorer type and its options.
pub use evalscore_scorers::registry;
pub use evalscore_scorers::Task;
pub use export::{export_requests, ExportOptions, ExportSummary};
pub use functions::{Functions, UserFunctions};
pub use output::{ConfusionRow, MetricRow, OutputFormat};
pub use pipeline::run;
pub use report::Report;
pub use row_error::RowErrorRecord;
pub use run_identity::{RunIdentity, MAX_LABELS, MAX_LABELS_BYTES};
pub use scorer::{BindOptions, JudgeReplies, JudgeRequest, Scorer, TaskJudge};
pub use states::States;
pub use suite::{is_suite_file, run_suite, SuiteOptions, SuiteSummary, SuiteTaskSummary};

use std::path::PathBuf;

/// The signal that asked the run to stop (its number), or 0. A signal handler sets it (the
/// CLI registers one for SIGINT, SIGTERM and SIGHUP); the run checks it between batches and
/// stops with an [`ErrorKind::Interrupted`] error, removing its temporary files. The metrics'
/// long fits at finish watch it too ([`evalscore_metrics::interrupt`]).
pub fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    static FLAG: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicUsize>> =
        std::sync::OnceLock::new();
    std::sync::Arc::clone(FLAG.get_or_init(|| {
        let flag = std::sync::Arc::<std::sync::atomic::AtomicUsize>::default();
        evalscore_metrics::interrupt::watch(std::sync::Arc::clone(&flag));
        flag
    }))
}

/// The signal that asked the run to stop, if one did.
pub fn interrupted() -> Option<usize> {
    match interrupt_flag().load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        sig => Some(sig),
    }
}

/// Stops with an [`ErrorKind::Interrupted`] error when a signal asked to.
pub(crate) fn check_interrupt() -> Result<(), Error> {
    match interrupted() {
        None => Ok(()),
        Some(sig) => Err(EngineError::Interrupted {
            signal: signal_name(sig),
        }
        .into()),
    }
}

fn signal_name(sig: usize) -> String {
    match sig {
        1 => "SIGHUP".to_owned(),
        2 => "SIGINT".to_owned(),
        15 => "SIGTERM".to_owned(),
        n => format!("signal {n}"),
    }
}

/// A progress callback: (rows done, rows in all).
pub type ProgressFn = Box<dyn Fn(u64, u64) + Sync>;
/// A warning callback.
pub type WarnFn = Box<dyn Fn(&str) + Sync>;

/// What `evalscore run` was asked to do.
#[derive(Default)]
pub struct RunOptions {
    /// The task file (`TASK.yaml`).
    pub task: PathBuf,
    /// `--input`: files, folders, globs and object storage URLs.
    pub inputs: Vec<PathBuf>,
    /// `--recursive`: a folder or prefix among `inputs` is read at any depth.
    pub recursive: bool,
    /// `--hive-partitioning` / `--no-hive-partitioning`: whether the `key=value` folders of
    /// trees and globs are input columns (by default, when every file has the same keys).
    pub hive_partitioning: HivePartitioning,
    /// `--union-by-name`: files whose columns differ are read as the union of their columns
    /// (a column a file lacks is null there; compatible types widen).
    pub union_by_name: bool,
    /// `--where EXPR`: only the input files whose Hive partition values match are read
    /// (ANDed with the task's `filter:`; the language is `evalscore_reader::PartitionFilter`'s).
    pub where_filter: Option<String>,
    /// `--out`: the output folder (or object storage prefix).
    pub out_dir: PathBuf,
    /// `--set NAME=VALUE` pairs.
    pub sets: Vec<(String, String)>,
    /// `--keep`; `None` keeps `id` when the input has it.
    pub keep: Option<Vec<String>>,
    /// `--output-column`.
    pub output_column: Option<String>,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    /// `--overwrite`: the outputs of an earlier run in `out_dir` are replaced.
    pub overwrite: bool,
    /// `--max-row-errors`: how many rows may fail and score 0.0 before the run stops.
    pub max_row_errors: RowErrorLimit,
    /// Called with (rows done, rows in all) as units finish, in input order.
    pub progress: Option<ProgressFn>,
    /// Told how listing and opening the inputs go, before the first row is read.
    pub open_progress: Option<evalscore_reader::OpenProgress>,
    /// Called once with each warning as soon as it is known.
    pub warn: Option<WarnFn>,
    /// The judge cache and `--offline`, for model-graded scorers.
    pub judge: JudgeOptions,
    /// Called about four times a second with the judge's live counters while a task with
    /// model-graded scorers runs.
    pub judge_progress: Option<Box<dyn Fn(JudgeProgress) + Sync>>,
    /// `--run-id`; `None` makes a UUIDv7.
    pub run_id: Option<String>,
    /// `--label KEY=VALUE` pairs.
    pub labels: Vec<(String, String)>,
    /// `--run-columns`: scores.parquet also gets the `run_id` column.
    pub run_columns: bool,
    /// `--format`: five files in `out_dir` (the default), or rows in the Delta tables under
    /// the root `out_dir`.
    pub format: OutputFormat,
    /// The task's name in the Delta tables' `task` column (a suite sets each task's name);
    /// `None`: the task file's name without its extension.
    pub task_name: Option<String>,
    /// `--storage-option KEY=VALUE` pairs for object storage inputs and outputs (over the
    /// environment's settings). Never written to an output.
    pub storage_options: Vec<(String, String)>,
    /// User functions for `custom` scorers with `function:` and `python` metrics (the
    /// Python package's `Task.run`); the CLI has none.
    pub functions: Option<Functions>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("task", &self.task)
            .field("inputs", &self.inputs)
            .field("out_dir", &self.out_dir)
            .finish_non_exhaustive()
    }
}

/// `--max-row-errors`: the rows that may fail (bad data in a row: an MCQA ground truth that
/// is not one character, a template that fails on the row) and score 0.0 instead of
/// stopping the run. `Count(0)`, the default, stops at the first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowErrorLimit {
    /// At most this many rows.
    Count(u64),
    /// At most this percentage of the run's rows (rounded down).
    Percent(f64),
}

impl Default for RowErrorLimit {
    fn default() -> Self {
        RowErrorLimit::Count(0)
    }
}

impl RowErrorLimit {
    /// Parses `N` or `N%` (a percentage from 0 to 100, decimals allowed).
    pub fn parse(s: &str) -> Result<RowErrorLimit, String> {
        let t = s.trim();
        if let Some(p) = t.strip_suffix('%') {
            match p.trim().parse::<f64>() {
                Ok(v) if (0.0..=100.0).contains(&v) => Ok(RowErrorLimit::Percent(v)),
                _ => Err(format!(
                    "`{s}` is not a percentage from 0% to 100% (e.g. `0.1%`)"
                )),
            }
        } else {
            t.parse::<u64>().map(RowErrorLimit::Count).map_err(|_| {
                format!("`{s}` is not a row count or a percentage (e.g. `100` or `0.1%`)")
            })
        }
    }

    /// The number of rows allowed in a run of `total` rows.
    pub fn rows(self, total: u64) -> u64 {
        match self {
            RowErrorLimit::Count(n) => n,
            // Exact for the shares users write: 0.1% of 10M rows is 10,000, not 9,999.
            RowErrorLimit::Percent(p) => ((p * total as f64 / 100.0) + 1e-9).floor() as u64,
        }
    }

    /// Whether any row error may be allowed (then metrics report `row_errors`).
    pub fn allows_any(self) -> bool {
        match self {
            RowErrorLimit::Count(n) => n > 0,
            RowErrorLimit::Percent(p) => p > 0.0,
        }
    }
}

impl std::fmt::Display for RowErrorLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowErrorLimit::Count(n) => write!(f, "{n}"),
            RowErrorLimit::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// What a finished run reports.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Rows scored.
    pub rows: u64,
    /// The rows of metrics.parquet.
    pub metrics: Vec<MetricRow>,
    /// The rows of confusion.parquet.
    pub confusion: Vec<ConfusionRow>,
    /// The group-by columns, in the order of `MetricRow::groups`.
    pub group_columns: Vec<String>,
    /// (scorer key, missing rows) in task order.
    pub missing: Vec<(String, u64)>,
    /// Every warning of the run, in the order they were given.
    pub warnings: Vec<String>,
    /// (scorer key, rows that failed and scored 0.0) in task order.
    pub row_errors: Vec<(String, u64)>,
    /// The first row errors, in input order (as many as run.json lists).
    pub row_error_list: Vec<RowErrorRecord>,
    /// The run's wall-clock time.
    pub wall_seconds: f64,
    /// Where the outputs were written.
    pub out_dir: PathBuf,
    /// The run's identity, as the outputs carry it.
    pub run: RunIdentity,
}
