//! A batch's data that a scorer cannot use, as the scorer raises it: before the engine
//! places it in its file (and, under `--max-row-errors`, scores the row 0.0 instead).

/// Where a row error is: the input column (or scorer option) and the value found there.
#[derive(Debug, Default)]
pub struct CellRef {
    pub column: Option<String>,
    pub value: Option<String>,
}

/// A failure on one row of a batch (or on the batch as a whole), before it is placed in
/// its file.
#[derive(Debug, Default)]
pub struct RowError {
    pub row: usize,
    pub message: String,
    pub hint: Option<String>,
    /// A problem with this row's data (a row error, which `--max-row-errors` may allow),
    /// rather than with the task or the batch as a whole.
    pub per_row: bool,
    /// The input column (or the scorer option, for a computed template) and the offending
    /// value, where known.
    pub cell: Option<Box<CellRef>>,
    /// About the input as a whole (a metric over its limits), not one row: the message names
    /// the file only.
    pub whole_file: bool,
    /// Set when this error is one more than `--max-row-errors` allows: the run's count.
    pub over_limit: Option<u64>,
}

/// A failure that is not about the data: a scorer or the row-error machinery went wrong.
pub fn internal(e: &dyn std::fmt::Display) -> RowError {
    RowError {
        message: format!("internal error while scoring around a row error: {e}"),
        ..RowError::default()
    }
}
