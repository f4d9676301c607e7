//! A run's own outputs are never its inputs: a local `--out` folder inside a folder, tree or
//! glob given as `--input` holds the Parquet files of the run before it (`scores.parquet`,
//! `metrics.parquet`, `confusion.parquet`, directly or in a suite's `task=NAME/` folders),
//! which a listing would otherwise read as rows of the input. They are left out of the
//! listing, and a warning says so; a file named as an input itself is read as given.

use std::path::{Path, PathBuf};

/// The Parquet files a run writes into its folder (its JSON files are not inputs anyway).
pub(crate) const OUTPUT_PARQUET: [&str; 3] =
    ["scores.parquet", "metrics.parquet", "confusion.parquet"];

/// The run's `--out` folder, as the file system resolves it.
pub(crate) struct OwnOutputs {
    dir: PathBuf,
    shown: PathBuf,
}

impl OwnOutputs {
    /// `None` when there is no such folder yet (a first run), so nothing to leave out.
    pub(crate) fn new(out: Option<&Path>) -> Option<OwnOutputs> {
        let out = out?;
        Some(OwnOutputs {
            dir: std::fs::canonicalize(out).ok()?,
            shown: out.to_path_buf(),
        })
    }

    /// Whether `file`, found at `rel` below the listed folder `base` (which resolves to
    /// `resolved`), is one of the run's outputs.
    pub(crate) fn holds(&self, resolved: &Path, base: &Path, file: &Path) -> bool {
        let Ok(rel) = file.strip_prefix(base) else {
            return false;
        };
        let file = resolved.join(rel);
        let Some(name) = file.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        let Some(folder) = file.parent() else {
            return false;
        };
        let task_folder = folder
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("task="));
        OUTPUT_PARQUET.contains(&name)
            && (folder == self.dir || (task_folder && folder.parent() == Some(&self.dir)))
    }

    /// The warning for `n` files left out.
    pub(crate) fn warning(&self, n: usize) -> String {
        format!(
            "left out {n} file{} of this run's own output folder `{}` ({}): a run's outputs are not read as its input",
            if n == 1 { "" } else { "s" },
            self.shown.display(),
            OUTPUT_PARQUET.join(", ")
        )
    }
}
