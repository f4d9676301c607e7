//! User functions: the code a task names but does not hold (`custom` with `function:`, the
//! `python` metric), supplied when the task is bound. The Python package implements
//! [`UserFunctions`] over Python callables; the CLI has none.

use crate::row_error::RowError;
use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use std::sync::Arc;

/// A set of named user functions. Errors are plain messages; the engine adds which
/// function, scorer and metric they are about.
pub trait UserFunctions: Send + Sync + std::fmt::Debug {
    /// The names this set holds, in any order.
    fn names(&self) -> Vec<String>;
    /// A `custom` scorer's function over one batch: the value column (and the ground-truth
    /// column when the scorer has `ground_truth:`), both Utf8. One result per row, Boolean
    /// or numeric.
    fn score(
        &self,
        name: &str,
        values: &ArrayRef,
        ground_truth: Option<&ArrayRef>,
    ) -> Result<ArrayRef, String>;
    /// A `python` metric's `function` over one batch's field values: a partial state.
    fn metric_update(&self, name: &str, values: &ArrayRef) -> Result<Vec<u8>, String>;
    /// A `python` metric's `merge` folded over `parts` in order: one partial state.
    fn metric_merge(&self, name: &str, parts: &[Vec<u8>]) -> Result<Vec<u8>, String>;
    /// A `python` metric's `finish` of a merged state: (label, value) figures.
    #[allow(clippy::type_complexity)]
    fn metric_finish(
        &self,
        name: &str,
        state: &[u8],
    ) -> Result<Vec<(Option<String>, Option<f64>)>, String>;
}

/// Shared user functions, as [`crate::BindOptions`] and [`crate::RunOptions`] carry them.
pub type Functions = Arc<dyn UserFunctions>;

/// A `custom` scorer's function over a batch: its results as Float64 scores, checked for
/// length and type. `rows` is the batch's row count.
pub(crate) fn call(
    functions: &dyn UserFunctions,
    name: &str,
    values: &ArrayRef,
    ground_truth: Option<&ArrayRef>,
    rows: usize,
) -> Result<ArrayRef, RowError> {
    let err = |message: String| RowError {
        row: 0,
        message,
        hint: None,
        ..RowError::default()
    };
    // Views as plain text: older pyarrow releases cannot import `string_view`.
    let plain = |a: &ArrayRef| -> Result<ArrayRef, RowError> {
        match a.data_type() {
            DataType::Utf8View => cast(a, &DataType::Utf8)
                .map_err(|e| err(format!("cannot pass text to function `{name}`: {e}"))),
            _ => Ok(Arc::clone(a)),
        }
    };
    let values = plain(values)?;
    let ground_truth = ground_truth.map(plain).transpose()?;
    let out = functions
        .score(name, &values, ground_truth.as_ref())
        .map_err(|m| err(format!("function `{name}` failed: {m}")))?;
    if out.len() != rows {
        return Err(RowError {
            hint: Some(
                "a scorer function returns one boolean or number per row of the batch it is given"
                    .to_owned(),
            ),
            ..err(format!(
                "function `{name}` returned {} values for a batch of {rows} rows",
                out.len()
            ))
        });
    }
    let out = match out.data_type() {
        DataType::Boolean | DataType::Float64 => out,
        DataType::Null => Arc::new(arrow::array::BooleanArray::new_null(rows)),
        t if t.is_numeric() => cast(&out, &DataType::Float64).map_err(|e| {
            err(format!(
                "function `{name}` returned values that cannot be read as numbers: {e}"
            ))
        })?,
        t => {
            return Err(RowError {
                hint: Some(
                    "return a boolean array (pass/fail) or a float array (a score per row)"
                        .to_owned(),
                ),
                ..err(format!(
                    "function `{name}` returned values of type {t}; a scorer function returns booleans or numbers"
                ))
            })
        }
    };
    // A NaN or infinite score would poison every mean it enters: the row fails instead.
    if let Some(f) = out.as_primitive_opt::<arrow::datatypes::Float64Type>() {
        if let Some(row) = (0..rows).find(|&r| f.is_valid(r) && !f.value(r).is_finite()) {
            return Err(RowError {
                row,
                per_row: true,
                hint: Some("return a finite number, or null for a row without a score".to_owned()),
                ..err(format!(
                    "function `{name}` returned {} for this row",
                    f.value(row)
                ))
            });
        }
    }
    Ok(out)
}
