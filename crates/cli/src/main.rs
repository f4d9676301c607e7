//! The `evalscore` binary: argument parsing, progress, the summary table, error rendering
//! and exit codes. All the work is in `evalscore_engine`.

use clap::{Parser, Subcommand};
use evalscore_engine::{run, Error, ErrorKind, RowErrorLimit, RunOptions, RunSummary};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

// The system allocator by default: on the benchmark job glibc's took less CPU and about half
// the peak memory of mimalloc, which touched more fresh pages (BENCHMARKS.md).
// `--features mimalloc` builds with it.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v2 and v3 alike).
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// With mimalloc: keep freed memory instead of returning it to the OS 10 ms later. Each
/// unit's buffers are freed and the next unit's are allocated moments after; returned pages
/// come back as fresh (zeroed) pages. Memory stays bounded: the peak is what it was, it is
/// only not given back before the process ends.
fn keep_freed_memory() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: `mi_option_set` takes an option number and a value, is safe to call at any
    // time from any thread, and ignores options it does not know.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

/// Turns transparent huge pages off for this process (Linux). Where the kernel has no huge
/// page free it compacts memory on the faulting thread: in the benchmark's alternating runs
/// (after DuckDB and Polars) that added system time to some runs of the job under mimalloc,
/// whose peak RSS also halved with 4 KiB pages (BENCHMARKS.md).
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: `prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)` only sets a flag of this process; it
    // takes no pointers. A kernel without it returns an error, which changes nothing.
    #[allow(unsafe_code)]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Score LLM evaluation results stored in Parquet or JSONL with declarative scorers.
#[derive(Debug, Parser)]
#[command(name = "evalscore", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Score every input row with the task's scorers and write scores and metrics to --out.
    Run(RunArgs),
    /// The judge-model reply cache.
    #[command(subcommand)]
    Judge(JudgeCommand),
    /// Compare two runs row by row: paired differences, intervals, p-values and verdicts in
    /// DIR/compare.parquet and DIR/compare.json; exit 1 when --max-drop's gate fails.
    Compare(CompareArgs),
    /// Write a self-contained HTML report of a run (and of its comparison with --baseline).
    Report(ReportArgs),
}

#[derive(Debug, clap::Args)]
struct CompareArgs {
    /// The baseline run's --out folder.
    base: PathBuf,
    /// The new run's --out folder.
    new: PathBuf,
    /// The folder that receives compare.parquet and compare.json.
    #[arg(long = "out", value_name = "DIR")]
    out: PathBuf,
    /// The kept columns that pair the rows of the two runs.
    #[arg(
        long = "key",
        value_name = "COL[,COL]",
        value_delimiter = ',',
        default_value = "id"
    )]
    key: Vec<String>,
    /// A kept column whose values group correlated rows: cluster-robust standard errors.
    #[arg(long = "cluster", value_name = "COL")]
    cluster: Option<String>,
    /// A kept column: every comparison again per value of it.
    #[arg(long = "group-by", value_name = "COL")]
    group_by: Option<String>,
    /// The confidence of the intervals; p < 1 − C is significant.
    #[arg(long = "confidence", value_name = "C", default_value_t = 0.95)]
    confidence: f64,
    /// Turns the gate on: exit 1 when a significant drop is larger than X.
    #[arg(long = "max-drop", value_name = "X")]
    max_drop: Option<f64>,
    /// Replace outputs already in --out.
    #[arg(long)]
    overwrite: bool,
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// The run's --out folder.
    run: PathBuf,
    /// A baseline run's --out folder: adds the comparison (forest plot, flipped rows).
    #[arg(long = "baseline", value_name = "BASE_DIR")]
    baseline: Option<PathBuf>,
    /// The kept columns that pair the rows with the baseline.
    #[arg(
        long = "key",
        value_name = "COL[,COL]",
        value_delimiter = ',',
        default_value = "id"
    )]
    key: Vec<String>,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Replace the file if it exists.
    #[arg(long)]
    overwrite: bool,
}

