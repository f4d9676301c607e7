//! `evalscore report`: one self-contained HTML page of a run folder, and with a baseline,
//! of the comparison. run.json and metrics.json are read as plain JSON, so fields a run
//! adds later (`run_id`, `labels`, `judge`, ...) show up when present and are skipped when
//! absent. A suite's folder (its suite.json) gets one section per task (module `report_suite`;
//! module `page` picks the page).

use crate::charts::{self, Bar, Forest};
use crate::compare::{compare, CompareOptions, Comparison};
use crate::error::CompareError;
use crate::row_samples;
use crate::runs::run_file;
use evalscore_error::Error;
use evalscore_outdir::OutDir;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    pub run: PathBuf,
    pub baseline: Option<PathBuf>,
    /// The key that pairs rows with the baseline (default `id`).
    pub key: Vec<String>,
    /// How the page names the run and the baseline, when not by their folders (runs read
    /// back from Delta tables: `ROOT, run RUN_ID`); a suite's page names its tasks.
    pub names: Option<(String, String)>,
}

/// The page, and the parts it includes: a run's (once for a run, per task for a suite) and a
/// suite's.
const TEMPLATES: [(&str, &str); 3] = [
    ("report.html", include_str!("report.html.j2")),
    ("report_run.html", include_str!("report_run.html.j2")),
    ("report_suite.html", include_str!("report_suite.html.j2")),
];

