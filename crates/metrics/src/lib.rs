//! Metrics as mergeable states, in the manner of DataFusion's `Accumulator`, and the
//! registry of metric types.
//!
//! The registry ([`registry::METRIC_TYPES`]) is the one list of metric types: each is a
//! [`MetricType`] written in one file under `types/` (its [`About`], the parser of its own
//! options, its state). [`parse_metrics`] parses a scorer's `metrics:` into
//! [`evalscore_task::MetricSpec`]s through it, and [`mod@reference`] renders
//! docs/metric-reference.md from it.
//!
//! A metric's running state is an [`Accumulator`] trait object ([`MetricState`]): created
//! empty by its type ([`MetricType::state`]), it folds record batches
//! ([`Accumulator::update_batch`]), combines with another state of the same type
//! ([`Accumulator::merge_batch`], so row groups, files and machines can be folded in any
//! order), and reports its [`Figure`]s ([`Accumulator::evaluate`]). A type writes its state
//! as a plain struct implementing [`State`]: [`Mean`] and [`StdDev`] over [`Moments`],
//! [`Extremum`] (min, max), [`Frequency`], [`Confusion`] (binary and multiclass
//! classification, precision, recall, F1) and [`UserState`] (the `python` metric, folded by
//! user code through [`UserFold`], kept as opaque partial states). [`Grouped`] keeps one
//! state per group of a `group_by` key ([`GroupKeys`]) beside the overall one.
//! [`intervals`] has the Wilson and Student t intervals; [`bootstrap`] the Poisson bootstrap
//! of `mean` and `win_rate` (`interval: bootstrap`), whose states merge across partitions. [`Grouped::to_bytes`] and
//! [`Grouped::from_bytes`] carry a state between processes and machines ([`bytes`]).
//!
//! Null rule for every state: null input values are skipped and not counted in `n`, except by
//! [`Frequency`], which counts null as a value of its own, and [`Confusion`], which counts
//! rows with a null label as `excluded`. Every input is read through one value model
//! ([`values`]): labels compare by value and are written in one canonical text, numbers
//! are read as Float64. A Boolean input is a pass mask of 0/1 scores (true = 1), as the
//! scorer kernels return them: every metric reads it as those scores, and `mean` and `std_dev` count it with popcounts ([`Moments::update_mask`]). An
//! undefined figure (no values, a zero denominator) is null, never NaN.

mod accumulator;
pub mod bootstrap;
mod bradley_terry_fit;
pub mod bytes;
mod classification;
mod comoments;
pub mod dropped;
mod fold_memo;
mod frequency;
mod glm;
mod grouped;
pub mod interrupt;
pub mod intervals;
mod metric_type;
mod moments;
mod parse;
pub mod reference;
pub mod registry;
pub mod types;
mod user;
pub mod values;

pub use accumulator::{read_state, Accumulator, MetricState, State};
pub use classification::{ClassMode, Confusion};
pub use comoments::CoMoments;
pub use fold_memo::FoldMemo;
pub use frequency::Frequency;
pub use grouped::{Cells, GroupKey, GroupKeys, Grouped};
pub use metric_type::{About, Kind, MetricType, NoOptions, OptionDoc, ParseCx, Setup, Simple};
pub use moments::{Extremum, Moments};
pub use parse::{parse_metric, parse_metrics};
pub use types::classification::ClassOptions;
pub use types::mean::Mean;
pub use types::std_dev::StdDev;
pub use user::{UserFold, UserState, USER_PARTS_PENDING};

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

pub(crate) use values::numbers;