#[derive(Debug, Subcommand)]
enum JudgeCommand {
    /// Store an OpenAI Batch API output file (JSONL) in the judge cache: each successful
    /// line's reply under its `custom_id`; failed lines are counted and left out.
    Import {
        /// The Batch API output file.
        results: PathBuf,
        /// The cache file (default: $XDG_CACHE_HOME/evalscore/judge.sqlite, else
        /// ~/.cache/evalscore/judge.sqlite).
        #[arg(long = "cache", value_name = "PATH")]
        cache: Option<PathBuf>,
    },
    /// Write every judge request of TASK over the inputs that the cache does not hold, as
    /// OpenAI Batch API input files (`custom_id` = the cache key), at most 50,000 a file:
    /// --out first, then NAME.2.jsonl, NAME.3.jsonl, ...
    Export(ExportArgs),
}

#[derive(Debug, clap::Args)]
struct ExportArgs {
    /// The task definition (YAML).
    task: PathBuf,
    /// A Parquet file, a JSONL file or a directory of Parquet files; repeatable.
    #[arg(long = "input", required = true, value_name = "PATH")]
    inputs: Vec<PathBuf>,
    /// The first Batch API input file (JSONL).
    #[arg(long = "out", value_name = "FILE")]
    out: PathBuf,
    /// Fill or override a `<< config.NAME >>` value; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    sets: Vec<(String, String)>,
    /// The column holding the model output (default: `output`).
    #[arg(long = "output-column", value_name = "COL")]
    output_column: Option<String>,
    #[command(flatten)]
    cache: CacheArgs,
    /// Replace request files already there.
    #[arg(long)]
    overwrite: bool,
}

/// Where judge replies are cached.
#[derive(Debug, clap::Args)]
struct CacheArgs {
    /// The judge reply cache (default: $XDG_CACHE_HOME/evalscore/judge.sqlite, else
    /// ~/.cache/evalscore/judge.sqlite).
    #[arg(long = "cache", value_name = "PATH", conflicts_with = "no_cache")]
    cache: Option<PathBuf>,
    /// Use no judge cache: every judge request is sent.
    #[arg(long = "no-cache")]
    no_cache: bool,
}

impl CacheArgs {
    fn choice(&self) -> evalscore_engine::JudgeCache {
        match (&self.cache, self.no_cache) {
            (_, true) => evalscore_engine::JudgeCache::Off,
            (Some(p), false) => evalscore_engine::JudgeCache::Path(p.clone()),
            (None, false) => evalscore_engine::JudgeCache::Default,
        }
    }
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The task definition (YAML).
    task: PathBuf,
    /// A Parquet file, a JSONL file (.jsonl/.ndjson, also .gz/.zst) or a directory of Parquet
    /// files, local or an object storage URL (s3://, gs://, az://, abfss://, https://; a URL
    /// ending in `/` is a prefix of Parquet objects); repeatable.
    #[arg(long = "input", required = true, value_name = "PATH")]
    inputs: Vec<PathBuf>,
    /// The folder that receives scores.parquet, metrics.parquet, confusion.parquet,
    /// metrics.json and run.json (last); or an s3://, gs://, az:// or abfss:// prefix.
    #[arg(long = "out", value_name = "DIR")]
    out: PathBuf,
    /// Fill or override a `<< config.NAME >>` value; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    sets: Vec<(String, String)>,
    /// Input columns copied to scores.parquet (default: `id` when the input has it).
    #[arg(long = "keep", value_name = "COL[,COL...]", value_delimiter = ',')]
    keep: Option<Vec<String>>,
    /// The column holding the model output (default: `output`).
    #[arg(long = "output-column", value_name = "COL")]
    output_column: Option<String>,
    /// Worker threads, 1 to 1024 (default: one per core).
    #[arg(long = "threads", value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// Replace outputs already in --out.
    #[arg(long)]
    overwrite: bool,
    /// Rows whose data a scorer cannot use (an MCQA ground truth that is not one character,
    /// a template that fails on the row) that are scored 0.0 and listed in run.json instead
    /// of stopping the run: a count, or a share of the rows such as `0.1%`.
    #[arg(long = "max-row-errors", value_name = "N|N%", default_value = "0", value_parser = RowErrorLimit::parse)]
    max_row_errors: RowErrorLimit,
    /// No progress line and no warnings on stderr.
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    cache: CacheArgs,
    /// Send no judge request: model-graded rows are scored from the cache, and a row whose
    /// reply is not cached is a row error.
    #[arg(long)]
    offline: bool,
    /// The run's id in the outputs' `run_id` columns (default: a fresh UUIDv7).
    #[arg(long = "run-id", value_name = "ID")]
    run_id: Option<String>,
    /// A label in the outputs' `labels` column (a JSON object); repeatable.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = evalscore_engine::run_identity::parse_label)]
    labels: Vec<(String, String)>,
    /// Also add the `run_id` column to scores.parquet.
    #[arg(long = "run-columns")]
    run_columns: bool,
    /// An object storage setting over the environment's (e.g. `aws_endpoint=http://...`,
    /// `aws_region=eu-west-1`, `azure_storage_account_name=...`); repeatable. Never printed.
    // Parsed after clap (`storage_options`), so a malformed value is not echoed in an error.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    storage_options: Vec<String>,
}

