//! Metrics as mergeable states, in the manner of DataFusion's `Accumulator`.
//!
//! A [`MetricState`] is created empty for a [`StateKind`], folds record batches with
//! [`MetricState::update`], combines with another state of the same kind with
//! [`MetricState::merge`] (so row groups, files and machines can be folded in any order), and
//! reports its [`Figure`]s with [`MetricState::finish`]. The states: [`Moments`] (mean, std_dev),
//! [`Extremum`] (min, max) and [`Frequency`].
//!
//! Null rule for every state: null input values are skipped and not counted in `n`, except by
//! [`Frequency`], which counts null as a value of its own. An empty state reports null values,
//! never NaN.

mod frequency;
mod moments;

pub use frequency::Frequency;
pub use moments::{Extremum, Moments};

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type};
use std::fmt;

/// One figure of a metric: a row of `metrics.parquet`.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// `value` for a single figure; `count` / `proportion` for frequency.
    pub stat: String,
    /// The distinct value a frequency figure is about; `None` for overall figures.
    pub label: Option<String>,
    /// `None` when undefined (no values, or n < 2 for std_dev).
    pub value: Option<f64>,
    /// How many values the metric saw.
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

/// The metric types this crate folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    Mean,
    Min,
    Max,
    StdDev,
    Frequency,
}

/// A metric's running state.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricState {
    Mean(Moments),
    Min(Extremum),
    Max(Extremum),
    StdDev(Moments),
    Frequency(Frequency),
}

/// A metric could not fold its input.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricError(pub String);

impl fmt::Display for MetricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MetricError {}

impl MetricState {
    /// An empty state.
    pub fn new(kind: StateKind) -> Self {
        match kind {
            StateKind::Mean => MetricState::Mean(Moments::default()),
            StateKind::Min => MetricState::Min(Extremum::min()),
            StateKind::Max => MetricState::Max(Extremum::max()),
            StateKind::StdDev => MetricState::StdDev(Moments::default()),
            StateKind::Frequency => MetricState::Frequency(Frequency::default()),
        }
    }

    /// Folds one batch of the metric's field.
    pub fn update(&mut self, values: &dyn Array) -> Result<(), MetricError> {
        match self {
            MetricState::Mean(m) | MetricState::StdDev(m) => m.update(&numbers(values)?),
            MetricState::Min(e) | MetricState::Max(e) => e.update(&numbers(values)?),
            MetricState::Frequency(f) => f.update(values)?,
        }
        Ok(())
    }

    /// Folds another state of the same kind into this one.
    pub fn merge(&mut self, other: &MetricState) -> Result<(), MetricError> {
        match (self, other) {
            (MetricState::Mean(a), MetricState::Mean(b))
            | (MetricState::StdDev(a), MetricState::StdDev(b)) => a.merge(b),
            (MetricState::Min(a), MetricState::Min(b))
            | (MetricState::Max(a), MetricState::Max(b)) => a.merge(b),
            (MetricState::Frequency(a), MetricState::Frequency(b)) => a.merge(b),
            (a, b) => {
                return Err(MetricError(format!(
                    "cannot merge {} state into {} state",
                    b.name(),
                    a.name()
                )))
            }
        }
        Ok(())
    }

    /// The figures of the state as it stands.
    pub fn finish(&self) -> Vec<Figure> {
        match self {
            MetricState::Mean(m) => vec![Figure::new("value", None, m.mean(), m.n())],
            MetricState::StdDev(m) => vec![Figure::new("value", None, m.std_dev(), m.n())],
            MetricState::Min(e) | MetricState::Max(e) => {
                vec![Figure::new("value", None, e.value(), e.n())]
            }
            MetricState::Frequency(f) => f.figures(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            MetricState::Mean(_) => "mean",
            MetricState::Min(_) => "min",
            MetricState::Max(_) => "max",
            MetricState::StdDev(_) => "std_dev",
            MetricState::Frequency(_) => "frequency",
        }
    }
}

/// Reads a numeric array as Float64 (other numeric types are cast; text is an error).
fn numbers(values: &dyn Array) -> Result<arrow::array::Float64Array, MetricError> {
    match values.data_type() {
        DataType::Float64 => Ok(values.as_primitive::<Float64Type>().clone()),
        t if t.is_numeric() || *t == DataType::Boolean || *t == DataType::Null => {
            let a: ArrayRef = arrow::array::make_array(values.to_data());
            let c = cast(&a, &DataType::Float64).map_err(|e| MetricError(e.to_string()))?;
            Ok(c.as_primitive::<Float64Type>().clone())
        }
        t => Err(MetricError(format!(
            "a numeric metric needs numbers, got values of type {t}"
        ))),
    }
}
