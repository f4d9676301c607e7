//! Metrics as mergeable states, in the manner of DataFusion's `Accumulator`.
//!
//! A [`MetricState`] is created empty for a [`StateKind`], folds record batches with
//! [`MetricState::update`], combines with another state of the same kind with
//! [`MetricState::merge`] (so row groups, files and machines can be folded in any order), and
//! reports its [`Figure`]s with [`MetricState::finish`]. The states: [`Moments`] (mean with its
//! standard error and confidence interval, std_dev), [`Extremum`] (min, max), [`Frequency`],
//! and [`Confusion`] (binary and multiclass classification, precision, recall, F1).
//! [`Grouped`] keeps one state per group of a `group_by` key ([`GroupKeys`]) beside the
//! overall one. [`intervals`] has the Wilson and Student t intervals. [`Grouped::to_bytes`]
//! and [`Grouped::from_bytes`] carry a state between processes and machines ([`bytes`]).
//! [`UserState`] holds a metric folded by user code ([`UserFold`], the Python package's
//! `python` metric) as opaque partial states.
//!
//! Null rule for every state: null input values are skipped and not counted in `n`, except by
//! [`Frequency`], which counts null as a value of its own, and [`Confusion`], which counts
//! rows with a null label as `excluded`. Every metric that reads a field as labels writes
//! them with [`labels::labels`] (one text per value). An undefined figure (no values, a zero denominator)
//! is null, never NaN.

pub mod bytes;
mod classification;
mod frequency;
mod grouped;
pub mod intervals;
pub mod labels;
mod moments;
mod user;

pub use classification::{ClassMode, Confusion};
pub use frequency::Frequency;
pub use grouped::{Cells, GroupKey, GroupKeys, Grouped};
pub use moments::{Extremum, Moments};
pub use user::{UserFold, UserState, USER_PARTS_PENDING};

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type};

/// Most distinct values a `frequency` metric counts (per group): memory stays bounded by
/// the limits, not by the input.
pub const MAX_DISTINCT_VALUES: usize = 100_000;
/// Most groups of a `group_by` metric.
pub const MAX_GROUPS: usize = 100_000;
/// Most (actual, predicted) pairs of a confusion matrix, which bounds its classes.
pub const MAX_CONFUSION_CELLS: usize = 100_000;

/// One figure of a metric: a row of `metrics.parquet`.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// `value` for a single figure; `count` / `proportion` for frequency; `accuracy`, ... for
    /// classification; `stderr`, `ci_low`, `ci_high` for intervals.
    pub stat: String,
    /// The distinct value or class a figure is about; `None` for overall figures.
    pub label: Option<String>,
    /// `None` when undefined.
    pub value: Option<f64>,
    /// How many values the metric saw (rows included, for classification).
    pub n: u64,
}

impl Figure {
    pub fn new(stat: &str, label: Option<String>, value: Option<f64>, n: u64) -> Self {
        Figure {
            stat: stat.to_owned(),
            label,
            value,
            n,
        }
    }
}

/// The metric types this crate folds, with their options.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum StateKind {
    /// Mean, with `stderr`, `ci_low` and `ci_high` at the given confidence.
    Mean {
        confidence: f64,
    },
    Min,
    Max,
    StdDev,
    Frequency,
    /// A confusion-matrix metric over (ground truth, prediction) pairs.
    Classification {
        mode: ClassMode,
        positive: Option<String>,
        negative: Option<String>,
        labels: Option<Vec<String>>,
        confidence: f64,
    },
    /// A metric folded by user code ([`UserFold`]), named by its three functions.
    User {
        function: String,
        merge: String,
        finish: String,
    },
}

impl StateKind {
    /// How many input arrays `update` takes: 1, or 2 (ground truth, prediction).
    pub fn arity(&self) -> usize {
        match self {
            StateKind::Classification { .. } => 2,
            _ => 1,
        }
    }
}

/// A metric's running state.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum MetricState {
    Mean(Moments, f64),
    Min(Extremum),
    Max(Extremum),
    StdDev(Moments),
    Frequency(Frequency),
    Classification(Confusion),
    User(UserState),
}

