//! The report of a suite's folder: the suite (suite.json), a table of its tasks, and one
//! section per task it scored, each what the report of that task's run folder shows; with
//! a baseline suite, each task both suites scored is compared as two runs are, and the
//! table counts its verdicts.

use crate::compare::compare;
use crate::comparison::CompareOptions;
use crate::report::{cell, compare_context, failing, read_json, run_context, ReportOptions};
use crate::row_samples;
use crate::suite::{self, in_task, task_dir, SUITE_JSON};
use evalscore_error::Error;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Verdicts of a task's comparison: regressed, improved, tied.
type Counts = (usize, usize, usize);

/// The page's context for the suite in `o.run` (and its comparison with `o.baseline`).
pub(crate) fn context(o: &ReportOptions) -> Result<Map<String, Value>, Error> {
    let record = read_json(&o.run.join(SUITE_JSON))?;
    let scored = suite::suite_tasks(&o.run)?;
    let base_scored = match &o.baseline {
        Some(b) => suite::suite_tasks(b)?,
        None => Vec::new(),
    };
    let mut counts: HashMap<&str, Counts> = HashMap::new();
    let mut sections = Vec::with_capacity(scored.len());
    for name in &scored {
        let dir = task_dir(&o.run, name);
        let mut charts = Vec::new();
        let run = run_context(&dir, &mut charts).map_err(|e| in_task(name, e))?;
        let failing = failing(&dir).map_err(|e| in_task(name, e))?;
        let mut compare_charts = Vec::new();
        let comparison = match &o.baseline {
            Some(base) if base_scored.contains(name) => {
                let mut opts = CompareOptions::new(task_dir(base, name), &dir);
                opts.key = o.key.clone();
                let c = compare(&opts).map_err(|e| in_task(name, e))?;
                let n = |v: &str| c.rows.iter().filter(|r| r.verdict == v).count();
                counts.insert(name, (n("regressed"), n("improved"), n("tied")));
                compare_context(&c, &dir, &mut compare_charts).map_err(|e| in_task(name, e))?
            }
            _ => Value::Null,
        };
        sections.push(json!({
            "name": name,
            // A task name holds no `:`, so no two tasks' ids meet.
            "prefix": format!("task={name}:"),
            "run": run,
            "charts": charts,
            "failing": failing,
            "compare": comparison,
            "compare_charts": compare_charts,
        }));
    }
    let tasks: Vec<Value> = record["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let name = t["name"].as_str().unwrap_or_default();
            let (regressed, improved, tied) = counts.get(name).copied().unwrap_or_default();
            json!({
                "name": name,
                "status": cell(&t["status"]),
                "error": t["error"].as_str(),
                "rows": cell(&t["rows"]),
                "compared": counts.contains_key(name),
                "regressed": regressed,
                "improved": improved,
                "tied": tied,
            })
        })
        .collect();
    let labels: Vec<Value> = match &record["labels"] {
        Value::Object(m) => m.iter().map(|(k, v)| json!([k, cell(v)])).collect(),
        _ => Vec::new(),
    };
    let mut ctx = Map::new();
    ctx.insert("title".to_owned(), json!(cell(&record["suite"]["path"])));
    ctx.insert(
        "suite".to_owned(),
        json!({
            "dir": o.run.display().to_string(),
            "path": cell(&record["suite"]["path"]),
            "sha256": cell(&record["suite"]["sha256"]),
            "run_id": record["run_id"].as_str(),
            "labels": labels,
            "started_at": cell(&record["started_at"]),
            "finished_at": cell(&record["finished_at"]),
            "wall_seconds": record["wall_seconds"].as_f64().map(|s| format!("{s:.2}")),
            "version": cell(&record["evalscore_version"]),
            "tasks": tasks,
        }),
    );
    ctx.insert(
        "baseline".to_owned(),
        match &o.baseline {
            None => Value::Null,
            Some(base) => json!({
                "dir": base.display().to_string(),
                "only_base": base_scored.iter().filter(|t| !scored.contains(t)).collect::<Vec<_>>(),
            }),
        },
    );
    ctx.insert("tasks".to_owned(), Value::Array(sections));
    ctx.insert("rows_shown".to_owned(), json!(row_samples::ROWS_SHOWN));
    Ok(ctx)
}
