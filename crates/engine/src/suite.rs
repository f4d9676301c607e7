//! Suites: many tasks scored in one run ([`run_suite`]). The suite file (crate
//! `evalscore-task`, [`SuiteFile`]) lists the tasks; tasks that read the same inputs with the
//! same `filter:` form a group whose inputs are opened and read once, every batch handed to
//! each task's scoring (module `scan`). Each task writes the five files of `evalscore run`
//! into `DIR/task=NAME/`, the same bytes as a run of that task alone (run ids and times
//! aside); they are committed together at the end, and `DIR/suite.json` (module `record`)
//! last.

mod out;
mod record;
mod scan;

use crate::output::Outputs;
use crate::pipeline::{self, Finished};
use crate::Scorer;
use crate::{error, Error, ErrorExt, ErrorKind, RunIdentity, RunOptions, RunSummary, Task};
use evalscore_reader::Inputs;
use evalscore_task::{SuiteFile, SuiteTask, TaskError, TaskSource};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The file a suite writes last into its folder.
pub const SUITE_JSON: &str = "suite.json";

/// What `evalscore run SUITE.yaml` was asked to do.
pub struct SuiteOptions {
    /// The options of every task's run: `task` is the suite file; `inputs`, when given,
    /// replace the suite's shared `inputs:` (a task's own `inputs:` stay); `sets` apply to
    /// every task after its own `set:`; `labels` go over the suite's `labels:`; `out_dir` is
    /// the suite's folder; `run_id` is shared by all tasks.
    pub run: RunOptions,
    /// `--keep-going`: a failing task does not stop the others, which are committed.
    pub keep_going: bool,
}

/// What a suite run reports.
#[derive(Debug)]
pub struct SuiteSummary {
    /// The identity every task's outputs carry.
    pub run: RunIdentity,
    /// Every task, in suite order.
    pub tasks: Vec<SuiteTaskSummary>,
    /// `--out`: the suite's folder (or object storage prefix).
    pub out_dir: PathBuf,
    /// The suite's wall-clock time.
    pub wall_seconds: f64,
    /// The text of the suite.json written (also when `out_dir` is in object storage).
    pub suite_json: String,
}

impl SuiteSummary {
    /// The tasks that failed (with `--keep-going`; without it the suite fails instead).
    pub fn failed(&self) -> impl Iterator<Item = &SuiteTaskSummary> {
        self.tasks.iter().filter(|t| t.result.is_err())
    }
}

/// One task of a suite run.
#[derive(Debug)]
pub struct SuiteTaskSummary {
    /// The task's name in the suite.
    pub name: String,
    /// `DIR/task=NAME`.
    pub out_dir: PathBuf,
    /// The task file, or `None` for an inline `definition:`.
    pub task: Option<PathBuf>,
    /// The task's inputs as given (by the suite file, or `--input`).
    pub inputs: Vec<String>,
    /// The task's run, or why it failed.
    pub result: Result<RunSummary, Error>,
}

/// Whether `path` is a suite file: a readable YAML file whose top level has `tasks:`.
pub fn is_suite_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::read_to_string(path).is_ok_and(|t| SuiteFile::is_suite(&t))
}

/// One task of the suite, resolved: its run's options and where its definition is.
struct Member {
    name: String,
    opts: RunOptions,
    /// The inline definition's text (`None`: a task file).
    inline: Option<String>,
    /// `inputs` of suite.json: the task's input arguments.
    inputs: Vec<String>,
    /// Parsed, before its inputs are opened (its `filter:` prunes them).
    parsed: Option<Task>,
    /// Bound, its outputs prepared.
    ready: Option<Ready>,
    task_sha: String,
    scored: Option<pipeline::Scored>,
    summary: Option<RunSummary>,
    failure: Option<Error>,
}

struct Ready {
    scorer: Scorer,
    outputs: Outputs,
    writer: Option<crate::output::ScoresWriter>,
}

