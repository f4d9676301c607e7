//! The outputs of a comparison: `compare.parquet` and `compare.json` (the CLI prints the rows
//! as a table).

use crate::comparison::{CompareOptions, CompareRow, Comparison, COMPARE_FILES};
use crate::error::CompareError;
use crate::stats;
use arrow::array::{ArrayRef, Float64Builder, StringBuilder, UInt64Builder};
use arrow::datatypes::{Field, Schema};
use arrow::record_batch::RecordBatch;
use evalscore_error::Error;
use evalscore_outdir::{io_error, parquet_error, OutDir};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

impl Comparison {
    /// Whether the gate is on and some verdict is `regressed`.
    pub fn gate_failed(&self) -> bool {
        self.options.max_drop.is_some() && self.rows.iter().any(|r| r.verdict == "regressed")
    }

    /// compare.json's content.
    pub fn to_json(&self) -> Value {
        options_json(
            &self.options,
            self.gate_failed(),
            json!({
                "base_rows": self.base_rows,
                "new_rows": self.new_rows,
                "only_base_keys": self.only_base_keys,
                "only_new_keys": self.only_new_keys,
                "comparisons": self.rows,
            }),
        )
    }

    /// compare.parquet's content.
    pub fn to_batch(&self) -> Result<RecordBatch, Error> {
        rows_batch(None, &self.rows.iter().collect::<Vec<_>>())
    }
}

/// compare.parquet's columns for `rows`, led by a `task` column when `tasks` names each row's
/// task (a suite's comparison).
pub(crate) fn rows_batch(
    tasks: Option<&[&str]>,
    rows: &[&CompareRow],
) -> Result<RecordBatch, Error> {
    let text = |f: &dyn Fn(&CompareRow) -> Option<String>| -> ArrayRef {
        let mut b = StringBuilder::new();
        for r in rows {
            b.append_option(f(r));
        }
        Arc::new(b.finish())
    };
    let count = |f: &dyn Fn(&CompareRow) -> Option<u64>| -> ArrayRef {
        let mut b = UInt64Builder::new();
        for r in rows {
            b.append_option(f(r));
        }
        Arc::new(b.finish())
    };
    let float = |f: &dyn Fn(&CompareRow) -> Option<f64>| -> ArrayRef {
        let mut b = Float64Builder::new();
        for r in rows {
            b.append_option(f(r));
        }
        Arc::new(b.finish())
    };
    let mut cols: Vec<(&str, ArrayRef)> = Vec::new();
    if let Some(tasks) = tasks {
        let mut b = StringBuilder::new();
        for t in tasks {
            b.append_value(t);
        }
        cols.push(("task", Arc::new(b.finish())));
    }
    cols.extend([
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
    ]);
    let nullable = |n: &str| {
        !matches!(
            n,
            "task"
                | "column"
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
            CompareError::InternalCause {
                what: "compare.parquet",
                source: Box::new(e),
            }
            .into()
        },
    )
}

/// compare.json's `gate`: `off` without `--max-drop`, else `failed` or `passed`.
pub(crate) fn gate_text(max_drop: Option<f64>, failed: bool) -> &'static str {
    match (max_drop, failed) {
        (None, _) => "off",
        (Some(_), true) => "failed",
        (Some(_), false) => "passed",
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

/// Writes `compare.parquet` and `compare.json` into `out` the way `run` writes its outputs:
/// staged, refused without `overwrite` when present, renamed into place together.
pub fn write(c: &Comparison, out: &Path, overwrite: bool) -> Result<(), Error> {
    write_files(&c.to_batch()?, &c.to_json(), out, overwrite)
}

/// Writes `batch` as compare.parquet and `json` as compare.json (last), as [`write`] says.
pub(crate) fn write_files(
    batch: &RecordBatch,
    json: &Value,
    out: &Path,
    overwrite: bool,
) -> Result<(), Error> {
    let dir = OutDir::prepare(out, &COMPARE_FILES, overwrite)?;
    let file = dir.create(0)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let shown = dir.shown(0).to_path_buf();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props))
        .map_err(|e| parquet_error(&shown, e))?;
    w.write(batch).map_err(|e| parquet_error(&shown, e))?;
    let file = w.into_inner().map_err(|e| parquet_error(&shown, e))?;
    file.sync_all().map_err(|e| io_error("write", &shown, e))?;
    let mut json = serde_json::to_vec_pretty(json).map_err(|e| CompareError::InternalCause {
        what: "compare.json",
        source: Box::new(e),
    })?;
    json.push(b'\n');
    dir.write_bytes(1, &json)?;
    dir.commit()
}

/// compare.json: the options and the gate, which a run's and a suite's comparison share, with
/// the keys of `rest` (an object) added.
pub(crate) fn options_json(o: &CompareOptions, gate_failed: bool, rest: Value) -> Value {
    let mut v = json!({
        "base": o.base.display().to_string(),
        "new": o.new.display().to_string(),
        "key": o.key,
        "cluster": o.cluster,
        "group_by": o.group_by,
        "confidence": o.confidence,
        "max_drop": o.max_drop,
        "power": stats::POWER,
        "gate": gate_text(o.max_drop, gate_failed),
    });
    if let (Some(m), Value::Object(r)) = (v.as_object_mut(), rest) {
        m.extend(r);
    }
    v
}
