//! A run's outputs in object storage. The run writes its five files into a local temporary
//! folder exactly as into a local `--out` folder; at commit they go up in order, the data
//! files as multipart uploads and `run.json` last, as the completion marker, in one PUT that
//! is create-only (`If-None-Match: *`) unless `--overwrite`. So a reader that sees `run.json`
//! sees a complete set, and two runs racing for one prefix cannot both finish.
//!
//! Existing outputs are refused without `--overwrite` when the run starts and again before
//! the upload. With `--overwrite`, the old `run.json` is deleted first, so the prefix is
//! never marked complete while it holds a mix of two runs. A failed upload deletes what it
//! had uploaded (a failed multipart upload is aborted), and leaves no `run.json`; a run killed
//! outright (SIGKILL) leaves at most some data files and no `run.json`, and its unfinished
//! multipart parts to the bucket's lifecycle rules. Object stores have no locks, so the
//! `.evalscore.lock` of a local folder has no counterpart here.

use super::OUTPUT_FILES;
use crate::{Error, ErrorKind};
use evalscore_storage::{StorageError, StorePath, StoreUrl};
use std::path::Path;

pub(crate) struct RemoteOut {
    loc: StorePath,
    overwrite: bool,
    staging: tempfile::TempDir,
}

fn storage_error(e: StorageError) -> Error {
    let err = Error::new(e.to_string()).kind(ErrorKind::Output);
    match e.hint {
        Some(h) => err.hint(h),
        None => err,
    }
}

impl RemoteOut {
    /// Checks the prefix `url` for outputs already there (unless `overwrite`) and makes the
    /// local temporary folder the run writes into.
    pub fn prepare(
        url: &StoreUrl,
        overwrite: bool,
        options: &[(String, String)],
    ) -> Result<RemoteOut, Error> {
        if url.is_web() {
            return Err(Error::new(format!(
                "`{url}`: an http(s):// URL is an input only; outputs go to object storage"
            ))
            .kind(ErrorKind::Output)
            .hint("use an s3://, gs://, az:// or abfss:// prefix, or a local folder, as `--out`"));
        }
        let loc = url.as_prefix().connect(options).map_err(storage_error)?;
        let out = RemoteOut {
            staging: tempfile::Builder::new()
                .prefix(".evalscore-out-")
                .tempdir()
                .map_err(|e| {
                    Error::new("cannot create a temporary folder for the outputs")
                        .kind(ErrorKind::Output)
                        .caused_by(e.to_string())
                        .hint("the outputs are written locally (TMPDIR) before the upload; check the temporary folder")
                })?,
            loc,
            overwrite,
        };
        out.refuse_present("already holds")?;
        Ok(out)
    }

    /// The local folder the outputs are written to before the upload.
    pub fn staging(&self) -> &Path {
        self.staging.path()
    }

    /// Without `--overwrite`, any output already under the prefix is an error. One listing
    /// of the prefix, which also finds a missing bucket (or container) before the run.
    fn refuse_present(&self, verb: &str) -> Result<(), Error> {
        let names = self.loc.names().map_err(storage_error)?;
        if self.overwrite {
            return Ok(());
        }
        let present: Vec<&str> = OUTPUT_FILES
            .into_iter()
            .filter(|n| names.iter().any(|m| m == n))
            .collect();
        crate::outdir::refuse_outputs(self.loc.url(), verb, &present, "prefix")
    }

    /// Uploads the finished outputs from `from`, `run.json` last (see the module docs).
    pub fn upload(self, from: &Path) -> Result<(), Error> {
        self.refuse_present("now holds (written since this run started)")?;
        let Some((marker, data)) = OUTPUT_FILES.split_last() else {
            return Ok(());
        };
        let marker_loc = self.loc.child(marker);
        if self.overwrite {
            marker_loc.delete().map_err(storage_error)?;
        }
        let mut uploaded: Vec<StorePath> = Vec::new();
        let result = (|| -> Result<(), Error> {
            for name in data {
                crate::check_interrupt()?;
                let to = self.loc.child(name);
                to.upload(&from.join(name)).map_err(storage_error)?;
                uploaded.push(to);
            }
            crate::check_interrupt()?;
            let bytes = std::fs::read(from.join(marker)).map_err(|e| {
                Error::new(format!("cannot read the staged `{marker}`"))
                    .kind(ErrorKind::Output)
                    .caused_by(e.to_string())
            })?;
            marker_loc
                .put(bytes, self.overwrite)
                .map_err(|e| match e.already_exists {
                    true => storage_error(e).hint(
                        "another run finished into this prefix meanwhile; pass `--overwrite` to replace it, or choose another `--out` prefix",
                    ),
                    false => storage_error(e),
                })
        })();
        if result.is_err() {
            // Best effort: a delete that fails too leaves a data file without a `run.json`,
            // which marks it as not a finished run.
            for loc in &uploaded {
                let _ = loc.delete();
            }
        }
        result
    }
}
