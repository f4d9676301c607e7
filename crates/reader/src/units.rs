//! The work of a run, cut into [`Unit`]s: a Parquet row group, or a chunk of lines of a
//! JSONL file.

use crate::{InputFile, Inputs, ReadError};

/// A piece of work: one row group of a Parquet file, or one chunk of lines of a JSONL file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// Index into [`Inputs::files`].
    pub file: usize,
    /// Row group index (for JSONL, the chunk of lines).
    pub row_group: usize,
    /// Row number of the unit's first row within its file (0-based).
    pub first_row: u64,
    pub rows: u64,
}

impl Inputs {
    /// Total rows over all files.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.rows).sum()
    }

    /// Every unit of work, in input order.
    pub fn units(&self) -> Vec<Unit> {
        let mut units = Vec::new();
        for (file, f) in self.files.iter().enumerate() {
            let mut first_row = 0;
            for (row_group, &rows) in f.row_groups.iter().enumerate() {
                units.push(Unit {
                    file,
                    row_group,
                    first_row,
                    rows,
                });
                first_row += rows;
            }
        }
        units
    }
}

/// A damaged row group: the file, the row group and its rows (counted from 1 within the file,
/// as in every other message), and what is wrong.
pub(crate) fn damaged_unit(file: &InputFile, unit: &Unit, e: &dyn std::fmt::Display) -> ReadError {
    let rows = if unit.rows == 0 {
        "no rows".to_owned()
    } else {
        format!(
            "rows {} to {}",
            unit.first_row + 1,
            unit.first_row + unit.rows
        )
    };
    ReadError::at(
        &file.path,
        format!("cannot decode row group {} ({rows}): {e}", unit.row_group),
    )
    .with_hint("the file is damaged; re-export it from its source")
}
