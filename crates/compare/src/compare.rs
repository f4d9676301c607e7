//! Pairing two runs' rows by key and comparing every common score column, overall and per
//! group; the outputs `compare.parquet` and `compare.json` (the CLI prints the rows as a table).

use crate::runs::{read_scores, RunScores};
use crate::stats::{self, Paired};
use arrow::array::{ArrayRef, Float64Builder, StringBuilder, UInt64Builder};
use arrow::datatypes::{Field, Schema};
use arrow::record_batch::RecordBatch;
use evalscore_engine::outdir::{parquet_error, OutDir};
use evalscore_engine::{Error, ErrorKind};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

impl Comparison {
    /// Whether the gate is on and some verdict is `regressed`.
    pub fn gate_failed(&self) -> bool {
        self.options.max_drop.is_some() && self.rows.iter().any(|r| r.verdict == "regressed")
    }

    /// compare.json's content.
    pub fn to_json(&self) -> Value {
        let o = &self.options;
        json!({
            "base": o.base.display().to_string(),
            "new": o.new.display().to_string(),
            "key": o.key,
            "cluster": o.cluster,
            "group_by": o.group_by,
            "confidence": o.confidence,
            "max_drop": o.max_drop,
            "power": stats::POWER,
            "gate": match (o.max_drop, self.gate_failed()) {
                (None, _) => "off",
                (Some(_), true) => "failed",
                (Some(_), false) => "passed",
            },
            "base_rows": self.base_rows,
            "new_rows": self.new_rows,
            "only_base_keys": self.only_base_keys,
            "only_new_keys": self.only_new_keys,
            "comparisons": self.rows,
        })
    }

    /// compare.parquet's content.
    pub fn to_batch(&self) -> Result<RecordBatch, Error> {
        let text = |f: &dyn Fn(&CompareRow) -> Option<String>| -> ArrayRef {
            let mut b = StringBuilder::new();
            for r in &self.rows {
                b.append_option(f(r));
            }
            Arc::new(b.finish())
        };
        let count = |f: &dyn Fn(&CompareRow) -> Option<u64>| -> ArrayRef {
            let mut b = UInt64Builder::new();
            for r in &self.rows {
                b.append_option(f(r));
            }
            Arc::new(b.finish())
        };
        let float = |f: &dyn Fn(&CompareRow) -> Option<f64>| -> ArrayRef {
            let mut b = Float64Builder::new();
            for r in &self.rows {
                b.append_option(f(r));
            }
            Arc::new(b.finish())
        };
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("column", text(&|r| Some(r.column.clone()))),
            ("group", text(&|r| r.group.clone())),
            ("test", text(&|r| Some(r.test.to_owned()))),
            ("n_pairs", count(&|r| Some(r.n_pairs))),
            ("missing_pairs", count(&|r| Some(r.missing_pairs))),
            ("only_base", count(&|r| Some(r.only_base))),
            ("only_new", count(&|r| Some(r.only_new))),
            ("n_clusters", count(&|r| r.n_clusters)),
            ("base_mean", float(&|r| r.base_mean)),
            ("new_mean", float(&|r| r.new_mean)),
            ("diff", float(&|r| r.diff)),
            ("diff_se", float(&|r| r.diff_se)),
            ("ci_low", float(&|r| r.ci_low)),
            ("ci_high", float(&|r| r.ci_high)),
            ("p_value", float(&|r| r.p_value)),
            ("p_value_holm", float(&|r| r.p_value_holm)),
            ("pass_to_fail", count(&|r| Some(r.pass_to_fail))),
            ("fail_to_pass", count(&|r| Some(r.fail_to_pass))),
            ("min_detectable_diff", float(&|r| r.min_detectable_diff)),
            ("verdict", text(&|r| Some(r.verdict.to_owned()))),
        ];
        let nullable = |n: &str| {
            !matches!(
                n,
                "column"
                    | "test"
                    | "n_pairs"
                    | "missing_pairs"
                    | "only_base"
                    | "only_new"
                    | "pass_to_fail"
                    | "fail_to_pass"
                    | "verdict"
            )
        };
        let schema = Schema::new(
            cols.iter()
                .map(|(n, a)| Field::new(*n, a.data_type().clone(), nullable(n)))
                .collect::<Vec<_>>(),
        );
        RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a)| a).collect()).map_err(
            |e| {
                Error::new(format!("internal error: compare.parquet: {e}"))
                    .kind(ErrorKind::Internal)
            },
        )
    }
}

/// A p-value for people: 4 decimals, or 3 significant digits in scientific notation below
/// 0.001.
pub fn p_text(x: f64) -> String {
    if x != 0.0 && x < 1e-3 {
        format!("{x:.2e}")
    } else {
        format!("{x:.4}")
    }
}

fn options_error(message: String) -> Error {
    Error::new(message).kind(ErrorKind::Other)
}

