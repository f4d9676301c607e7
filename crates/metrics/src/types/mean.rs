//! `mean`: the mean of a numeric field, with its standard error and confidence interval.
//! The simplest metric type: read this file first when adding one.

use crate::accumulator::{first, State};
use crate::metric_type::{About, Setup, Simple};
use crate::{Figure, MetricError, Moments};
use arrow::array::Array;
use evalscore_task::MetricReads;

/// The `mean` metric type.
pub struct MeanMetric;

impl Simple for MeanMetric {
    const ABOUT: About = About {
        name: "mean",
        doc: "The mean of a numeric field (0/1 scores: the pass rate), with its standard error and an interval at the task's `confidence`: Wilson's when every value is 0 or 1, Student's t otherwise. Null and NaN values are skipped.",
        reads: MetricReads::Numbers,
        options: &[],
        example: "{type: mean, field: is_correct}",
        figures: "`value`, `stderr`, `ci_low`, `ci_high`",
        confusion: false,
    };
    type State = Mean;

    fn state(&self, setup: &Setup) -> Mean {
        Mean::new(setup.confidence)
    }
}

/// The state of a `mean`: the field's [`Moments`] and the interval's confidence.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Mean {
    moments: Moments,
    confidence: f64,
}

impl Mean {
    pub fn new(confidence: f64) -> Self {
        Mean {
            moments: Moments::default(),
            confidence,
        }
    }
}

impl State for Mean {
    fn metric_type(&self) -> &'static str {
        MeanMetric::ABOUT.name
    }

    /// A Boolean input is a pass mask of 0/1 scores (true = 1.0), counted with popcounts.
    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        self.moments.update_values(first(inputs)?)
    }

    fn merge(&mut self, other: &Self) {
        self.moments.merge(&other.moments);
    }

    fn figures(&self) -> Vec<Figure> {
        self.moments.mean_figures(self.confidence)
    }
}
