//! The evalscore engine: the library API over in-memory batches, and the file pipeline on
//! top of it.
//!
//! - [`library`]: a [`Task`] bound to an input schema ([`Scorer`]) scores `RecordBatch`es from
//!   any thread into score batches and partial metric [`States`], which merge in any order
//!   and travel as bytes ([`States::to_bytes`]). `cargo run --example
//!   score_batches` shows it end to end.
//! - [`run`]: the CLI's job. It takes [`RunOptions`], parses the task, opens the inputs
//!   ([`evalscore_reader::Inputs`]), builds a [`plan::Plan`] (which columns to read, which
//!   columns to write, every template checked against the schema before any row is read),
//!   scores the input's units in parallel, small consecutive ones joined into one work item
//!   (`work_items`, [`score`]), folds metric states as results arrive in input order, and
//!   writes `scores.parquet`, `metrics.parquet`, `confusion.parquet`, `metrics.json` and
//!   `run.json` through temporary files renamed into place only when everything succeeded
//!   ([`outdir`]). Errors are [`Error`]s, rendered by the CLI as `error:` / `Caused by:` /
//!   `hint:`.

mod bitscores;
mod error;
pub mod export;
pub mod functions;
pub mod library;
mod model_output;
mod output;
pub mod plan;
mod row_error;
pub mod run_identity;
pub mod score;
mod time;

pub use error::{render, Cause, Error, ErrorExt, ErrorKind};
/// The output folder, written all or nothing (crate `evalscore-outdir`).
pub use evalscore_outdir as outdir;
pub use evalscore_scorers::judge::{JudgeCache, JudgeOptions, JudgeProgress, ModelStats};
/// The scorer registry: every scorer type and its options.
pub use evalscore_scorers::registry;
pub use evalscore_scorers::Task;
pub use export::{export_requests, ExportOptions, ExportSummary};
pub use functions::{Functions, UserFunctions};
pub use library::{BindOptions, Report, Scorer, States};
pub use output::{ConfusionRow, MetricRow, OUTPUT_FILES};
pub use row_error::{RowErrorRecord, ROW_ERRORS_LISTED};
pub use run_identity::{RunIdentity, MAX_LABELS, MAX_LABELS_BYTES};

use evalscore_reader::{scan_ordered, Inputs};
use sha2::{Digest, Sha256};
use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

/// The signal that asked the run to stop (its number), or 0. A signal handler sets it (the
/// CLI registers one for SIGINT, SIGTERM and SIGHUP); the run checks it between batches and
/// stops with an [`ErrorKind::Interrupted`] error, removing its temporary files.
pub fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    static FLAG: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicUsize>> =
        std::sync::OnceLock::new();
    std::sync::Arc::clone(FLAG.get_or_init(Default::default))
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
        Some(sig) => Err(Error::new(format!(
            "interrupted by {}; no output was written",
            signal_name(sig)
        ))
        .kind(ErrorKind::Interrupted)),
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
    pub task: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub out_dir: PathBuf,
    /// `--set NAME=VALUE` pairs.
    pub sets: Vec<(String, String)>,
    /// `--keep`; `None` keeps `id` when the input has it.
    pub keep: Option<Vec<String>>,
    /// `--output-column`.
    pub output_column: Option<String>,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    pub overwrite: bool,
    /// `--max-row-errors`: how many rows may fail and score 0.0 before the run stops.
    pub max_row_errors: RowErrorLimit,
    /// Called with (rows done, rows in all) as units finish, in input order.
    pub progress: Option<ProgressFn>,
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
    pub rows: u64,
    pub metrics: Vec<MetricRow>,
    pub confusion: Vec<ConfusionRow>,
    /// The group-by columns, in the order of `MetricRow::groups`.
    pub group_columns: Vec<String>,
    /// (scorer key, missing rows) in task order.
    pub missing: Vec<(String, u64)>,
    pub warnings: Vec<String>,
    /// (scorer key, rows that failed and scored 0.0) in task order.
    pub row_errors: Vec<(String, u64)>,
    /// The first [`ROW_ERRORS_LISTED`] row errors, in input order.
    pub row_error_list: Vec<RowErrorRecord>,
    pub wall_seconds: f64,
    pub out_dir: PathBuf,
    /// The run's identity, as the outputs carry it.
    pub run: RunIdentity,
}

