//! A run's own outputs are never its inputs: an `--out` folder (or object-storage prefix)
//! inside a folder, prefix, tree or glob given as `--input` holds the Parquet files of the
//! run before it (`scores.parquet`,
//! `metrics.parquet`, `confusion.parquet`, directly or in a suite's `task=NAME/` folders),
//! which a listing would otherwise read as rows of the input. They are left out of the
//! listing, and a warning says so; a file named as an input itself is read as given.

use crate::opening::ToOpen;
use crate::tree::{InputSource, Select};
use evalscore_storage::Location;
use std::path::{Path, PathBuf};

/// The Parquet files a run writes into its folder (its JSON files are not inputs anyway); the
/// engine's list of outputs is made from it.
pub const OUTPUT_PARQUET: [&str; 3] = ["scores.parquet", "metrics.parquet", "confusion.parquet"];

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

    /// Leaves the run's outputs out of `jobs[from..]` and their `rels`: the files just listed
    /// from `source` (a file or object named as given stays). The warning, when any was.
    pub(crate) fn leave_out(
        &self,
        source: &InputSource,
        jobs: &mut Vec<ToOpen>,
        rels: &mut Vec<Option<String>>,
        from: usize,
    ) -> Option<String> {
        let listed = !matches!(source.select, Select::AsGiven);
        let ours: Box<dyn Fn(&ToOpen) -> bool> = match &source.location {
            Location::Remote(url) if listed || url.is_prefix() => Box::new(|job| match job {
                ToOpen::Remote(o, _) => self.holds_url(o.url()),
                ToOpen::Local(..) => false,
            }),
            Location::Local(p) => {
                // A glob's base may be the current folder, written as nothing.
                let folder = if p.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    p.as_path()
                };
                if !folder.is_dir() {
                    return None;
                }
                let resolved = std::fs::canonicalize(folder).ok()?;
                Box::new(move |job| match job {
                    ToOpen::Local(file, _) => self.holds(&resolved, p, file),
                    ToOpen::Remote(..) => false,
                })
            }
            Location::Remote(_) => return None,
        };
        let keep: Vec<bool> = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| i < from || !ours(j))
            .collect();
        let left_out = keep.iter().filter(|k| !**k).count();
        if left_out == 0 {
            return None;
        }
        let (mut a, mut b) = (keep.iter(), keep.iter());
        jobs.retain(|_| a.next().copied().unwrap_or(true));
        rels.retain(|_| b.next().copied().unwrap_or(true));
        Some(self.warning(left_out))
    }

    /// The warning for `n` files left out.
    fn warning(&self, n: usize) -> String {
        format!(
            "left out {n} file{} of this run's own output folder `{}` ({}): a run's outputs are not read as its input",
            if n == 1 { "" } else { "s" },
            self.shown.display(),
            OUTPUT_PARQUET.join(", ")
        )
    }
}
