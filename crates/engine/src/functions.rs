//! User functions: the code a task names but does not hold (`custom` with `function:`, the
//! `python` metric), supplied when the task is bound ([`crate::BindOptions::functions`]).
//! The Python package implements [`UserFunctions`] over Python callables; the CLI has none,
//! so a task naming one is refused when it is bound. A `custom` scorer calls its function
//! itself (the scorers crate); the `python` metrics are folded here.

use crate::Task;
use arrow::array::{Array, ArrayRef};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use evalscore_metrics::{MetricError, UserFold};
pub use evalscore_scorers::{Functions, UserFunctions};
use evalscore_task::{PythonMetric, TaskError};

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
