//! The metrics of a scorer (`metrics:`) as the engine needs them: their names, what they
//! read (a field of the scorer, an input column or a template over the row) and their
//! type's options. The metric types and their parsing are the metric registry's (the
//! `evalscore-metrics` crate), which builds these specs; this crate carries them without
//! knowing the types.

use crate::raw::Node;
use crate::template::Template;
use crate::{Location, TaskError};
use std::any::Any;
use std::sync::Arc;

/// One metric of a scorer.
#[derive(Debug, Clone)]
pub struct MetricSpec {
    /// The metric's `name`; without one, its type, or `type(field)` when the scorer has
    /// another unnamed metric of that type (`evalscore_metrics::parse_metrics`).
    pub name: String,
    /// The metric type as written (`mean`, `binary-classification`, ...).
    pub metric_type: String,
    /// What the metric reads, as its type says.
    pub reads: MetricReads,
    /// What metrics.parquet shows as `field`: the field, or `field_gt,field_pred`.
    pub field: String,
    /// What the metric reads, as written: `[field]`, or `[field_gt, field_pred]`. Each is a
    /// scorer field, an input column or a template, as `sources` says.
    pub inputs: Vec<String>,
    /// Where each entry of `inputs` comes from.
    pub sources: Vec<MetricInput>,
    /// Input columns to report the metric by, besides overall.
    pub group_by: Vec<String>,
    pub key: Option<String>,
    /// A `python` metric's functions, which the engine binds and calls (also in `options`).
    pub python: Option<PythonMetric>,
    /// The options its type parsed (`positive_answer`, `labels`, ...), of the type's own
    /// options type.
    pub options: MetricOptions,
    pub location: Option<Location>,
}

/// What a metric type reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricReads {
    /// One field (`field:`) of numbers.
    Numbers,
    /// One field (`field:`) read as labels: text, numbers or booleans.
    Labels,
    /// One field (`field:`) of any type, handed to user code as it is.
    Values,
    /// A ground truth and a prediction (`field_gt:`, `field_pred:`), read as labels.
    Pair,
    /// Two fields of numbers (`field_gt:`, `field_pred:`), read as numbers: correlations.
    NumberPair,
    /// A score (`field:`, numbers) and its 0/1 truth (`field_gt:`, numbers or booleans).
    ScoreTruth,
    /// A field (`field:`, numbers) and the group each row belongs to (`group:`, a column or
    /// a template read as labels).
    FieldGroup,
    /// A verdict (`field:`, labels) and the two models of each battle (`model_a:`,
    /// `model_b:`, columns or templates read as labels).
    Battle,
    /// A verdict (`field:`, labels) and the two answers it judged (`output_a:`, `output_b:`,
    /// columns or templates read as text), for their lengths.
    Lengths,
}

impl MetricReads {
    /// The task keys that name what it reads, in the order "allowed keys" lists them.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            MetricReads::Pair | MetricReads::NumberPair => &["field_gt", "field_pred"],
            MetricReads::ScoreTruth => &["field", "field_gt"],
            MetricReads::FieldGroup => &["field", "group"],
            MetricReads::Battle => &["field", "model_a", "model_b"],
            MetricReads::Lengths => &["field", "output_a", "output_b"],
            _ => &["field"],
        }
    }

    /// Whether every field it reads must be numeric.
    pub fn numeric(self) -> bool {
        matches!(
            self,
            MetricReads::Numbers | MetricReads::ScoreTruth | MetricReads::NumberPair
        )
    }
}

/// The options a metric type parsed, of the type's own options type: the spec carries them
/// to the registry entry that makes the metric's state.
#[derive(Debug, Clone)]
pub struct MetricOptions(Arc<dyn OptionsValue>);

/// A value that can be a metric type's options.
pub trait OptionsValue: Any + std::fmt::Debug + Send + Sync {
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + std::fmt::Debug + Send + Sync> OptionsValue for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl MetricOptions {
    pub fn new<T: OptionsValue>(options: T) -> Self {
        MetricOptions(Arc::new(options))
    }

    /// The options, when they are of type `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        (*self.0).as_any().downcast_ref()
    }
}

/// Where a metric input comes from. A name that is a field of the scorer is that field (so
/// tasks written before metrics could read the data keep their meaning); another bare name
/// is an input column; text with `{{` or `{%` is a template over the input row.
#[derive(Debug, Clone)]
pub enum MetricInput {
    /// The scorer field of that name.
    Field,
    /// An input column, named bare; whether the input has it is checked at bind time.
    Column(Template),
    /// A template over the input row (`{{ sample.human_label }}`).
    Template(Template),
}

impl MetricInput {
    /// The template a data input is evaluated with (`None`: a scorer field).
    pub fn template(&self) -> Option<&Template> {
        match self {
            MetricInput::Field => None,
            MetricInput::Column(t) | MetricInput::Template(t) => Some(t),
        }
    }
}

/// A user function a task names (`function:` of a `custom` scorer, the functions of a
/// `python` metric): supplied at bind time by the Python package, never by the task file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionRef {
    pub name: String,
    /// Where the task names it.
    pub location: Option<Location>,
}

/// The three functions of a `python` metric: `function` folds a batch's field values into a
/// partial state, `merge` combines two partial states, `finish` turns the merged state into
/// the metric's figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonMetric {
    pub function: FunctionRef,
    pub merge: FunctionRef,
    pub finish: FunctionRef,
}

/// A user function's name (`function:`, `merge:`, `finish:`): a non-empty string.
pub fn function_ref(node: Node<'_>, what: &str) -> Result<FunctionRef, TaskError> {
    let name = node.scalar_string(what)?;
    if name.trim().is_empty() {
        return Err(node
            .err(format!("`{what}` is empty"))
            .with_hint("name a function given to the Python package's `functions=`"));
    }
    Ok(FunctionRef {
        name,
        location: node.location,
    })
}
