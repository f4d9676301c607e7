//! One scorer of a task: the common keys every scorer has, and the scorer bound to its own
//! options.

use crate::scorer::Scorer;
use evalscore_task::{Location, MetricSpec, Purpose};

/// One scorer of the task: what every scorer has, and the scorer bound to its own options.
#[derive(Debug)]
pub struct ScorerSpec {
    /// Warehouse-safe unique key: `[A-Za-z0-9_]` only.
    pub key: String,
    /// The scorer type as written (`string_equals`, ...).
    pub scorer_type: String,
    pub display_name: Option<String>,
    pub purpose: Purpose,
    pub scorer: Box<dyn Scorer>,
    pub metrics: Vec<MetricSpec>,
    /// `write_scores: false`: the scorer's per-row fields are computed for its metrics but not
    /// written to scores.parquet (default true).
    pub write_scores: bool,
    /// `write_fields:`: fields written to scores.parquet after the default ones, in the order
    /// given (empty by default). Written even with `write_scores: false`.
    pub write_fields: Vec<&'static str>,
    pub location: Option<Location>,
}
