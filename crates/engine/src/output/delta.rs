//! `--format delta`: a run's five files are written into a staging folder exactly as into an
//! `--out` folder (inside the root for a local root, so publishing renames), and at commit
//! they are published into the root's Delta tables (`evalscore-delta`): the data tables
//! first, the `runs` row last. A suite stages every task and publishes them together.

use crate::{EngineError, Error};
use evalscore_delta::{DeltaRoot, TaskFailure, TaskFiles};
use evalscore_storage::Location;
use std::path::Path;
use std::sync::Arc;

/// A run's place in a Delta root, and the folder its files are staged in.
pub(crate) struct DeltaOut {
    pub root: Arc<DeltaRoot>,
    staging: tempfile::TempDir,
    run_id: String,
    task: String,
    overwrite: bool,
}

impl DeltaOut {
    /// Connects to the root `out`, refuses a run id that its `runs` table lists (unless
    /// `overwrite`) and a root that holds a folder run's outputs, and makes the staging folder.
    pub fn prepare(
        out: &Path,
        run_id: &str,
        task: &str,
        overwrite: bool,
        options: &[(String, String)],
    ) -> Result<DeltaOut, Error> {
        let root = DeltaRoot::open(&Location::from_path(out), options)?;
        if !root.is_remote() && out.join("run.json").exists() {
            return Err(Error::new(format!(
                "`{}` holds a run's output files (run.json), not Delta tables",
                out.display()
            ))
            .kind(crate::ErrorKind::Output)
            .with_hint("give --format delta a root of its own, or drop --format delta"));
        }
        root.check_run(run_id, overwrite)?;
        let staging = root.staging()?;
        Ok(DeltaOut {
            root: Arc::new(root),
            staging,
            run_id: run_id.to_owned(),
            task: task.to_owned(),
            overwrite,
        })
    }

    /// The folder the run's files are written to.
    pub fn staging(&self) -> &Path {
        self.staging.path()
    }

    /// Publishes this one task's staged files.
    pub fn publish(self) -> Result<(), Error> {
        publish(&[self], &[])
    }
}

/// Publishes staged tasks of one run (and the failed ones' `runs` rows) in one set of
/// commits; `staged` is not empty unless every task failed.
pub(crate) fn publish(staged: &[DeltaOut], failed: &[(String, String)]) -> Result<(), Error> {
    let Some(first) = staged.first() else {
        return Ok(());
    };
    crate::check_interrupt()?;
    let tasks: Vec<TaskFiles> = staged
        .iter()
        .map(|s| TaskFiles {
            task: s.task.clone(),
            dir: s.staging().to_path_buf(),
        })
        .collect();
    let failed: Vec<TaskFailure> = failed
        .iter()
        .map(|(task, error)| TaskFailure {
            task: task.clone(),
            error: error.clone(),
        })
        .collect();
    let scratch = first.staging().join(".delta");
    std::fs::create_dir(&scratch).map_err(EngineError::Staging)?;
    first
        .root
        .publish(&first.run_id, &tasks, &failed, first.overwrite, &scratch)?;
    Ok(())
}
