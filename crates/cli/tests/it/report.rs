//! `evalscore report` in a real browser: two runs made by `evalscore run` on generated
//! data, the report of the new one against the baseline rendered by headless Chromium
//! (Debian's `chromium`, installed by scripts/test.sh). The test checks the DOM Chromium
//! dumps (the metric values, one `<svg>` per chart, text from the files escaped), that the
//! page logged nothing to the console and made no network request, and takes a screenshot.
//! A deliberately bad page proves that both checks do detect a script's console error and a
//! request.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

const TASK: &str = r#"
definition:
  scorers:
    - type: string_equals
      key: judge
      value: "{{ sample.label_pred }}"
      ground_truth: "{{ sample.label_gt }}"
      metrics:
        - {type: mean, field: is_correct, name: Agreement, group_by: [subject]}
        - type: binary-classification
          name: Judge
          field_gt: ground_truth
          field_pred: value
          positive_answer: "yes"
          negative_answer: "no"
        - {type: frequency, field: value, name: Predicted}
"#;

/// 120 rows; `flip` rows of the new run disagree where the baseline agreed. One predicted
/// label is markup, which the page must show as text.
fn input(path: &Path, flip: usize) -> Vec<(&'static str, &'static str)> {
    let mut rows = Vec::new();
    let subjects = ["algebra", "biology", "chemistry"];
    let mut s = String::new();
    for i in 0..120usize {
        let gt = if i % 3 == 0 { "no" } else { "yes" };
        let mut pred = if i % 7 == 0 {
            if gt == "yes" {
                "no"
            } else {
                "yes"
            }
        } else {
            gt
        };
        if i % 40 == 5 {
            pred = "<i>maybe</i>";
        }
        if flipped(i, flip) {
            pred = if gt == "yes" { "no" } else { "yes" };
        }
        rows.push((gt, pred));
        s.push_str(&serde_json::json!({
            "id": i, "subject": subjects[i % 3], "label_gt": gt, "label_pred": pred, "output": ""
        }).to_string());
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
    rows
}

/// Whether row `i` of a run with `flip` flips disagrees where the baseline agreed.
fn flipped(i: usize, flip: usize) -> bool {
    !i.is_multiple_of(7) && i % 40 != 5 && i % 4 == 1 && i < flip * 4
}

fn run(dir: &Path, name: &str, flip: usize) -> (PathBuf, Vec<(&'static str, &'static str)>) {
    let task = dir.join("task.yaml");
    std::fs::write(&task, TASK).unwrap();
    let data = dir.join(format!("{name}.jsonl"));
    let rows = input(&data, flip);
    let out = dir.join(name);
    succeeded(run_task(
        &task,
        &data,
        &out,
        &["--keep", "id,subject", "--quiet"],
    ));
    (out, rows)
}

struct Browser {
    dom: String,
    stderr: String,
    netlog: Value,
}

/// Chromium, headless, in a fresh profile, logging the console to stderr and the network
/// to a net-log; `extra` adds `--dump-dom` or `--screenshot=...`.
fn chromium(page: &Path, tmp: &Path, extra: &str) -> Browser {
    let profile = tempfile::tempdir_in(tmp).unwrap();
    let netlog = tmp.join(format!("net-{}.json", std::process::id()));
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2600",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium (scripts/test.sh installs Debian's chromium)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let netlog: Value = serde_json::from_str(&std::fs::read_to_string(&netlog).unwrap()).unwrap();
    Browser {
        dom: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
        netlog,
    }
}

/// The console messages Chromium logged (`INFO:CONSOLE...] "message", source: ...`).
fn console(b: &Browser) -> Vec<&str> {
    b.stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .collect()
}

/// The URLs the page itself requested: every request start in the net-log whose initiator
/// is an origin (the page's; the browser's own background requests, such as its component
/// updater, have none: "not an origin").
fn page_requests(b: &Browser) -> Vec<String> {
    let types = &b.netlog["constants"]["logEventTypes"];
    let start = types["URL_REQUEST_START_JOB"].as_u64().unwrap();
    b.netlog["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_u64() == Some(start))
        .filter(|e| e["params"]["initiator"].as_str() != Some("not an origin"))
        .filter_map(|e| e["params"]["url"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_deliberately_bad_page_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:{port}/x.png\">\
             <script>console.error(\"boom\")</script></body></html>"
        ),
    )
    .unwrap();
    let got = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    });
    let b = chromium(&page, tmp.path(), "--dump-dom");
    assert!(got.join().unwrap().starts_with("GET /x.png HTTP/1.1"));
    assert_eq!(
        page_requests(&b),
        [format!("http://127.0.0.1:{port}/x.png")]
    );
    let logged = console(&b);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(logged[0].contains("\"boom\""), "{logged:?}");

    // With the report's Content-Security-Policy, the request is refused (no request), and
    // the refusal is a console error.
    let csp = tmp.path().join("csp.html");
    std::fs::write(
        &csp,
        format!(
            "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" \
             content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"></head>\
             <body><img src=\"http://127.0.0.1:{port}/y.png\"></body></html>"
        ),
    )
    .unwrap();
    let b = chromium(&csp, tmp.path(), "--dump-dom");
    assert_eq!(page_requests(&b), Vec::<String>::new());
    let logged = console(&b);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(logged[0].contains("Content Security Policy"), "{logged:?}");
}