/// Runs a suite end to end. Without `keep_going`, the first failing task fails the suite and
/// nothing is committed; with it, the others are committed and the summary lists the
/// failures.
pub fn run_suite(opts: SuiteOptions) -> Result<SuiteSummary, Error> {
    let started = Instant::now();
    let SuiteOptions {
        run: mut base,
        keep_going,
    } = opts;
    let path = base.task.clone();
    let text = error::read_task_file(&path, true)?;
    let suite_sha = format!("{:x}", Sha256::digest(text.as_bytes()));
    let suite = SuiteFile::parse(&text).map_err(|e| suite_error(&path, e))?;
    let run = RunIdentity::new(base.run_id.as_deref(), &labels(&suite, &base.labels))?;
    // Declared first, dropped last: after every output folder's guard has removed its
    // temporary files, the folders this run created and left empty go too.
    let mut created = Created(Vec::new());
    let delta = base.format == crate::OutputFormat::Delta;
    let suite_out = if delta {
        out::SuiteOut::Delta
    } else {
        out::SuiteOut::prepare(&base.out_dir, base.overwrite, &base.storage_options)?
    };
    let threads = pipeline::threads(&base);
    // Tasks' warnings are gathered and passed on with the task's name.
    let warn = base.warn.take();
    let warnings: Arc<Mutex<Vec<String>>> = Arc::default();
    let flush = |warnings: &Mutex<Vec<String>>| {
        let mut w = warnings.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = &warn {
            w.iter().for_each(|m| f(m));
        }
        w.clear();
    };
    let mut members: Vec<Member> = suite
        .tasks
        .iter()
        .map(|t| member(&base, &path, &suite, t, &warnings))
        .collect::<Result<_, _>>()?;
    created.0 = members
        .iter()
        .filter(|_| !suite_out.is_remote())
        .map(|m| m.opts.out_dir.clone())
        .filter(|d| !d.exists())
        .collect();
    for m in &mut members {
        match parse(m, &path) {
            Ok(task) => m.parsed = Some(task),
            Err(e) => fail(m, e, keep_going)?,
        }
    }
    let groups = groups(&members);
    // Every task bound and every output folder prepared before any row is read.
    let mut opened: Vec<Option<Inputs>> = Vec::new();
    for group in &groups {
        let first = &members[group[0]];
        let filters = first
            .parsed
            .as_ref()
            .map(|task| pipeline::partition_filters(&first.opts, task))
            .transpose();
        let inputs = match filters
            .and_then(|f| pipeline::open_inputs(&first.opts, f.unwrap_or_default(), &base.out_dir))
        {
            Ok(i) => i,
            Err(e) => {
                for &i in group {
                    fail(&mut members[i], scan::copy_error(&e), keep_going)?;
                }
                opened.push(None);
                continue;
            }
        };
        for &i in group {
            let m = &mut members[i];
            match bind(m, &inputs, &run) {
                Ok(ready) => m.ready = Some(ready),
                Err(e) => fail(m, e, keep_going)?,
            }
        }
        opened.push(Some(inputs));
    }
    flush(&warnings);
    let judges: Vec<_> = members
        .iter()
        .filter_map(|m| m.ready.as_ref()?.scorer.plan.judge.clone())
        .collect();
    let scoring = Scoring {
        base: &base,
        started,
        threads,
        keep_going,
    };
    pipeline::with_judge_progress(base.judge_progress.as_deref(), &judges, || {
        scoring.groups(&groups, &opened, &mut members, || flush(&warnings))
    })?;
    crate::check_interrupt()?;
    suite_out.before_commit()?;
    if !keep_going {
        // Every task's folder is checked before any is committed: one that cannot be (an
        // output written there since the start) fails the suite with nothing committed.
        for m in &mut members {
            if let Some(Err(e)) = m.ready.as_ref().map(|r| r.outputs.check_commit()) {
                fail(m, e, false)?;
            }
        }
    }
    let mut staged = Vec::new();
    for m in &mut members {
        if let Some(ready) = m.ready.take() {
            let done = match delta {
                true => ready.outputs.stage().map(|d| staged.extend(d)),
                false => pipeline::commit(ready.outputs),
            };
            if let Err(e) = done {
                m.summary = None;
                fail(m, e, keep_going)?;
            }
        }
    }
    if delta {
        let failed: Vec<(String, String)> = members
            .iter()
            .filter_map(|m| Some((m.name.clone(), m.failure.as_ref()?.message.clone())))
            .collect();
        crate::output::delta::publish(&staged, &failed)?;
    }
    if base.overwrite {
        // Every other `task=NAME` folder: a task that failed now, or one the suite dropped.
        let committed: Vec<&str> = members
            .iter()
            .filter(|m| m.failure.is_none())
            .map(|m| m.name.as_str())
            .collect();
        suite_out.clear_others(&base.out_dir, &committed)?;
    }
    let tasks: Vec<SuiteTaskSummary> = members
        .into_iter()
        .map(|m| SuiteTaskSummary {
            name: m.name,
            out_dir: m.opts.out_dir,
            task: m.inline.is_none().then_some(m.opts.task),
            inputs: m.inputs,
            result: match (m.summary, m.failure) {
                (_, Some(e)) => Err(e),
                (Some(s), None) => Ok(s),
                (None, None) => {
                    Err(Error::new("the task was not scored").kind(ErrorKind::Internal))
                }
            },
        })
        .collect();
    let mut summary = SuiteSummary {
        run,
        tasks,
        out_dir: base.out_dir.clone(),
        wall_seconds: started.elapsed().as_secs_f64(),
        suite_json: String::new(),
    };
    summary.suite_json = record::suite_json(&path, &suite_sha, &summary, started_at(&summary.run));
    let committed = summary.tasks.iter().filter(|t| t.result.is_ok()).count();
    if let Err(mut e) = suite_out.write(summary.suite_json.clone(), committed) {
        // The summary, which would have told the tasks' failures, is lost with suite.json.
        let failed: Vec<&str> = summary
            .tasks
            .iter()
            .filter_map(|t| t.result.as_ref().err().map(|e| e.message.as_str()))
            .collect();
        if !failed.is_empty() {
            let those = format!("the tasks that failed before it: {}", failed.join("; "));
            e.hint = Some(match e.hint.take() {
                Some(h) => format!("{h}; {those}"),
                None => those,
            });
        }
        return Err(e);
    }
    Ok(summary)
}

