//! The `evalscore` binary: parses the command line and hands it to one module per command
//! ([`run`], [`judge`], [`compare`], [`report`]), each returning `Result<ExitCode, Error>`.
//! Errors are printed by `evalscore_engine::render` alone (the one renderer, shared with the
//! Python package). All the work is in `evalscore_engine` and
//! `evalscore_compare`.

mod args;
mod compare;
mod compare_rows;
mod compare_suite;
mod judge;
mod key_value;
mod limits;
mod memory;
mod progress;
mod report;
mod run;
mod summary;
mod table;
mod tables;

use args::{Cli, Command};
use clap::Parser;
use evalscore_engine::{Error, ErrorKind};
use std::process::ExitCode;
use std::sync::Mutex;

// The system allocator by default: on the benchmark job glibc's took less CPU and about half
// the peak memory of mimalloc, which touched more fresh pages (BENCHMARKS.md).
// `--features mimalloc` builds with it.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    memory::no_huge_pages();
    memory::keep_freed_memory();
    limits::raise_open_files();
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
            let e = Error::new(format!("internal error: {msg}"))
                .kind(ErrorKind::Internal)
                .with_hint("this is a bug in evalscore; please report it with the command line and the task file. No output was written");
            eprint!("{}", evalscore_engine::render(&e));
            ExitCode::from(2)
        }
    }
}

fn main_inner() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // `--help` and `--version` print on stdout and succeed.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let done = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Judge(command) => judge::judge(command),
        Command::Compare(args) => compare::compare(args),
        Command::Report(args) => report::report(args),
    };
    done.unwrap_or_else(|e| {
        eprint!("{}", evalscore_engine::render(&e));
        exit_code(&e)
    })
}

/// 128 + the signal's number for a run a signal stopped, as a shell reports a killed command;
/// 2 for any other error.
fn exit_code(e: &Error) -> ExitCode {
    match (e.kind, evalscore_engine::interrupted()) {
        (ErrorKind::Interrupted, Some(sig)) => ExitCode::from(u8::try_from(128 + sig).unwrap_or(2)),
        _ => ExitCode::from(2),
    }
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