#[test]
fn the_report_renders_offline_with_every_chart() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, _) = run(tmp.path(), "base", 0);
    let (new, rows) = run(tmp.path(), "new", 8);
    let page = tmp.path().join("report.html");
    let o = succeeded(report_against(&new, &base, &page));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!("wrote {}\n", page.display())
    );
    let html = std::fs::read_to_string(&page).unwrap();
    for outside in ["<script", "<link", "@import", "url(", "src=", "href="] {
        assert!(!html.contains(outside), "the page holds {outside}");
    }

    let b = chromium(&page, tmp.path(), "--dump-dom");
    assert_eq!(console(&b), Vec::<&str>::new());
    assert_eq!(page_requests(&b), Vec::<String>::new());
    let dom = &b.dom;
    // One SVG per chart: agreement per subject, the frequency bars, the confusion heatmap,
    // and the forest plot of the comparison.
    assert_eq!(dom.matches("<svg").count(), 4, "{dom}");
    for kind in ["groups", "frequency", "confusion", "forest"] {
        assert_eq!(
            dom.matches(&format!("data-kind=\"{kind}\"")).count(),
            1,
            "{kind}"
        );
    }
    // The metric values, as metrics.parquet holds them.
    let m = read_parquet(&new.join("metrics.parquet"));
    let lines = metric_lines(&m);
    let subjects = strings(&m, "subject");
    let figure = |metric: &str, stat: &str| -> f64 {
        let i = lines
            .iter()
            .enumerate()
            .position(|(i, l)| {
                let p: Vec<&str> = l.split('|').collect();
                p[2] == metric && p[5] == stat && p[6] == "∅" && subjects[i].is_none()
            })
            .unwrap();
        lines[i].split('|').nth(7).unwrap().parse().unwrap()
    };
    let agreement = figure("Agreement", "value");
    let agree = rows.iter().filter(|(g, p)| g == p).count();
    assert_eq!(agreement, agree as f64 / 120.0);
    assert!(dom.contains(&format!(
        "<td class=\"num\">{agreement:.4}</td><td class=\"num\">[{:.4}, {:.4}]</td><td class=\"num\">120</td>",
        figure("Agreement", "ci_low"),
        figure("Agreement", "ci_high")
    )), "{dom}");
    let accuracy = figure("Judge", "accuracy");
    assert!(dom.contains(&format!(
        "<td>accuracy</td><td></td><td class=\"num\">{accuracy:.4}</td><td class=\"num\">[{:.4}, {:.4}]</td>",
        figure("Judge", "accuracy_ci_low"),
        figure("Judge", "accuracy_ci_high")
    )), "{dom}");
    // Markup from the data is text: escaped in the tables and in the SVG charts.
    assert!(!dom.contains("<i>maybe</i>"));
    assert!(dom.contains("&lt;i&gt;maybe&lt;/i&gt;"));
    // The comparison: the flipped rows went from pass to fail, listed by key.
    let keys: Vec<String> = (0..120)
        .filter(|i| flipped(*i, 8))
        .map(|i| i.to_string())
        .collect();
    assert_eq!(keys.len(), 6);
    assert!(
        dom.contains(&format!("<td class=\"keys\">6: {}</td>", keys.join(", "))),
        "{dom}"
    );

    let shot = tmp.path().join("report.png");
    chromium(
        &page,
        tmp.path(),
        &format!("--screenshot={}", shot.display()),
    );
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    if let Ok(keep) = std::env::var("EVALSCORE_REPORT_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// The part of `dom` from `start` to the next `end` after it.
fn section<'a>(dom: &'a str, start: &str, end: &str) -> &'a str {
    let from = dom
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in {dom}"));
    let rest = &dom[from..];
    &rest[..rest[start.len()..]
        .find(end)
        .map_or(rest.len(), |e| e + start.len())]
}