/// Compares the two runs (reads only; see [`write`] for the outputs).
pub fn compare(options: &CompareOptions) -> Result<Comparison, Error> {
    let o = options;
    if !(o.confidence > 0.0 && o.confidence < 1.0) {
        return Err(options_error(format!(
            "--confidence {} is not strictly between 0 and 1",
            o.confidence
        )));
    }
    if let Some(x) = o.max_drop {
        if !(x.is_finite() && x >= 0.0) {
            return Err(options_error(format!("--max-drop {x} is not a number ≥ 0")));
        }
    }
    if o.key.is_empty() || o.key.iter().any(|k| k.is_empty()) {
        return Err(options_error(
            "--key needs at least one column name".to_owned(),
        ));
    }
    let base = read_scores(
        &o.base,
        "base",
        &o.key,
        o.group_by.as_deref(),
        o.cluster.as_deref(),
    )?;
    let new = read_scores(
        &o.new,
        "new",
        &o.key,
        o.group_by.as_deref(),
        o.cluster.as_deref(),
    )?;
    for (opt, name, b, n) in [
        (
            "--group-by",
            &o.group_by,
            base.group.is_some(),
            new.group.is_some(),
        ),
        (
            "--cluster",
            &o.cluster,
            base.cluster.is_some(),
            new.cluster.is_some(),
        ),
    ] {
        if let Some(name) = name {
            if !b && !n {
                return Err(Error::new(format!(
                    "{opt} `{name}`: neither `{}` nor `{}` has that column",
                    base.path.display(),
                    new.path.display()
                ))
                .kind(ErrorKind::Input)
                .hint(format!(
                    "keep it in the run: `evalscore run --keep id,{name}`"
                )));
            }
        }
    }
    let new_index = new.index();
    // (base row, new row) in base order.
    let pairs: Vec<(usize, usize)> = base
        .keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| new_index.get(k.as_str()).map(|j| (i, *j)))
        .collect();
    let mut in_base = vec![false; new.keys.len()];
    for (_, j) in &pairs {
        in_base[*j] = true;
    }
    let mut paired_base = vec![false; base.keys.len()];
    for (i, _) in &pairs {
        paired_base[*i] = true;
    }
    let only_base: Vec<usize> = (0..base.keys.len()).filter(|i| !paired_base[*i]).collect();
    let only_new: Vec<usize> = (0..new.keys.len()).filter(|j| !in_base[*j]).collect();

    // Group and cluster of a row: from the base run when it has the column, else the new.
    let pick = |b: &Option<Vec<Option<String>>>,
                n: &Option<Vec<Option<String>>>,
                (i, j): (Option<usize>, Option<usize>)|
     -> Option<String> {
        match (b, n, i, j) {
            (Some(b), _, Some(i), _) => b[i].clone(),
            (_, Some(n), _, Some(j)) => n[j].clone(),
            _ => None,
        }
    };
    let pair_group: Vec<Option<String>> = pairs
        .iter()
        .map(|(i, j)| pick(&base.group, &new.group, (Some(*i), Some(*j))))
        .collect();
    let only_base_group: Vec<Option<String>> = only_base
        .iter()
        .map(|i| pick(&base.group, &new.group, (Some(*i), None)))
        .collect();
    let only_new_group: Vec<Option<String>> = only_new
        .iter()
        .map(|j| pick(&base.group, &new.group, (None, Some(*j))))
        .collect();
    let pair_cluster: Option<Vec<u32>> = match &o.cluster {
        None => None,
        Some(name) => {
            let mut ids: HashMap<String, u32> = HashMap::new();
            let mut out = Vec::with_capacity(pairs.len());
            for (i, j) in &pairs {
                let Some(v) = pick(&base.cluster, &new.cluster, (Some(*i), Some(*j))) else {
                    let (path, row) = if base.cluster.is_some() {
                        (&base.path, *i)
                    } else {
                        (&new.path, *j)
                    };
                    return Err(Error::new(format!(
                        "`{}` row {}: the cluster column `{name}` is null",
                        path.display(),
                        row + 1
                    ))
                    .kind(ErrorKind::Input)
                    .hint("every paired row needs a cluster"));
                };
                let next = ids.len() as u32;
                out.push(*ids.entry(v).or_insert(next));
            }
            Some(out)
        }
    };
    let mut groups: Vec<Option<String>> = vec![None];
    if o.group_by.is_some() {
        let set: BTreeSet<&String> = pair_group
            .iter()
            .chain(&only_base_group)
            .chain(&only_new_group)
            .flatten()
            .collect();
        groups.extend(set.into_iter().map(|g| Some(g.clone())));
    }

    let new_cols: HashMap<&str, &Vec<Option<f64>>> =
        new.columns.iter().map(|(n, v)| (n.as_str(), v)).collect();
    // (name, base values, new values)
    #[allow(clippy::type_complexity)]
    let common: Vec<(&String, &Vec<Option<f64>>, &Vec<Option<f64>>)> = base
        .columns
        .iter()
        .filter_map(|(n, b)| new_cols.get(n.as_str()).map(|v| (n, b, *v)))
        .collect();
    if common.is_empty() {
        let names = |r: &RunScores| {
            let v: Vec<&str> = r.columns.iter().map(|(n, _)| n.as_str()).collect();
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        return Err(Error::new(format!(
            "`{}` and `{}` have no numeric score column in common",
            base.path.display(),
            new.path.display()
        ))
        .kind(ErrorKind::Input)
        .caused_by(format!("base score columns: {}", names(&base)))
        .caused_by(format!("new score columns: {}", names(&new)))
        .hint("compare runs of the same task"));
    }

    let mut rows = Vec::new();
    for (name, bcol, ncol) in common {
        let present: Vec<bool> = pairs
            .iter()
            .map(|(i, j)| bcol[*i].is_some() && ncol[*j].is_some())
            .collect();
        let binary = pairs
            .iter()
            .zip(&present)
            .filter(|(_, p)| **p)
            .all(|((i, j), _)| {
                matches!(bcol[*i], Some(x) if x == 0.0 || x == 1.0)
                    && matches!(ncol[*j], Some(x) if x == 0.0 || x == 1.0)
            });
        for g in &groups {
            let member = |pg: &Option<String>| g.is_none() || pg == g;
            let mut bv = Vec::new();
            let mut nv = Vec::new();
            let mut cl = Vec::new();
            let mut keys_down = Vec::new();
            let mut keys_up = Vec::new();
            let mut missing = 0u64;
            for (k, (i, j)) in pairs.iter().enumerate() {
                if !member(&pair_group[k]) {
                    continue;
                }
                let (Some(b), Some(n)) = (bcol[*i], ncol[*j]) else {
                    missing += 1;
                    continue;
                };
                bv.push(b);
                nv.push(n);
                if let Some(c) = &pair_cluster {
                    cl.push(c[k]);
                }
                if n < b && keys_down.len() < KEYS_LISTED {
                    keys_down.push(base.key_json[*i].clone());
                }
                if n > b && keys_up.len() < KEYS_LISTED {
                    keys_up.push(base.key_json[*i].clone());
                }
            }
            let s: Paired = stats::paired(
                &bv,
                &nv,
                pair_cluster.as_ref().map(|_| cl.as_slice()),
                o.confidence,
                binary,
            );
            rows.push(CompareRow {
                column: name.clone(),
                group: g.clone(),
                test: s.test.name(),
                n_pairs: s.n_pairs,
                missing_pairs: missing,
                only_base: only_base_group.iter().filter(|x| member(x)).count() as u64,
                only_new: only_new_group.iter().filter(|x| member(x)).count() as u64,
                n_clusters: s.n_clusters,
                base_mean: s.base_mean,
                new_mean: s.new_mean,
                diff: s.diff,
                diff_se: s.diff_se,
                ci_low: s.ci_low,
                ci_high: s.ci_high,
                p_value: s.p_value,
                p_value_holm: None,
                pass_to_fail: s.pass_to_fail,
                fail_to_pass: s.fail_to_pass,
                min_detectable_diff: s.min_detectable_diff,
                verdict: "tied",
                pass_to_fail_keys: keys_down,
                fail_to_pass_keys: keys_up,
            });
        }
    }
    let holm = stats::holm(&rows.iter().map(|r| r.p_value).collect::<Vec<_>>());
    for (r, h) in rows.iter_mut().zip(holm) {
        r.p_value_holm = h;
        r.verdict = verdict(r.p_value, r.diff, o.confidence, o.max_drop.unwrap_or(0.0));
    }
    let list = |run: &RunScores, idx: &[usize]| -> Vec<Value> {
        idx.iter()
            .take(KEYS_LISTED)
            .map(|i| run.key_json[*i].clone())
            .collect()
    };
    Ok(Comparison {
        options: o.clone(),
        only_base_keys: list(&base, &only_base),
        only_new_keys: list(&new, &only_new),
        base_rows: base.keys.len() as u64,
        new_rows: new.keys.len() as u64,
        rows,
    })
}

/// Writes `compare.parquet` and `compare.json` into `out` the way `run` writes its outputs:
/// staged, refused without `overwrite` when present, renamed into place together.
pub fn write(c: &Comparison, out: &Path, overwrite: bool) -> Result<(), Error> {
    let dir = OutDir::prepare(out, &COMPARE_FILES, overwrite)?;
    let batch = c.to_batch()?;
    let file = dir.create(0)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let shown = dir.shown(0).to_path_buf();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props))
        .map_err(|e| parquet_error(&shown, e))?;
    w.write(&batch).map_err(|e| parquet_error(&shown, e))?;
    let file = w.into_inner().map_err(|e| parquet_error(&shown, e))?;
    file.sync_all()
        .map_err(|e| evalscore_engine::outdir::io_error("write", &shown, e))?;
    let mut json = serde_json::to_vec_pretty(&c.to_json()).map_err(|e| {
        Error::new(format!("internal error: compare.json: {e}")).kind(ErrorKind::Internal)
    })?;
    json.push(b'\n');
    dir.write_bytes(1, &json)?;
    dir.commit()
}