/// `--storage-option` pairs. The message never repeats the value: it may hold a secret.
fn storage_options(given: &[String]) -> Result<Vec<(String, String)>, evalscore_engine::Error> {
    given
        .iter()
        .enumerate()
        .map(|(i, s)| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
            _ => Err(evalscore_engine::Error::new(format!(
                "`--storage-option` number {} is not KEY=VALUE",
                i + 1
            ))
            .hint(
                "write `--storage-option aws_region=eu-west-1`; see docs/storage.md for the keys",
            )),
        })
        .collect()
}

fn parse_set(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(format!("`{s}` is not NAME=VALUE")),
    }
}

fn main() -> ExitCode {
    no_huge_pages();
    keep_freed_memory();
    install_panic_hook();
    // A panic anywhere, including a rayon worker (the reader re-raises those on this thread),
    // unwinds to here: the output guard's Drop removes the temporary files on the way.
    match std::panic::catch_unwind(main_inner) {
        Ok(code) => code,
        Err(_) => {
            let msg = LAST_PANIC
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .unwrap_or_else(|| "unknown panic".to_owned());
            eprintln!("error: internal error: {msg}");
            eprintln!("hint: this is a bug in evalscore; please report it with the command line and the task file. No output was written");
            ExitCode::from(2)
        }
    }
}

fn main_inner() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let args = match cli.command {
        Command::Run(args) => args,
        Command::Judge(JudgeCommand::Import { results, cache }) => {
            return judge_import(&results, cache);
        }
        Command::Judge(JudgeCommand::Export(args)) => {
            return match judge_export(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprint!("{}", render_error(&e));
                    ExitCode::from(2)
                }
            };
        }
        Command::Compare(args) => return compare_command(args),
        Command::Report(args) => return report_command(args),
    };
    // SIGINT, SIGTERM and SIGHUP stop the run between batches; it removes its temporary
    // files and exits with 128 + the signal's number, as a shell reports a killed command.
    let flag = evalscore_engine::interrupt_flag();
    #[cfg(unix)]
    let signals = [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ];
    #[cfg(not(unix))]
    let signals = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM];
    for sig in signals {
        let _ = signal_hook::flag::register_usize(sig, std::sync::Arc::clone(&flag), sig as usize);
    }
    match run_command(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprint!("{}", render_error(&e));
            match (e.kind, evalscore_engine::interrupted()) {
                (ErrorKind::Interrupted, Some(sig)) => {
                    ExitCode::from(u8::try_from(128 + sig).unwrap_or(2))
                }
                _ => ExitCode::from(2),
            }
        }
    }
}

