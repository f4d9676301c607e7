//! The file pipeline: [`run`], the job of `evalscore run`, as its named steps. It reads the
//! task, opens the inputs, binds the task to their schema, prepares the output folder, scores
//! the inputs' work items in parallel (folding metric states as results arrive in input
//! order), reports the metrics, writes the outputs and commits them.

use crate::output::{self, Outputs, ScoresWriter};
use crate::row_error::{RowErrorRecord, ROW_ERRORS_LISTED};
use crate::states::named;
use crate::{
    check_interrupt, error, score, time, EngineError, Error, ErrorExt, ErrorKind, JudgeProgress,
    RunIdentity, RunOptions, RunSummary, Task,
};
use crate::{BindOptions, Report, Scorer, States};
use evalscore_reader::{scan_ordered, Inputs, PartitionFilter};
use evalscore_scorers::judge::JudgeRuntime;
use sha2::{Digest, Sha256};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Runs a task end to end.
pub fn run(opts: &RunOptions) -> Result<RunSummary, Error> {
    let started = Instant::now();
    let run = RunIdentity::new(opts.run_id.as_deref(), &opts.labels)?;
    let (task, task_sha) = read_task(opts)?;
    let inputs = open_inputs(opts, partition_filters(opts, &task)?, &opts.out_dir)?;
    let scorer = plan(opts, task, &inputs, &run)?;
    let threads = threads(opts);
    let (outputs, writer) = prepare_outputs(opts, &scorer, &run)?;
    let scored = score_batches(opts, &scorer, &inputs, writer, threads)?;
    let summary = write_run(
        opts,
        &Finished {
            scorer: &scorer,
            inputs: &inputs,
            task_sha: &task_sha,
            started,
            threads,
        },
        scored,
        &outputs,
    )?;
    drop_aside(inputs);
    commit(outputs)?;
    Ok(summary)
}

/// Drops `value` on a thread of its own: the inputs of thousands of files hold as many
/// parsed footers, whose freeing would otherwise add to the run's serial end, while
/// committing the outputs mostly waits on the disk.
fn drop_aside<T: Send + 'static>(value: T) {
    let spawned = std::thread::Builder::new()
        .name("evalscore-drop".into())
        .spawn(move || drop(value));
    // Without a thread, the value was dropped with the closure, here.
    drop(spawned);
}

/// The worker threads of a run: `--threads`, else one per core.
pub(crate) fn threads(opts: &RunOptions) -> usize {
    if opts.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.threads
    }
}

/// A scored task, for [`write_run`].
pub(crate) struct Finished<'a> {
    pub scorer: &'a Scorer,
    pub inputs: &'a Inputs,
    pub task_sha: &'a str,
    /// When the run started (its wall time ends when the outputs are written).
    pub started: Instant,
    pub threads: usize,
}

/// Folds the metrics and writes the five outputs under their temporary names; gives what
/// the run reports. The caller commits.
pub(crate) fn write_run(
    opts: &RunOptions,
    f: &Finished<'_>,
    scored: Scored,
    outputs: &Outputs,
) -> Result<RunSummary, Error> {
    let (scorer, inputs) = (f.scorer, f.inputs);
    let run = scorer.run();
    let started_at = run
        .started_at
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let folded = fold_metrics(opts, scorer, &scored)?;
    let wall = f.started.elapsed().as_secs_f64();
    let run_info = output::RunInfo {
        task_path: &opts.task,
        task_sha256: f.task_sha,
        inputs,
        rows: inputs.rows(),
        missing: &folded.missing,
        warnings: &folded.warnings,
        row_errors: (folded.failed, scorer.budget.limit, &scored.row_error_list),
        started_at: &started_at,
        finished_at: &time::now_rfc3339(),
        threads: f.threads,
        wall_seconds: wall,
        judge: folded.judge.clone(),
        run,
    };
    write_outputs(outputs, scorer, &folded, &run_info)?;
    Ok(RunSummary {
        rows: inputs.rows(),
        metrics: folded.report.metrics,
        confusion: folded.report.confusion,
        group_columns: scorer.plan.group_columns.clone(),
        missing: folded.missing,
        warnings: folded.warnings,
        row_errors: folded.row_errors,
        row_error_list: scored.row_error_list,
        wall_seconds: wall,
        out_dir: opts.out_dir.clone(),
        run: run.clone(),
    })
}

