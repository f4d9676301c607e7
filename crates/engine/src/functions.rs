//! User functions: the code a task names but does not hold (`custom` with `function:`, the
//! `python` metric), supplied when the task is bound ([`crate::BindOptions::functions`]).
//! The Python package implements [`UserFunctions`] over Python callables; the CLI has none,
//! so a task naming one is refused when it is bound.

use crate::row_error::RowError;
use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use evalscore_metrics::{MetricError, UserFold};
use evalscore_task::{PythonMetric, Task, TaskError};
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

/// Checks that every function `task` names is in `functions`: a load error at the first
/// one that is not (the CLI has no functions at all).
pub(crate) fn check(task: &Task, functions: Option<&dyn UserFunctions>) -> Result<(), TaskError> {
    let have = functions.map(|f| f.names()).unwrap_or_default();
    for (what, f) in task.functions() {
        if have.contains(&f.name) {
            continue;
        }
        let e = match functions {
            None => TaskError::new(
                format!(
                    "{what} calls the Python function `{}`, which only evalscore's Python package can run",
                    f.name
                ),
                f.location,
            )
            .with_hint(format!(
                "score this task from Python: `evalscore.Task.from_yaml(\"task.yaml\", functions={{\"{}\": fn}})` (docs/python.md)",
                f.name
            )),
            Some(_) => {
                let mut names = have.clone();
                names.sort();
                TaskError::new(
                    format!(
                        "{what} calls the function `{}`, which is not among the functions given",
                        f.name
                    ),
                    f.location,
                )
                .with_hint(if names.is_empty() {
                    format!("pass it as `functions={{\"{}\": fn}}`", f.name)
                } else {
                    format!(
                        "functions given: {}; pass it as `functions={{\"{}\": fn}}`",
                        names.join(", "),
                        f.name
                    )
                })
            }
        };
        return Err(e);
    }
    Ok(())
}

/// A `custom` scorer's function over a batch: its results as Float64 scores, checked for
/// length and type. `rows` is the batch's row count.
pub(crate) fn score(
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

/// A field's values as a `python` metric's function sees them: pass masks as the Float64
/// scores scores.parquet holds, dictionary text as plain text.
pub(crate) fn metric_values(values: &dyn Array) -> Result<ArrayRef, MetricError> {
    let a = arrow::array::make_array(values.to_data());
    let target = match a.data_type() {
        DataType::Boolean => DataType::Float64,
        DataType::Dictionary(_, v) => v.as_ref().clone(),
        _ => return Ok(a),
    };
    cast(&a, &target).map_err(|e| MetricError(e.to_string()))
}

/// A `python` metric's three functions as the metrics crate's [`UserFold`].
pub(crate) struct Fold<'a> {
    pub functions: &'a dyn UserFunctions,
    pub spec: &'a PythonMetric,
}

impl UserFold for Fold<'_> {
    fn update(&self, values: &dyn Array) -> Result<Vec<u8>, MetricError> {
        let name = &self.spec.function.name;
        let values = metric_values(values)?;
        self.functions
            .metric_update(name, &values)
            .map_err(|m| MetricError(format!("function `{name}` failed: {m}")))
    }

    fn merge(&self, parts: &[Vec<u8>]) -> Result<Vec<u8>, MetricError> {
        let name = &self.spec.merge.name;
        self.functions
            .metric_merge(name, parts)
            .map_err(|m| MetricError(format!("function `{name}` failed: {m}")))
    }

    fn finish(&self, state: &[u8]) -> Result<Vec<(Option<String>, Option<f64>)>, MetricError> {
        let name = &self.spec.finish.name;
        self.functions
            .metric_finish(name, state)
            .map_err(|m| MetricError(format!("function `{name}` failed: {m}")))
    }
}