/// What every group's scoring shares.
struct Scoring<'a> {
    base: &'a RunOptions,
    started: Instant,
    threads: usize,
    keep_going: bool,
}

impl Scoring<'_> {
    /// Scores each group's inputs once for all its tasks and writes each task's outputs (not
    /// yet committed); `flush` passes the tasks' warnings on after each group.
    fn groups(
        &self,
        groups: &[Vec<usize>],
        opened: &[Option<Inputs>],
        members: &mut [Member],
        flush: impl Fn(),
    ) -> Result<(), Error> {
        let Scoring {
            base,
            started,
            threads,
            keep_going,
        } = *self;
        let total: u64 = opened.iter().flatten().map(Inputs::rows).sum();
        let mut offset = 0u64;
        for (group, inputs) in groups.iter().zip(opened) {
            let Some(inputs) = inputs else { continue };
            let progress = |done: u64| {
                if let Some(p) = &base.progress {
                    p(offset + done, total);
                }
            };
            let mut live = Vec::new();
            let mut writers = Vec::new();
            for &i in group {
                if let Some(w) = members[i].ready.as_mut().and_then(|r| r.writer.take()) {
                    live.push(i);
                    writers.push(w);
                }
            }
            let lanes: Vec<scan::Lane<'_>> = live
                .iter()
                .zip(writers)
                .filter_map(|(&i, writer)| {
                    Some(scan::Lane {
                        scorer: &members[i].ready.as_ref()?.scorer,
                        writer,
                    })
                })
                .collect();
            let results = scan::score_group(lanes, inputs, threads, keep_going, &progress)?;
            offset += inputs.rows();
            for (&i, result) in live.iter().zip(results) {
                match result {
                    Some(Ok(scored)) => members[i].scored = Some(scored),
                    Some(Err(e)) => fail(&mut members[i], e, keep_going)?,
                    None => {}
                }
            }
            for &i in &live {
                let m = &mut members[i];
                let (Some(ready), Some(scored)) = (m.ready.as_ref(), m.scored.take()) else {
                    continue;
                };
                let finished = Finished {
                    scorer: &ready.scorer,
                    inputs,
                    task_sha: &m.task_sha,
                    started,
                    threads,
                };
                match pipeline::write_run(&m.opts, &finished, scored, &ready.outputs) {
                    Ok(s) => m.summary = Some(s),
                    Err(e) => fail(m, e, keep_going)?,
                }
            }
            flush();
        }
        Ok(())
    }
}