/// Calls the run's warning callback, if it has one.
fn warn(opts: &RunOptions, w: &str) {
    if let Some(f) = &opts.warn {
        f(w);
    }
}

/// Reads and parses the task file (with `--set` values); gives the task and the SHA-256 of
/// its text, and passes on the task's warnings.
pub(crate) fn read_task(opts: &RunOptions) -> Result<(Task, String), Error> {
    let text = error::read_task_file(&opts.task, true)?;
    parse_task(opts, &text, opts.task.parent()).map_err(|e| Error::task(&opts.task, e))
}

/// Parses a task's text (with `--set` values), relative paths in it against `base_dir`;
/// gives the task and the SHA-256 of its text, and passes on the task's warnings.
pub(crate) fn parse_task(
    opts: &RunOptions,
    text: &str,
    base_dir: Option<&std::path::Path>,
) -> Result<(Task, String), evalscore_task::TaskError> {
    let task_sha = format!("{:x}", Sha256::digest(text.as_bytes()));
    let task = Task::from_yaml_in(text, &opts.sets, base_dir)?;
    for w in &task.warnings {
        warn(opts, w);
    }
    Ok((task, task_sha))
}

/// `--where` and the task's `filter:`, parsed (a syntax error names its column in the
/// expression, and for `filter:` the task file's line and column).
pub(crate) fn partition_filters(
    opts: &RunOptions,
    task: &Task,
) -> Result<Vec<PartitionFilter>, Error> {
    let mut filters = Vec::new();
    if let Some(text) = &opts.where_filter {
        filters.push(PartitionFilter::parse("--where", text)?);
    }
    if let Some(f) = &task.filter {
        let at = f.location.map(|l| format!(", {l}")).unwrap_or_default();
        let origin = format!("task file `{}`{at}: `filter`", opts.task.display());
        let parsed = PartitionFilter::parse(origin, &f.text)
            .map_err(|e| Error::from(e).kind(ErrorKind::Task))?;
        filters.push(parsed);
    }
    Ok(filters)
}

/// Opens the input files (local or object storage), only those `filters` match: their
/// schema, row count and units. The outputs already in the local folder `out` (the run's, or
/// a suite's) are not read as inputs.
pub(crate) fn open_inputs(
    opts: &RunOptions,
    filters: Vec<PartitionFilter>,
    out: &Path,
) -> Result<Inputs, Error> {
    let open = evalscore_reader::OpenOptions {
        recursive: opts.recursive,
        hive: opts.hive_partitioning,
        union_by_name: opts.union_by_name,
        storage_options: opts.storage_options.clone(),
        filters,
        progress: opts.open_progress.clone(),
        out_dir: Some(out.to_path_buf()),
    };
    let inputs = Inputs::open_options(&opts.inputs, &open).map_err(Error::read)?;
    for w in &inputs.warnings {
        warn(opts, w);
    }
    Ok(inputs)
}

