//! The errors of Delta output, each naming the root (and the table, column or run it is
//! about); [`DeltaError::Storage`] keeps the storage crate's redacted text.

use evalscore_error::{Diagnostic, ErrorKind};
use evalscore_storage::StorageError;
use std::path::{Path, PathBuf};

/// What went wrong reading or writing a root's Delta tables.
#[derive(Debug, thiserror::Error)]
pub enum DeltaError {
    /// An object-storage call failed.
    #[error("{0}")]
    Storage(StorageError),
    /// A local file or folder could not be used.
    #[error("`{0}`: {1}")]
    Local(PathBuf, String),
    /// An `http(s)://` root: web servers cannot be written.
    #[error("`{0}`: a Delta table root must be a local folder or an s3://, gs://, az:// or abfss:// prefix")]
    Web(String),
    /// The root is not a URL delta-rs can name.
    #[error("`{0}`: not a valid URL: {1}")]
    Url(String, String),
    /// delta-rs refused to read or commit a table.
    #[error("`{root}`: cannot {what} the `{table}` table: {message}")]
    Table {
        root: String,
        table: String,
        what: String,
        message: String,
    },
    /// A column's type in this run differs from the table's.
    #[error("`{root}`: column `{column}` of the `{table}` table is {table_type} in the table but {run_type} in this run; nothing was written")]
    TypeChanged {
        root: String,
        table: String,
        column: String,
        table_type: String,
        run_type: String,
    },
    /// A column Delta cannot hold at the table's protocol.
    #[error("`{root}`: column `{column}` of the `{table}` table: {why}; nothing was written")]
    Unsupported {
        root: String,
        table: String,
        column: String,
        why: String,
    },
    /// The run id is in `runs/` already.
    #[error("`{root}`: run `{run_id}` is already in the `runs` table")]
    RunExists { root: String, run_id: String },
    /// No run of that id (compare, report).
    #[error("`{root}`: no run `{run_id}` in the `runs` table")]
    NoRun { root: String, run_id: String },
    /// The root is not where a run's folder outputs are, nor an unknown table.
    #[error("`{root}`: {message}")]
    NotARoot { root: String, message: String },
    /// A staged or table file could not be read as Parquet.
    #[error("`{0}`: {1}")]
    Parquet(PathBuf, String),
    /// Retried commits kept meeting other writers.
    #[error("`{root}`: cannot commit to the `{table}` table: other writers committed first {attempts} times in a row")]
    Contended {
        root: String,
        table: String,
        attempts: usize,
    },
}

impl DeltaError {
    pub(crate) fn io(path: &Path, what: &str, e: std::io::Error) -> DeltaError {
        DeltaError::Local(path.to_path_buf(), format!("cannot {what}: {e}"))
    }
}

impl Diagnostic for DeltaError {
    fn kind(&self) -> ErrorKind {
        match self {
            DeltaError::TypeChanged { .. }
            | DeltaError::Unsupported { .. }
            | DeltaError::NoRun { .. } => ErrorKind::Data,
            _ => ErrorKind::Output,
        }
    }

    fn hint(&self) -> Option<String> {
        match self {
            DeltaError::Storage(e) => e.hint.clone(),
            DeltaError::RunExists { .. } => Some("pass `--overwrite` to replace that run's rows, or give another `--run-id`".into()),
            DeltaError::TypeChanged { .. } => Some("rename the column in the task (or its input), or write to another root".into()),
            DeltaError::Contended { .. } => Some("run again: no partial run was committed".into()),
            DeltaError::NoRun { .. } => Some("the `runs` table lists the runs of the root (e.g. `deltalake.DeltaTable(ROOT + \"/runs\")`)".into()),
            _ => None,
        }
    }
}
