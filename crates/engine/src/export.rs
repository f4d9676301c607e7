//! `evalscore judge export`: every judge request of a task over its inputs that the cache does
//! not hold, as OpenAI Batch API input files (`custom_id` = the cache key), so that a provider's
//! Batch API can answer them and `evalscore judge import` can store the answers.
//!
//! The requests are exactly those a run would send (the same templates, the same bodies, the
//! same keys), each once. Files hold at most [`BATCH_FILE_REQUESTS`] lines: the first is `--out`
//! itself, the next ones take `.2`, `.3`, ... before the extension (`requests.2.jsonl`). Each
//! file is written under a temporary name and renamed into place when complete; parts of an
//! earlier export beyond the new set are refused, or with `--overwrite` removed.

use crate::model_output::model_output_text;
use crate::{BindOptions, Scorer};
use crate::{EngineError, Error, ErrorExt, ErrorKind, Task};
use evalscore_reader::Inputs;
use evalscore_scorers::judge::JudgeOptions;
use evalscore_task::RowContext;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Requests per Batch API input file (the OpenAI Batch API's limit).
pub const BATCH_FILE_REQUESTS: usize = 50_000;

/// What `judge export` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The task file.
    pub task: PathBuf,
    /// `--input`: the inputs whose rows make the requests.
    pub inputs: Vec<PathBuf>,
    /// `--out`: the first requests file (the next ones take `.2`, `.3`, ...).
    pub out: PathBuf,
    /// `--set NAME=VALUE` pairs.
    pub sets: Vec<(String, String)>,
    /// `--output-column`.
    pub output_column: Option<String>,
    /// The judge cache whose requests are left out.
    pub judge: JudgeOptions,
    /// `--overwrite`: existing requests files are replaced.
    pub overwrite: bool,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    /// Input rows read.
    pub rows: u64,
    /// Distinct requests not in the cache: the lines written.
    pub requests: u64,
    /// The files written, in order.
    pub files: Vec<PathBuf>,
}

/// The name of the `n`-th file (from 1) of `out`.
pub fn batch_file_name(out: &Path, n: usize) -> PathBuf {
    evalscore_judge::batch_part_name(out, n)
}

/// Writes the Batch API input files of every uncached judge request.
pub fn export_requests(opts: &ExportOptions) -> Result<ExportSummary, Error> {
    let text =
        std::fs::read_to_string(&opts.task).map_err(|source| EngineError::TaskUnreadable {
            path: opts.task.clone(),
            source,
        })?;
    let task = Task::from_yaml_in(&text, &opts.sets, opts.task.parent())
        .map_err(|e| Error::task(&opts.task, e))?;
    if !task.scorers.iter().any(|s| s.scorer.judge().is_some()) {
        return Err(EngineError::NothingToExport {
            task: opts.task.clone(),
        }
        .into());
    }
    if opts.judge.offline {
        return Err(EngineError::ExportOffline.into());
    }
    crate::outdir::refuse_url(&opts.out)?;
    let inputs = Inputs::open(&opts.inputs).map_err(Error::read)?;
    let scorer = Scorer::for_files(
        task,
        &inputs.schema,
        &BindOptions {
            keep: Some(Vec::new()),
            output_column: opts.output_column.clone(),
            max_row_errors: 0,
            judge: opts.judge.clone(),
            functions: None,
        },
        inputs
            .files
            .first()
            .map(|f| (opts.task.as_path(), f.path.as_path())),
    )?;
    let (task, plan) = (&scorer.task, &scorer.plan);
    let Some(runtime) = plan.judge.as_deref() else {
        return Err(EngineError::Internal {
            message: "no judge runtime".to_owned(),
            kind: ErrorKind::Internal,
        }
        .into());
    };
    // Refuse before writing anything: the whole set of files is the export.
    let parts = evalscore_judge::batch_parts_present(&opts.out);
    for f in std::iter::once(opts.out.clone()).chain(parts.into_iter().map(|(_, f)| f)) {
        if !opts.overwrite && std::fs::symlink_metadata(&f).is_ok() {
            return Err(EngineError::AlreadyExists { path: f }.into());
        }
    }
    let mut writer = BatchWriter::new(&opts.out);
    let mut seen: HashSet<String> = HashSet::new();
    let mut rows = 0u64;
    let result = (|| -> Result<(), Error> {
        let units = inputs.units();
        for unit in inputs.fetching_ahead(&units, &plan.columns) {
            let path = inputs.files[unit.file].path.clone();
            let mut done = 0u64;
            inputs.read_unit(unit, &plan.columns, |batch| -> Result<(), Error> {
                crate::check_interrupt()?;
                let model_output = match &plan.output_column {
                    Some(name) => match batch.column_by_name(name) {
                        Some(col) => {
                            Some(model_output_text(col, name).map_err(|e| EngineError::Row {
                                at: path.display().to_string(),
                                message: e.message,
                                kind: ErrorKind::Other,
                                hint: None,
                            })?)
                        }
                        None => None,
                    },
                    None => None,
                };
                let raw = plan
                    .output_column
                    .as_ref()
                    .and_then(|n| batch.column_by_name(n));
                let ctx = RowContext {
                    batch: &batch,
                    model_output: model_output.as_ref(),
                    model_output_raw: raw,
                };
                let lines = evalscore_scorers::judge::uncached_requests(
                    task,
                    runtime,
                    &ctx,
                    batch.num_rows(),
                    &mut seen,
                )
                .map_err(|e| EngineError::Row {
                    at: format!(
                        "{}, row {}",
                        path.display(),
                        unit.first_row + done + e.row as u64 + 1
                    ),
                    message: e.message,
                    kind: ErrorKind::Data,
                    hint: e.hint,
                })?;
                for line in lines {
                    writer.line(&line)?;
                }
                done += batch.num_rows() as u64;
                Ok(())
            })?;
            rows += done;
        }
        Ok(())
    })();
    if let Err(e) = result {
        writer.abandon();
        return Err(e);
    }
    let (requests, files) = writer.finish(opts.overwrite)?;
    Ok(ExportSummary {
        rows,
        requests,
        files,
    })
}