/// Runs a task end to end.
pub fn run(opts: &RunOptions) -> Result<RunSummary, Error> {
    let started = Instant::now();
    let run_identity = RunIdentity::new(opts.run_id.as_deref(), &opts.labels)?;
    let started_at = run_identity
        .started_at
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    // Checked before reading: a FIFO would block and `/dev/zero` would never end.
    match std::fs::metadata(&opts.task) {
        Ok(m) if !m.is_file() => {
            return Err(Error::new(format!(
                "task file `{}` is not a regular file (a {})",
                opts.task.display(),
                evalscore_reader::file_kind(&m)
            ))
            .kind(ErrorKind::Task)
            .hint("point TASK.yaml at a task file"))
        }
        _ => {}
    }
    let text = std::fs::read_to_string(&opts.task).map_err(|e| {
        Error::new(format!("cannot read task file `{}`", opts.task.display()))
            .caused_by(e.to_string())
            .hint("check the TASK.yaml path")
    })?;
    let task_sha = format!("{:x}", Sha256::digest(text.as_bytes()));
    let task = Task::from_yaml_in(&text, &opts.sets, opts.task.parent())
        .map_err(|e| Error::task(&opts.task, e))?;
    let warn = |w: &str| {
        if let Some(f) = &opts.warn {
            f(w);
        }
    };
    for w in &task.warnings {
        warn(w);
    }
    let inputs = Inputs::open_with(&opts.inputs, &opts.storage_options).map_err(Error::read)?;
    let total = inputs.rows();
    // The file pipeline is the library's scorer, fed from the reader and writing files.
    let mut scorer = Scorer::with_source(
        task,
        &inputs.schema,
        &BindOptions {
            keep: opts.keep.clone(),
            output_column: opts.output_column.clone(),
            max_row_errors: opts.max_row_errors.rows(total),
            judge: opts.judge.clone(),
            functions: opts.functions.clone(),
        },
        inputs
            .files
            .first()
            .map(|f| (opts.task.as_path(), f.path.as_path())),
    )?;
    // `0.1%` of a small input allows no row yet still reports `row_errors`.
    scorer.allow_row_errors = opts.max_row_errors.allows_any();
    scorer.set_run(run_identity.clone());
    let (task, plan, budget) = (&scorer.task, &scorer.plan, &scorer.budget);
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.threads
    };

    if opts.run_columns {
        output::check_run_column(&plan.output_schema())?;
    }
    let outputs = output::Outputs::prepare(&opts.out_dir, opts.overwrite, &opts.storage_options)?;
    let mut writer = outputs.scores_writer(
        plan.output_schema(),
        opts.run_columns.then_some(run_identity.run_id.as_str()),
    )?;
    let encoders = writer.encoders();
    let mut states = scorer.empty_states();
    let mut row_error_list: Vec<RowErrorRecord> = Vec::new();
    let mut done = 0u64;
    let units = inputs.units();
    let work = work_items(&units, total, threads);
    // Test hook: `EVALSCORE_TEST_PANIC=worker` panics inside a worker thread, so the tests can
    // prove that a panic becomes `error: internal error` and leaves no file behind.
    let inject_panic = std::env::var_os("EVALSCORE_TEST_PANIC").is_some_and(|v| v == "worker");

    let ticking = std::sync::atomic::AtomicBool::new(true);
    let judge_live = scorer.plan.judge.clone();
    std::thread::scope(|scope| -> Result<(), Error> {
        if let (Some(cb), Some(rt)) = (&opts.judge_progress, &judge_live) {
            let ticking = &ticking;
            scope.spawn(move || {
                while ticking.load(std::sync::atomic::Ordering::Relaxed) {
                    cb(rt.progress());
                    std::thread::park_timeout(std::time::Duration::from_millis(250));
                }
            });
        }
        let scanned = scan_ordered(
            &work,
            threads,
            |item| {
                if inject_panic {
                    panic!("injected worker panic (EVALSCORE_TEST_PANIC)");
                }
                check_interrupt()?;
                score::score_units(
                    plan,
                    task,
                    &inputs,
                    &units[item.clone()],
                    encoders.encoder(),
                    budget,
                )
            },
            |mut result: score::UnitResult| {
                writer.append(std::mem::take(&mut result.row_groups))?;
                let room = ROW_ERRORS_LISTED.saturating_sub(row_error_list.len());
                let rows = result.rows;
                row_error_list.extend(
                    std::mem::take(&mut result.row_error_list)
                        .into_iter()
                        .take(room),
                );
                states.merge(&States::folded(task.fingerprint, result))?;
                if let Some(f) = plan.functions.as_deref() {
                    states.compact_user(task, f)?;
                }
                done += rows;
                if let Some(p) = &opts.progress {
                    p(done, total);
                }
                Ok(())
            },
        );
        ticking.store(false, std::sync::atomic::Ordering::Relaxed);
        scanned
    })
    // A signal can surface as the failure of the judge requests it stopped: it is the cause.
    .map_err(|e| check_interrupt().err().unwrap_or(e))?;
    check_interrupt()?;
    let written = writer.finish()?;
    if written != total || done != total {
        return Err(Error::new(format!(
            "internal check failed: read {done} rows of {total} and wrote {written} score rows"
        ))
        .kind(ErrorKind::Internal)
        .hint("no output was written; please report this"));
    }

    let allowed = scorer.allow_row_errors;
    let library::Report {
        metrics, confusion, ..
    } = scorer.finish(&states)?;
    let (missing, row_errors) = (states.missing(), states.row_errors());
    let judge = scorer.plan.judge.as_ref().map(|rt| {
        let invalid: serde_json::Map<String, serde_json::Value> = task
            .scorers
            .iter()
            .zip(states.invalid())
            .filter(|(s, _)| s.scorer.judge().is_some())
            .map(|(s, n)| (s.key.clone(), serde_json::json!(n)))
            .collect();
        output::run_json::judge_json(rt, invalid)
    });
    let missing_named: Vec<(String, u64)> = task
        .scorers
        .iter()
        .map(|s| s.key.clone())
        .zip(missing.iter().copied())
        .collect();
    let row_errors_named: Vec<(String, u64)> = task
        .scorers
        .iter()
        .map(|s| s.key.clone())
        .zip(row_errors.iter().copied())
        .collect();
    let mut warnings = task.warnings.clone();
    let failed: u64 = row_errors.iter().sum();
    if failed > 0 {
        let w = format!(
            "{failed} row error{} scored 0.0 (--max-row-errors {}: {} allowed); run.json lists the first {}",
            if failed == 1 { "" } else { "s" },
            opts.max_row_errors,
            budget.limit,
            row_error_list.len()
        );
        warn(&w);
        warnings.push(w);
    }
    let wall = started.elapsed().as_secs_f64();
    let run_info = output::RunInfo {
        task_path: &opts.task,
        task_sha256: &task_sha,
        inputs: &inputs,
        rows: total,
        missing: &missing_named,
        warnings: &warnings,
        row_errors: (failed, budget.limit, &row_error_list),
        started_at: &started_at,
        finished_at: &time::now_rfc3339(),
        threads,
        wall_seconds: wall,
        judge,
        run: &run_identity,
    };
    outputs.write_metrics(&metrics, &plan.group_columns, &run_identity)?;
    outputs.write_confusion(&confusion, &plan.group_columns, &run_identity)?;
    outputs.write_metrics_json(
        task,
        &metrics,
        &confusion,
        &plan.group_columns,
        &missing_named,
        allowed.then_some(row_errors_named.as_slice()),
        total,
        &run_identity,
    )?;
    outputs.write_run_json(&run_info)?;
    check_interrupt()?;
    outputs.commit()?;
    Ok(RunSummary {
        rows: total,
        metrics,
        confusion,
        group_columns: plan.group_columns.clone(),
        missing: missing_named,
        warnings,
        row_errors: row_errors_named,
        row_error_list,
        wall_seconds: wall,
        out_dir: opts.out_dir.clone(),
        run: run_identity,
    })
}