#[test]
fn the_report_shows_failing_rows_and_flipped_rows_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("task.yaml");
    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: string_equals\n      key: judge\n      value: \"{{ sample.pred }}\"\n      ground_truth: \"{{ sample.gt }}\"\n",
    )
    .unwrap();
    // 2,116 characters on two lines, with markup.
    let long = format!("<b>line one</b>\n{}", "x".repeat(2100));
    let write = |name: &str, fails: &[usize]| -> PathBuf {
        let rows: String = (0..30)
            .map(|i| {
                let pred = match (fails.contains(&i), i) {
                    (false, _) => "yes",
                    (true, 4) => long.as_str(),
                    (true, _) => "no",
                };
                serde_json::json!({"id": i, "gt": "yes", "pred": pred}).to_string() + "\n"
            })
            .collect();
        let data = tmp.path().join(format!("{name}.jsonl"));
        std::fs::write(&data, rows).unwrap();
        let out = tmp.path().join(name);
        succeeded(run_task(
            &task,
            &data,
            &out,
            &["--keep", "id,gt,pred", "--quiet"],
        ));
        out
    };
    let base = write("base", &[3, 10]);
    let new = write("new", &[3, 4, 7, 10]);
    let page = tmp.path().join("report.html");
    succeeded(report_against(&new, &base, &page));
    let b = chromium(&page, tmp.path(), "--dump-dom");
    assert_eq!(console(&b), Vec::<&str>::new());
    assert_eq!(page_requests(&b), Vec::<String>::new());
    let dom = &b.dom;

    // The new run's failing rows, in row order, the long text folded, cut and escaped.
    let failing = section(
        dom,
        "<table class=\"rows\" data-scorer=\"judge\">",
        "</table>",
    );
    let folded = format!(
        "<details><summary>&lt;b&gt;line one&lt;/b&gt;…</summary><pre>&lt;b&gt;line one&lt;/b&gt;\n{}</pre><span class=\"muted\">(116 more characters not shown)</span></details>",
        "x".repeat(2000 - 16)
    );
    let want_failing = format!(
        "<table class=\"rows\" data-scorer=\"judge\"><tbody><tr><th>id</th><th>gt</th><th>pred</th></tr>\n\
         <tr><td>3</td><td>yes</td><td>no</td></tr>\n\
         <tr><td>4</td><td>yes</td><td>{folded}</td></tr>\n\
         <tr><td>7</td><td>yes</td><td>no</td></tr>\n\
         <tr><td>10</td><td>yes</td><td>no</td></tr>\n</tbody>"
    );
    assert_eq!(failing, want_failing);

    // Rows 4 and 7 went from pass to fail: base and new side by side.
    let flipped = section(dom, "<table class=\"flipped\"", "</table>");
    let want_flipped = format!(
        "<table class=\"flipped\" data-column=\"judge__is_correct\"><tbody><tr><th>key</th><th>column</th><th>baseline</th><th>this run</th></tr>\n\
         <tr><td rowspan=\"3\">4</td><td>gt</td><td>yes</td><td>yes</td></tr>\n\
         <tr><td>pred</td><td>yes</td><td>{folded}</td></tr>\n\
         <tr><td>judge__is_correct</td><td>1.0</td><td>0.0</td></tr>\n\
         <tr><td rowspan=\"3\">7</td><td>gt</td><td>yes</td><td>yes</td></tr>\n\
         <tr><td>pred</td><td>yes</td><td>no</td></tr>\n\
         <tr><td>judge__is_correct</td><td>1.0</td><td>0.0</td></tr>\n</tbody>"
    );
    assert_eq!(flipped, want_flipped);
    assert!(
        dom.contains("<h4>judge__is_correct: pass → fail</h4>"),
        "{dom}"
    );
    assert!(!dom.contains("fail → pass</h4>"), "no row went up");
}

