//! `mean`: the mean of a numeric field, with its standard error and confidence interval.
//! The simplest metric type: read this file first when adding one.

use crate::accumulator::{first, State};
use crate::bootstrap::{self, Bootstrap, Replicates};
use crate::metric_type::{About, Kind, ParseCx, Setup};
use crate::{Figure, MetricError, Moments};
use arrow::array::{Array, AsArray};
use evalscore_task::{MetricReads, TaskError};

/// The `mean` metric type.
pub struct MeanMetric;

static ABOUT: About = About {
    name: "mean",
    doc: "The mean of a numeric field (0/1 scores: the pass rate), with its standard error and an interval at the task's `confidence`: Wilson's when every value is 0 or 1, Student's t otherwise, or with `interval: bootstrap` a Poisson bootstrap's (each row weighted in each replicate by a Poisson(1) draw seeded by its key, so states merge across partitions; `stderr` is then the replicates' standard deviation, the interval their percentiles). Null and NaN values are skipped.",
    reads: MetricReads::Numbers,
    options: &bootstrap::OPTIONS,
    example: "{type: mean, field: is_correct}",
    figures: "`value`, `stderr`, `ci_low`, `ci_high`",
    confusion: false,
};

impl Kind for MeanMetric {
    type Options = Option<Bootstrap>;
    type State = Mean;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<Option<Bootstrap>, TaskError> {
        bootstrap::parse(cx)
    }

    fn state(&self, boot: &Option<Bootstrap>, setup: &Setup) -> Mean {
        Mean {
            bootstrap: boot.map(Replicates::new),
            ..Mean::new(setup.confidence)
        }
    }
}

/// The state of a `mean`: the field's [`Moments`], the interval's confidence, and the
/// bootstrap's replicates when it has one.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Mean {
    moments: Moments,
    confidence: f64,
    bootstrap: Option<Replicates>,
}

impl Mean {
    pub fn new(confidence: f64) -> Self {
        Mean {
            moments: Moments::default(),
            confidence,
            bootstrap: None,
        }
    }
}

impl State for Mean {
    fn reads(&self) -> MetricReads {
        MetricReads::Numbers
    }

    fn metric_type(&self) -> &'static str {
        ABOUT.name
    }

    /// A Boolean input is a pass mask of 0/1 scores (true = 1.0), counted with popcounts.
    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let values = first(inputs)?;
        let Some(boot) = &mut self.bootstrap else {
            return self.moments.update_values(values);
        };
        let keys = bootstrap::keys(inputs)?;
        match values.as_boolean_opt() {
            Some(mask) => {
                self.moments.update_mask(mask);
                boot.update(mask.iter().map(|b| b.map(f64::from)), keys)
            }
            None => {
                // Read as numbers once, for the moments and the replicates.
                let numbers = crate::numbers(values)?;
                self.moments.update(&numbers);
                boot.update(numbers.iter().map(|x| x.filter(|x| !x.is_nan())), keys)
            }
        }
    }

    fn exclusion_warning(&self) -> Option<String> {
        self.moments.dropped()
    }

    fn merge(&mut self, other: &Self) {
        self.moments.merge(&other.moments);
        bootstrap::merge(&mut self.bootstrap, &other.bootstrap);
    }

    fn figures(&self) -> Vec<Figure> {
        let mut figures = self.moments.mean_figures(self.confidence);
        if let Some(boot) = &self.bootstrap {
            let n = self.moments.n();
            bootstrap::replace_interval(&mut figures, boot.figures(self.confidence, n));
        }
        figures
    }

    fn group_limit(&self) -> usize {
        bootstrap::group_limit(&self.bootstrap)
    }
}
