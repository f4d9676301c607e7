//! `evalscore judge import`, `evalscore judge export` and `evalscore judge cache`: the judge
//! cache, OpenAI Batch API files, and a shared cache's upkeep.

use crate::args::{ExportArgs, JudgeCommand, SharedCacheArgs, SharedCacheCommand};
use crate::key_value::storage_options;
use evalscore_engine::{Error, ErrorKind, ExportOptions, JudgeCache, JudgeOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn judge(command: JudgeCommand) -> Result<ExitCode, Error> {
    match command {
        JudgeCommand::Import {
            results,
            cache,
            storage_options: options,
        } => import(&results, cache, &options),
        JudgeCommand::Export(args) => export(args),
        JudgeCommand::Cache(SharedCacheCommand::Stats(args)) => shared_stats(args),
        JudgeCommand::Cache(SharedCacheCommand::Compact(args)) => shared_compact(args),
    }?;
    Ok(ExitCode::SUCCESS)
}

/// Stores a Batch API output file in the cache (and, for a shared cache, uploads it as one
/// segment) and says how many replies it stored.
fn import(results: &Path, cache: Option<PathBuf>, options: &[String]) -> Result<(), Error> {
    let choice = match cache.as_deref().map(|p| (p, p.to_str())) {
        Some((_, Some(text))) => JudgeCache::parse(text, storage_options(options)?),
        Some((p, None)) => JudgeCache::Path(p.to_path_buf()),
        None => JudgeCache::Default,
    };
    let file = evalscore_judge::open_batch_output(results)
        .map_err(|e| Error::new(e.to_string()).kind(ErrorKind::Input))?;
    let name = results.display().to_string();
    let cache = choice
        .open()
        .map_err(Error::from)?
        .ok_or_else(|| Error::new("no judge cache"))?;
    let stats = cache
        .import_batch_output(&name, std::io::BufReader::new(file))
        .and_then(|s| cache.flush().map(|()| s))
        .map_err(Error::from)?;
    let shown = match cache.shared_url() {
        Some(url) => url.to_owned(),
        None => cache.path().display().to_string(),
    };
    println!(
        "stored {} replies in {shown} ({} failed requests left out)",
        stats.stored, stats.failed
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
            cache: args.cache.choice(storage_options(&args.storage_options)?),
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

/// The shared cache of `judge cache stats|compact URL`.
fn shared_choice(args: &SharedCacheArgs) -> Result<JudgeCache, Error> {
    let text = args
        .url
        .to_str()
        .ok_or_else(|| Error::new(format!("`{}` is not a UTF-8 path", args.url.display())))?;
    Ok(JudgeCache::shared(
        text,
        storage_options(&args.storage_options)?,
    ))
}

/// `judge cache stats URL`.
fn shared_stats(args: SharedCacheArgs) -> Result<(), Error> {
    let store = shared_choice(&args)?
        .shared_store()?
        .ok_or_else(|| Error::new("not a shared cache"))?;
    let url = store.url().to_owned();
    let s = evalscore_judge::shared_cache_stats(store)?;
    println!("judge cache {url}");
    println!("segments    {}", s.segments);
    println!("entries     {}", s.entries);
    println!("bytes       {}", s.bytes);
    println!("row groups  {}", s.row_groups);
    println!("unreadable  {}", s.unreadable.len());
    for (segment, why) in &s.unreadable {
        println!("  {segment}: {why}");
    }
    Ok(())
}

/// `judge cache compact URL`.
fn shared_compact(args: SharedCacheArgs) -> Result<(), Error> {
    let store = shared_choice(&args)?
        .shared_store()?
        .ok_or_else(|| Error::new("not a shared cache"))?;
    let url = store.url().to_owned();
    let c = evalscore_judge::compact_shared(store)?;
    if c.written == 0 {
        println!(
            "judge cache {url}: nothing to merge ({} segments kept)",
            c.kept
        );
    } else {
        println!(
            "judge cache {url}: merged {} segments into {} ({} replies, {} duplicates dropped); {} segments kept",
            c.merged, c.written, c.entries, c.duplicates, c.kept
        );
    }
    Ok(())
}
