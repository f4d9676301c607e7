//! The `evalscore` binary: argument parsing, progress, the summary table, error rendering
//! and exit codes. All the work is in `evalscore_engine`.

use clap::{Parser, Subcommand};
use evalscore_engine::{run, Error, RunOptions, RunSummary};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The task definition (YAML).
    task: PathBuf,
    /// A Parquet file, a JSONL file (.jsonl/.ndjson) or a directory of Parquet files; repeatable.
    #[arg(long = "input", required = true, value_name = "PATH")]
    inputs: Vec<PathBuf>,
    /// The folder that receives scores.parquet, metrics.parquet, metrics.json and run.json.
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
    /// Worker threads (default: one per core).
    #[arg(long = "threads", value_name = "N", default_value_t = 0)]
    threads: usize,
    /// Replace outputs already in --out.
    #[arg(long)]
    overwrite: bool,
    /// No progress line and no warnings on stderr.
    #[arg(long)]
    quiet: bool,
}

fn parse_set(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(format!("`{s}` is not NAME=VALUE")),
    }
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let Command::Run(args) = cli.command;
    match run_command(args) {
        Ok(()) => ExitCode::SUCCESS,
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
        threads: args.threads,
        overwrite: args.overwrite,
        progress: show_progress.then(|| {
            let p = progress.clone_handle();
            Box::new(move |done, total| p.update(done, total)) as Box<dyn Fn(u64, u64) + Sync>
        }),
        warn: (!quiet)
            .then(|| Box::new(|w: &str| eprintln!("warning: {w}")) as Box<dyn Fn(&str) + Sync>),
    };
    let result = run(&opts);
    progress.clear();
    let summary = result?;
    print!("{}", summary_table(&summary));
    Ok(())
}

/// Renders an error in uv's shape: `error:`, indented `Caused by:` lines, `hint:`.
fn render_error(e: &Error) -> String {
    let mut s = format!("error: {}\n", e.message);
    for c in &e.causes {
        s.push_str(&format!("  Caused by: {c}\n"));
    }
    if let Some(h) = &e.hint {
        s.push_str(&format!("hint: {h}\n"));
    }
    s
}

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
        eprintln!("error: internal error: {msg}{at}");
        eprintln!("hint: this is a bug in evalscore; please report it with the command line and the task file. No output was written");
        // Exit from here so no thread unwinds into a half-finished state and no backtrace is shown.
        std::process::exit(2);
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
}

impl Progress {
    fn new() -> Self {
        Progress {
            inner: std::sync::Arc::new(Mutex::new(ProgressState {
                start: Instant::now(),
                last: None,
                shown: false,
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
        let elapsed = s.start.elapsed();
        if elapsed < Duration::from_secs(1)
            || s.last
                .is_some_and(|l| l.elapsed() < Duration::from_millis(200))
        {
            return;
        }
        s.last = Some(Instant::now());
        s.shown = true;
        let rate = done as f64 / elapsed.as_secs_f64().max(1e-9);
        let pct = if total > 0 {
            100.0 * done as f64 / total as f64
        } else {
            100.0
        };
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "\r\x1b[2K{done} / {total} rows ({pct:.0}%), {} rows/s",
            human(rate)
        );
        let _ = err.flush();
    }

    fn clear(&self) {
        let s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if s.shown {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
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

/// The metrics as a plain-text table for stdout.
fn summary_table(s: &RunSummary) -> String {
    let header = ["scorer", "metric", "field", "stat", "label", "value", "n"];
    let mut rows: Vec<[String; 7]> = Vec::new();
    for r in &s.metrics {
        rows.push([
            r.scorer.clone(),
            r.metric.clone(),
            r.field.clone(),
            r.stat.clone(),
            match &r.label {
                Some(l) if l.is_empty() => "\"\"".to_owned(),
                Some(l) => l.clone(),
                None => String::new(),
            },
            r.value.map_or_else(|| "null".to_owned(), format_value),
            r.n.to_string(),
        ]);
    }
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            // Numbers right-aligned, text left-aligned.
            if i >= 5 {
                l.push_str(&format!("{c:>w$}"));
            } else {
                l.push_str(&format!("{c:<w$}"));
            }
            if i + 1 < cells.len() {
                l.push_str("  ");
            }
        }
        l.trim_end().to_owned() + "\n"
    };
    let mut out = line(&header.map(String::from));
    out.push_str(&line(&widths.map(|w| "-".repeat(w))));
    for r in &rows {
        out.push_str(&line(r));
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
