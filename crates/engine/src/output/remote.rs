//! A run's outputs in object storage. The run writes its five files into a local temporary
//! folder exactly as into a local `--out` folder; at commit they go up in order, the data
//! files as multipart uploads and `run.json` last, as the completion marker, in one PUT that
//! is create-only (`If-None-Match: *`) unless `--overwrite`. So a reader that sees `run.json`
//! sees a complete set, and two runs racing for one prefix cannot both finish.
//!
//! Existing outputs are refused without `--overwrite` when the run starts and again before
//! the upload. With `--overwrite`, the old `run.json` is deleted first, so the prefix is
//! never marked complete while it holds a mix of two runs. A failed upload deletes what it
//! had uploaded (a failed multipart upload is aborted), and leaves no `run.json`. A `run.json`
//! PUT whose reply is lost is checked against the object (`StorePath::put`): when it holds
//! this run's `run.json` the run succeeded; when that cannot be checked, the data files stay,
//! so a `run.json` is never without them. A run killed
//! outright (SIGKILL) leaves at most some data files and no `run.json`, and its unfinished
//! multipart parts to the bucket's lifecycle rules. Object stores have no locks, so the
//! `.evalscore.lock` of a local folder has no counterpart here.

use super::OUTPUT_FILES;
use crate::{EngineError, Error};
use evalscore_storage::{StorageError, StorePath, StoreUrl};
use std::path::Path;

pub(crate) struct RemoteOut {
    loc: StorePath,
    overwrite: bool,
    staging: tempfile::TempDir,
}

pub(crate) fn storage_error(e: StorageError) -> Error {
    EngineError::Storage(e).into()
}

/// The output prefix `url` in its store; a web URL (`https://`) cannot be written.
pub(crate) fn connect(url: &StoreUrl, options: &[(String, String)]) -> Result<StorePath, Error> {
    if url.is_web() {
        return Err(EngineError::WebOutput(url.to_string()).into());
    }
    url.as_prefix().connect(options).map_err(storage_error)
}

impl RemoteOut {
    /// Checks the prefix `url` for outputs already there (unless `overwrite`) and makes the
    /// local temporary folder the run writes into.
    pub fn prepare(
        url: &StoreUrl,
        overwrite: bool,
        options: &[(String, String)],
    ) -> Result<RemoteOut, Error> {
        let loc = connect(url, options)?;
        let out = RemoteOut {
            staging: tempfile::Builder::new()
                .prefix(".evalscore-out-")
                .tempdir()
                .map_err(EngineError::Staging)?,
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
        let mut unknown = false;
        let result = (|| -> Result<(), Error> {
            for name in data {
                crate::check_interrupt()?;
                let to = self.loc.child(name);
                to.upload(&from.join(name)).map_err(storage_error)?;
                uploaded.push(to);
            }
            crate::check_interrupt()?;
            let bytes = std::fs::read(from.join(marker)).map_err(|source| {
                EngineError::StagedUnreadable {
                    file: marker,
                    source,
                }
            })?;
            marker_loc
                .put(bytes, self.overwrite)
                .map_err(|e| {
                    unknown = e.unknown_outcome;
                    match (e.unknown_outcome, e.already_exists) {
                        (true, _) => storage_error(e).with_hint(format!(
                            "whether `{marker}` was written could not be checked, so the files uploaded before it were left in place; check the prefix, and run again with `--overwrite`"
                        )),
                        (false, true) => storage_error(e).with_hint(
                            "another run finished into this prefix meanwhile; pass `--overwrite` to replace it, or choose another `--out` prefix",
                        ),
                        (false, false) => storage_error(e),
                    }
                })
        })();
        // `run.json` may be there when its PUT's outcome is unknown: its data stays with it.
        if result.is_err() && !unknown {
            // Best effort: a delete that fails too leaves a data file without a `run.json`,
            // which marks it as not a finished run.
            for loc in &uploaded {
                let _ = loc.delete();
            }
        }
        result
    }
}
