//! What a comparison is: its options, its rows (one per score column and group) and the
//! verdict rule, shared by the join, the tallies and the output writers.

use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;

/// Rows per partition of the join: runs up to this size are compared in memory; larger
/// ones are spilled to the temporary folder in partitions of about this many rows.
pub const PARTITION_ROWS: u64 = 1 << 20;

/// The files `compare` writes; the last is the completion marker.
pub const COMPARE_FILES: [&str; 2] = ["compare.parquet", "compare.json"];

/// Keys listed per column in compare.json (`pass_to_fail_keys`, `fail_to_pass_keys`) and
/// per run (`only_base_keys`, `only_new_keys`).
pub const KEYS_LISTED: usize = 100;

/// What to compare and how.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    pub base: PathBuf,
    pub new: PathBuf,
    /// Columns that identify a row (default `id`).
    pub key: Vec<String>,
    pub cluster: Option<String>,
    pub group_by: Option<String>,
    /// Strictly between 0 and 1 (default 0.95).
    pub confidence: f64,
    /// The gate: `Some` turns it on.
    pub max_drop: Option<f64>,
}

impl CompareOptions {
    pub fn new(base: impl Into<PathBuf>, new: impl Into<PathBuf>) -> Self {
        CompareOptions {
            base: base.into(),
            new: new.into(),
            key: vec!["id".to_owned()],
            cluster: None,
            group_by: None,
            confidence: 0.95,
            max_drop: None,
        }
    }
}

/// One row of compare.parquet: one score column, overall (`group` None) or in one group.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub column: String,
    pub group: Option<String>,
    pub test: &'static str,
    pub n_pairs: u64,
    pub missing_pairs: u64,
    pub only_base: u64,
    pub only_new: u64,
    pub n_clusters: Option<u64>,
    pub base_mean: Option<f64>,
    pub new_mean: Option<f64>,
    pub diff: Option<f64>,
    pub diff_se: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub p_value: Option<f64>,
    pub p_value_holm: Option<f64>,
    pub pass_to_fail: u64,
    pub fail_to_pass: u64,
    pub min_detectable_diff: Option<f64>,
    pub verdict: &'static str,
    /// The first [`KEYS_LISTED`] keys that went down / up, in the base run's row order.
    pub pass_to_fail_keys: Vec<Value>,
    pub fail_to_pass_keys: Vec<Value>,
}

/// The result of a comparison.
#[derive(Debug)]
pub struct Comparison {
    pub options: CompareOptions,
    pub rows: Vec<CompareRow>,
    pub only_base_keys: Vec<Value>,
    pub only_new_keys: Vec<Value>,
    pub base_rows: u64,
    pub new_rows: u64,
}

/// `regressed` when p < 1 − C and diff < −max_drop, `improved` when p < 1 − C and diff >
/// max_drop, else `tied` (also when p or diff is undefined).
pub fn verdict(p: Option<f64>, diff: Option<f64>, confidence: f64, max_drop: f64) -> &'static str {
    match (p, diff) {
        (Some(p), Some(d)) if p < 1.0 - confidence => {
            if d < -max_drop {
                "regressed"
            } else if d > max_drop {
                "improved"
            } else {
                "tied"
            }
        }
        _ => "tied",
    }
}
