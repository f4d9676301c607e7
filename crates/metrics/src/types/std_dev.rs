//! `std_dev`: the sample standard deviation of a numeric field.

use crate::accumulator::{first, State};
use crate::metric_type::{About, Setup, Simple};
use crate::{Figure, MetricError, Moments};
use arrow::array::Array;
use evalscore_task::MetricReads;

/// The `std_dev` metric type.
pub struct StdDevMetric;

impl Simple for StdDevMetric {
    const ABOUT: About = About {
        name: "std_dev",
        doc: "The sample standard deviation (n − 1) of a numeric field; null below two values. Null and NaN values are skipped.",
        reads: MetricReads::Numbers,
        options: &[],
        example: "{type: std_dev, field: is_correct}",
        figures: "`value`",
        confusion: false,
    };
    type State = StdDev;

    fn state(&self, _setup: &Setup) -> StdDev {
        StdDev::default()
    }
}

/// The state of a `std_dev`: the field's [`Moments`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StdDev(Moments);

impl State for StdDev {
    fn reads(&self) -> MetricReads {
        MetricReads::Numbers
    }

    fn metric_type(&self) -> &'static str {
        StdDevMetric::ABOUT.name
    }

    /// A Boolean input is a pass mask of 0/1 scores (true = 1.0), counted with popcounts.
    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        self.0.update_values(first(inputs)?)
    }

    fn exclusion_warning(&self) -> Option<String> {
        self.0.dropped()
    }

    fn merge(&mut self, other: &Self) {
        self.0.merge(&other.0);
    }

    fn figures(&self) -> Vec<Figure> {
        vec![Figure::new("value", None, self.0.std_dev(), self.0.n())]
    }
}
