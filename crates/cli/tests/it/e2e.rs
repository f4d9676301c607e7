//! End-to-end runs of the binary on the bundled examples: exact contents of all four outputs,
//! cross-checked against scores computed here independently from the input files.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

mod kept;
mod metrics;

fn run_ok(
    task: &str,
    inputs: &[&std::path::Path],
    out: &std::path::Path,
    extra: &[&str],
) -> String {
    let mut c = evalscore();
    c.arg("run").arg(examples().join(task));
    for i in inputs {
        c.arg("--input").arg(i);
    }
    c.arg("--out").arg(out).args(extra);
    stdout(&succeeded(c.output().expect("run")))
}

/// `run_ok` of an example task on one example input, into `out` of a new temporary folder.
fn run_example(task: &str, input: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let stdout = run_ok(task, &[&examples().join(input)], &out, extra);
    (dir, out, stdout)
}

#[test]
fn qa_parquet_all_outputs() {
    let (_dir, out, stdout) = run_example("qa.yaml", "qa.parquet", &[]);
    assert_eq!(files_in(&out), OUTPUT_FILES);

    // Independent expectation from the input.
    let input = read_parquet(&examples().join("qa.parquet"));
    let outputs = strings(&input, "output");
    let answers = strings(&input, "answer");
    let exact: Vec<f64> = outputs
        .iter()
        .zip(&answers)
        .map(|(o, a)| match (o, a) {
            (Some(o), Some(a)) if o == a => 1.0,
            _ => 0.0,
        })
        .collect();
    let lenient: Vec<f64> = outputs
        .iter()
        .zip(&answers)
        .map(|(o, a)| match (o, a) {
            (Some(o), Some(a)) if o.trim().to_lowercase() == *a => 1.0,
            _ => 0.0,
        })
        .collect();

    let scores = read_parquet(&out.join("scores.parquet"));
    assert_eq!(
        column_names(&scores),
        ["id", "exact__is_correct", "normalized__is_correct"]
    );
    assert_eq!(ints(&scores, "id"), (0..300).collect::<Vec<i64>>());
    let got: Vec<f64> = floats(&scores, "exact__is_correct")
        .into_iter()
        .map(|v| v.unwrap())
        .collect();
    assert_eq!(got, exact);
    let got: Vec<f64> = floats(&scores, "normalized__is_correct")
        .into_iter()
        .map(|v| v.unwrap())
        .collect();
    assert_eq!(got, lenient);
    // The README's edge rows: null output (3), "" (17), "Yes" (42), "yes " (99), " no" (100),
    // "sí" (200) all fail exact; "Yes", "yes " and " no" pass once trimmed and lowercased.
    for id in [3usize, 17, 42, 99, 100, 150, 199, 200, 299] {
        assert_eq!(exact[id], 0.0, "id {id}");
    }
    for id in [42usize, 99, 100, 150, 199] {
        assert_eq!(lenient[id], 1.0, "id {id}");
    }

    let n = exact.len() as f64;
    let acc = exact.iter().sum::<f64>() / n;
    let lacc = lenient.iter().sum::<f64>() / n;
    let sd = (exact.iter().map(|v| (v - acc).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let missing = outputs
        .iter()
        .zip(&answers)
        .filter(|(o, a)| o.is_none() || a.is_none())
        .count();
    assert_eq!(missing, 4);
    let metrics = read_parquet(&out.join("metrics.parquet"));
    assert_eq!(
        column_names(&metrics),
        words("scorer scorer_type metric metric_type field stat label value n run_id run_started_at labels")
    );
    let lines = metric_lines(&metrics);
    assert_eq!(
        lines[0],
        format!("exact|string_equals|Accuracy|mean|is_correct|value|∅|{acc}|300")
    );
    assert_eq!(acc, 0.78);
    // stderr = sample sd / sqrt(n); 0/1 scores get the Wilson interval (z for 95%).
    let stat = |i: usize| -> (String, f64) {
        let parts: Vec<&str> = lines[i].split('|').collect();
        (parts[5].to_owned(), parts[7].parse().unwrap())
    };
    let (name, se) = stat(1);
    assert_eq!(name, "stderr");
    assert!((se - sd / n.sqrt()).abs() < 1e-15);
    let z = 1.959_963_984_540_054_f64;
    let center = (acc + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (acc * (1.0 - acc) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    let (lo_name, lo) = stat(2);
    let (hi_name, hi) = stat(3);
    assert_eq!((lo_name.as_str(), hi_name.as_str()), ("ci_low", "ci_high"));
    assert!((lo - (center - half)).abs() < 1e-12 && (hi - (center + half)).abs() < 1e-12);
    let sd_line: Vec<&str> = lines[4].split('|').collect();
    assert_eq!(
        sd_line[..7],
        [
            "exact",
            "string_equals",
            "std_dev",
            "std_dev",
            "is_correct",
            "value",
            "∅"
        ]
    );
    assert!((sd_line[7].parse::<f64>().unwrap() - sd).abs() < 1e-12);
    assert_eq!(
        lines[5],
        "exact|string_equals|missing|missing|rows|count|∅|4|300"
    );
    assert_eq!(
        lines[6],
        format!("normalized|string_equals|Lenient accuracy|mean|is_correct|value|∅|{lacc}|300")
    );
    assert!(
        lines[7].contains("|stderr|")
            && lines[8].contains("|ci_low|")
            && lines[9].contains("|ci_high|")
    );
    // Frequency of the normalized value: labels in byte order, null last, count then proportion.
    let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
    let mut nulls = 0;
    for o in &outputs {
        match o {
            Some(o) => *counts.entry(o.trim().to_lowercase()).or_default() += 1,
            None => nulls += 1,
        }
    }
    let mut expected = Vec::new();
    for (k, c) in &counts {
        expected.push(format!(
            "normalized|string_equals|Answers|frequency|value|count|{k}|{c}|300"
        ));
        expected.push(format!(
            "normalized|string_equals|Answers|frequency|value|proportion|{k}|{}|300",
            *c as f64 / 300.0
        ));
    }
    expected.push(format!(
        "normalized|string_equals|Answers|frequency|value|count|∅|{nulls}|300"
    ));
    expected.push(format!(
        "normalized|string_equals|Answers|frequency|value|proportion|∅|{}|300",
        nulls as f64 / 300.0
    ));
    expected.push("normalized|string_equals|missing|missing|rows|count|∅|4|300".to_owned());
    assert_eq!(lines[10..], expected[..]);
    assert!(
        !lines.iter().any(|l| l.contains("|none|")),
        "null must never become the text none"
    );

    let mj = read_json(&out.join("metrics.json"));
    assert_eq!(mj["rows"], 300);
    assert_eq!(mj["scorers"][0]["key"], "exact");
    assert_eq!(mj["scorers"][0]["display_name"], "Exact match");
    assert_eq!(mj["scorers"][0]["purpose"], "score");
    assert_eq!(mj["scorers"][0]["missing"], 4);
    assert_eq!(mj["scorers"][0]["metrics"][0]["name"], "Accuracy");
    assert_eq!(mj["scorers"][0]["metrics"][0]["value"], 0.78);
    assert_eq!(mj["scorers"][0]["metrics"][0]["n"], 300);
    assert_eq!(mj["scorers"][1]["purpose"], "qa");
    assert_eq!(
        mj["scorers"][1]["metrics"][1]["figures"]
            .as_array()
            .unwrap()
            .len(),
        2 * counts.len() + 2
    );

    let rj = read_json(&out.join("run.json"));
    assert_eq!(rj["evalscore_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(rj["rows_scored"], 300);
    assert_eq!(rj["missing"]["exact"], 4);
    assert_eq!(rj["missing"]["normalized"], 4);
    assert_eq!(rj["inputs"][0]["rows"], 300);
    assert_eq!(rj["inputs"][0]["row_groups"], 3);
    assert_eq!(rj["inputs"][0]["format"], "parquet");
    assert_eq!(rj["inputs"][0]["footer_sha256"].as_str().unwrap().len(), 64);
    let task_text = std::fs::read(examples().join("qa.yaml")).unwrap();
    let sha: String = Sha256::digest(&task_text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(rj["task"]["sha256"], sha);
    assert!(rj["wall_seconds"].as_f64().unwrap() >= 0.0);
    assert!(rj["started_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(rj["warnings"], serde_json::json!([]));

    // The summary table.
    assert!(
        stdout.starts_with(
            "scorer      metric            field       stat        label     value    n\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "exact       Accuracy          is_correct  value              0.780000  300\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("300 rows scored in "), "{stdout}");
}

#[test]
fn jsonl_input_scores_like_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run_ok("qa.yaml", &[&examples().join("qa.parquet")], &a, &[]);
    run_ok("qa.yaml", &[&examples().join("qa.jsonl")], &b, &[]);
    let (sa, sb) = (
        read_parquet(&a.join("scores.parquet")),
        read_parquet(&b.join("scores.parquet")),
    );
    assert_eq!(
        floats(&sa, "exact__is_correct"),
        floats(&sb, "exact__is_correct")
    );
    assert_eq!(
        floats(&sa, "normalized__is_correct"),
        floats(&sb, "normalized__is_correct")
    );
    let (ma, mb) = (
        read_parquet(&a.join("metrics.parquet")),
        read_parquet(&b.join("metrics.parquet")),
    );
    assert_eq!(metric_lines(&ma), metric_lines(&mb));
}

#[test]
fn mcqa_edge_rows_and_choice_sources() {
    let (_dir, out, _) = run_example("mcqa.yaml", "mcqa.parquet", &["--keep", "id,subject"]);
    let s = read_parquet(&out.join("scores.parquet"));
    assert_eq!(
        column_names(&s),
        [
            "id",
            "subject",
            "string_equals_mcqa__is_correct",
            "string_equals_mcqa__completion_validity",
            "mcqa_json__is_correct",
            "mcqa_json__completion_validity",
            "mcqa_fixed__is_correct",
            "mcqa_fixed__completion_validity"
        ]
    );
    let input = read_parquet(&examples().join("mcqa.parquet"));
    assert_eq!(strings(&s, "subject"), strings(&input, "subject"));
    let outputs = strings(&input, "output");
    let answers = strings(&input, "answer");
    let choices_json = strings(&input, "choices_json");
    let list_scores = floats(&s, "string_equals_mcqa__is_correct");
    let list_valid = strings(&s, "string_equals_mcqa__completion_validity");
    // The list column and the JSON string column hold the same choices: same results.
    assert_eq!(list_scores, floats(&s, "mcqa_json__is_correct"));
    assert_eq!(list_valid, strings(&s, "mcqa_json__completion_validity"));
    // Independent check of every row.
    for i in 0..300 {
        let first = outputs[i].as_deref().and_then(|o| o.chars().next());
        let set: Option<Vec<char>> = choices_json[i].as_deref().map(|j| {
            serde_json::from_str::<Vec<String>>(j)
                .unwrap()
                .iter()
                .map(|c| c.chars().next().unwrap())
                .collect()
        });
        let valid = matches!((first, &set), (Some(c), Some(s)) if s.contains(&c));
        let correct = valid && first.map(String::from) == answers[i];
        assert_eq!(
            list_valid[i].as_deref(),
            Some(if valid { "VALID" } else { "INVALID" }),
            "row {i}"
        );
        assert_eq!(
            list_scores[i],
            Some(if correct { 1.0 } else { 0.0 }),
            "row {i}"
        );
    }
    let expect = |id: usize, valid: &str, score: f64| {
        assert_eq!(list_valid[id].as_deref(), Some(valid), "id {id}");
        assert_eq!(list_scores[id], Some(score), "id {id}");
    };
    expect(4, "INVALID", 0.0); // null output
    expect(19, "INVALID", 0.0); // ""
    expect(33, "INVALID", 0.0); // " C": a space is not a choice
    expect(50, "VALID", 1.0); // "B. because"
    expect(99, "INVALID", 0.0); // "b"
    expect(100, "VALID", 1.0); // "D) the answer"
    expect(120, "INVALID", 0.0); // "É"
    expect(150, "INVALID", 0.0); // "日本"
    expect(199, "INVALID", 0.0); // "🙂 A"
    expect(210, "INVALID", 0.0); // "D" with choices [A, B, C]
    expect(250, "VALID", 1.0);
    // Fixed choices [A, B, C, D]: "D" on row 210 is valid (and wrong).
    let fixed_valid = strings(&s, "mcqa_fixed__completion_validity");
    assert_eq!(fixed_valid[210].as_deref(), Some("VALID"));
    assert_eq!(floats(&s, "mcqa_fixed__is_correct")[210], Some(0.0));

    let m: Vec<String> = metric_lines(&read_parquet(&out.join("metrics.parquet")))
        .into_iter()
        .filter(|l| !l.contains("|stderr|") && !l.contains("|ci_low|") && !l.contains("|ci_high|"))
        .collect();
    let acc = list_scores.iter().map(|v| v.unwrap()).sum::<f64>() / 300.0;
    let invalid = list_valid
        .iter()
        .filter(|v| v.as_deref() == Some("INVALID"))
        .count();
    assert_eq!(
        m[0],
        format!(
            "string_equals_mcqa|string_equals_mcqa|MCQA Accuracy|mean|is_correct|value|∅|{acc}|300"
        )
    );
    assert_eq!(m[1], format!("string_equals_mcqa|string_equals_mcqa|frequency|frequency|completion_validity|count|INVALID|{invalid}|300"));
    assert_eq!(m[3], format!("string_equals_mcqa|string_equals_mcqa|frequency|frequency|completion_validity|count|VALID|{}|300", 300 - invalid));
    assert!(
        m.contains(&"mcqa_fixed|string_equals_mcqa|min|min|is_correct|value|∅|0|300".to_owned())
    );
    assert!(
        m.contains(&"mcqa_fixed|string_equals_mcqa|max|max|is_correct|value|∅|1|300".to_owned())
    );
}

#[test]
fn set_overrides_config_and_output_column_is_configurable() {
    // Score the answer column against itself via --set: every row with an answer is correct.
    let (_dir, out, _) = run_example(
        "mcqa.yaml",
        "mcqa.parquet",
        &[
            "--set",
            "answer_column=answer",
            "--output-column",
            "answer",
            "--keep",
            "id",
        ],
    );
    let s = read_parquet(&out.join("scores.parquet"));
    let input = read_parquet(&examples().join("mcqa.parquet"));
    let answers = strings(&input, "answer");
    let fixed = floats(&s, "mcqa_fixed__is_correct");
    for i in 0..300 {
        assert_eq!(
            fixed[i],
            Some(if answers[i].is_some() { 1.0 } else { 0.0 }),
            "row {i}"
        );
    }
}

#[test]
fn directory_and_repeated_inputs_keep_input_order() {
    let dir = folder(&[("in/notes.txt", "not an input")]);
    let inputs = dir.path().join("in");
    std::fs::copy(examples().join("qa.parquet"), inputs.join("b.parquet")).unwrap();
    std::fs::copy(examples().join("qa.parquet"), inputs.join("a.parquet")).unwrap();
    let out = dir.path().join("out");
    let stdout = run_ok(
        "qa.yaml",
        &[&inputs, &examples().join("qa.parquet")],
        &out,
        &["--threads", "3"],
    );
    let s = read_parquet(&out.join("scores.parquet"));
    let ids = ints(&s, "id");
    let expected: Vec<i64> = (0..3).flat_map(|_| 0..300).collect();
    assert_eq!(ids, expected);
    assert!(stdout.contains("900 rows scored"));
    let rj = read_json(&out.join("run.json"));
    let paths = input_paths(&rj);
    assert!(
        paths[0].ends_with("a.parquet")
            && paths[1].ends_with("b.parquet")
            && paths[2].ends_with("qa.parquet"),
        "{paths:?}"
    );
    assert_eq!(rj["threads"], 3);
}

#[test]
fn overwrite_replaces_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    run_ok("qa.yaml", &[&examples().join("qa.parquet")], &out, &[]);
    run_ok(
        "mcqa.yaml",
        &[&examples().join("mcqa.parquet")],
        &out,
        &["--overwrite"],
    );
    let s = read_parquet(&out.join("scores.parquet"));
    assert!(column_names(&s).contains(&"mcqa_fixed__is_correct".to_owned()));
    assert_eq!(files_in(&out), OUTPUT_FILES);
}
