//! `compare` and `report` of runs in a Delta table root: each run is read back into a
//! temporary local folder (`DeltaRoot::materialize`), which the commands then read as they
//! read any run folder. Credentials come from the environment (`AWS_*`, `AZURE_*`,
//! `GOOGLE_*`), as for every other URL.

use evalscore_engine::{DeltaRoot, Error};
use std::path::{Path, PathBuf};

/// The temporary folder that holds the runs read back; removed on drop.
pub struct Held(tempfile::TempDir);

impl Held {
    pub fn new() -> Result<Held, Error> {
        tempfile::Builder::new()
            .prefix(".evalscore-runs-")
            .tempdir()
            .map(Held)
            .map_err(|e| Error::new(format!("cannot create a temporary folder: {e}")))
    }

    /// Run `run_id` of the root `root`, as a run folder (or a suite folder for a suite run).
    pub fn run(&self, root: &Path, run_id: &str) -> Result<PathBuf, Error> {
        let tables = DeltaRoot::open_path(root, &[])?;
        let n = std::fs::read_dir(self.0.path()).map_or(0, |d| d.count());
        let into = self.0.path().join(format!("run-{n}"));
        std::fs::create_dir(&into)
            .map_err(|e| Error::new(format!("cannot create `{}`: {e}", into.display())))?;
        Ok(tables.materialize(run_id, &into)?.dir)
    }
}
