//! One text per value on the bundled data: a 0/1 field reads the same on both sides of a
//! classification metric and in `frequency`, answers in any spelling of a value agree, and a
//! metric that excludes most rows warns on stderr and in run.json.
#![allow(clippy::unwrap_used)]

use crate::common::*;

/// The exact-match scores of the qa example: (rows scored 0.0, rows scored 1.0).
fn exact_counts() -> (u64, u64) {
    let input = read_parquet(&examples().join("qa.parquet"));
    let (outputs, answers) = (strings(&input, "output"), strings(&input, "answer"));
    let ones = outputs
        .iter()
        .zip(&answers)
        .filter(|(o, a)| o.is_some() && o == a)
        .count() as u64;
    (input.num_rows() as u64 - ones, ones)
}

fn run_qa(task: &str) -> (Case, String) {
    let c = Case::new().task(task);
    let input = examples().join("qa.parquet");
    let (code, stdout, stderr) = c.run(&["t.yaml", "--input", input.to_str().unwrap()]);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {stderr}");
    (c, stderr)
}

/// (metric, actual, predicted, count) rows of confusion.parquet.
fn cells(c: &Case) -> Vec<(String, String, String, u64)> {
    let t = read_parquet(&c.path("out/confusion.parquet"));
    let (m, a, p, n) = (
        strings(&t, "metric"),
        strings(&t, "actual"),
        strings(&t, "predicted"),
        uints(&t, "count"),
    );
    (0..t.num_rows())
        .map(|i| {
            (
                m[i].clone().unwrap(),
                a[i].clone().unwrap(),
                p[i].clone().unwrap(),
                n[i],
            )
        })
        .collect()
}

/// `is_correct` compared with itself has accuracy 1, two classes
/// `0.0` and `1.0` (the labels `frequency` counts), and a diagonal confusion matrix.
#[test]
fn a_field_compared_with_itself_has_accuracy_one_and_two_classes() {
    let (c, stderr) = run_qa(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: multiclass-classification, field_gt: is_correct, field_pred: is_correct}\n        - {type: frequency, field: is_correct}\n",
    );
    assert_eq!(stderr, "");
    let (zeros, ones) = exact_counts();
    assert_eq!((zeros, ones), (66, 234));
    let m = read_parquet(&c.path("out/metrics.parquet"));
    let lines = metric_lines(&m);
    let pick = |stat: &str| -> Vec<&String> {
        lines
            .iter()
            .filter(|l| l.contains(&format!("|{stat}|")))
            .collect()
    };
    let mc = "string_equals|string_equals|multiclass-classification|multiclass-classification|is_correct,is_correct";
    assert_eq!(pick("accuracy"), [&format!("{mc}|accuracy|∅|1|300")]);
    assert_eq!(
        pick("support"),
        [
            &format!("{mc}|support|∅|300|300"),
            &format!("{mc}|support|0|66|300"),
            &format!("{mc}|support|1|234|300"),
        ]
    );
    let freq = "string_equals|string_equals|frequency|frequency|is_correct";
    assert_eq!(
        pick("count"),
        [
            &format!("{freq}|count|0|66|300"),
            &format!("{freq}|count|1|234|300"),
            &"string_equals|string_equals|missing|missing|rows|count|∅|4|300".to_owned(),
        ]
    );
    let mc = "multiclass-classification".to_owned();
    assert_eq!(
        cells(&c),
        [
            (mc.clone(), "0".into(), "0".into(), 66),
            (mc, "1".into(), "1".into(), 234),
        ]
    );
    let run = read_json(&c.path("out/run.json"));
    assert_eq!(run["warnings"], serde_json::json!([]));
}

/// `positive_answer: "1"`, `"1.0"` and `"true"` on a 0/1 field give the same figures and
/// cells.
#[test]
fn answers_spelled_one_one_point_zero_or_true_agree() {
    let metric = |name: &str, pos: &str, neg: &str| {
        format!("        - {{type: binary-classification, name: {name}, field_gt: is_correct, field_pred: is_correct, positive_answer: \"{pos}\", negative_answer: \"{neg}\"}}\n")
    };
    let task = format!(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{{{ sample.answer }}}}\"\n      metrics:\n{}{}{}",
        metric("a", "1", "0"),
        metric("b", "1.0", "0.0"),
        metric("c", "true", "false"),
    );
    let (c, stderr) = run_qa(&task);
    assert_eq!(stderr, "");
    let m = read_parquet(&c.path("out/metrics.parquet"));
    let by = |name: &str| -> Vec<String> {
        let tag = format!("|{name}|binary-classification|");
        metric_lines(&m)
            .into_iter()
            .filter(|l| l.contains(&tag))
            .map(|l| l.replace(&tag, "|M|"))
            .collect()
    };
    let a = by("a");
    let pick = |stat: &str| a.iter().find(|l| l.contains(&format!("|{stat}|"))).unwrap();
    let p = "string_equals|string_equals|M|is_correct,is_correct";
    assert_eq!(pick("tp"), &format!("{p}|tp|∅|234|300"));
    assert_eq!(pick("tn"), &format!("{p}|tn|∅|66|300"));
    assert_eq!(pick("excluded"), &format!("{p}|excluded|∅|0|300"));
    assert_eq!(pick("accuracy"), &format!("{p}|accuracy|∅|1|300"));
    assert_eq!(by("b"), a);
    assert_eq!(by("c"), a);
    let all = cells(&c);
    for name in ["a", "b", "c"] {
        let mine: Vec<(String, String, u64)> = all
            .iter()
            .filter(|x| x.0 == name)
            .map(|x| (x.1.clone(), x.2.clone(), x.3))
            .collect();
        assert_eq!(
            mine,
            [("0".into(), "0".into(), 66), ("1".into(), "1".into(), 234)],
            "{name}"
        );
    }
}

/// A metric that excludes every row warns on stderr and in run.json, naming the scorer, the
/// metric, the labels it saw and the ones it expected; one that excludes none does not.
#[test]
fn a_metric_that_excludes_every_row_warns() {
    let (c, stderr) = run_qa(
        "definition:\n  scorers:\n    - type: string_equals\n      key: exact\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: binary-classification, name: Agreement, field_gt: is_correct, field_pred: is_correct, positive_answer: \"pass\", negative_answer: \"fail\"}\n        - {type: binary-classification, name: Fine, field_gt: is_correct, field_pred: is_correct, positive_answer: \"1\", negative_answer: \"0\"}\n",
    );
    let warning = r#"scorer `exact`: metric `Agreement` excluded 300 of 300 rows (0 with a null label); other labels seen: "0", "1"; expected: "pass" (positive), "fail" (negative)"#;
    assert_eq!(stderr, format!("warning: {warning}\n"));
    let run = read_json(&c.path("out/run.json"));
    assert_eq!(run["warnings"], serde_json::json!([warning]));
}
