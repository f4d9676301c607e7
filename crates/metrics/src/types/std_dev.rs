//! `std_dev`: the sample standard deviation of a numeric field.

use crate::accumulator::{first, State};
use crate::metric_type::{About, Kind, NoOptions, ParseCx, Setup};
use crate::{numbers, Figure, MetricError, Moments};
use arrow::array::{Array, AsArray};
use evalscore_task::{MetricReads, TaskError};

/// The `std_dev` metric type.
pub struct StdDevMetric;

const ABOUT: About = About {
    name: "std_dev",
    doc: "The sample standard deviation (n − 1) of a numeric field; null below two values. Null and NaN values are skipped.",
    reads: MetricReads::Numbers,
    options: &[],
    example: "{type: std_dev, field: is_correct}",
    figures: "`value`",
    confusion: false,
};

impl Kind for StdDevMetric {
    type Options = NoOptions;
    type State = StdDev;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _cx: &ParseCx<'_>) -> Result<NoOptions, TaskError> {
        Ok(NoOptions)
    }

    fn state(&self, _options: &NoOptions, _setup: &Setup) -> StdDev {
        StdDev::default()
    }
}

/// The state of a `std_dev`: the field's [`Moments`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StdDev(Moments);

impl State for StdDev {
    fn metric_type(&self) -> &'static str {
        ABOUT.name
    }

    /// A Boolean input is a pass mask of 0/1 scores (true = 1.0), counted with popcounts.
    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let values = first(inputs)?;
        match values.as_boolean_opt() {
            Some(mask) => self.0.update_mask(mask),
            None => self.0.update(&numbers(values)?),
        }
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        self.0.merge(&other.0);
    }

    fn figures(&self) -> Vec<Figure> {
        vec![Figure::new("value", None, self.0.std_dev(), self.0.n())]
    }
}
