//! The registry: the one list of metric types. The metric parser ([`crate::parse_metrics`])
//! finds a metric's type here by its `type`, unknown-type errors and their "did you mean"
//! list its names, states are made ([`crate::Grouped::for_metric`]) and read back from bytes
//! by it, and the metric reference (docs/metric-reference.md) and the tests read it. Adding
//! a metric type is one file under `types/` and one line here.
//!
//! Parsing lives in this crate, which depends on `evalscore-task` for the located YAML
//! ([`evalscore_task::MapNode`]), templates and [`evalscore_task::MetricSpec`]: a type's
//! options and its state are then written side by side in one file, and the task crate stays
//! the task language alone, with no metric type in it. The scorer parser
//! (`evalscore-scorers`) calls [`crate::parse_metrics`] for a scorer's `metrics:`.

use crate::metric_type::MetricType;
use crate::types::*;

/// Every metric type, in the order "metric types: ..." lists their names.
pub static METRIC_TYPES: &[&dyn MetricType] = &[
    &mean::MeanMetric,
    &min_max::MinMetric,
    &min_max::MaxMetric,
    &std_dev::StdDevMetric,
    &frequency::FrequencyMetric,
    &classification::BINARY,
    &classification::MULTICLASS,
    &classification::PRECISION,
    &classification::RECALL,
    &classification::F1,
    &python::UserMetric,
    &win_rate::WinRateMetric,
    &agreement::COHEN_KAPPA,
    &agreement::MATTHEWS,
    &agreement::KRIPPENDORFF,
    &correlation::PearsonMetric,
    &correlation::SpearmanMetric,
    &correlation::KendallMetric,
    &ranking::ROC_AUC,
    &ranking::AVERAGE_PRECISION,
    &ranking::BRIER,
    &ranking::CALIBRATION,
    &pass_at_k::PassAtKMetric,
    &bradley_terry::BradleyTerryMetric,
    &length_controlled::LengthControlledMetric,
];

/// The metric type named `name`.
pub fn find(name: &str) -> Option<&'static dyn MetricType> {
    METRIC_TYPES
        .iter()
        .copied()
        .find(|t| t.about().name == name)
}

/// Every metric type name, in registry order.
pub fn type_names() -> Vec<&'static str> {
    METRIC_TYPES.iter().map(|t| t.about().name).collect()
}