pub(crate) fn read_json(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| CompareError::ReadJson {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(
        serde_json::from_str(&text).map_err(|source| CompareError::InvalidJson {
            path: path.to_path_buf(),
            source,
        })?,
    )
}

fn chart_error(e: String) -> Error {
    CompareError::Internal(format!("drawing a chart: {e}")).into()
}

/// A figure's number, or None.
fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// `{"subject": "algebra"}` as `subject=algebra`.
fn group_text(g: &Value) -> String {
    match g {
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The stat whose interval is given by the two named stats, e.g. `value` by `ci_low` and
/// `ci_high`, `accuracy` by `accuracy_ci_low` and `accuracy_ci_high`.
fn interval_of(stat: &str) -> (String, String) {
    if stat == "value" {
        ("ci_low".to_owned(), "ci_high".to_owned())
    } else {
        (format!("{stat}_ci_low"), format!("{stat}_ci_high"))
    }
}

fn is_bound(stat: &str) -> bool {
    stat == "ci_low" || stat == "ci_high" || stat.ends_with("_ci_low") || stat.ends_with("_ci_high")
}

/// Figures of one metric, by (group text, label, stat).
type Figures = BTreeMap<(String, Option<String>, String), (Option<f64>, Option<u64>)>;

fn figures(metric: &Value) -> (Figures, Vec<String>) {
    let mut out = Figures::new();
    let mut groups: Vec<String> = Vec::new();
    for f in metric["figures"].as_array().into_iter().flatten() {
        let g = group_text(&f["group"]);
        if !g.is_empty() && !groups.contains(&g) {
            groups.push(g.clone());
        }
        out.insert(
            (
                g,
                f["label"].as_str().map(str::to_owned),
                f["stat"].as_str().unwrap_or_default().to_owned(),
            ),
            (num(&f["value"]), f["n"].as_u64()),
        );
    }
    (out, groups)
}

/// The page's context and charts for one run.
pub(crate) fn run_context(dir: &Path, charts_out: &mut Vec<Value>) -> Result<Value, Error> {
    let run = read_json(&run_file(dir, "run.json", "report's")?)?;
    let metrics = read_json(&run_file(dir, "metrics.json", "report's")?)?;
    let mut metric_rows = Vec::new();
    let mut scorers = Vec::new();
    for s in metrics["scorers"].as_array().into_iter().flatten() {
        let key = s["key"].as_str().unwrap_or_default();
        scorers.push(json!({
            "key": key,
            "type": s["type"],
            "rows": s["rows"],
            "missing": s["missing"],
            "row_errors": s["row_errors"],
        }));
        for m in s["metrics"].as_array().into_iter().flatten() {
            let name = m["name"].as_str().unwrap_or_default();
            let mtype = m["type"].as_str().unwrap_or_default();
            let (figs, groups) = figures(m);
            // Overall figures with their intervals.
            for ((g, label, stat), (value, n)) in &figs {
                if !g.is_empty() || is_bound(stat) {
                    continue;
                }
                let (lo, hi) = interval_of(stat);
                let bound = |b: &str| {
                    figs.get(&(String::new(), label.clone(), b.to_owned()))
                        .and_then(|v| v.0)
                };
                metric_rows.push(json!({
                    "scorer": key,
                    "metric": name,
                    "type": mtype,
                    "field": m["field"],
                    "stat": stat,
                    "label": label,
                    "value": value.map(fmt),
                    "ci_low": bound(&lo).map(fmt),
                    "ci_high": bound(&hi).map(fmt),
                    "n": n,
                }));
            }
            // Per-group bars with whiskers: the metric's headline stat in each group.
            if !groups.is_empty() {
                let stat = ["value", "accuracy", "f1_score"]
                    .into_iter()
                    .find(|s| figs.contains_key(&(groups[0].clone(), None, (*s).to_owned())));
                if let Some(stat) = stat {
                    let (lo, hi) = interval_of(stat);
                    let bars: Vec<Bar> = groups
                        .iter()
                        .filter_map(|g| {
                            let get = |s: &str| {
                                figs.get(&(g.clone(), None, s.to_owned())).and_then(|v| v.0)
                            };
                            get(stat).map(|value| Bar {
                                label: g.clone(),
                                value,
                                interval: get(&lo).zip(get(&hi)),
                            })
                        })
                        .collect();
                    let title = format!("{key} / {name}: {stat} per group");
                    let svg = charts::bars(&title, stat, &bars).map_err(chart_error)?;
                    charts_out.push(json!({"title": title, "kind": "groups", "svg": svg}));
                }
            }
            // Frequency bars (overall counts per label).
            if mtype == "frequency" {
                let bars: Vec<Bar> = figs
                    .iter()
                    .filter(|((g, _, stat), _)| g.is_empty() && stat == "count")
                    .map(|((_, label, _), (v, _))| Bar {
                        label: label.clone().unwrap_or_else(|| "(null)".to_owned()),
                        value: v.unwrap_or(0.0),
                        interval: None,
                    })
                    .collect();
                let title = format!("{key} / {name}: frequency");
                let svg = charts::bars(&title, "count", &bars).map_err(chart_error)?;
                charts_out.push(json!({"title": title, "kind": "frequency", "svg": svg}));
            }
            judging_chart(key, name, mtype, &figs, groups.is_empty(), charts_out)?;
            // Confusion heatmap (overall cells).
            if let Some(cells) = m["confusion"].as_array() {
                let overall: Vec<&Value> = cells
                    .iter()
                    .filter(|c| group_text(&c["group"]).is_empty())
                    .collect();
                let mut classes: Vec<String> = overall
                    .iter()
                    .flat_map(|c| [c["actual"].as_str(), c["predicted"].as_str()])
                    .flatten()
                    .map(str::to_owned)
                    .collect();
                classes.sort();
                classes.dedup();
                if !classes.is_empty() {
                    let k = classes.len();
                    let mut counts = vec![vec![0u64; k]; k];
                    for c in overall {
                        let a = classes
                            .iter()
                            .position(|x| Some(x.as_str()) == c["actual"].as_str());
                        let p = classes
                            .iter()
                            .position(|x| Some(x.as_str()) == c["predicted"].as_str());
                        if let (Some(a), Some(p)) = (a, p) {
                            counts[a][p] += c["count"].as_u64().unwrap_or(0);
                        }
                    }
                    let title = format!("{key} / {name}: confusion matrix");
                    let svg = charts::heatmap(&title, &classes, &counts).map_err(chart_error)?;
                    charts_out.push(json!({"title": title, "kind": "confusion", "svg": svg}));
                }
            }
        }
    }
    // Judge statistics: an object per model, shown as a table whatever its fields.
    let judge = match &run["judge"] {
        Value::Object(models) if models.values().all(Value::is_object) => {
            let mut columns: Vec<String> = Vec::new();
            for stats in models.values().filter_map(Value::as_object) {
                for k in stats.keys() {
                    if !columns.contains(k) {
                        columns.push(k.clone());
                    }
                }
            }
            let rows: Vec<Value> = models
                .iter()
                .map(|(model, stats)| {
                    let cells: Vec<String> =
                        columns.iter().map(|c| cell(&stats[c.as_str()])).collect();
                    json!({"model": model, "cells": cells})
                })
                .collect();
            json!({"columns": columns, "rows": rows})
        }
        Value::Null => Value::Null,
        other => json!({"raw": serde_json::to_string_pretty(other).unwrap_or_default()}),
    };
    let labels: Vec<Value> = match &run["labels"] {
        Value::Object(m) => m.iter().map(|(k, v)| json!([k, cell(v)])).collect(),
        Value::Array(a) => a.iter().map(|v| json!(["", cell(v)])).collect(),
        Value::Null => Vec::new(),
        other => vec![json!(["", cell(other)])],
    };
    let inputs: Vec<Value> = run["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| json!({"path": cell(&i["path"]), "format": cell(&i["format"]), "rows": cell(&i["rows"])}))
        .collect();
    Ok(json!({
        "dir": dir.display().to_string(),
        "task": cell(&run["task"]["path"]),
        "task_sha256": cell(&run["task"]["sha256"]),
        "version": cell(&run["evalscore_version"]),
        "run_id": run.get("run_id").map(cell),
        "labels": labels,
        "inputs": inputs,
        "rows": cell(&run["rows_scored"]),
        "started_at": cell(&run["started_at"]),
        "finished_at": cell(&run["finished_at"]),
        "wall_seconds": run["wall_seconds"].as_f64().map(|s| format!("{s:.2}")),
        "threads": cell(&run["threads"]),
        "warnings": run["warnings"],
        "row_error_count": cell(&run["row_error_count"]),
        "row_errors": run["row_errors"],
        "scorers": scorers,
        "metrics": metric_rows,
        "judge": judge,
    }))
}

/// The chart of a pairwise or judging metric: a win rate with its interval against 0.5 (overall;
/// grouped win rates are drawn per group above), Bradley-Terry ratings ranked with their
/// intervals, a calibration error's reliability diagram.
fn judging_chart(
    key: &str,
    name: &str,
    mtype: &str,
    figs: &Figures,
    overall_only: bool,
    charts_out: &mut Vec<Value>,
) -> Result<(), Error> {
    let get = |label: &Option<String>, stat: &str| {
        figs.get(&(String::new(), label.clone(), stat.to_owned()))
            .and_then(|v| v.0)
    };
    let labels = |stat: &str| -> Vec<Option<String>> {
        figs.keys()
            .filter(|(g, l, s)| g.is_empty() && l.is_some() && s == stat)
            .map(|(_, l, _)| l.clone())
            .collect()
    };
    let (title, kind, svg) = match mtype {
        "win_rate" if overall_only => {
            let Some(value) = get(&None, "value") else {
                return Ok(());
            };
            let row = Forest {
                label: "A against B".to_owned(),
                diff: value,
                interval: get(&None, "ci_low").zip(get(&None, "ci_high")),
            };
            let title = format!("{key} / {name}: win rate of A");
            // Against the line of an even match.
            let svg =
                charts::points(&title, "win rate of A", &[row], Some(0.5)).map_err(chart_error)?;
            (title, "win_rate", svg)
        }
        "bradley_terry" => {
            let mut rows: Vec<Forest> = labels("rating")
                .into_iter()
                .filter_map(|l| {
                    Some(Forest {
                        label: l.clone()?,
                        diff: get(&l, "rating")?,
                        interval: get(&l, "ci_low").zip(get(&l, "ci_high")),
                    })
                })
                .collect();
            if rows.is_empty() {
                return Ok(());
            }
            rows.sort_by(|a, b| b.diff.total_cmp(&a.diff));
            let title = format!("{key} / {name}: ratings");
            let svg =
                charts::points(&title, "Elo rating", &rows, Some(1000.0)).map_err(chart_error)?;
            (title, "ranking", svg)
        }
        "expected_calibration_error" => {
            let mut bins: Vec<charts::Bin> = labels("bin_accuracy")
                .into_iter()
                .filter_map(|l| {
                    let rows = figs
                        .get(&(String::new(), l.clone(), "bin_accuracy".to_owned()))?
                        .1?;
                    Some(charts::Bin {
                        accuracy: get(&l, "bin_accuracy")?,
                        confidence: get(&l, "bin_confidence")?,
                        rows,
                    })
                })
                .collect();
            if bins.is_empty() {
                return Ok(());
            }
            bins.sort_by(|a, b| a.confidence.total_cmp(&b.confidence));
            let title = format!("{key} / {name}: reliability");
            let svg = charts::reliability(&title, &bins).map_err(chart_error)?;
            (title, "reliability", svg)
        }
        _ => return Ok(()),
    };
    charts_out.push(json!({"title": title, "kind": kind, "svg": svg}));
    Ok(())
}

/// A JSON value as table text: strings bare, null empty.
pub(crate) fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => fmt(f),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// A figure as the page prints it: integers whole, others to 4 significant decimals.
fn fmt(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

pub(crate) fn compare_context(
    c: &Comparison,
    run: &Path,
    charts_out: &mut Vec<Value>,
) -> Result<Value, Error> {
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            let f = |v: Option<f64>| v.map(fmt);
            let p = |v: Option<f64>| v.map(crate::output::p_text);
            json!({
                "column": r.column,
                "group": r.group,
                "n_pairs": r.n_pairs,
                "base_mean": f(r.base_mean),
                "new_mean": f(r.new_mean),
                "diff": r.diff.map(|d| format!("{d:+.4}")),
                "ci_low": f(r.ci_low),
                "ci_high": f(r.ci_high),
                "p_value": p(r.p_value),
                "p_value_holm": p(r.p_value_holm),
                "test": r.test,
                "pass_to_fail": r.pass_to_fail,
                "fail_to_pass": r.fail_to_pass,
                "verdict": r.verdict,
            })
        })
        .collect();
    let forest: Vec<Forest> = c
        .rows
        .iter()
        .filter_map(|r| {
            r.diff.map(|diff| Forest {
                label: match &r.group {
                    Some(g) => format!("{} [{g}]", r.column),
                    None => r.column.clone(),
                },
                diff,
                interval: r.ci_low.zip(r.ci_high),
            })
        })
        .collect();
    let title = "difference new − base, with intervals".to_owned();
    let svg = charts::forest(&title, &forest).map_err(chart_error)?;
    charts_out.push(json!({"title": title, "kind": "forest", "svg": svg}));
    let flips: Vec<Value> = c
        .rows
        .iter()
        .filter(|r| r.group.is_none())
        .map(|r| {
            json!({
                "column": r.column,
                "pass_to_fail": r.pass_to_fail,
                "fail_to_pass": r.fail_to_pass,
                "pass_to_fail_keys": r.pass_to_fail_keys.iter().map(cell).collect::<Vec<_>>(),
                "fail_to_pass_keys": r.fail_to_pass_keys.iter().map(cell).collect::<Vec<_>>(),
            })
        })
        .collect();
    let listed: Vec<(String, Vec<Value>, Vec<Value>)> = c
        .rows
        .iter()
        .filter(|r| r.group.is_none())
        .map(|r| {
            (
                r.column.clone(),
                r.pass_to_fail_keys.clone(),
                r.fail_to_pass_keys.clone(),
            )
        })
        .collect();
    let flipped = row_samples::flipped_rows(&c.options.base, run, &c.options.key, &listed)?;
    Ok(json!({
        "base": c.options.base.display().to_string(),
        "flipped": flipped,
        "confidence": c.options.confidence,
        "rows": rows,
        "flips": flips,
        "only_base": c.rows.iter().find(|r| r.group.is_none()).map_or(0, |r| r.only_base),
        "only_new": c.rows.iter().find(|r| r.group.is_none()).map_or(0, |r| r.only_new),
        "only_base_keys": c.only_base_keys.iter().map(cell).collect::<Vec<_>>(),
        "only_new_keys": c.only_new_keys.iter().map(cell).collect::<Vec<_>>(),
    }))
}

/// The report's HTML of a run (and of its comparison with a baseline run); a suite's is
/// made by [`crate::page::report`].
pub(crate) fn run_report(o: &ReportOptions) -> Result<String, Error> {
    let mut charts = Vec::new();
    let run = run_context(&o.run, &mut charts)?;
    let mut run_charts: Vec<Value> = std::mem::take(&mut charts);
    let comparison = match &o.baseline {
        None => Value::Null,
        Some(base) => {
            let mut opts = CompareOptions::new(base, &o.run);
            opts.key = o.key.clone();
            let c = compare(&opts)?;
            compare_context(&c, &o.run, &mut charts)?
        }
    };
    let (mut run, mut comparison) = (run, comparison);
    if let Some((run_name, base_name)) = &o.names {
        run["dir"] = json!(run_name);
        if let Some(c) = comparison.as_object_mut() {
            c.insert("base".to_owned(), json!(base_name));
        }
    }
    let mut ctx = Map::new();
    ctx.insert("title".to_owned(), run["task"].clone());
    ctx.insert("run".to_owned(), run);
    ctx.insert(
        "charts".to_owned(),
        Value::Array(std::mem::take(&mut run_charts)),
    );
    ctx.insert("compare".to_owned(), comparison);
    ctx.insert("failing".to_owned(), failing(&o.run)?);
    ctx.insert("rows_shown".to_owned(), json!(row_samples::ROWS_SHOWN));
    ctx.insert("compare_charts".to_owned(), Value::Array(charts));
    render(ctx)
}

/// The failing rows of the run in `dir`, for the page.
pub(crate) fn failing(dir: &Path) -> Result<Value, Error> {
    Ok(serde_json::to_value(row_samples::failing_rows(dir)?)
        .map_err(|e| CompareError::Internal(format!("the failing rows as JSON: {e}")))?)
}

/// The page for the context `ctx`.
pub(crate) fn render(ctx: Map<String, Value>) -> Result<String, Error> {
    let mut env = minijinja::Environment::new();
    // Every value from the files is escaped; the charts (built here, their text escaped by
    // the SVG backend) are the only markup inserted as is.
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    let template = |e: minijinja::Error| CompareError::InternalCause {
        what: "report template",
        source: Box::new(e),
    };
    for (name, text) in TEMPLATES {
        env.add_template(name, text).map_err(template)?;
    }
    let tmpl = env.get_template("report.html").map_err(template)?;
    Ok(tmpl
        .render(minijinja::value::Serde(Value::Object(ctx)))
        .map_err(|e| CompareError::InternalCause {
            what: "rendering the report",
            source: Box::new(e),
        })?)
}

/// Writes the report to `path` like every evalscore output: staged in the same folder,
/// refused when present unless `overwrite`, renamed into place.
pub fn write_report(html: &str, path: &Path, overwrite: bool) -> Result<(), Error> {
    let name =
        path.file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| CompareError::NotAFileName {
                path: path.to_path_buf(),
            })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let out = OutDir::prepare(dir, &[name], overwrite)?;
    out.write_bytes(0, html.as_bytes())?;
    out.commit()
}
