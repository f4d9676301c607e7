//! run.json: the record of a run.

use super::OUTPUT_FILES;
use evalscore_reader::{Format, Inputs};
use evalscore_scorers::judge::JudgeRuntime;
use serde_json::{json, Map, Value};
use std::path::Path;

/// What run.json records.
pub(crate) struct RunInfo<'a> {
    pub task_path: &'a Path,
    pub task_sha256: &'a str,
    pub inputs: &'a Inputs,
    pub rows: u64,
    pub missing: &'a [(String, u64)],
    pub warnings: &'a [String],
    /// (rows that failed in all, rows allowed, the first ones).
    pub row_errors: (u64, u64, &'a [crate::row_error::RowErrorRecord]),
    pub started_at: &'a str,
    pub finished_at: &'a str,
    pub threads: usize,
    pub wall_seconds: f64,
    /// What the judge models cost, when a scorer asked one (`judge` in run.json).
    pub judge: Option<Value>,
    pub run: &'a crate::RunIdentity,
}

/// run.json's content.
pub(super) fn run_json(info: &RunInfo<'_>) -> Value {
    let inputs: Vec<Value> = info
        .inputs
        .files
        .iter()
        .map(|f| {
            json!({
                "path": f.path.display().to_string(),
                "format": match f.format { Format::Parquet => "parquet", Format::Jsonl => "jsonl" },
                "compression": f.compression.map(|c| c.name()),
                "rows": f.rows,
                "row_groups": f.row_groups.len(),
                "footer_sha256": f.footer_sha256,
            })
        })
        .collect();
    let mut inputs = inputs;
    let partitions = input_partitions(info.inputs, &mut inputs);
    let missing: Map<String, Value> = info
        .missing
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let v = json!({
        "run_id": info.run.run_id,
        "run_started_at": info.run.started_at_rfc3339(),
        "labels": info.run.labels_value(),
        "evalscore_version": env!("CARGO_PKG_VERSION"),
        "task": { "path": info.task_path.display().to_string(), "sha256": info.task_sha256 },
        "inputs": inputs,
        "rows_scored": info.rows,
        "missing": missing,
        "warnings": info.warnings,
        "row_error_count": info.row_errors.0,
        "max_row_errors": info.row_errors.1,
        "row_errors": info.row_errors.2.iter().map(|r| json!({
            "file": info.inputs.files.get(r.file).map(|f| f.path.display().to_string()),
            "row": r.row,
            "scorer": r.scorer,
            "column": r.column,
            "value": r.value,
            "message": r.message,
        })).collect::<Vec<_>>(),
        "started_at": info.started_at,
        "finished_at": info.finished_at,
        "threads": info.threads,
        "wall_seconds": info.wall_seconds,
        "outputs": OUTPUT_FILES,
    });
    let mut v = v;
    if let (Some(j), Some(obj)) = (&info.judge, v.as_object_mut()) {
        obj.insert("judge".to_owned(), j.clone());
    }
    if let (Some(p), Some(obj)) = (partitions, v.as_object_mut()) {
        obj.insert("input_partitions".to_owned(), p);
    }
    v
}

/// With Hive partition columns: each input's values (`partitions` in its entry of
/// `inputs`), and run.json's `input_partitions`: the columns and their types, the partition
/// filter (`--where` and the task's `filter:`) and how many files it kept of those listed.
fn input_partitions(inputs: &Inputs, entries: &mut [Value]) -> Option<Value> {
    if inputs.partition_columns.is_empty() {
        return None;
    }
    for (file, entry) in inputs.files.iter().zip(entries.iter_mut()) {
        let values: Map<String, Value> = inputs
            .partition_columns
            .iter()
            .zip(&file.partition_values())
            .map(|(field, value)| (field.name().clone(), value.clone()))
            .collect();
        if let Some(obj) = entry.as_object_mut() {
            obj.insert("partitions".to_owned(), Value::Object(values));
        }
    }
    let columns: Vec<Value> = inputs
        .partition_columns
        .iter()
        .map(|f| json!({"name": f.name(), "type": f.data_type().to_string()}))
        .collect();
    let files = inputs.files.len();
    let (filter, listed, matched) = match &inputs.pruning {
        Some(p) => (Some(p.filter.as_str()), p.files_listed, p.files_matched),
        None => (None, files, files),
    };
    Some(json!({
        "columns": columns,
        "filter": filter,
        "files_listed": listed,
        "files_matched": matched,
    }))
}

/// run.json's `judge` object: the cache, `--offline`, per model what it cost, and per judge
/// scorer the replies that could not be read.
pub(crate) fn judge_json(
    rt: &JudgeRuntime,
    invalid: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let models: serde_json::Map<String, serde_json::Value> = rt
        .stats()
        .into_iter()
        .map(|m| {
            let s = m.stats;
            (
                m.model_key,
                serde_json::json!({
                    "model": m.model,
                    "requests_sent": s.requests_sent,
                    "cache_hits": s.cache_hits,
                    "deduplicated": s.deduplicated,
                    "retries": s.retries,
                    "failures": s.failures,
                    "prompt_tokens": s.prompt_tokens,
                    "completion_tokens": s.completion_tokens,
                    "wait_seconds": m.waited.as_secs_f64(),
                    "backoff_seconds": s.waited.as_secs_f64(),
                }),
            )
        })
        .collect();
    serde_json::json!({
        "cache": rt.cache_name(),
        // The shared cache's traffic (null without one): what a nightly run on a fresh
        // machine read and wrote.
        "shared_cache": rt.cache().and_then(|c| c.shared_stats()).map(|s| {
            let mut j = s.to_json();
            j["local"] = serde_json::json!(rt.cache_path().map(|p| p.display().to_string()));
            j
        }),
        "offline": rt.offline(),
        "models": models,
        "invalid": invalid,
    })
}
