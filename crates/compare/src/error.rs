//! What can go wrong in `compare` and `report`, as typed errors with their sources: each
//! variant knows its [`ErrorKind`] and hint ([`Diagnostic`]), and `?` turns it into the
//! project's [`Error`] at the crate's boundary.

use evalscore_error::{Diagnostic, ErrorKind};
use std::path::PathBuf;

/// A failure of `compare` or `report`.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("the {what} run folder `{}` does not exist", dir.display())]
    NoRunFolder { what: String, dir: PathBuf },

    #[error("the {what} run folder `{}` has no {file}", dir.display())]
    NoRunFile {
        what: String,
        dir: PathBuf,
        file: String,
    },

    #[error("`{}` has no key column `{key}`", path.display())]
    NoKeyColumn { path: PathBuf, key: String },

    /// `row` counts from 1.
    #[error("`{}` row {row}: the key column `{key}` is null", path.display())]
    NullKey {
        path: PathBuf,
        row: u64,
        key: String,
    },

    /// `key` is the `--key` columns joined by commas, `value` the key as JSON.
    #[error("`{}`: the key `{key}` is not unique: {value} appears in rows {first} and {second}", path.display())]
    DuplicateKey {
        path: PathBuf,
        key: String,
        value: serde_json::Value,
        first: u64,
        second: u64,
    },

    /// A `--group-by` or `--cluster` column that neither run kept.
    #[error("{option} `{name}`: neither `{}` nor `{}` has that column", base.display(), new.display())]
    NeitherHasColumn {
        option: &'static str,
        name: String,
        base: PathBuf,
        new: PathBuf,
    },

    #[error("`{}` row {row}: the cluster column `{name}` is null", path.display())]
    NullCluster {
        path: PathBuf,
        row: u64,
        name: String,
    },

    #[error("`{}` and `{}` have no numeric score column in common", base.display(), new.display())]
    NoCommonColumn {
        base: PathBuf,
        new: PathBuf,
        #[source]
        columns: ScoreColumns,
    },

    /// A score column compared holds +inf or -inf (`value`).
    #[error("`{}` row {row}: the score column `{column}` holds {value}", path.display())]
    NotFinite {
        path: PathBuf,
        row: u64,
        column: String,
        value: f64,
    },

    /// A sum or a difference of finite scores is not finite (values near ±1.8e308).
    #[error("the score column `{column}` holds values too large to compare: their sum or a difference overflows a 64-bit float")]
    Overflow { column: String },

    /// A bad `--confidence`, `--max-drop` or `--key`.
    #[error("{0}")]
    Option(String),

    /// Reading a key, group or cluster column's values as text.
    #[error("cannot read `{}`", path.display())]
    Decode {
        path: PathBuf,
        #[source]
        source: arrow::error::ArrowError,
    },

    /// The temporary files of a large comparison.
    #[error("cannot write compare's temporary files in `{}`", dir.display())]
    Spill {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot read `{}`", path.display())]
    ReadJson {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("`{}` is not valid JSON", path.display())]
    InvalidJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    /// One folder is a suite's output (it holds suite.json), the other is not.
    #[error("the {suite_side} folder `{}` is a suite's output (it holds suite.json) but the {run_side} folder `{}` is not", suite.display(), run.display())]
    SuiteAndRun {
        suite_side: &'static str,
        suite: PathBuf,
        run_side: &'static str,
        run: PathBuf,
    },

    /// A folder holding `task=NAME` folders, no suite.json and no scores.parquet.
    #[error("the {what} folder `{}` holds task=NAME folders but no suite.json", dir.display())]
    UnfinishedSuite { what: &'static str, dir: PathBuf },

    /// A suite.json that is not what a suite writes.
    #[error("`{}`: {what}", path.display())]
    BadSuite { path: PathBuf, what: String },

    #[error("the suites `{}` and `{}` have no task in common", base.display(), new.display())]
    NoCommonTask {
        base: PathBuf,
        new: PathBuf,
        #[source]
        tasks: SuiteTasks,
    },

    #[error("`{}` is not a file name", path.display())]
    NotAFileName { path: PathBuf },

    /// A library failed where it should not (the report template, an output's schema).
    #[error("internal error: {what}")]
    InternalCause {
        what: &'static str,
        #[source]
        source: evalscore_error::BoxError,
    },

    /// A check that should never fail.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The score columns of each run, for [`CompareError::NoCommonColumn`].
#[derive(Debug, thiserror::Error)]
#[error("base score columns: {base}")]
pub struct ScoreColumns {
    pub base: String,
    #[source]
    pub new: NewScoreColumns,
}

#[derive(Debug, thiserror::Error)]
#[error("new score columns: {0}")]
pub struct NewScoreColumns(pub String);

/// The tasks each suite scored, for [`CompareError::NoCommonTask`].
#[derive(Debug, thiserror::Error)]
#[error("base tasks: {base}")]
pub struct SuiteTasks {
    pub base: String,
    #[source]
    pub new: NewSuiteTasks,
}

#[derive(Debug, thiserror::Error)]
#[error("new tasks: {0}")]
pub struct NewSuiteTasks(pub String);

impl SuiteTasks {
    /// Each suite's task names, or `none`.
    pub fn new(base: &[String], new: &[String]) -> SuiteTasks {
        let names = |v: &[String]| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        SuiteTasks {
            base: names(base),
            new: NewSuiteTasks(names(new)),
        }
    }
}

impl ScoreColumns {
    /// Each run's score column names, or `none`.
    pub fn new(base: &[String], new: &[String]) -> ScoreColumns {
        let names = |v: &[String]| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        ScoreColumns {
            base: names(base),
            new: NewScoreColumns(names(new)),
        }
    }
}

impl Diagnostic for CompareError {
    fn kind(&self) -> ErrorKind {
        use CompareError as E;
        match self {
            E::Option(_) => ErrorKind::Other,
            E::Overflow { .. } | E::NotFinite { .. } => ErrorKind::Data,
            E::Spill { .. } => ErrorKind::Output,
            E::InternalCause { .. } | E::Internal(_) => ErrorKind::Internal,
            E::NotAFileName { .. } => ErrorKind::Other,
            _ => ErrorKind::Input,
        }
    }

    fn hint(&self) -> Option<String> {
        use CompareError as E;
        let h = match self {
            E::NoRunFolder { .. } => "pass the `--out` folder of an `evalscore run`",
            E::NoRunFile { .. } => "pass the `--out` folder of a finished `evalscore run`",
            E::NoKeyColumn { .. } => {
                "pass `--key` with columns both runs kept (`evalscore run --keep`)"
            }
            E::NullKey { .. } => {
                "every row needs a key; pass `--key` with columns that identify each row"
            }
            E::DuplicateKey { .. } => {
                "pass `--key` with columns that identify each row, e.g. `--key id,sample`"
            }
            E::NeitherHasColumn { name, .. } => {
                return Some(format!("keep it in the run: `evalscore run --keep id,{name}`"))
            }
            E::NullCluster { .. } => "every paired row needs a cluster",
            E::NoCommonColumn { .. } => "compare runs of the same task",
            E::SuiteAndRun { suite, .. } => {
                return Some(format!(
                    "compare two suites' folders, or two runs' folders; one task of a suite is its folder `{}`",
                    suite.join("task=NAME").display()
                ))
            }
            E::UnfinishedSuite { .. } => {
                "a suite writes suite.json last, after every task: run the suite to its end, or compare one task's `task=NAME` folder"
            }
            E::BadSuite { .. } => "pass the `--out` folder of a finished `evalscore run SUITE.yaml`",
            E::NoCommonTask { .. } => "compare two runs of the same suite",
            E::NotFinite { .. } => {
                "compare needs finite scores (null and NaN count as missing pairs); fix what wrote this value"
            }
            E::Overflow { .. } => "rescale the column in both runs, e.g. divide it by a power of ten",
            E::Spill { source, .. } if evalscore_outdir::is_disk_full(source) => {
                "the disk of the temporary folder is full; free space, or set TMPDIR to a folder with more"
            }
            E::Spill { .. } => "set TMPDIR to a writable folder",
            _ => return None,
        };
        Some(h.to_owned())
    }
}