/// `evalscore judge import`: prints what it stored; errors in the usual shape, exit 2.
fn judge_import(results: &std::path::Path, cache: Option<PathBuf>) -> ExitCode {
    let fail = |message: String, hint: Option<&str>| {
        let e = Error::new(message);
        let e = match hint {
            Some(h) => e.with_hint(h),
            None => e,
        };
        eprint!("{}", render_error(&e));
        ExitCode::from(2)
    };
    let Some(path) = cache.or_else(evalscore_judge::default_cache_path) else {
        return fail(
            "no judge cache path: neither XDG_CACHE_HOME nor HOME is set".to_owned(),
            Some("pass `--cache PATH`"),
        );
    };
    let file = match std::fs::File::open(results) {
        Ok(f) => f,
        Err(e) => return fail(format!("cannot read `{}`: {e}", results.display()), None),
    };
    let name = results.display().to_string();
    let stored = evalscore_judge::Cache::open(&path)
        .and_then(|c| c.import_batch_output(&name, std::io::BufReader::new(file)));
    match stored {
        Ok(stats) => {
            println!(
                "stored {} replies in {} ({} failed requests left out)",
                stats.stored,
                path.display(),
                stats.failed
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(e.to_string(), None),
    }
}

/// `evalscore judge export`: writes the request files and says what it wrote.
fn judge_export(args: ExportArgs) -> Result<(), Error> {
    let summary = evalscore_engine::export_requests(&evalscore_engine::ExportOptions {
        task: args.task,
        inputs: args.inputs,
        out: args.out,
        sets: args.sets,
        output_column: args.output_column,
        judge: evalscore_engine::JudgeOptions {
            cache: args.cache.choice(),
            offline: false,
        },
        overwrite: args.overwrite,
    })?;
    let files: Vec<String> = summary
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    println!(
        "wrote {} uncached requests of {} rows to {}",
        summary.requests,
        summary.rows,
        files.join(", ")
    );
    Ok(())
}

/// `evalscore compare`: the table on stdout; exit 1 when the gate fails, 2 on errors.
fn compare_command(a: CompareArgs) -> ExitCode {
    let opts = evalscore_compare::CompareOptions {
        base: a.base,
        new: a.new,
        key: a.key,
        cluster: a.cluster,
        group_by: a.group_by,
        confidence: a.confidence,
        max_drop: a.max_drop,
    };
    let done = evalscore_compare::compare(&opts)
        .and_then(|c| evalscore_compare::write(&c, &a.out, a.overwrite).map(|()| c));
    match done {
        Ok(c) => {
            print!("{}", c.table());
            ExitCode::from(if c.gate_failed() { 1 } else { 0 })
        }
        Err(e) => {
            eprint!("{}", render_error(&e));
            ExitCode::from(2)
        }
    }
}

/// `evalscore report`: one HTML file; exit 2 on errors.
fn report_command(a: ReportArgs) -> ExitCode {
    let opts = evalscore_compare::ReportOptions {
        run: a.run,
        baseline: a.baseline,
        key: a.key,
    };
    let done = evalscore_compare::report(&opts)
        .and_then(|html| evalscore_compare::report::write_report(&html, &a.output, a.overwrite));
    match done {
        Ok(()) => {
            println!("wrote {}", a.output.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprint!("{}", render_error(&e));
            ExitCode::from(2)
        }
    }
}

fn run_command(args: RunArgs) -> Result<(), Error> {
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let progress = Progress::new();
    let quiet = args.quiet;
    let opts = RunOptions {
        task: args.task,
        inputs: args.inputs,
        out_dir: args.out,
        sets: args.sets,
        keep: args.keep,
        output_column: args.output_column,
        threads: args.threads.map_or(0, usize::from),
        overwrite: args.overwrite,
        max_row_errors: args.max_row_errors,
        progress: show_progress.then(|| {
            let p = progress.clone_handle();
            Box::new(move |done, total| p.update(done, total)) as Box<dyn Fn(u64, u64) + Sync>
        }),
        warn: (!quiet)
            .then(|| Box::new(|w: &str| eprintln!("warning: {w}")) as Box<dyn Fn(&str) + Sync>),
        judge: evalscore_engine::JudgeOptions {
            cache: args.cache.choice(),
            offline: args.offline,
        },
        judge_progress: show_progress.then(|| {
            let p = progress.clone_handle();
            Box::new(move |j| p.judge(j)) as Box<dyn Fn(evalscore_engine::JudgeProgress) + Sync>
        }),
        run_id: args.run_id,
        labels: args.labels,
        run_columns: args.run_columns,
        storage_options: storage_options(&args.storage_options)?,
        functions: None,
    };
    let result = run(&opts);
    progress.clear();
    let summary = result?;
    print!("{}", summary_table(&summary));
    Ok(())
}

/// Renders an error in uv's shape: `error:`, indented `Caused by:` lines, `hint:`
/// (`evalscore_error::render`, the one renderer).
fn render_error(e: &Error) -> String {
    evalscore_engine::render(e)
}

/// The message and place of the most recent panic, for `main` to print once it has unwound.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replaces the default hook (which prints `thread panicked at` and a backtrace note) with one
/// that only records the message. Panics that are caught on purpose (the Parquet decoder on a
/// damaged file) print nothing; any other reaches `main`, which prints it as an internal error.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        *LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{msg}{at}"));
    }));
}

