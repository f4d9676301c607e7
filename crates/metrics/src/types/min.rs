//! `min`: the smallest value of a numeric field. Its state, [`Extremum`], is shared with
//! `max` ([`super::max`]).

use crate::accumulator::{first, State};
use crate::metric_type::{About, Kind, NoOptions, ParseCx, Setup};
use crate::{numbers, Extremum, Figure, MetricError};
use arrow::array::Array;
use evalscore_task::{MetricReads, TaskError};

/// The `min` metric type.
pub struct MinMetric;

const ABOUT: About = About {
    name: "min",
    doc: "The smallest value of a numeric field; null when it has none. Null and NaN values are skipped.",
    reads: MetricReads::Numbers,
    options: &[],
    example: "{type: min, field: is_correct}",
    figures: "`value`",
    confusion: false,
};

impl Kind for MinMetric {
    type Options = NoOptions;
    type State = Extremum;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _cx: &ParseCx<'_>) -> Result<NoOptions, TaskError> {
        Ok(NoOptions)
    }

    fn state(&self, _options: &NoOptions, _setup: &Setup) -> Extremum {
        Extremum::min()
    }
}

impl State for Extremum {
    fn metric_type(&self) -> &'static str {
        if self.largest() {
            super::max::ABOUT.name
        } else {
            ABOUT.name
        }
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        Extremum::update(self, &numbers(first(inputs)?)?);
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        Extremum::merge(self, other);
    }

    fn figures(&self) -> Vec<Figure> {
        vec![Figure::new("value", None, self.value(), self.n())]
    }
}
