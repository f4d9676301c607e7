//! Where suite.json goes: the suite's local folder (written all or nothing, as a task's
//! outputs), or an object-storage prefix. In object storage each task's outputs go up as a
//! run's do (`output/remote.rs`, `run.json` last in each `task=NAME/`), and suite.json after
//! all of them, in one PUT that is create-only unless `--overwrite`: a reader that sees
//! suite.json sees every task's files. With `--overwrite`, the old suite.json is deleted
//! before any task's upload, so the prefix is never marked complete while it holds a mix of
//! two runs.

use super::SUITE_JSON;
use crate::output::remote::{self, storage_error};
use crate::Error;
use evalscore_storage::{Location, StorePath};
use std::path::Path;

pub(super) enum SuiteOut {
    Local(crate::outdir::OutDir),
    Remote {
        loc: StorePath,
        overwrite: bool,
    },
    /// A Delta root: no suite.json (the `runs` table records the suite's tasks).
    Delta,
}

impl SuiteOut {
    /// Checks the place for a suite.json already there (unless `overwrite`): a local folder
    /// is prepared as a task's is; a prefix is listed, which also finds a missing bucket.
    pub fn prepare(
        out: &Path,
        overwrite: bool,
        options: &[(String, String)],
    ) -> Result<SuiteOut, Error> {
        let url = match Location::from_path(out) {
            Location::Local(_) => {
                return Ok(SuiteOut::Local(crate::outdir::OutDir::prepare(
                    out,
                    &[SUITE_JSON],
                    overwrite,
                )?))
            }
            Location::Remote(url) => url,
        };
        let loc = remote::connect(&url, options)?;
        let out = SuiteOut::Remote { loc, overwrite };
        out.refuse_present("already holds")?;
        Ok(out)
    }

    /// Whether the suite writes no local `task=NAME` folders (object storage, Delta).
    pub fn is_remote(&self) -> bool {
        matches!(self, SuiteOut::Remote { .. } | SuiteOut::Delta)
    }

    fn refuse_present(&self, verb: &str) -> Result<(), Error> {
        let SuiteOut::Remote { loc, overwrite } = self else {
            return Ok(());
        };
        let names = loc.names().map_err(storage_error)?;
        if *overwrite || !names.iter().any(|n| n == SUITE_JSON) {
            return Ok(());
        }
        crate::outdir::refuse_outputs(loc.url(), verb, &[SUITE_JSON], "prefix")
    }

    /// Before the tasks' outputs are committed: a suite.json written meanwhile is refused,
    /// and with `--overwrite` the old one is deleted.
    pub fn before_commit(&self) -> Result<(), Error> {
        let SuiteOut::Remote { loc, overwrite } = self else {
            return Ok(());
        };
        self.refuse_present("now holds (written since this run started)")?;
        if *overwrite {
            loc.child(SUITE_JSON).delete().map_err(storage_error)?;
        }
        Ok(())
    }

    /// What an earlier run left in the folder `task=NAME` (its run's files, `run.json` first,
    /// so that no reader takes them for a finished run meanwhile; the folder too when nothing
    /// else is in it).
    fn clear_run(&self, suite_dir: &Path, name: &str) -> Result<(), Error> {
        let folder = format!("task={name}");
        let files = crate::output::OUTPUT_FILES.iter().rev();
        match self {
            SuiteOut::Delta => Ok(()),
            SuiteOut::Local(_) => {
                let dir = suite_dir.join(&folder);
                for f in files {
                    let path = dir.join(f);
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => {
                            return Err(crate::outdir::io_error("remove the earlier", &path, e))
                        }
                    }
                }
                // Only when nothing else is in it (a file of the user's stays).
                let _ = std::fs::remove_dir(&dir);
                Ok(())
            }
            SuiteOut::Remote { loc, .. } => {
                let task = loc.child(&folder);
                for f in files {
                    task.child(f).delete().map_err(storage_error)?;
                }
                Ok(())
            }
        }
    }

    /// With `--overwrite`, the runs an earlier suite left in the `task=NAME` folders of tasks
    /// other than those committed now (`tasks`: a task that failed, or that this suite does not
    /// have) are cleared ([`Self::clear_run`]): the new suite.json never stands beside another
    /// suite's task outputs, so a reader of `DIR/task=*` finds no rows of the earlier one.
    pub fn clear_others(&self, suite_dir: &Path, tasks: &[&str]) -> Result<(), Error> {
        let mut names: Vec<String> = match self {
            SuiteOut::Delta => Vec::new(),
            SuiteOut::Local(_) => match std::fs::read_dir(suite_dir) {
                Ok(entries) => entries
                    .filter_map(Result::ok)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                    .collect(),
                Err(_) => Vec::new(),
            },
            SuiteOut::Remote { loc, .. } => loc
                .list_tree(|rel, depth| depth == 1 && rel.starts_with("task="))
                .map_err(storage_error)?
                .found
                .into_iter()
                .filter_map(|(rel, _)| rel.split_once('/').map(|(folder, _)| folder.to_owned()))
                .collect(),
        };
        names.sort();
        names.dedup();
        for folder in names {
            if let Some(name) = folder.strip_prefix("task=").filter(|n| !tasks.contains(n)) {
                self.clear_run(suite_dir, name)?;
            }
        }
        Ok(())
    }

    /// Writes suite.json, last; `committed` tasks' outputs are in place before it.
    pub fn write(self, json: String, committed: usize) -> Result<(), Error> {
        let in_place = match committed {
            0 => "no task's outputs were written (each failed)",
            _ => "the tasks' outputs are in place",
        };
        match self {
            SuiteOut::Delta => Ok(()),
            SuiteOut::Local(dir) => {
                dir.write_bytes(0, json.as_bytes())?;
                dir.commit()
            }
            SuiteOut::Remote { loc, overwrite } => loc
                .child(SUITE_JSON)
                .put(json.into_bytes(), overwrite)
                .map_err(|e| match (e.unknown_outcome, e.already_exists) {
                    (true, _) => storage_error(e).with_hint(format!(
                        "whether `{SUITE_JSON}` was written could not be checked; {in_place}: check the prefix, and run again with `--overwrite` if it is missing"
                    )),
                    (false, true) => storage_error(e).with_hint(
                        "another suite finished into this prefix meanwhile; pass `--overwrite` to replace it, or choose another `--out` prefix",
                    ),
                    (false, false) => storage_error(e),
                }),
        }
    }
}