/// Binds the task to the inputs' schema: the library's scorer, every template, column and
/// type checked before a row is read.
pub(crate) fn plan(
    opts: &RunOptions,
    task: Task,
    inputs: &Inputs,
    run: &RunIdentity,
) -> Result<Scorer, Error> {
    let mut scorer = Scorer::for_files(
        task,
        &inputs.schema,
        &BindOptions {
            keep: opts.keep.clone(),
            output_column: opts.output_column.clone(),
            max_row_errors: opts.max_row_errors.rows(inputs.rows()),
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
    scorer.set_run(run.clone());
    Ok(scorer)
}

/// Prepares the output folder (refusing existing outputs without `--overwrite`) and opens
/// scores.parquet.
pub(crate) fn prepare_outputs(
    opts: &RunOptions,
    scorer: &Scorer,
    run: &RunIdentity,
) -> Result<(Outputs, ScoresWriter), Error> {
    let schema = scorer.plan.output_schema();
    if opts.run_columns {
        if opts.format == output::OutputFormat::Delta {
            return Err(Error::new("--run-columns does not apply to --format delta: every Delta table has `run_id` (a partition column)")
                .kind(ErrorKind::Task)
                .with_hint("drop --run-columns"));
        }
        output::check_run_column(&schema)?;
    }
    let task = opts
        .task_name
        .clone()
        .unwrap_or_else(|| task_stem(&opts.task));
    let target = output::Target {
        format: opts.format,
        run_id: &run.run_id,
        task: &task,
    };
    let outputs = Outputs::prepare(
        &opts.out_dir,
        opts.overwrite,
        &opts.storage_options,
        &target,
    )?;
    let writer = outputs.scores_writer(schema, opts.run_columns.then_some(run.run_id.as_str()))?;
    Ok((outputs, writer))
}

/// A task file's name without its extension (`nightly` for `evals/nightly.yaml`): a single
/// run's `task` in Delta tables.
fn task_stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "task".to_owned(), |s| s.to_string_lossy().into_owned())
}

/// What scoring every row gave: the merged metric states and the first row errors.
pub(crate) struct Scored {
    pub states: States,
    pub row_error_list: Vec<RowErrorRecord>,
}

/// Scores the inputs' work items on `threads` workers; in input order, appends their row
/// groups to scores.parquet and merges their metric states. Checks that every row was
/// scored and written.
fn score_batches(
    opts: &RunOptions,
    scorer: &Scorer,
    inputs: &Inputs,
    mut writer: ScoresWriter,
    threads: usize,
) -> Result<Scored, Error> {
    let (task, plan, budget) = (&scorer.task, &scorer.plan, &scorer.budget);
    let total = inputs.rows();
    let encoders = writer.encoders();
    let mut states = scorer.empty_states();
    let mut row_error_list: Vec<RowErrorRecord> = Vec::new();
    let mut done = 0u64;
    let units = inputs.units();
    let work = work_items(&units, total, threads);
    // Test hook: `EVALSCORE_TEST_PANIC=worker` panics inside a worker thread, so the tests can
    // prove that a panic becomes `error: internal error` and leaves no file behind.
    let inject_panic = std::env::var_os("EVALSCORE_TEST_PANIC").is_some_and(|v| v == "worker");

    let copy_from = score::copy_from(units.len());
    let judges: Vec<_> = scorer.plan.judge.iter().cloned().collect();
    with_judge_progress(opts.judge_progress.as_deref(), &judges, || {
        scan_ordered(
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
                    inputs,
                    &units[item.clone()],
                    encoders.encoder(),
                    budget,
                    copy_from,
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
        )
    })
    // A signal can surface as the failure of the judge requests it stopped: it is the cause.
    .map_err(|e| check_interrupt().err().unwrap_or(e))?;
    check_interrupt()?;
    finish_scores(writer, done, total)?;
    Ok(Scored {
        states,
        row_error_list,
    })
}

/// Runs `f`; while it runs, `progress` (when given, and some task asks a model) gets the
/// judges' live counters, summed, about four times a second, and once more when `f` is done,
/// so the last counters it gets are the final ones.
pub(crate) fn with_judge_progress<T>(
    progress: Option<&(dyn Fn(JudgeProgress) + Sync)>,
    judges: &[Arc<JudgeRuntime>],
    f: impl FnOnce() -> T,
) -> T {
    let ticking = AtomicBool::new(true);
    std::thread::scope(|scope| {
        let ticker = match (progress, judges.is_empty()) {
            (Some(cb), false) => {
                let ticking = &ticking;
                Some(scope.spawn(move || loop {
                    let last = !ticking.load(Ordering::Acquire);
                    let mut sum = JudgeProgress::default();
                    for j in judges {
                        sum += j.progress();
                    }
                    cb(sum);
                    if last {
                        break;
                    }
                    std::thread::park_timeout(std::time::Duration::from_millis(250));
                }))
            }
            _ => None,
        };
        let out = f();
        ticking.store(false, Ordering::Release);
        if let Some(t) = ticker {
            t.thread().unpark();
        }
        out
    })
}