/// Lines into files of at most [`BATCH_FILE_REQUESTS`], each under a temporary name until
/// [`BatchWriter::finish`].
struct BatchWriter {
    out: PathBuf,
    current: Option<(std::io::BufWriter<std::fs::File>, PathBuf)>,
    /// (temporary, final) of every file begun.
    files: Vec<(PathBuf, PathBuf)>,
    in_file: usize,
    total: u64,
}

impl BatchWriter {
    fn new(out: &Path) -> BatchWriter {
        BatchWriter {
            out: out.to_path_buf(),
            current: None,
            files: Vec::new(),
            in_file: 0,
            total: 0,
        }
    }

    fn line(&mut self, line: &str) -> Result<(), Error> {
        if self.current.is_none() || self.in_file == BATCH_FILE_REQUESTS {
            self.close()?;
            let target = batch_file_name(&self.out, self.files.len() + 1);
            let tmp = temporary_name(&target);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(|source| EngineError::Create {
                    path: tmp.clone(),
                    source,
                })?;
            self.files.push((tmp.clone(), target));
            self.current = Some((std::io::BufWriter::new(f), tmp));
            self.in_file = 0;
        }
        if let Some((w, tmp)) = &mut self.current {
            writeln!(w, "{line}").map_err(|e| write_error(tmp, e))?;
        }
        self.in_file += 1;
        self.total += 1;
        Ok(())
    }

    fn close(&mut self) -> Result<(), Error> {
        if let Some((w, tmp)) = self.current.take() {
            let f = w
                .into_inner()
                .map_err(|e| write_error(&tmp, e.into_error()))?;
            f.sync_all().map_err(|e| write_error(&tmp, e))?;
        }
        Ok(())
    }

    /// Renames every file into place. No request at all still writes an empty `--out`, so
    /// that a script can tell "nothing left to send" from a failed export.
    fn finish(mut self, overwrite: bool) -> Result<(u64, Vec<PathBuf>), Error> {
        if self.files.is_empty() {
            let target = self.out.clone();
            let tmp = temporary_name(&target);
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(|e| write_error(&tmp, e))?;
            self.files.push((tmp, target));
        }
        self.close()?;
        let mut done = Vec::new();
        // Parts of an earlier, larger export beyond this one would pass for part of it.
        for (n, stale) in evalscore_judge::batch_parts_present(&self.out) {
            if n <= self.files.len() {
                continue;
            }
            if !overwrite {
                self.abandon();
                return Err(EngineError::AlreadyExists { path: stale }.into());
            }
            if let Err(source) = std::fs::remove_file(&stale) {
                self.abandon();
                return Err(EngineError::RemoveStale {
                    path: stale,
                    source,
                }
                .into());
            }
        }
        if !overwrite {
            if let Some((_, target)) = self
                .files
                .iter()
                .find(|(_, t)| std::fs::symlink_metadata(t).is_ok())
            {
                let path = target.clone();
                self.abandon();
                return Err(EngineError::AlreadyExists { path }.into());
            }
        }
        for (tmp, target) in &self.files {
            std::fs::rename(tmp, target).map_err(|source| EngineError::Rename {
                path: target.clone(),
                source,
            })?;
            done.push(target.clone());
        }
        Ok((self.total, done))
    }

    fn abandon(&mut self) {
        self.current = None;
        for (tmp, _) in &self.files {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// The hidden name `target` is written under until it is complete.
fn temporary_name(target: &Path) -> PathBuf {
    target.with_file_name(format!(
        ".{}.evalscore-{}.tmp",
        target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ))
}

fn write_error(path: &Path, source: std::io::Error) -> Error {
    EngineError::Write {
        path: path.to_path_buf(),
        source,
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_files_take_their_number_before_the_extension() {
        let out = Path::new("dir/requests.jsonl");
        assert_eq!(batch_file_name(out, 1), PathBuf::from("dir/requests.jsonl"));
        assert_eq!(
            batch_file_name(out, 2),
            PathBuf::from("dir/requests.2.jsonl")
        );
        assert_eq!(
            batch_file_name(Path::new("reqs"), 3),
            PathBuf::from("reqs.3")
        );
    }
}