/// A progress line on stderr, shown after the first second and redrawn at most 5 times a second.
struct Progress {
    inner: std::sync::Arc<Mutex<ProgressState>>,
}

struct ProgressState {
    start: Instant,
    last: Option<Instant>,
    shown: bool,
    /// The rows done and in all, as last reported.
    rows: (u64, u64),
    judge: Option<evalscore_engine::JudgeProgress>,
}

impl Progress {
    fn new() -> Self {
        Progress {
            inner: std::sync::Arc::new(Mutex::new(ProgressState {
                start: Instant::now(),
                last: None,
                shown: false,
                rows: (0, 0),
                judge: None,
            })),
        }
    }

    fn clone_handle(&self) -> Progress {
        Progress {
            inner: std::sync::Arc::clone(&self.inner),
        }
    }

    fn update(&self, done: u64, total: u64) {
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        s.rows = (done, total);
        Self::draw(&mut s);
    }

    /// The judge's live counters (a task with model-graded scorers), about four times a second.
    fn judge(&self, j: evalscore_engine::JudgeProgress) {
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        s.judge = Some(j);
        Self::draw(&mut s);
    }

    fn draw(s: &mut ProgressState) {
        let elapsed = s.start.elapsed();
        if elapsed < Duration::from_secs(1)
            || s.last
                .is_some_and(|l| l.elapsed() < Duration::from_millis(200))
        {
            return;
        }
        s.last = Some(Instant::now());
        s.shown = true;
        let line = progress_line(s.rows.0, s.rows.1, elapsed, s.judge.as_ref());
        let mut err = std::io::stderr();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
    }

    fn clear(&self) {
        let s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if s.shown {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// The progress line's text: rows scored, and with judges the rows judged, requests in flight,
/// requests sent, cache hits, retries and tokens.
fn progress_line(
    done: u64,
    total: u64,
    elapsed: Duration,
    judge: Option<&evalscore_engine::JudgeProgress>,
) -> String {
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-9);
    let pct = if total > 0 {
        100.0 * done as f64 / total as f64
    } else {
        100.0
    };
    let mut line = format!("{done} / {total} rows ({pct:.0}%), {} rows/s", human(rate));
    if let Some(j) = judge {
        line.push_str(&format!(
            "; judge: {} rows judged, {} in flight, {} sent, {} cache hits, {} retries, {} tokens",
            j.rows_judged, j.in_flight, j.requests_sent, j.cache_hits, j.retries, j.tokens
        ));
    }
    line
}

fn human(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2}M", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.1}k", rate / 1e3)
    } else {
        format!("{rate:.0}")
    }
}