/// Closes scores.parquet and checks that every row of the inputs was scored and written.
pub(crate) fn finish_scores(writer: ScoresWriter, done: u64, total: u64) -> Result<(), Error> {
    let written = writer.finish()?;
    if written != total || done != total {
        return Err(EngineError::RowCount {
            done,
            total,
            written,
        }
        .into());
    }
    Ok(())
}

/// The run's figures and what run.json and the summary say of them.
struct Folded {
    report: Report,
    /// (scorer key, missing rows) in task order.
    missing: Vec<(String, u64)>,
    /// (scorer key, rows that failed and scored 0.0) in task order.
    row_errors: Vec<(String, u64)>,
    /// Rows that failed in all.
    failed: u64,
    warnings: Vec<String>,
    /// run.json's `judge`, when a scorer asked a model.
    judge: Option<serde_json::Value>,
}

/// Finishes the merged metric states into the metrics and confusion rows, with the missing
/// and row-error counts per scorer and the judge's figures; warns of row errors.
fn fold_metrics(opts: &RunOptions, scorer: &Scorer, scored: &Scored) -> Result<Folded, Error> {
    let (task, states) = (&scorer.task, &scored.states);
    let report = scorer.finish(states)?;
    let mut warnings = task.warnings.clone();
    // `finish` uploaded the run's replies to a shared cache: run.json counts them.
    if let Some(rt) = scorer.plan.judge.as_deref() {
        for w in rt.cache_warnings() {
            warn(opts, &w);
            warnings.push(w);
        }
    }
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
    for w in states.exclusion_warnings(task) {
        warn(opts, &w);
        warnings.push(w);
    }
    let failed: u64 = states.row_errors().iter().sum();
    if failed > 0 {
        let w = format!(
            "{failed} row error{} scored 0.0 (--max-row-errors {}: {} allowed); run.json lists the first {}",
            if failed == 1 { "" } else { "s" },
            opts.max_row_errors,
            scorer.budget.limit,
            scored.row_error_list.len()
        );
        warn(opts, &w);
        warnings.push(w);
    }
    Ok(Folded {
        report,
        missing: named(task, states.missing()),
        row_errors: named(task, states.row_errors()),
        failed,
        warnings,
        judge,
    })
}

/// Writes metrics.parquet, confusion.parquet, metrics.json and run.json under their
/// temporary names.
fn write_outputs(
    outputs: &Outputs,
    scorer: &Scorer,
    folded: &Folded,
    run_info: &output::RunInfo<'_>,
) -> Result<(), Error> {
    let report = &folded.report;
    outputs.write_tables(
        &report.metrics,
        &report.confusion,
        &report.group_columns,
        &report.run,
    )?;
    outputs.write_metrics_json(&output::tables::metrics_json(
        &scorer.task,
        &report.metrics,
        &report.confusion,
        &report.group_columns,
        &folded.missing,
        scorer
            .allow_row_errors
            .then_some(folded.row_errors.as_slice()),
        run_info.rows,
        &report.run,
    ))?;
    outputs.write_run_json(run_info)
}

/// Puts the outputs in place (uploads them, for an object storage `--out`), `run.json`
/// last; a signal that came meanwhile stops the run before.
pub(crate) fn commit(outputs: Outputs) -> Result<(), Error> {
    check_interrupt()?;
    outputs.commit()
}

/// The work items of a run: runs of consecutive units, each scored by one worker into one
/// encoder. A unit of at least the target size is an item of its own (a big file's row
/// groups, as before); small units (many small files, small row groups) are joined up to the
/// target, so that each item pays once for its column writers and compression contexts and
/// writes one row group instead of one per unit. The target is a full row group of
/// scores.parquet, or less when that would leave fewer than four items per worker.
pub(crate) fn work_items(
    units: &[evalscore_reader::Unit],
    total: u64,
    threads: usize,
) -> Vec<Range<usize>> {
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
