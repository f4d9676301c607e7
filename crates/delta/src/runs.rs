//! The `runs` table: one row per task run, written after the data tables' commits, so that a
//! reader joining through it never sees part of a run. Its columns come from the run's own
//! run.json (and metrics.json, kept whole for `compare` and `report` of a table).

use crate::DeltaError;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use serde_json::Value;
use std::sync::Arc;

/// One task run's row.
pub(crate) struct RunRow {
    pub task: String,
    pub status: &'static str,
    pub error: Option<String>,
    pub run_json: Option<String>,
    pub metrics_json: Option<String>,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
}

/// The columns of a `runs` file (the table adds `run_id`, its partition column).
pub(crate) fn schema() -> Schema {
    let ts = || DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    Schema::new(vec![
        Field::new("task", DataType::Utf8, true),
        Field::new("status", DataType::Utf8, true),
        Field::new("error", DataType::Utf8, true),
        Field::new("task_sha256", DataType::Utf8, true),
        Field::new("inputs", DataType::Utf8, true),
        Field::new("rows", DataType::Int64, true),
        Field::new("labels", DataType::Utf8, true),
        Field::new("warnings", DataType::Utf8, true),
        Field::new("started_at", ts(), true),
        Field::new("finished_at", ts(), true),
        Field::new("evalscore_version", DataType::Utf8, true),
        Field::new("run_json", DataType::Utf8, true),
        Field::new("metrics_json", DataType::Utf8, true),
    ])
}

/// Microseconds since the epoch of an RFC 3339 time.
pub(crate) fn micros(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_micros())
}

/// The `runs` rows of one run.
pub(crate) fn batch(rows: &[RunRow]) -> Result<RecordBatch, DeltaError> {
    let parsed: Vec<Option<Value>> = rows
        .iter()
        .map(|r| {
            r.run_json
                .as_deref()
                .and_then(|t| serde_json::from_str(t).ok())
        })
        .collect();
    let text = |f: &dyn Fn(&Value) -> Option<String>| -> ArrayRef {
        Arc::new(StringArray::from(
            parsed
                .iter()
                .map(|v| v.as_ref().and_then(f))
                .collect::<Vec<_>>(),
        ))
    };
    let json = |key: &'static str| {
        move |v: &Value| v.get(key).filter(|x| !x.is_null()).map(Value::to_string)
    };
    let ts = |xs: Vec<Option<i64>>| -> ArrayRef {
        Arc::new(TimestampMicrosecondArray::from(xs).with_timezone("UTC"))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.task.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.status))),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.error.clone()).collect::<Vec<_>>(),
        )),
        text(&|v| v.pointer("/task/sha256")?.as_str().map(str::to_owned)),
        text(&json("inputs")),
        Arc::new(Int64Array::from(
            parsed
                .iter()
                .map(|v| v.as_ref()?.get("rows_scored")?.as_i64())
                .collect::<Vec<_>>(),
        )),
        text(&json("labels")),
        text(&json("warnings")),
        ts(rows.iter().map(|r| r.started_at).collect()),
        ts(rows.iter().map(|r| r.finished_at).collect()),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|_| env!("CARGO_PKG_VERSION")),
        )),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.run_json.clone()).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter()
                .map(|r| r.metrics_json.clone())
                .collect::<Vec<_>>(),
        )),
    ];
    RecordBatch::try_new(Arc::new(schema()), columns)
        .map_err(|e| DeltaError::Parquet("runs".into(), e.to_string()))
}
