//! The engine's errors are [`evalscore_error::Error`]s (re-exported here, with the renderer):
//! what failed (a message naming the file, row and column, or the task line and column), of
//! which [`ErrorKind`], the chain of causes (`source()`, which the CLI prints as `Caused by:`
//! lines), and what the user can do (`hint`).
//!
//! The engine's own failures are [`EngineError`] variants, each with its kind and hint
//! ([`Diagnostic`]), so `?` turns one into an [`Error`]. [`ErrorExt`] keeps the short
//! constructors from the errors of the crates below the engine; a reader's error, and the
//! judge runtime's, convert with `?`.

use evalscore_error::Diagnostic;
pub use evalscore_error::{printable, render, Error, ErrorKind};
use evalscore_reader::ReadError;
use evalscore_storage::StorageError;
use evalscore_task::TaskError;
use std::io;
use std::path::{Path, PathBuf};

/// What the engine itself refuses or fails at. The text of each variant is the message users
/// see; a `#[source]` is printed below it as `Caused by:`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The task file is a folder, a FIFO, a device: reading it would fail or never end.
    #[error("task file `{}` is not a regular file{}", path.display(), what.map(|w| format!(" (a {w})")).unwrap_or_default())]
    TaskNotAFile {
        /// The task file.
        path: PathBuf,
        /// What it is instead, when the message says it.
        what: Option<&'static str>,
    },
    /// The task file could not be read.
    #[error("cannot read task file `{}`", path.display())]
    TaskUnreadable {
        /// The task file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An error in the task, located in the task file when its path is known.
    #[error("{}", task_message(path.as_deref(), error))]
    Task {
        /// The task file; `None` for a task given as text.
        path: Option<PathBuf>,
        /// The error, with its line and column.
        error: TaskError,
    },
    /// A signal asked the run to stop.
    #[error("interrupted by {signal}; no output was written")]
    Interrupted {
        /// The signal's name (`SIGINT`).
        signal: String,
    },
    /// `--run-id ""`.
    #[error("`--run-id` is empty")]
    RunIdEmpty,
    /// A `--run-id` longer than allowed.
    #[error("`--run-id` is {len} bytes long; at most {max} are allowed")]
    RunIdTooLong {
        /// Its length in bytes.
        len: usize,
        /// The longest allowed.
        max: usize,
    },
    /// A `--run-id` with whitespace or a control character.
    #[error("`--run-id {id}` holds {c:?}; a run id has no whitespace or control characters")]
    RunIdCharacter {
        /// The id as `escape_debug` shows it.
        id: String,
        /// The character refused.
        c: char,
    },
    /// A `--label =VALUE` (the value given).
    #[error("`--label ={0}` has an empty key")]
    LabelEmptyKey(String),
    /// A `--label` key given twice (the key).
    #[error("`--label {0}=...` is given twice")]
    LabelTwice(String),
    /// More `--label`s than allowed.
    #[error("{count} `--label`s are given; at most {max} are allowed")]
    LabelsTooMany {
        /// Labels given.
        count: usize,
        /// The most allowed.
        max: usize,
    },
    /// Labels larger, as JSON, than allowed.
    #[error("the labels take {size} bytes as JSON; at most {max} are allowed (the longest: `--label {key}=...`, a value of {value} bytes)")]
    LabelsTooLarge {
        /// Their size as JSON, in bytes.
        size: usize,
        /// The largest allowed.
        max: usize,
        /// The longest label's key, cut to 40 characters.
        key: String,
        /// The length of its value, in bytes.
        value: usize,
    },
    /// The rows written do not add up to the rows read.
    #[error("internal check failed: read {done} rows of {total} and wrote {written} score rows")]
    RowCount {
        /// Rows read.
        done: u64,
        /// Rows in the inputs.
        total: u64,
        /// Score rows written.
        written: u64,
    },
    /// A check that should never fail.
    #[error("internal error: {message}")]
    Internal {
        /// What failed.
        message: String,
        /// [`ErrorKind::Internal`] unless the check says otherwise.
        kind: ErrorKind,
    },
    /// An Arrow kernel failed on data the engine built itself.
    #[error("internal error: {0}")]
    Arrow(#[source] arrow::error::ArrowError),
    /// An Arrow kernel failed on a column the engine built itself.
    #[error("internal error: column `{column}`: {source}")]
    ArrowColumn {
        /// The column.
        column: String,
        /// The kernel's error.
        #[source]
        source: arrow::error::ArrowError,
    },
    /// JSON the engine built itself could not be written.
    #[error("internal error: {0}")]
    Json(#[source] serde_json::Error),
    /// A row a scorer could not score, or a model output column that cannot be read.
    #[error("{at}: {message}")]
    Row {
        /// The row (`row 3`, `data.parquet, row 12`) or the file.
        at: String,
        /// What is wrong.
        message: String,
        /// Whose fault it is.
        kind: ErrorKind,
        /// What the user can do.
        hint: Option<String>,
    },
    /// The figures of `python` metrics were asked for without their functions.
    #[error("the task has python metrics, whose figures need their functions")]
    NeedsFunctions,
    /// A `python` metric's function failed.
    #[error("scorer `{scorer}`: metric `{metric}`: {source}")]
    UserMetric {
        /// The scorer's key.
        scorer: String,
        /// The metric's name.
        metric: String,
        /// The metric's error.
        #[source]
        source: evalscore_metrics::MetricError,
    },
    /// States reported with another task than the one that folded them.
    #[error("these states are of another task (task fingerprint {states}, this task is {task})")]
    StatesOfAnotherTask {
        /// The states' task fingerprint, shortened.
        states: String,
        /// The task's fingerprint, shortened.
        task: String,
    },
    /// States whose scorers and metrics are not the task's.
    #[error("these states do not fit the task (its scorers and metrics differ)")]
    StatesDoNotFit,
    /// States of two tasks merged.
    #[error(
        "cannot merge states of another task (task fingerprint {other}, these are of {these})"
    )]
    MergeAnotherTask {
        /// The merged states' task fingerprint, shortened.
        other: String,
        /// The receiving states' task fingerprint, shortened.
        these: String,
    },
    /// States of different shapes merged.
    #[error("cannot merge states of different tasks (their scorers and metrics differ)")]
    MergeDifferentTasks,
    /// A metric state refused to merge with another.
    #[error("cannot merge states: {0}")]
    MergeMetric(#[source] evalscore_metrics::MetricError),
    /// States could not be written as bytes.
    #[error("cannot serialize states: {0}")]
    SerializeStates(#[source] postcard::Error),
    /// Bytes that are not states.
    #[error("not evalscore states (the bytes do not start with `ESST`)")]
    NotStates,
    /// States' bytes cut before their version.
    #[error("the states end before their version")]
    StatesEndBeforeVersion,
    /// States of a format version this build does not read.
    #[error("states of format version {version}; this build reads version {newest}")]
    StatesVersion {
        /// Their version.
        version: u16,
        /// The version this build reads.
        newest: u16,
    },
    /// States' bytes cut before their task fingerprint.
    #[error("the states end before their task fingerprint")]
    StatesEndBeforeFingerprint,
    /// Bytes after the states' end (how many).
    #[error("the states have {0} bytes after their end")]
    StatesTrailing(usize),
    /// States' bytes that cannot be read.
    #[error("damaged states: {0}")]
    DamagedStates(#[source] postcard::Error),
    /// A batch column of another type than the scorer was bound to.
    #[error("batch column `{column}` has type {found}, but the scorer was bound to {bound}")]
    BatchColumnType {
        /// The column.
        column: String,
        /// Its type in the batch.
        found: arrow::datatypes::DataType,
        /// Its type in the bound schema.
        bound: arrow::datatypes::DataType,
    },
    /// A batch without a column the task reads (its name).
    #[error("the batch has no column `{0}`, which the task reads")]
    BatchColumnMissing(String),
    /// An input with two columns of one name.
    #[error("the input{} has two columns named `{column}`", file.as_ref().map(|p| format!(" (`{}`)", p.display())).unwrap_or_default())]
    DuplicateInputColumn {
        /// The input file, when known.
        file: Option<PathBuf>,
        /// The name.
        column: String,
    },
    /// The model output column a scorer reads is not in the input.
    #[error("{who}the input has no model output column `{column}`{origin}")]
    NoModelOutputColumn {
        /// Which scorer needs it, as the start of the message, or empty.
        who: String,
        /// The column.
        column: String,
        /// Where the name came from (` (from --output-column)`), or empty.
        origin: &'static str,
        /// The input's columns.
        #[source]
        available: AvailableColumns,
    },
    /// `--keep` names a column the input does not have.
    #[error("`--keep` names column `{column}`, which the input does not have")]
    KeepMissing {
        /// The column.
        column: String,
        /// The input's columns.
        #[source]
        available: AvailableColumns,
    },
    /// `--keep` names a column twice (its name).
    #[error("`--keep` names column `{0}` twice")]
    KeepTwice(String),
    /// Two kept columns with one warehouse-safe name.
    #[error(
        "kept columns `{first}` and `{second}` would both be named `{name}` in scores.parquet"
    )]
    KeepCollide {
        /// The first column.
        first: String,
        /// The second column.
        second: String,
        /// The name both would take.
        name: String,
    },
    /// Two output columns of one name (the name).
    #[error("two output columns would be named `{0}`")]
    OutputColumnTwice(String),
    /// `--run-columns` with a kept column of the same name (the name).
    #[error("`--run-columns` adds a `{0}` column to scores.parquet, which already has one")]
    RunColumnPresent(&'static str),
    /// An http(s) URL as `--out` (the URL).
    #[error("`{0}`: an http(s):// URL is an input only; outputs go to object storage")]
    WebOutput(String),
    /// No local folder for the outputs staged before an upload.
    #[error("cannot create a temporary folder for the outputs")]
    Staging(#[source] io::Error),
    /// A staged output could not be read back for its upload.
    #[error("cannot read the staged `{file}`")]
    StagedUnreadable {
        /// The output file's name.
        file: &'static str,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An object storage failure while writing the outputs.
    #[error(transparent)]
    Storage(StorageError),
    /// `judge export` of a task that asks no model.
    #[error("task `{}` has no model-graded scorer, so there is nothing to export", task.display())]
    NothingToExport {
        /// The task file.
        task: PathBuf,
    },
    /// `judge export --offline`.
    #[error("`judge export` sends nothing; --offline has no meaning here")]
    ExportOffline,
    /// An output that exists, without `--overwrite`.
    #[error("`{}` already exists", path.display())]
    AlreadyExists {
        /// The output.
        path: PathBuf,
    },
    /// An output file could not be created.
    #[error("cannot create `{}`", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An output file could not be written.
    #[error("cannot write `{}`", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A file of an earlier export could not be removed.
    #[error("cannot remove `{}`, left by an earlier export", path.display())]
    RemoveStale {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A finished output could not be renamed into place.
    #[error("cannot put `{}` in place", path.display())]
    Rename {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// The input's columns, named under an error about a column it does not have.
#[derive(Debug, thiserror::Error)]
#[error("available columns: {0}")]
pub struct AvailableColumns(pub String);

/// `task file `t.yaml`, line 3, column 5: MESSAGE`, or `task, line 3, column 5: MESSAGE`
/// when the task came as text.
fn task_message(path: Option<&Path>, e: &TaskError) -> String {
    let at = match path {
        Some(p) => format!("task file `{}`", p.display()),
        None => "task".to_owned(),
    };
    match e.location {
        Some(l) => format!("{at}, {l}: {}", e.message),
        None => format!("{at}: {}", e.message),
    }
}

const OVERWRITE_HINT: &str = "pass --overwrite to replace it, or choose another --out";

impl Diagnostic for EngineError {
    fn kind(&self) -> ErrorKind {
        use EngineError as E;
        match self {
            E::TaskNotAFile { .. } | E::Task { .. } | E::NothingToExport { .. } => ErrorKind::Task,
            E::Interrupted { .. } => ErrorKind::Interrupted,
            E::RowCount { .. } | E::Arrow(_) | E::ArrowColumn { .. } | E::Json(_) => {
                ErrorKind::Internal
            }
            E::Internal { kind, .. } | E::Row { kind, .. } => *kind,
            E::UserMetric { .. } => ErrorKind::Data,
            E::DuplicateInputColumn { .. } => ErrorKind::Input,
            E::WebOutput(_)
            | E::Staging(_)
            | E::StagedUnreadable { .. }
            | E::Storage(_)
            | E::AlreadyExists { .. }
            | E::Create { .. }
            | E::Write { .. }
            | E::RemoveStale { .. }
            | E::Rename { .. } => ErrorKind::Output,
            _ => ErrorKind::Other,
        }
    }

    fn hint(&self) -> Option<String> {
        use EngineError as E;
        let hint = match self {
            E::TaskNotAFile { .. } => "point TASK.yaml at a task file",
            E::TaskUnreadable { .. } => "check the TASK.yaml path",
            E::Task { error, .. } => return error.hint.clone(),
            E::Row { hint, .. } => return hint.clone(),
            E::Storage(e) => return e.hint.clone(),
            E::RowCount { .. } => "no output was written; please report this",
            E::RunIdEmpty => "leave `--run-id` out for a fresh UUIDv7",
            E::LabelsTooLarge { .. } => "keep long texts out of labels: store them elsewhere and label the run with a reference to them",
            E::NeedsFunctions => "finish the states where the task's functions were given",
            E::StatesOfAnotherTask { .. } => {
                "finish states with the task file, and --set values, that produced them"
            }
            E::MergeAnotherTask { .. } => {
                "merge only states that the same task file, with the same --set values, produced"
            }
            E::BatchColumnType { .. } => "bind a scorer to this batch's schema, or cast the column",
            E::DuplicateInputColumn { .. } => "rename one of them in the export",
            E::NoModelOutputColumn { .. } => "name the model output column with `--output-column COL` (or `definition.output_column`), or give the scorer a `value:` template",
            E::KeepMissing { .. } => "list existing columns, separated by commas: `--keep id,subject`",
            E::KeepTwice(_) | E::KeepCollide { .. } => "keep each column once; names are made warehouse-safe by replacing characters outside A-Z, a-z, 0-9 and _ with _",
            E::OutputColumnTwice(_) => "rename the kept column or give the scorer another `key:`",
            E::RunColumnPresent(_) => {
                "leave the input's `run_id` out of `--keep`, or drop `--run-columns`"
            }
            E::WebOutput(_) => {
                "use an s3://, gs://, az:// or abfss:// prefix, or a local folder, as `--out`"
            }
            E::Staging(_) => "the outputs are written locally (TMPDIR) before the upload; check the temporary folder",
            E::AlreadyExists { .. } => OVERWRITE_HINT,
            _ => return None,
        };
        Some(hint.to_owned())
    }
}

/// [`Error`]'s constructors from the task and reader crates' errors, called as
/// `Error::task(path, e)` and `Error::read(e)` where this trait is in scope.
pub trait ErrorExt {
    /// An error in the task file, located by line and column.
    fn task(path: &Path, e: TaskError) -> Error;

    /// An input that could not be read (the same as `Error::from(e)`).
    fn read(e: ReadError) -> Error;
}

impl ErrorExt for Error {
    fn task(path: &Path, e: TaskError) -> Error {
        EngineError::Task {
            path: Some(path.to_path_buf()),
            error: e,
        }
        .into()
    }

    fn read(e: ReadError) -> Error {
        Error::from(e)
    }
}

/// The text of a task file, refused before it is read when it is not a regular file (a FIFO
/// would block and `/dev/zero` would never end). `say_what` adds what it is to the message.
pub fn read_task_file(path: &Path, say_what: bool) -> Result<String, EngineError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(EngineError::TaskNotAFile {
                path: path.to_path_buf(),
                what: say_what.then(|| evalscore_reader::file_kind(&m)),
            })
        }
        _ => {}
    }
    std::fs::read_to_string(path).map_err(|source| EngineError::TaskUnreadable {
        path: path.to_path_buf(),
        source,
    })
}
