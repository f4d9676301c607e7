//! `min` and `max`: the smallest and the largest value of a numeric field, over one state
//! ([`Extremum`]).

use crate::accumulator::{first, State};
use crate::metric_type::{About, Setup, Simple};
use crate::{numbers, Extremum, Figure, MetricError};
use arrow::array::Array;
use evalscore_task::MetricReads;

/// The `min` metric type.
pub struct MinMetric;

/// The `max` metric type.
pub struct MaxMetric;

/// The About of `min` or `max`.
const fn about(name: &'static str, doc: &'static str, example: &'static str) -> About {
    About {
        name,
        doc,
        reads: MetricReads::Numbers,
        options: &[],
        example,
        figures: "`value`",
        confusion: false,
    }
}

impl Simple for MinMetric {
    const ABOUT: About = about(
        "min",
        "The smallest value of a numeric field; null when it has none. Null and NaN values are skipped.",
        "{type: min, field: is_correct}",
    );
    type State = Extremum;

    fn state(&self, _setup: &Setup) -> Extremum {
        Extremum::min()
    }
}

impl Simple for MaxMetric {
    const ABOUT: About = about(
        "max",
        "The largest value of a numeric field; null when it has none. Null and NaN values are skipped.",
        "{type: max, field: is_correct}",
    );
    type State = Extremum;

    fn state(&self, _setup: &Setup) -> Extremum {
        Extremum::max()
    }
}

impl State for Extremum {
    fn reads(&self) -> MetricReads {
        MetricReads::Numbers
    }

    fn metric_type(&self) -> &'static str {
        if self.largest() {
            MaxMetric::ABOUT.name
        } else {
            MinMetric::ABOUT.name
        }
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        Extremum::update(self, &numbers(first(inputs)?)?);
        Ok(())
    }

    fn exclusion_warning(&self) -> Option<String> {
        Extremum::dropped(self)
    }

    fn merge(&mut self, other: &Self) {
        Extremum::merge(self, other);
    }

    fn figures(&self) -> Vec<Figure> {
        vec![Figure::new("value", None, self.value(), self.n())]
    }
}
