//! suite.json: the record of a suite run, written last into the suite's folder.

use super::SuiteSummary;
use serde_json::json;
use std::path::Path;

/// suite.json's text: the suite file and its SHA-256, the run identity every task shares,
/// and per task (in the suite's order) its name, task file (or `"inline"`), inputs, status,
/// error (rendered as the CLI prints it, without `error: `), rows and output folder.
pub(super) fn suite_json(
    path: &Path,
    sha256: &str,
    summary: &SuiteSummary,
    started_at: String,
) -> String {
    let tasks: Vec<serde_json::Value> = summary
        .tasks
        .iter()
        .map(|t| {
            let (status, error, rows) = match &t.result {
                Ok(s) => ("ok", None, Some(s.rows)),
                Err(e) => {
                    let text = crate::render(e);
                    let text = text.strip_prefix("error: ").unwrap_or(&text).trim_end();
                    ("failed", Some(text.to_owned()), None)
                }
            };
            json!({
                "name": t.name,
                "task": t.task.as_ref().map_or_else(|| "inline".to_owned(), |p| p.display().to_string()),
                "inputs": t.inputs,
                "status": status,
                "error": error,
                "rows": rows,
                "out": t.out_dir.display().to_string(),
            })
        })
        .collect();
    let v = json!({
        "suite": { "path": path.display().to_string(), "sha256": sha256 },
        "run_id": summary.run.run_id,
        "run_started_at": summary.run.started_at_rfc3339(),
        "labels": summary.run.labels_value(),
        "evalscore_version": env!("CARGO_PKG_VERSION"),
        "started_at": started_at,
        "finished_at": crate::time::now_rfc3339(),
        "wall_seconds": summary.wall_seconds,
        "tasks": tasks,
    });
    let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
    text.push('\n');
    text
}
