//! `evalscore run`: scores the inputs, shows progress on a terminal, prints the summary.

use crate::args::RunArgs;
use crate::key_value::storage_options;
use crate::progress::Progress;
use crate::summary;
use evalscore_engine::{
    Error, JudgeOptions, JudgeProgress, OpenProgress, OutputFormat, RunOptions, SuiteOptions,
};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

pub fn run(args: RunArgs) -> Result<ExitCode, Error> {
    let suite = evalscore_engine::is_suite_file(&args.task);
    if !suite {
        if args.inputs.is_empty() {
            if let Some(e) = crate::args::missing_input() {
                let _ = e.print();
                return Ok(ExitCode::from(2));
            }
        }
        if args.keep_going {
            return Err(Error::new("--keep-going applies to a suite file (YAML with top-level `tasks:`), not to a task")
                .with_hint("drop --keep-going, or run a suite"));
        }
    }
    register_signals();
    let keep_going = args.keep_going;
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let progress = Progress::stderr();
    let hive_partitioning = args.hive_partitioning();
    let opts = RunOptions {
        task: args.task,
        inputs: args.inputs,
        recursive: args.recursive,
        hive_partitioning,
        union_by_name: args.union_by_name,
        where_filter: args.where_filter,
        out_dir: args.out,
        sets: args.sets,
        keep: args.keep,
        output_column: args.output_column,
        threads: args.threads.map_or(0, usize::from),
        overwrite: args.overwrite,
        max_row_errors: args.max_row_errors,
        progress: show_progress.then(|| {
            let p = progress.clone();
            Box::new(move |done, total| p.rows(done, total)) as Box<dyn Fn(u64, u64) + Sync>
        }),
        open_progress: show_progress.then(|| {
            let p = progress.clone();
            OpenProgress(Arc::new(move |step| p.opening(step)))
        }),
        warn: (!args.quiet).then(|| {
            let p = progress.clone();
            Box::new(move |w: &str| p.warn(w)) as Box<dyn Fn(&str) + Sync>
        }),
        judge: JudgeOptions {
            cache: args.cache.choice(storage_options(&args.storage_options)?),
            offline: args.offline,
        },
        judge_progress: show_progress.then(|| {
            let p = progress.clone();
            Box::new(move |j| p.judge(j)) as Box<dyn Fn(JudgeProgress) + Sync>
        }),
        run_id: args.run_id,
        labels: args.labels,
        run_columns: args.run_columns,
        format: match args.format.as_str() {
            "delta" => OutputFormat::Delta,
            _ => OutputFormat::Folder,
        },
        task_name: None,
        storage_options: storage_options(&args.storage_options)?,
        functions: None,
    };
    if suite {
        let result = evalscore_engine::run_suite(SuiteOptions {
            run: opts,
            keep_going,
        });
        progress.clear();
        let result = result?;
        print!("{}", summary::render_suite(&result));
        if result.failed().next().is_some() {
            for t in result.failed() {
                if let Err(e) = &t.result {
                    eprint!("{}", evalscore_engine::render(e));
                }
            }
            return Ok(ExitCode::from(3));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let result = evalscore_engine::run(&opts);
    progress.clear();
    print!("{}", summary::render(&result?));
    Ok(ExitCode::SUCCESS)
}

/// SIGINT, SIGTERM and SIGHUP stop the run between batches; it removes its temporary files
/// and exits with 128 + the signal's number, as a shell reports a killed command.
fn register_signals() {
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
}
