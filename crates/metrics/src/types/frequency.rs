//! `frequency`: the count and proportion of each distinct value of a field.

use crate::accumulator::{first, State};
use crate::metric_type::{About, Setup, Simple};
use crate::{Figure, Frequency, MetricError, MAX_DISTINCT_VALUES};
use arrow::array::Array;
use evalscore_task::MetricReads;

/// The `frequency` metric type.
pub struct FrequencyMetric;

impl Simple for FrequencyMetric {
    const ABOUT: About = About {
        name: "frequency",
        doc: "The count and proportion of each distinct value of a field, as its label (compared by value: 0/1 scores are `0` and `1`, and `2`, `2.0` and `\"2\"` are one value; docs/metrics.md, Labels), in byte order, null last as a value of its own. At most 100,000 distinct values per group.",
        reads: MetricReads::Labels,
        options: &[],
        example: "{type: frequency, field: value}",
        figures: "`count` and `proportion` per `label`",
        confusion: false,
    };
    type State = Frequency;

    fn state(&self, _setup: &Setup) -> Frequency {
        Frequency::default()
    }
}

impl State for Frequency {
    fn reads(&self) -> MetricReads {
        MetricReads::Labels
    }

    fn metric_type(&self) -> &'static str {
        FrequencyMetric::ABOUT.name
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        Frequency::update(self, first(inputs)?)
    }

    fn merge(&mut self, other: &Self) {
        Frequency::merge(self, other);
    }

    fn figures(&self) -> Vec<Figure> {
        Frequency::figures(self)
    }

    fn check_size(&self) -> Result<(), MetricError> {
        if self.distinct() > MAX_DISTINCT_VALUES {
            return Err(MetricError::Invalid(format!(
                "the field has more than {MAX_DISTINCT_VALUES} distinct values, the limit of a frequency metric"
            )));
        }
        Ok(())
    }
}
