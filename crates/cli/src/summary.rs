//! The run's summary on stdout: the metrics, each overall confusion matrix, and where the
//! outputs went.

use crate::table;
use evalscore_engine::RunSummary;
use std::collections::HashMap;

/// The groups of a metric row as `COL=VALUE` pairs, comma-separated (overall rows: empty).
fn group_text(columns: &[String], values: &[Option<String>]) -> String {
    columns
        .iter()
        .zip(values)
        .filter_map(|(c, v)| v.as_ref().map(|v| format!("{c}={v}")))
        .collect::<Vec<_>>()
        .join(",")
}

/// A confusion matrix's cells by (actual, predicted).
type Cells<'a> = HashMap<(&'a str, &'a str), u64>;

/// Most metric rows the stdout summary prints; the files keep every row.
const SUMMARY_ROWS: usize = 200;
/// Longest text a summary cell prints, in characters; longer labels are cut with `…`.
const SUMMARY_CELL: usize = 60;
/// Most classes a printed confusion matrix has.
const SUMMARY_CLASSES: usize = 20;

/// `text` cut to [`SUMMARY_CELL`] characters, for the stdout summary only.
fn cell(text: &str) -> String {
    match text.char_indices().nth(SUMMARY_CELL) {
        None => text.to_owned(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

/// The stdout summary: at most [`SUMMARY_ROWS`] metric rows and confusion matrices of at
/// most [`SUMMARY_CLASSES`] classes, cells cut to [`SUMMARY_CELL`] characters, with a note
/// for what is left out (the files hold everything). Linear in what it prints.
pub fn render(s: &RunSummary) -> String {
    let grouped = !s.group_columns.is_empty();
    let mut header = vec!["scorer", "metric", "field"];
    if grouped {
        header.push("group");
    }
    header.extend(["stat", "label", "value", "n"]);
    let mut right = vec![false; header.len()];
    let len = right.len();
    right[len - 2] = true;
    right[len - 1] = true;
    let rows: Vec<Vec<String>> = s
        .metrics
        .iter()
        .take(SUMMARY_ROWS)
        .map(|r| {
            let mut row = vec![cell(&r.scorer), cell(&r.metric), cell(&r.field)];
            if grouped {
                row.push(cell(&group_text(&s.group_columns, &r.groups)));
            }
            row.push(r.stat.clone());
            row.push(match &r.label {
                Some(l) if l.is_empty() => "\"\"".to_owned(),
                Some(l) => cell(l),
                None => String::new(),
            });
            row.push(r.value.map_or_else(|| "null".to_owned(), format_value));
            row.push(r.n.to_string());
            row
        })
        .collect();
    let mut out = table::render(&header, &rows, &right);
    if s.metrics.len() > SUMMARY_ROWS {
        out.push_str(&format!(
            "... {} more rows in metrics.parquet and metrics.json\n",
            s.metrics.len() - SUMMARY_ROWS
        ));
    }
    // Confusion matrices of the overall rows: actual down, predicted across. The cells of
    // each matrix are gathered in one pass, in order of first appearance.
    let mut matrices: Vec<((&str, &str), Cells<'_>)> = Vec::new();
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    for c in s
        .confusion
        .iter()
        .filter(|c| c.groups.iter().all(Option::is_none))
    {
        let id = (c.scorer.as_str(), c.metric.as_str());
        let i = *index.entry(id).or_insert_with(|| {
            matrices.push((id, HashMap::new()));
            matrices.len() - 1
        });
        *matrices[i]
            .1
            .entry((c.actual.as_str(), c.predicted.as_str()))
            .or_insert(0) += c.count;
    }
    for (id, cells) in &matrices {
        let mut classes: Vec<&str> = cells.keys().flat_map(|(a, p)| [*a, *p]).collect();
        classes.sort_unstable();
        classes.dedup();
        out.push_str(&format!(
            "\nconfusion matrix of {} / {}\n",
            cell(id.0),
            cell(id.1)
        ));
        if classes.len() > SUMMARY_CLASSES {
            out.push_str(&format!(
                "{} classes: too many to print; see confusion.parquet\n",
                classes.len()
            ));
            continue;
        }
        let mut header = vec!["actual \\ predicted".to_owned()];
        header.extend(classes.iter().map(|c| cell(c)));
        let rows: Vec<Vec<String>> = classes
            .iter()
            .map(|a| {
                let mut row = vec![cell(a)];
                for p in &classes {
                    row.push(cells.get(&(*a, *p)).copied().unwrap_or(0).to_string());
                }
                row
            })
            .collect();
        let mut right = vec![true; header.len()];
        right[0] = false;
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        out.push_str(&table::render(&header, &rows, &right));
    }
    out.push_str(&format!(
        "\n{} rows scored in {:.2}s; outputs in {}\n",
        s.rows,
        s.wall_seconds,
        s.out_dir.display()
    ));
    out
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.6}")
    }
}

/// A suite's summary: one line per task (status, rows, output folder; the metrics are in
/// each folder, a failure's error goes to stderr), then the tally.
pub fn render_suite(s: &evalscore_engine::SuiteSummary) -> String {
    let rows: Vec<Vec<String>> = s
        .tasks
        .iter()
        .map(|t| {
            let (status, rows) = match &t.result {
                Ok(r) => ("ok", r.rows.to_string()),
                Err(_) => ("failed", String::new()),
            };
            vec![
                t.name.clone(),
                status.to_owned(),
                rows,
                t.out_dir.display().to_string(),
            ]
        })
        .collect();
    let mut out = table::render(
        &["task", "status", "rows", "outputs"],
        &rows,
        &[false, false, true, false],
    );
    let failed = s.failed().count();
    out.push_str(&format!(
        "\n{} tasks ({} ok, {failed} failed) in {:.2}s; outputs in {}\n",
        s.tasks.len(),
        s.tasks.len() - failed,
        s.wall_seconds,
        s.out_dir.display()
    ));
    out
}
