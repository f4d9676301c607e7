//! `evalscore judge import` and `evalscore judge export`: the judge cache and OpenAI Batch API
//! files.

use crate::args::{ExportArgs, JudgeCommand};
use evalscore_engine::{Error, ErrorKind, ExportOptions, JudgeOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn judge(command: JudgeCommand) -> Result<ExitCode, Error> {
    match command {
        JudgeCommand::Import { results, cache } => import(&results, cache),
        JudgeCommand::Export(args) => export(args),
    }?;
    Ok(ExitCode::SUCCESS)
}

/// Stores a Batch API output file in the cache and says how many replies it stored.
fn import(results: &Path, cache: Option<PathBuf>) -> Result<(), Error> {
    let path = cache
        .or_else(evalscore_judge::default_cache_path)
        .ok_or_else(|| {
            Error::new("no judge cache path: neither XDG_CACHE_HOME nor HOME is set")
                .hint("pass `--cache PATH`")
        })?;
    let file = evalscore_judge::open_batch_output(results)
        .map_err(|e| Error::new(e.to_string()).kind(ErrorKind::Input))?;
    let name = results.display().to_string();
    let stats = evalscore_judge::Cache::open(&path)
        .and_then(|c| c.import_batch_output(&name, std::io::BufReader::new(file)))
        .map_err(|e| Error::new(e.to_string()))?;
    println!(
        "stored {} replies in {} ({} failed requests left out)",
        stats.stored,
        path.display(),
        stats.failed
    );
    Ok(())
}

/// Writes the request files and says what it wrote.
fn export(args: ExportArgs) -> Result<(), Error> {
    let summary = evalscore_engine::export_requests(&ExportOptions {
        task: args.task,
        inputs: args.inputs,
        out: args.out,
        sets: args.sets,
        output_column: args.output_column,
        judge: JudgeOptions {
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