/// Lays out rows as columns; `right` says which columns are right-aligned.
fn table(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let w = widths[i];
            let pad = w.saturating_sub(c.chars().count());
            if right.get(i).copied().unwrap_or(false) {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            }
            if i + 1 < cells.len() {
                l.push_str("  ");
            }
        }
        l.trim_end().to_owned() + "\n"
    };
    let mut out = line(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    out.push_str(&line(
        &widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
    ));
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

fn group_text(columns: &[String], values: &[Option<String>]) -> String {
    columns
        .iter()
        .zip(values)
        .filter_map(|(c, v)| v.as_ref().map(|v| format!("{c}={v}")))
        .collect::<Vec<_>>()
        .join(",")
}

/// The metrics as a plain-text table for stdout, then each confusion matrix as a small table.
/// A confusion matrix's cells by (actual, predicted).
type Cells<'a> = HashMap<(&'a str, &'a str), u64>;

/// Most metric rows the stdout summary prints; the files keep every row.
const SUMMARY_ROWS: usize = 200;
/// Longest text a summary cell prints, in characters; longer labels are cut with `…`.
const SUMMARY_CELL: usize = 60;
/// Most classes a printed confusion matrix has.
const SUMMARY_CLASSES: usize = 20;

/// `text` cut to [`SUMMARY_CELL`] characters, for the stdout summary only.
fn cell(text: &str) -> String {
    match text.char_indices().nth(SUMMARY_CELL) {
        None => text.to_owned(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

/// The stdout summary: at most [`SUMMARY_ROWS`] metric rows and confusion matrices of at
/// most [`SUMMARY_CLASSES`] classes, cells cut to [`SUMMARY_CELL`] characters, with a note
/// for what is left out (the files hold everything). Linear in what it prints.
fn summary_table(s: &RunSummary) -> String {
    let grouped = !s.group_columns.is_empty();
    let mut header = vec!["scorer", "metric", "field"];
    if grouped {
        header.push("group");
    }
    header.extend(["stat", "label", "value", "n"]);
    let mut right = vec![false; header.len()];
    let len = right.len();
    right[len - 2] = true;
    right[len - 1] = true;
    let rows: Vec<Vec<String>> = s
        .metrics
        .iter()
        .take(SUMMARY_ROWS)
        .map(|r| {
            let mut row = vec![cell(&r.scorer), cell(&r.metric), cell(&r.field)];
            if grouped {
                row.push(cell(&group_text(&s.group_columns, &r.groups)));
            }
            row.push(r.stat.clone());
            row.push(match &r.label {
                Some(l) if l.is_empty() => "\"\"".to_owned(),
                Some(l) => cell(l),
                None => String::new(),
            });
            row.push(r.value.map_or_else(|| "null".to_owned(), format_value));
            row.push(r.n.to_string());
            row
        })
        .collect();
    let mut out = table(&header, &rows, &right);
    if s.metrics.len() > SUMMARY_ROWS {
        out.push_str(&format!(
            "... {} more rows in metrics.parquet and metrics.json\n",
            s.metrics.len() - SUMMARY_ROWS
        ));
    }
    // Confusion matrices of the overall rows: actual down, predicted across. The cells of
    // each matrix are gathered in one pass, in order of first appearance.
    let mut matrices: Vec<((&str, &str), Cells<'_>)> = Vec::new();
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    for c in s
        .confusion
        .iter()
        .filter(|c| c.groups.iter().all(Option::is_none))
    {
        let id = (c.scorer.as_str(), c.metric.as_str());
        let i = *index.entry(id).or_insert_with(|| {
            matrices.push((id, HashMap::new()));
            matrices.len() - 1
        });
        *matrices[i]
            .1
            .entry((c.actual.as_str(), c.predicted.as_str()))
            .or_insert(0) += c.count;
    }
    for (id, cells) in &matrices {
        let mut classes: Vec<&str> = cells.keys().flat_map(|(a, p)| [*a, *p]).collect();
        classes.sort_unstable();
        classes.dedup();
        out.push_str(&format!(
            "\nconfusion matrix of {} / {}\n",
            cell(id.0),
            cell(id.1)
        ));
        if classes.len() > SUMMARY_CLASSES {
            out.push_str(&format!(
                "{} classes: too many to print; see confusion.parquet\n",
                classes.len()
            ));
            continue;
        }
        let mut header = vec!["actual \\ predicted".to_owned()];
        header.extend(classes.iter().map(|c| cell(c)));
        let rows: Vec<Vec<String>> = classes
            .iter()
            .map(|a| {
                let mut row = vec![cell(a)];
                for p in &classes {
                    row.push(cells.get(&(*a, *p)).copied().unwrap_or(0).to_string());
                }
                row
            })
            .collect();
        let mut right = vec![true; header.len()];
        right[0] = false;
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        out.push_str(&table(&header, &rows, &right));
    }
    out.push_str(&format!(
        "\n{} rows scored in {:.2}s; outputs in {}\n",
        s.rows,
        s.wall_seconds,
        s.out_dir.display()
    ));
    out
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.6}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_shows_the_judge_counters() {
        let j = evalscore_engine::JudgeProgress {
            rows_judged: 1500,
            in_flight: 8,
            requests_sent: 1200,
            cache_hits: 300,
            retries: 2,
            tokens: 45_000,
        };
        assert_eq!(
            progress_line(2000, 10_000, Duration::from_secs(2), Some(&j)),
            "2000 / 10000 rows (20%), 1.0k rows/s; judge: 1500 rows judged, 8 in flight, \
             1200 sent, 300 cache hits, 2 retries, 45000 tokens"
        );
        assert_eq!(
            progress_line(5, 10, Duration::from_secs(1), None),
            "5 / 10 rows (50%), 5 rows/s"
        );
    }
}
