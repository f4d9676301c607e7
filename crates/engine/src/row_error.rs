//! A row's data that a scorer cannot use: the error as a scorer raises it ([`RowError`],
//! before it is placed in its file: the scorers crate's) and as a run records it
//! ([`RowErrorRecord`]).

pub(crate) use evalscore_scorers::{internal, RowError};

/// How many row errors run.json lists.
pub const ROW_ERRORS_LISTED: usize = 100;

/// One row that failed and was scored 0.0 under `--max-row-errors`.
#[derive(Debug, Clone, PartialEq)]
pub struct RowErrorRecord {
    /// Index into the run's input files.
    pub file: usize,
    /// 1-based row number within its file.
    pub row: u64,
    /// The key of the scorer that failed.
    pub scorer: String,
    /// The input column (or scorer option) the failing value came from, when known.
    pub column: Option<String>,
    /// The value found there, when known.
    pub value: Option<String>,
    /// What is wrong with it.
    pub message: String,
}
