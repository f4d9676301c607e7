//! Helpers shared by the end-to-end tests.
#![allow(clippy::unwrap_used)]
#![allow(dead_code)]

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{Float64Type, Int64Type, UInt64Type};
use assert_cmd::Command;
use std::fs::File;
use std::path::{Path, PathBuf};

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/examples")
}

pub fn evalscore() -> Command {
    let mut c = Command::cargo_bin("evalscore").expect("binary");
    c.env_remove("RUST_BACKTRACE");
    c
}

pub fn read_parquet(path: &Path) -> RecordBatch {
    let f = File::open(path).expect("open");
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .expect("parquet")
        .build()
        .expect("reader");
    let batches: Vec<RecordBatch> = r.map(|b| b.expect("batch")).collect();
    let schema = batches[0].schema();
    arrow::compute::concat_batches(&schema, &batches).expect("concat")
}

pub fn strings(b: &RecordBatch, col: &str) -> Vec<Option<String>> {
    let c = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    let c = arrow::compute::cast(c, &arrow::datatypes::DataType::Utf8).expect("cast");
    c.as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_owned))
        .collect()
}

pub fn floats(b: &RecordBatch, col: &str) -> Vec<Option<f64>> {
    let c = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    c.as_primitive::<Float64Type>().iter().collect()
}

pub fn ints(b: &RecordBatch, col: &str) -> Vec<i64> {
    let c = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    c.as_primitive::<Int64Type>().values().to_vec()
}

pub fn uints(b: &RecordBatch, col: &str) -> Vec<u64> {
    let c = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    c.as_primitive::<UInt64Type>().values().to_vec()
}

pub fn column_names(b: &RecordBatch) -> Vec<String> {
    b.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

/// One metrics.parquet row as text, for exact comparison.
pub fn metric_lines(b: &RecordBatch) -> Vec<String> {
    let cols = [
        "scorer",
        "scorer_type",
        "metric",
        "metric_type",
        "field",
        "stat",
        "label",
    ];
    let text: Vec<Vec<Option<String>>> = cols.iter().map(|c| strings(b, c)).collect();
    let values = floats(b, "value");
    let n = uints(b, "n");
    (0..b.num_rows())
        .map(|i| {
            let mut parts: Vec<String> = text
                .iter()
                .map(|c| c[i].clone().unwrap_or_else(|| "∅".into()))
                .collect();
            parts.push(values[i].map_or_else(|| "null".into(), |v| format!("{v}")));
            parts.push(n[i].to_string());
            parts.join("|")
        })
        .collect()
}

pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub fn null_count(b: &RecordBatch, col: &str) -> usize {
    b.column_by_name(col).map_or(0, |c| c.null_count())
}
