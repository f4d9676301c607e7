//! A run of a root read back as the folders `compare` and `report` take: per task,
//! scores.parquet (the table's data file, byte for byte), run.json and metrics.json (kept
//! whole in `runs`), and metrics.parquet and confusion.parquet (the tables' files, with
//! `run_id` back as their last-but-two column). One task gives one run folder; several give
//! a suite folder (`task=NAME/` each, and a `suite.json` listing them).

use crate::publish::{run_files, DATA_TABLES, RUNS_TABLE};
use crate::root::DeltaRoot;
use crate::DeltaError;
use arrow::array::{Array, AsArray, RecordBatch, RecordBatchReader};
use evalscore_storage::block_on;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::{Path, PathBuf};

/// A run read back into a local folder.
#[derive(Debug)]
pub struct Materialized {
    /// The folder: a run folder for one task, else a suite folder.
    pub dir: PathBuf,
    /// The tasks, in the order `runs` lists them.
    pub tasks: Vec<String>,
}

impl DeltaRoot {
    /// Writes run `run_id` into `into` (an empty folder): see the module docs.
    pub fn materialize(&self, run_id: &str, into: &Path) -> Result<Materialized, DeltaError> {
        block_on(self.materialize_async(run_id, into))
    }

    async fn materialize_async(
        &self,
        run_id: &str,
        into: &Path,
    ) -> Result<Materialized, DeltaError> {
        let no_run = || DeltaError::NoRun {
            root: self.shown.clone(),
            run_id: run_id.to_owned(),
        };
        let runs = self.load(RUNS_TABLE).await?.ok_or_else(no_run)?;
        let files = run_files(&runs, run_id)?;
        if files.is_empty() {
            return Err(no_run());
        }
        let mut rows: Vec<(String, String, String)> = Vec::new();
        for (_, rel) in &files {
            let bytes = self.read_file(&format!("{RUNS_TABLE}/{rel}")).await?;
            let batch = read_all(bytes, rel)?;
            let col = |name: &str| {
                batch
                    .column_by_name(name)
                    .map(|c| c.as_string::<i32>().clone())
            };
            let (Some(task), Some(status), Some(run), Some(metrics)) = (
                col("task"),
                col("status"),
                col("run_json"),
                col("metrics_json"),
            ) else {
                return Err(DeltaError::Parquet(
                    rel.into(),
                    "not a `runs` file of evalscore".into(),
                ));
            };
            for i in 0..batch.num_rows() {
                if status.value(i) == "succeeded" && !run.is_null(i) {
                    rows.push((
                        task.value(i).to_owned(),
                        run.value(i).to_owned(),
                        metrics.value(i).to_owned(),
                    ));
                }
            }
        }
        let suite = rows.len() > 1;
        let folder = |task: &str| {
            if suite {
                into.join(format!("task={task}"))
            } else {
                into.to_path_buf()
            }
        };
        for (task, run_json, metrics_json) in &rows {
            let dir = folder(task);
            std::fs::create_dir_all(&dir).map_err(|e| DeltaError::io(&dir, "create", e))?;
            write(&dir.join("run.json"), run_json.as_bytes())?;
            write(&dir.join("metrics.json"), metrics_json.as_bytes())?;
        }
        for table in DATA_TABLES {
            let Some(t) = self.load(table).await? else {
                continue;
            };
            for (task, rel) in run_files(&t, run_id)? {
                let Some(task) = task.filter(|t| rows.iter().any(|r| &r.0 == t)) else {
                    continue;
                };
                let bytes = self.read_file(&format!("{table}/{rel}")).await?;
                let to = folder(&task).join(format!("{table}.parquet"));
                write(&to, &bytes)?;
            }
        }
        if suite {
            let tasks: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| serde_json::json!({"name": r.0, "out_dir": format!("task={}", r.0), "status": "ok"}))
                .collect();
            let text = serde_json::json!({"run_id": run_id, "tasks": tasks}).to_string();
            write(&into.join("suite.json"), text.as_bytes())?;
        }
        Ok(Materialized {
            dir: into.to_path_buf(),
            tasks: rows.into_iter().map(|r| r.0).collect(),
        })
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), DeltaError> {
    std::fs::write(path, bytes).map_err(|e| DeltaError::io(path, "write", e))
}

fn read_all(bytes: bytes::Bytes, rel: &str) -> Result<RecordBatch, DeltaError> {
    let err = |e: &dyn std::fmt::Display| DeltaError::Parquet(rel.into(), e.to_string());
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .and_then(|b| b.build())
        .map_err(|e| err(&e))?;
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().map_err(|e| err(&e))?;
    arrow::compute::concat_batches(&schema, &batches).map_err(|e| err(&e))
}