#[test]
fn the_report_draws_win_rates_rankings_and_reliability() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("task.yaml");
    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: value\n      key: battle\n      value: \"{{ sample.verdict }}\"\n      metrics:\n        - {type: win_rate, field: value}\n        - {type: bradley_terry, field: value, model_a: a, model_b: b, replicates: 20}\n        - {type: expected_calibration_error, field: conf, field_gt: truth, bins: 5}\n",
    )
    .unwrap();
    let models = ["m1", "m2", "m3"];
    let rows: String = (0..60usize)
        .map(|i| {
            let (a, b) = (models[i % 3], models[(i + 1 + i / 3 % 2) % 3]);
            let verdict = ["A", "B", "tie", "A"][i % 4];
            let conf = (i % 10) as f64 / 10.0 + 0.05;
            let truth = u8::from(i % 10 > 3);
            serde_json::json!({"verdict": verdict, "a": a, "b": b, "conf": conf, "truth": truth})
                .to_string()
                + "\n"
        })
        .collect();
    let data = tmp.path().join("battles.jsonl");
    std::fs::write(&data, rows).unwrap();
    let out = tmp.path().join("run");
    succeeded(run_task(&task, &data, &out, &["--quiet"]));
    let page = tmp.path().join("report.html");
    succeeded(
        evalscore()
            .arg("report")
            .arg(&out)
            .arg("-o")
            .arg(&page)
            .output()
            .unwrap(),
    );
    let b = chromium(&page, tmp.path(), "--dump-dom");
    assert_eq!(console(&b), Vec::<&str>::new());
    assert_eq!(page_requests(&b), Vec::<String>::new());
    for kind in ["win_rate", "ranking", "reliability"] {
        assert_eq!(
            b.dom.matches(&format!("data-kind=\"{kind}\"")).count(),
            1,
            "{kind}"
        );
    }
    assert_eq!(b.dom.matches("<svg").count(), 3, "{}", b.dom);
}