/// A metric could not fold, merge or read its state.
#[derive(Debug, thiserror::Error)]
pub enum MetricError {
    /// What the metric cannot use: its input, its size, another state, its bytes.
    #[error("{0}")]
    Invalid(String),
    /// An Arrow kernel failed on the metric's input (a cast, a take, a comparison).
    #[error(transparent)]
    Arrow(#[from] arrow::error::ArrowError),
    /// Labels that cannot be read as text.
    #[error(transparent)]
    Text(#[from] evalscore_text::TextError),
    /// A state's bytes could not be written or read.
    #[error("{what}: {source}")]
    Bytes {
        what: &'static str,
        #[source]
        source: postcard::Error,
    },
    /// A `python` metric's function failed, with the text of what it raised.
    #[error("function `{name}` failed: {message}")]
    Function { name: String, message: String },
}

/// A metric's failure is about the data it folds ([`ErrorKind::Data`]), except an Arrow
/// kernel's failure on it, which is a bug ([`ErrorKind::Internal`]).
///
/// [`ErrorKind::Data`]: evalscore_error::ErrorKind::Data
/// [`ErrorKind::Internal`]: evalscore_error::ErrorKind::Internal
impl evalscore_error::Diagnostic for MetricError {
    fn kind(&self) -> evalscore_error::ErrorKind {
        match self {
            MetricError::Arrow(_) => evalscore_error::ErrorKind::Internal,
            _ => evalscore_error::ErrorKind::Data,
        }
    }
}

impl MetricState {
    /// An empty state.
    pub fn new(kind: &StateKind) -> Self {
        match kind {
            StateKind::Mean { confidence } => MetricState::Mean(Moments::default(), *confidence),
            StateKind::Min => MetricState::Min(Extremum::min()),
            StateKind::Max => MetricState::Max(Extremum::max()),
            StateKind::StdDev => MetricState::StdDev(Moments::default()),
            StateKind::Frequency => MetricState::Frequency(Frequency::default()),
            StateKind::Classification {
                mode,
                positive,
                negative,
                labels,
                confidence,
            } => MetricState::Classification(Confusion::new(
                *mode,
                positive.clone(),
                negative.clone(),
                labels.clone(),
                *confidence,
            )),
            StateKind::User { .. } => MetricState::User(UserState::default()),
        }
    }

    /// Folds one batch: the metric's field, or (ground truth, prediction) for classification.
    ///
    /// A Boolean input is a pass mask of 0/1 scores (true = 1.0), as the scorer kernels
    /// return them: every metric reads it as those scores (so a frequency counts the labels
    /// `0.0` and `1.0`, [`labels`]), and the mean and standard deviation count it with
    /// popcounts.
    pub fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let first = inputs
            .first()
            .ok_or_else(|| MetricError::Invalid("a metric needs an input".to_owned()))?;
        if let Some(mask) = first.as_boolean_opt() {
            if let MetricState::Mean(m, _) | MetricState::StdDev(m) = self {
                m.update_mask(mask);
                return Ok(());
            }
        }
        match self {
            MetricState::Mean(m, _) | MetricState::StdDev(m) => m.update(&numbers(*first)?),
            MetricState::Min(e) | MetricState::Max(e) => e.update(&numbers(*first)?),
            MetricState::Frequency(f) => f.update(*first)?,
            MetricState::Classification(c) => {
                let pred = inputs.get(1).ok_or_else(|| {
                    MetricError::Invalid("classification needs two inputs".to_owned())
                })?;
                c.update(*first, *pred)?
            }
            MetricState::User(_) => {
                return Err(MetricError::Invalid(
                    "a user metric folds through its functions (Grouped::update_user)".to_owned(),
                ))
            }
        }
        self.check_size()
    }

    /// The limits on what a state may hold ([`MAX_DISTINCT_VALUES`],
    /// [`MAX_CONFUSION_CELLS`]), checked after every fold.
    fn check_size(&self) -> Result<(), MetricError> {
        match self {
            MetricState::Frequency(f) if f.distinct() > MAX_DISTINCT_VALUES => Err(MetricError::Invalid(
                format!("the field has more than {MAX_DISTINCT_VALUES} distinct values, the limit of a frequency metric"),
            )),
            MetricState::Classification(c) if c.pairs() > MAX_CONFUSION_CELLS => Err(MetricError::Invalid(
                format!("the confusion matrix has more than {MAX_CONFUSION_CELLS} (actual, predicted) pairs, its limit"),
            )),
            _ => Ok(()),
        }
    }

    /// Folds another state of the same kind into this one.
    pub fn merge(&mut self, other: &MetricState) -> Result<(), MetricError> {
        match (&mut *self, other) {
            (MetricState::Mean(a, _), MetricState::Mean(b, _))
            | (MetricState::StdDev(a), MetricState::StdDev(b)) => a.merge(b),
            (MetricState::Min(a), MetricState::Min(b))
            | (MetricState::Max(a), MetricState::Max(b)) => a.merge(b),
            (MetricState::Frequency(a), MetricState::Frequency(b)) => a.merge(b),
            (MetricState::Classification(a), MetricState::Classification(b)) => a.merge(b),
            (MetricState::User(a), MetricState::User(b)) => a.merge(b),
            (a, b) => {
                return Err(MetricError::Invalid(format!(
                    "cannot merge {} state into {} state",
                    b.name(),
                    a.name()
                )))
            }
        }
        self.check_size()
    }

    /// The figures of the state as it stands.
    pub fn finish(&self) -> Vec<Figure> {
        match self {
            MetricState::Mean(m, confidence) => {
                let n = m.n();
                let mean = m.mean();
                let stderr = m.std_dev().map(|s| s / (n as f64).sqrt());
                let ci = match (mean, m.all_binary()) {
                    (Some(_), true) => intervals::wilson(m.sum(), n as f64, *confidence),
                    (Some(mu), false) => {
                        stderr.and_then(|se| intervals::student_t(mu, se, n, *confidence))
                    }
                    (None, _) => None,
                };
                vec![
                    Figure::new("value", None, mean, n),
                    Figure::new("stderr", None, stderr, n),
                    Figure::new("ci_low", None, ci.map(|c| c.0), n),
                    Figure::new("ci_high", None, ci.map(|c| c.1), n),
                ]
            }
            MetricState::StdDev(m) => vec![Figure::new("value", None, m.std_dev(), m.n())],
            MetricState::Min(e) | MetricState::Max(e) => {
                vec![Figure::new("value", None, e.value(), e.n())]
            }
            MetricState::Frequency(f) => f.figures(),
            MetricState::Classification(c) => c.figures(),
            MetricState::User(u) => u.figures(),
        }
    }

    /// For a classification state that excluded more than half of its rows, a sentence
    /// saying how many and which labels it saw against the ones it expected.
    pub fn exclusion_warning(&self) -> Option<String> {
        match self {
            MetricState::Classification(c) => c.exclusion_warning(),
            _ => None,
        }
    }

    /// The confusion matrix cells, for binary and multiclass classification.
    pub fn confusion(&self) -> Option<Vec<(String, String, u64)>> {
        match self {
            MetricState::Classification(c) if c.has_matrix() => Some(c.cells()),
            _ => None,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            MetricState::Mean(..) => "mean",
            MetricState::Min(_) => "min",
            MetricState::Max(_) => "max",
            MetricState::StdDev(_) => "std_dev",
            MetricState::Frequency(_) => "frequency",
            MetricState::Classification(_) => "classification",
            MetricState::User(_) => "python",
        }
    }
}

/// Reads a numeric array as Float64 (other numeric types are cast; text is an error).
fn numbers(values: &dyn Array) -> Result<arrow::array::Float64Array, MetricError> {
    match values.data_type() {
        DataType::Float64 => Ok(values.as_primitive::<Float64Type>().clone()),
        t if t.is_numeric() || *t == DataType::Boolean || *t == DataType::Null => {
            let a: ArrayRef = arrow::array::make_array(values.to_data());
            let c = cast(&a, &DataType::Float64).map_err(MetricError::Arrow)?;
            Ok(c.as_primitive::<Float64Type>().clone())
        }
        t => Err(MetricError::Invalid(format!(
            "a numeric metric needs numbers, got values of type {t}"
        ))),
    }
}
