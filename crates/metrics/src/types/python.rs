//! `python`: a metric folded by user functions of the Python package ([`crate::UserFold`]);
//! its state keeps their partial states as opaque bytes ([`UserState`]).

use crate::accumulator::State;
use crate::metric_type::{About, Kind, OptionDoc, ParseCx, Setup};
use crate::{Figure, MetricError, UserState};
use arrow::array::Array;
use evalscore_task::{function_ref, FunctionRef, MetricReads, PythonMetric, TaskError};

/// The `python` metric type.
pub struct UserMetric;

const ABOUT: About = About {
    name: "python",
    doc: "A metric computed by three functions given to the Python package's `functions=`: `function` folds a batch's values into a partial state, `merge` combines partial states, `finish` turns the merged state into a number or a mapping of numbers. Only the Python package runs it.",
    reads: MetricReads::Values,
    options: &[
        OptionDoc::required("function", "folds one batch's values into a partial state"),
        OptionDoc::required("merge", "merges a list of partial states into one"),
        OptionDoc::required("finish", "turns the merged state into a number or a mapping of numbers"),
    ],
    example: "{type: python, field: value, function: fold_batch, merge: merge_states, finish: finish_state}",
    figures: "`value`, one unlabeled figure for a number, one per `label` for a mapping",
    confusion: false,
};

impl Kind for UserMetric {
    type Options = PythonMetric;
    type State = UserState;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<PythonMetric, TaskError> {
        let f = |key: &str, example: &str| -> Result<FunctionRef, TaskError> {
            let n = cx.get(key).filter(|n| !n.is_null()).ok_or_else(|| {
                cx.err(format!("metric `python` needs `{key}`"))
                    .with_hint(format!(
                    "e.g. `{key}: {example}`, a function given to the Python package's `functions=`"
                ))
            })?;
            function_ref(n, &format!("python.{key}"))
        };
        Ok(PythonMetric {
            function: f("function", "fold_batch")?,
            merge: f("merge", "merge_states")?,
            finish: f("finish", "finish_state")?,
        })
    }

    fn state(&self, _options: &PythonMetric, _setup: &Setup) -> UserState {
        UserState::default()
    }
}

impl State for UserState {
    fn reads(&self) -> MetricReads {
        MetricReads::Values
    }

    fn metric_type(&self) -> &'static str {
        ABOUT.name
    }

    fn update(&mut self, _inputs: &[&dyn Array]) -> Result<(), MetricError> {
        Err(MetricError::Invalid(
            "a user metric folds through its functions (Grouped::update_user)".to_owned(),
        ))
    }

    fn merge(&mut self, other: &Self) {
        UserState::merge(self, other);
    }

    fn figures(&self) -> Vec<Figure> {
        UserState::figures(self)
    }
}