/// The work items of a run: runs of consecutive units, each scored by one worker into one
/// encoder. A unit of at least the target size is an item of its own (a big file's row
/// groups, as before); small units (many small files, small row groups) are joined up to the
/// target, so that each item pays once for its column writers and compression contexts and
/// writes one row group instead of one per unit. The target is a full row group of
/// scores.parquet, or less when that would leave fewer than four items per worker.
fn work_items(units: &[evalscore_reader::Unit], total: u64, threads: usize) -> Vec<Range<usize>> {
    let per_worker = total / (4 * threads.max(1) as u64);
    let target = per_worker.clamp(1, output::MAX_ROW_GROUP_ROWS as u64);
    let mut items = Vec::new();
    let (mut start, mut rows) = (0, 0u64);
    for (i, u) in units.iter().enumerate() {
        if i > start && rows + u.rows > target {
            items.push(start..i);
            (start, rows) = (i, 0);
        }
        rows += u.rows;
    }
    if start < units.len() {
        items.push(start..units.len());
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use evalscore_reader::Unit;

    fn units(sizes: &[u64]) -> Vec<Unit> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &rows)| Unit {
                file: i,
                row_group: 0,
                first_row: 0,
                rows,
            })
            .collect()
    }

    #[test]
    fn small_units_are_joined_into_work_items_and_big_ones_stay_alone() {
        // A big file's 1M-row groups: one item each, as before.
        let big = units(&[1_000_000; 10]);
        let items = work_items(&big, 10_000_000, 2);
        assert_eq!(items, (0..10).map(|i| i..i + 1).collect::<Vec<_>>());
        // 200 files of 50k rows: 20 files (1M rows, one row group of scores) per item.
        let many = units(&[50_000; 200]);
        let items = work_items(&many, 10_000_000, 2);
        assert_eq!(
            items,
            (0..10).map(|i| 20 * i..20 * i + 20).collect::<Vec<_>>()
        );
        // 20 files of 50k rows on 2 workers: items of 100k rows, four or more per worker.
        let few = units(&[50_000; 20]);
        let items = work_items(&few, 1_000_000, 2);
        assert_eq!(items, (0..10).map(|i| 2 * i..2 * i + 2).collect::<Vec<_>>());
        // Mixed sizes (target 17 / 4 = 4 rows): a unit is never split, a unit over the
        // target stands alone, empty units join the item they follow.
        let mixed = units(&[0, 0, 5, 3, 0, 9]);
        assert_eq!(work_items(&mixed, 17, 1), vec![0..2, 2..3, 3..5, 5..6]);
        assert_eq!(work_items(&[], 0, 2), Vec::<Range<usize>>::new());
    }
}