fn started_at(run: &RunIdentity) -> String {
    run.started_at
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The output folders a suite created; on drop, those left empty (a failed task's, or
/// every task's when the suite failed) are removed with their lock file.
struct Created(Vec<PathBuf>);

impl Drop for Created {
    fn drop(&mut self) {
        for d in &self.0 {
            let only_lock = std::fs::read_dir(d).is_ok_and(|entries| {
                entries
                    .flatten()
                    .all(|e| e.file_name() == crate::outdir::LOCK_FILE)
            });
            if only_lock {
                let _ = std::fs::remove_file(d.join(crate::outdir::LOCK_FILE));
                let _ = std::fs::remove_dir(d);
            }
        }
    }
}

/// A suite file's error, located: `suite file `s.yaml`, line 3, column 5: MESSAGE`.
fn suite_error(path: &Path, e: TaskError) -> Error {
    let at = match e.location {
        Some(l) => format!("suite file `{}`, {l}", path.display()),
        None => format!("suite file `{}`", path.display()),
    };
    let err = Error::new(format!("{at}: {}", e.message)).kind(ErrorKind::Task);
    match e.hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// The suite's labels, those the command line also gives replaced by its values.
fn labels(suite: &SuiteFile, cli: &[(String, String)]) -> Vec<(String, String)> {
    suite
        .labels
        .iter()
        .filter(|(k, _)| !cli.iter().any(|(c, _)| c == k))
        .chain(cli)
        .cloned()
        .collect()
}

/// A path of the suite file (a task file, an input) as the run reads it: relative to the
/// suite file's folder, unless absolute or a URL.
fn resolve(suite: &Path, p: &str) -> PathBuf {
    if p.contains("://") || Path::new(p).is_absolute() {
        return PathBuf::from(p);
    }
    match suite.parent() {
        Some(dir) => dir.join(p),
        None => PathBuf::from(p),
    }
}

/// Resolves one task of the suite into its run's options.
fn member(
    base: &RunOptions,
    path: &Path,
    suite: &SuiteFile,
    t: &SuiteTask,
    warnings: &Arc<Mutex<Vec<String>>>,
) -> Result<Member, Error> {
    let (inputs, shown): (Vec<PathBuf>, Vec<String>) = match (&t.inputs, base.inputs.is_empty()) {
        (Some(own), _) => (own.iter().map(|p| resolve(path, p)).collect(), own.clone()),
        (None, false) => (
            base.inputs.clone(),
            base.inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
        ),
        (None, true) => (
            suite.inputs.iter().map(|p| resolve(path, p)).collect(),
            suite.inputs.clone(),
        ),
    };
    if inputs.is_empty() {
        return Err(Error::new(format!(
            "suite file `{}`: task `{}` has no inputs",
            path.display(),
            t.name
        ))
        .kind(ErrorKind::Task)
        .with_hint(
            "give the suite shared `inputs:`, the task its own `inputs:`, or pass --input",
        ));
    }
    let (task, inline) = match &t.source {
        TaskSource::File(f) => {
            let file = resolve(path, f);
            // A mistake of the suite file's, located there, before any task runs.
            if let Err(e) = std::fs::metadata(&file) {
                let message = format!(
                    "task `{}`: cannot read task file `{}`: {e}",
                    t.name,
                    file.display()
                );
                return Err(suite_error(path, TaskError::new(message, t.location))
                    .with_hint("a task file's path is relative to the suite file's folder"));
            }
            (file, None)
        }
        TaskSource::Inline { text, .. } => (path.to_path_buf(), Some(text.clone())),
    };
    let name = t.name.clone();
    let warnings = Arc::clone(warnings);
    let opts = RunOptions {
        task,
        inputs,
        recursive: base.recursive,
        hive_partitioning: base.hive_partitioning,
        union_by_name: base.union_by_name,
        where_filter: base.where_filter.clone(),
        // A Delta root holds every task's rows (its `task` column tells them apart).
        out_dir: match base.format {
            crate::OutputFormat::Delta => base.out_dir.clone(),
            crate::OutputFormat::Folder => base.out_dir.join(format!("task={}", t.name)),
        },
        format: base.format,
        task_name: Some(t.name.clone()),
        // The task's `set:` first: the command line's `--set` wins.
        sets: t.sets.iter().chain(&base.sets).cloned().collect(),
        keep: base.keep.clone(),
        output_column: base.output_column.clone(),
        threads: base.threads,
        overwrite: base.overwrite,
        max_row_errors: base.max_row_errors,
        progress: None,
        open_progress: base.open_progress.clone(),
        warn: Some(Box::new(move |w: &str| {
            warnings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!("task `{name}`: {w}"));
        })),
        judge: base.judge.clone(),
        judge_progress: None,
        run_id: base.run_id.clone(),
        labels: base.labels.clone(),
        run_columns: base.run_columns,
        storage_options: base.storage_options.clone(),
        functions: base.functions.clone(),
    };
    Ok(Member {
        name: t.name.clone(),
        opts,
        inline,
        inputs: shown,
        parsed: None,
        ready: None,
        task_sha: String::new(),
        scored: None,
        summary: None,
        failure: None,
    })
}

/// The tasks parsed, grouped by their inputs and their `filter:` (in the order of each
/// group's first task): each group's inputs are opened and read once.
fn groups(members: &[Member]) -> Vec<Vec<usize>> {
    let filter = |m: &Member| {
        m.parsed
            .as_ref()
            .and_then(|t| t.filter.as_ref())
            .map(|f| f.text.clone())
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, m) in members.iter().enumerate() {
        if m.parsed.is_none() {
            continue;
        }
        match groups.iter_mut().find(|g| {
            members[g[0]].opts.inputs == m.opts.inputs && filter(&members[g[0]]) == filter(m)
        }) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// Parses a task (and keeps the SHA-256 of its text).
fn parse(m: &mut Member, suite: &Path) -> Result<Task, Error> {
    let (task, sha) = match &m.inline {
        None => pipeline::read_task(&m.opts)?,
        // The inline text keeps the suite file's lines and columns: errors point into it.
        Some(text) => pipeline::parse_task(&m.opts, text, suite.parent())
            .map_err(|e| Error::task(suite, e))?,
    };
    m.task_sha = sha;
    Ok(task)
}

/// Binds a parsed task to its inputs' schema and prepares its output folder.
fn bind(m: &mut Member, inputs: &Inputs, run: &RunIdentity) -> Result<Ready, Error> {
    let task = m
        .parsed
        .take()
        .ok_or_else(|| Error::new("internal error: a suite task bound twice"))?;
    let scorer = pipeline::plan(&m.opts, task, inputs, run)?;
    let (outputs, writer) = pipeline::prepare_outputs(&m.opts, &scorer, run)?;
    Ok(Ready {
        scorer,
        outputs,
        writer: Some(writer),
    })
}

/// Records a task's failure (its message led by the task's name); without `keep_going`,
/// it is the suite's error.
fn fail(m: &mut Member, mut e: Error, keep_going: bool) -> Result<(), Error> {
    if e.kind == ErrorKind::Interrupted {
        return Err(e);
    }
    e.message = format!("task `{}`: {}", m.name, e.message);
    m.ready = None;
    m.summary = None;
    if !keep_going {
        return Err(e);
    }
    m.failure = Some(e);
    Ok(())
}