#[test]
fn a_suite_report_has_one_section_per_task() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, new) = crate::compare_suites::suites(tmp.path());
    let page = tmp.path().join("suite.html");
    let o = succeeded(report_against(&new, &base, &page));
    assert_eq!(stdout(&o), format!("wrote {}\n", page.display()));
    let html = std::fs::read_to_string(&page).unwrap();
    for outside in ["<script", "<link", "@import", "url(", "src=", "href="] {
        assert!(!html.contains(outside), "the page holds {outside}");
    }
    let b = chromium(&page, tmp.path(), "--dump-dom");
    assert_eq!(console(&b), Vec::<&str>::new());
    assert_eq!(page_requests(&b), Vec::<String>::new());
    let dom = &b.dom;

    // The new suite's tasks, with the verdicts of those the baseline also scored.
    assert_eq!(
        section(dom, "<table id=\"suite-tasks\">", "</table>"),
        "<table id=\"suite-tasks\">\n<tbody><tr><th>task</th><th>status</th><th>rows</th><th>in the baseline</th><th>regressed</th><th>improved</th><th>tied</th></tr>\n\
         <tr data-task=\"exact\"><td>exact</td><td>ok</td><td class=\"num\">20</td><td>yes</td><td class=\"num regressed\">1</td><td class=\"num\">0</td><td class=\"num\">0</td></tr>\n\
         <tr data-task=\"upper\"><td>upper</td><td>ok</td><td class=\"num\">20</td><td>yes</td><td class=\"num regressed\">1</td><td class=\"num\">0</td><td class=\"num\">0</td></tr>\n\
         <tr data-task=\"loose\"><td>loose</td><td>ok</td><td class=\"num\">20</td><td>yes</td><td class=\"num\">0</td><td class=\"num\">0</td><td class=\"num\">1</td></tr>\n\
         <tr data-task=\"fresh\"><td>fresh</td><td>ok</td><td class=\"num\">20</td><td>no</td><td class=\"num\">0</td><td class=\"num\">0</td><td class=\"num\">0</td></tr>\n\
         </tbody>"
    );
    assert!(
        dom.contains("<p id=\"only-baseline\">Tasks only in the baseline: legacy.</p>"),
        "{dom}"
    );

    // One section per task of the new suite, in its order, each with its own ids.
    let sections: Vec<&str> = dom
        .match_indices("<section class=\"task\"")
        .map(|(i, _)| section(&dom[i..], "<section", "</section>"))
        .collect();
    let heads: Vec<&str> = sections
        .iter()
        .map(|s| &s[..s.find('>').unwrap() + 1])
        .collect();
    assert_eq!(
        heads,
        [
            "<section class=\"task\" id=\"task=exact\" data-task=\"exact\">",
            "<section class=\"task\" id=\"task=upper\" data-task=\"upper\">",
            "<section class=\"task\" id=\"task=loose\" data-task=\"loose\">",
            "<section class=\"task\" id=\"task=fresh\" data-task=\"fresh\">",
        ]
    );
    for (s, name) in sections.iter().zip(["exact", "upper", "loose", "fresh"]) {
        assert!(s.contains(&format!("<h2>Task {name}</h2>")), "{s}");
        assert!(s.contains("<h3>Run</h3>"), "{s}");
        assert!(
            s.contains(&format!("<table id=\"task={name}:metrics\">")),
            "{s}"
        );
    }
    // The compared tasks: each its forest plot and its comparison's row; `fresh` has none.
    let compared = [
        ("exact", "-0.3000", "regressed", "6: 0, 1, 2, 3, 4, 5"),
        (
            "upper",
            "-0.4000",
            "regressed",
            "8: 10, 11, 12, 13, 14, 15, 16, 17",
        ),
        ("loose", "+0.0500", "tied", "1: 2"),
    ];
    for (s, (name, diff, verdict, flips)) in sections.iter().zip(compared) {
        assert_eq!(s.matches("data-kind=\"forest\"").count(), 1, "{name}");
        let table = section(
            s,
            &format!("<table id=\"task={name}:compare\">"),
            "</table>",
        );
        assert!(
            table.contains(&format!(
                "<td>{name}__is_correct</td><td>(all)</td><td class=\"num\">20</td>"
            )),
            "{table}"
        );
        assert!(
            table.contains(&format!("<td class=\"num\">{diff}</td>")),
            "{table}"
        );
        assert!(
            table.contains(&format!("<td class=\"{verdict}\">{verdict}</td>")),
            "{table}"
        );
        assert!(
            s.contains(&format!("<td class=\"keys\">{flips}</td>")),
            "{s}"
        );
        assert!(s.contains("<h3>Comparison with the baseline</h3>"), "{s}");
    }
    assert!(sections[3].contains(": not in the baseline suite</p>"));
    assert!(!sections[3].contains("Comparison with the baseline"));
    assert_eq!(dom.matches("<svg").count(), 3, "{dom}");
}
