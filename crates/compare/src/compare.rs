//! Pairing two runs' rows by key and comparing every common score column, overall and per
//! group. Memory does not grow with the rows: both runs are read into partitions by key
//! ([`crate::runs`]), joined one partition at a time ([`crate::join`]), and the statistics
//! gathered in two passes over the pairs in the base run's order ([`crate::tally`]), so
//! every figure is the sum, in that order, the in-memory computation gives.

use crate::error::{CompareError, ScoreColumns};
use crate::join::{self, Columns};
use crate::runs::{self, key_json, Dict, Layout};
use crate::stats;
use crate::tally::{self, Groups};
use evalscore_error::Error;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;

pub use crate::output::{p_text, write};

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

/// Compares the two runs (reads only; see [`write`] for the outputs).
pub fn compare(options: &CompareOptions) -> Result<Comparison, Error> {
    compare_in(options, PARTITION_ROWS)
}

/// [`compare`] with partitions of `partition_rows` rows.
pub(crate) fn compare_in(o: &CompareOptions, partition_rows: u64) -> Result<Comparison, Error> {
    if !(o.confidence > 0.0 && o.confidence < 1.0) {
        return Err(CompareError::Option(format!(
            "--confidence {} is not strictly between 0 and 1",
            o.confidence
        ))
        .into());
    }
    if let Some(x) = o.max_drop {
        if !(x.is_finite() && x >= 0.0) {
            return Err(CompareError::Option(format!("--max-drop {x} is not a number ≥ 0")).into());
        }
    }
    if o.key.is_empty() || o.key.iter().any(|k| k.is_empty()) {
        return Err(CompareError::Option("--key needs at least one column name".to_owned()).into());
    }
    let (group_by, cluster) = (o.group_by.as_deref(), o.cluster.as_deref());
    let base = runs::open(&o.base, "base", &o.key, group_by, cluster)?;
    let new = runs::open(&o.new, "new", &o.key, group_by, cluster)?;
    for (option, name, b, n) in [
        ("--group-by", &o.group_by, &base.group, &new.group),
        ("--cluster", &o.cluster, &base.cluster, &new.cluster),
    ] {
        if let Some(name) = name {
            if b.is_none() && n.is_none() {
                return Err(CompareError::NeitherHasColumn {
                    option,
                    name: name.clone(),
                    base: base.path.clone(),
                    new: new.path.clone(),
                }
                .into());
            }
        }
    }
    let common: Vec<(usize, usize)> = base
        .scores
        .iter()
        .enumerate()
        .filter_map(|(i, name)| new.scores.iter().position(|n| n == name).map(|j| (i, j)))
        .collect();
    let no_common = || CompareError::NoCommonColumn {
        base: base.path.clone(),
        new: new.path.clone(),
        columns: ScoreColumns::new(&base.scores, &new.scores),
    };
    if common.is_empty() {
        return Err(no_common().into());
    }
    let layout = Layout::new(base.rows().max(new.rows()), partition_rows)?;
    let mut dict = Dict::default();
    let base_rows = base.scan(&layout, &mut dict, true, "base")?;
    let duplicate = |run: &runs::Run, rows: &runs::Scanned| -> Result<(), Error> {
        match join::first_duplicate(rows, run.scores.len())? {
            None => Ok(()),
            Some((key, first, second)) => Err(CompareError::DuplicateKey {
                path: run.path.clone(),
                key: o.key.join(","),
                value: key_json(&key, &run.key_int),
                first: first + 1,
                second: second + 1,
            }
            .into()),
        }
    };
    duplicate(&base, &base_rows)?;
    let new_rows = new.scan(&layout, &mut dict, false, "new")?;
    duplicate(&new, &new_rows)?;
    for (b, n) in &common {
        for (run, rows, col) in [(&base, &base_rows, *b), (&new, &new_rows, *n)] {
            if let Some((row, value)) = rows.first_infinite[col] {
                return Err(CompareError::NotFinite {
                    path: run.path.clone(),
                    row: row + 1,
                    column: run.scores[col].clone(),
                    value,
                }
                .into());
            }
        }
    }
    let cols = Columns {
        base_width: base.scores.len(),
        new_width: new.scores.len(),
        common: common.clone(),
        base_group: base.group.is_some(),
        new_group: new.group.is_some(),
        base_cluster: base.cluster.is_some(),
        new_cluster: new.cluster.is_some(),
    };
    let joined = join::join(&base_rows, &new_rows, &cols, &layout.spill)?;
    if let (Some(name), Some((i, j))) = (&o.cluster, joined.null_cluster) {
        let (path, row) = if base.cluster.is_some() {
            (&base.path, i)
        } else {
            (&new.path, j)
        };
        return Err(CompareError::NullCluster {
            path: path.clone(),
            row: row + 1,
            name: name.clone(),
        }
        .into());
    }
    let names: Vec<String> = common
        .iter()
        .map(|(b, _)| base.scores[*b].clone())
        .collect();
    let groups = Groups::new(o.group_by.is_some(), &joined, &dict);
    let tallied = tally::tally(
        &joined,
        &base_rows,
        &names,
        &groups,
        o.cluster.is_some(),
        o.confidence,
        &base.key_int,
    )?;
    let mut rows = tallied.rows;
    let holm = stats::holm(&rows.iter().map(|r| r.p_value).collect::<Vec<_>>());
    for (r, h) in rows.iter_mut().zip(holm) {
        r.p_value_holm = h;
        r.verdict = verdict(r.p_value, r.diff, o.confidence, o.max_drop.unwrap_or(0.0));
    }
    Ok(Comparison {
        options: o.clone(),
        only_base_keys: tallied.only_base_keys,
        only_new_keys: joined
            .only_new_keys
            .values()
            .map(|k| key_json(k, &new.key_int))
            .collect(),
        base_rows: base_rows.rows,
        new_rows: new_rows.rows,
        rows,
    })
}
