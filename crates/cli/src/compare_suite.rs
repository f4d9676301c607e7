//! `evalscore compare` of two suites' folders: writes the one compare.parquet and
//! compare.json, prints one table of every task's comparisons, each task's row counts, the
//! tasks on one side only, and the gate naming each task that failed it; exit 1 when it
//! fails.

use crate::compare_rows::{cells, is_number, HEADER};
use crate::table;
use evalscore_compare::SuiteComparison;
use evalscore_engine::Error;
use std::path::Path;
use std::process::ExitCode;

pub fn finish(s: &SuiteComparison, out: &Path, overwrite: bool) -> Result<ExitCode, Error> {
    s.write(out, overwrite)?;
    print!("{}", render(s));
    Ok(ExitCode::from(if s.gate_failed() { 1 } else { 0 }))
}

/// The names, or `none`.
fn listed(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// The stdout text: the table (a run comparison's, led by the task), one line of row
/// counts per task, the tasks compared and those on one side only, then the gate.
fn render(s: &SuiteComparison) -> String {
    let header: Vec<&str> = std::iter::once("task").chain(HEADER).collect();
    let right: Vec<bool> = std::iter::once(false)
        .chain((0..HEADER.len()).map(is_number))
        .collect();
    let rows: Vec<Vec<String>> = s
        .tasks
        .iter()
        .flat_map(|t| {
            t.comparison.rows.iter().map(|r| {
                let mut row = vec![t.task.clone()];
                row.extend(cells(r));
                row
            })
        })
        .collect();
    let mut out = table::render(&header, &rows, &right);
    out.push('\n');
    for t in &s.tasks {
        let c = &t.comparison;
        let first = c.rows.first();
        out.push_str(&format!(
            "{}: {} rows in base, {} in new; {} only in base, {} only in new\n",
            t.task,
            c.base_rows,
            c.new_rows,
            first.map_or(0, |r| r.only_base),
            first.map_or(0, |r| r.only_new),
        ));
    }
    out.push_str(&format!(
        "{} task(s) compared; only in base: {}; only in new: {}\n",
        s.tasks.len(),
        listed(&s.only_base_tasks),
        listed(&s.only_new_tasks),
    ));
    match s.options.max_drop {
        None => out.push_str("gate: off (pass --max-drop to turn it on)\n"),
        Some(x) => {
            let failing = s.regressed_tasks();
            if failing.is_empty() {
                out.push_str(&format!("gate: passed (max drop {x})\n"));
            } else {
                let total: usize = failing.iter().map(|(_, n)| n).sum();
                let named: Vec<String> = failing
                    .iter()
                    .map(|(task, n)| format!("{task} ({n})"))
                    .collect();
                out.push_str(&format!(
                    "gate: FAILED, {total} comparison(s) regressed by more than {x} in {} task(s): {}\n",
                    failing.len(),
                    named.join(", ")
                ));
            }
        }
    }
    out
}
