//! A run's own outputs are never its inputs: an `--out` folder (or object-storage prefix)
//! inside a folder, prefix, tree or glob given as `--input` holds the Parquet files of the
//! run before it (`scores.parquet`,
//! `metrics.parquet`, `confusion.parquet`, directly or in a suite's `task=NAME/` folders),
//! which a listing would otherwise read as rows of the input. They are left out of the
//! listing, and a warning says so; a file named as an input itself is read as given.

use std::path::{Path, PathBuf};

/// The Parquet files a run writes into its folder (its JSON files are not inputs anyway).
pub(crate) const OUTPUT_PARQUET: [&str; 3] =
    ["scores.parquet", "metrics.parquet", "confusion.parquet"];

/// The run's `--out` folder, as the file system resolves it, or its prefix in object storage.
pub(crate) struct OwnOutputs {
    dir: PathBuf,
    /// An object-storage `--out`: its URL, ending in `/`.
    prefix: Option<String>,
    shown: PathBuf,
}

impl OwnOutputs {
    /// `None` when there is no such folder yet (a first run), so nothing to leave out.
    pub(crate) fn new(out: Option<&Path>) -> Option<OwnOutputs> {
        let out = out?;
        if let evalscore_storage::Location::Remote(url) =
            evalscore_storage::Location::from_path(out)
        {
            return Some(OwnOutputs {
                dir: PathBuf::new(),
                prefix: Some(url.as_prefix().as_str().to_owned()),
                shown: out.to_path_buf(),
            });
        }
        Some(OwnOutputs {
            dir: std::fs::canonicalize(out).ok()?,
            prefix: None,
            shown: out.to_path_buf(),
        })
    }

    /// Whether the object at `url` is one of the run's outputs in object storage.
    pub(crate) fn holds_url(&self, url: &str) -> bool {
        let Some(rest) = self.prefix.as_deref().and_then(|p| url.strip_prefix(p)) else {
            return false;
        };
        let name = match rest.split_once('/') {
            None => rest,
            Some((folder, name)) if folder.starts_with("task=") && !name.contains('/') => name,
            Some(_) => return false,
        };
        OUTPUT_PARQUET.contains(&name)
    }

    /// Whether `file`, found at `rel` below the listed folder `base` (which resolves to
    /// `resolved`), is one of the run's outputs.
    pub(crate) fn holds(&self, resolved: &Path, base: &Path, file: &Path) -> bool {
        if self.prefix.is_some() {
            return false;
        }
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
