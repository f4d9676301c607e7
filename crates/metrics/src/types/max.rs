//! `max`: the largest value of a numeric field, over the state of `min` ([`super::min`]).

use crate::metric_type::{About, Kind, NoOptions, ParseCx, Setup};
use crate::Extremum;
use evalscore_task::{MetricReads, TaskError};

/// The `max` metric type.
pub struct MaxMetric;

pub(super) const ABOUT: About = About {
    name: "max",
    doc: "The largest value of a numeric field; null when it has none. Null and NaN values are skipped.",
    reads: MetricReads::Numbers,
    options: &[],
    example: "{type: max, field: is_correct}",
    figures: "`value`",
    confusion: false,
};

impl Kind for MaxMetric {
    type Options = NoOptions;
    type State = Extremum;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _cx: &ParseCx<'_>) -> Result<NoOptions, TaskError> {
        Ok(NoOptions)
    }

    fn state(&self, _options: &NoOptions, _setup: &Setup) -> Extremum {
        Extremum::max()
    }
}
