//! The agreement, ranking and pairwise metrics end to end: task file, columns of the input
//! read by name, metrics.parquet.
#![allow(clippy::unwrap_used)]

use crate::common::*;

const TASK: &str = r#"definition:
  scorers:
    - type: string_equals
      key: judge
      value: "{{ sample.judge }}"
      ground_truth: "{{ sample.human }}"
      metrics:
        - {type: cohen_kappa, field_gt: human, field_pred: judge}
        - {type: roc_auc, field: conf, field_gt: truth}
        - {type: expected_calibration_error, field: conf, field_gt: truth, bins: 2}
        - {type: win_rate, field: verdict}
        - {type: bradley_terry, field: verdict, model_a: "{{ sample.judge }}", model_b: human, replicates: 0}
    - type: string_equals
      key: code
      value: "{{ sample.got }}"
      ground_truth: "{{ sample.want }}"
      metrics:
        - {type: pass_at_k, field: is_correct, group: "{{ sample.problem }}", k: [1, 2]}
"#;

const ROWS: &str = r#"{"judge": "yes", "human": "yes", "conf": 0.9, "truth": 1, "verdict": "A", "problem": "p1", "got": "4", "want": "4"}
{"judge": "no", "human": "no", "conf": 0.2, "truth": 0, "verdict": "B", "problem": "p1", "got": "5", "want": "4"}
{"judge": "yes", "human": "no", "conf": 0.6, "truth": 0, "verdict": "tie", "problem": "p2", "got": "x", "want": "x"}
{"judge": "yes", "human": "yes", "conf": 0.8, "truth": 1, "verdict": "A", "problem": "p1", "got": "3", "want": "4"}
{"judge": "no", "human": "no", "conf": 0.4, "truth": 0, "verdict": null, "problem": "p2", "got": "x", "want": "x"}
{"judge": "no", "human": "yes", "conf": 0.3, "truth": 1, "verdict": "A", "problem": "p2", "got": "y", "want": "x"}
"#;

#[test]
fn agreement_ranking_win_rate_and_pass_at_k_read_input_columns_and_templates() {
    let dir = folder(&[("task.yaml", TASK), ("rows.jsonl", ROWS)]);
    succeeded(run_in(dir.path(), "out").output().unwrap());
    let m = read_parquet(&dir.path().join("out/metrics.parquet"));
    let lines = metric_lines(&m);
    let value = |metric: &str, stat: &str| -> (f64, u64) {
        let line = lines
            .iter()
            .find(|l| {
                let p: Vec<&str> = l.split('|').collect();
                p[2] == metric && p[5] == stat
            })
            .unwrap_or_else(|| panic!("{metric} {stat} in {lines:#?}"));
        let p: Vec<&str> = line.split('|').collect();
        (p[7].parse().unwrap(), p[8].parse().unwrap())
    };
    let close = |got: (f64, u64), want: f64, n: u64, what: &str| {
        assert!((got.0 - want).abs() < 1e-12, "{what}: {} != {want}", got.0);
        assert_eq!(got.1, n, "{what}");
    };
    // Observed disagreement 2 of 6 against 3 expected by chance: 1 − 2/3.
    close(value("cohen_kappa", "value"), 1.0 - 2.0 / 3.0, 6, "kappa");
    // Positives 0.9, 0.8, 0.3 against negatives 0.2, 0.6, 0.4: 7 of 9 pairs in order.
    close(value("roc_auc", "value"), 7.0 / 9.0, 6, "auc");
    // Bins [0, 0.5): accuracy 1/3, mean 0.3; [0.5, 1]: 2/3 against 2.3/3.
    let ece = 0.5 * (1.0f64 / 3.0 - 0.3).abs() + 0.5 * (2.0f64 / 3.0 - 2.3 / 3.0).abs();
    close(value("expected_calibration_error", "value"), ece, 6, "ece");
    // Three wins, a tie and a loss; the null verdict is excluded.
    close(value("win_rate", "value"), 3.5 / 5.0, 5, "win rate");
    close(value("win_rate", "excluded"), 1.0, 5, "excluded");
    // Two battles of "yes" against "no" (the judge and human columns as the models): a tie,
    // and a win of "no"; "no" won 1.5 of 2, so its odds are 3 and the ratings 400 log10 3
    // apart around 1000.
    let rating = |label: &str| -> (f64, u64) {
        let line = lines
            .iter()
            .find(|l| {
                let p: Vec<&str> = l.split('|').collect();
                p[2] == "bradley_terry" && p[5] == "rating" && p[6] == label
            })
            .unwrap_or_else(|| panic!("rating of {label} in {lines:#?}"));
        let p: Vec<&str> = line.split('|').collect();
        (p[7].parse().unwrap(), p[8].parse().unwrap())
    };
    let half = 200.0 * 3f64.log10();
    close(rating("no"), 1000.0 + half, 2, "rating of no");
    close(rating("yes"), 1000.0 - half, 2, "rating of yes");
    // p1: 3 samples, 1 right; p2: 3 samples, 2 right. pass@1 = (1/3 + 2/3) / 2; pass@2 =
    // (1 − 1/3 + 1) / 2, p2 having fewer than 2 wrong samples.
    close(value("pass_at_k", "pass@1"), 0.5, 2, "pass@1");
    close(value("pass_at_k", "pass@2"), 5.0 / 6.0, 2, "pass@2");
}

#[test]
fn the_battles_example_gives_chatbot_arenas_ratings_and_scikit_learns_kappa() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    succeeded(run_task(
        &examples().join("battles.yaml"),
        &examples().join("battles.jsonl"),
        &out,
        &["--quiet"],
    ));
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(examples().join("../golden/bradley_terry.json")).unwrap(),
    )
    .unwrap();
    let lines = metric_lines(&read_parquet(&out.join("metrics.parquet")));
    let figure = |metric: &str, stat: &str, label: &str| -> f64 {
        let line = lines
            .iter()
            .find(|l| {
                let p: Vec<&str> = l.split('|').collect();
                p[2] == metric && p[5] == stat && p[6] == label
            })
            .unwrap_or_else(|| panic!("{metric} {stat} {label} in {lines:#?}"));
        line.split('|').nth(7).unwrap().parse().unwrap()
    };
    for (model, want) in golden["example"]["ratings"].as_object().unwrap() {
        let got = figure("bradley_terry", "rating", model);
        assert!(
            (got - want.as_f64().unwrap()).abs() < 1e-4,
            "{model}: {got} vs {want}"
        );
        assert!(figure("bradley_terry", "ci_low", model) < got);
        assert!(figure("bradley_terry", "ci_high", model) > got);
    }
    let kappa = figure("judge agreement", "value", "∅");
    assert!((kappa - golden["example"]["cohen_kappa"].as_f64().unwrap()).abs() < 1e-12);
    assert_eq!(figure("win rate of A", "wins", "∅"), 46.0);
}

/// `length_controlled_win_rate` end to end on a golden case of the `alpaca-eval` package
/// (`scripts/golden/length_controlled.py`): the verdict a scorer field, answer A a template,
/// answer B and the difficulty input columns.
#[test]
fn length_controlled_win_rate_equals_alpaca_evals() {
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(examples().join("../golden/length_controlled.json")).unwrap(),
    )
    .unwrap();
    let case = golden["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "noreg_small_c")
        .unwrap();
    // Answers of the golden lengths in code points: two-byte `é`s, then `a`s.
    let text = |len: &serde_json::Value| {
        let len = len.as_u64().unwrap() as usize;
        "é".repeat(len / 2) + &"a".repeat(len - len / 2)
    };
    let rows: String = case["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            serde_json::json!({"verdict": r[0], "a": text(&r[1]), "b": text(&r[2]), "difficulty": r[3]})
                .to_string()
                + "\n"
        })
        .collect();
    let task = "definition:\n  scorers:\n    - type: value\n      value: \"{{ sample.verdict }}\"\n      metrics:\n        - {type: length_controlled_win_rate, field: value, output_a: \"{{ sample.a }}\", output_b: b, difficulty: difficulty}\n";
    let dir = folder(&[("task.yaml", task), ("rows.jsonl", &rows)]);
    succeeded(run_in(dir.path(), "out").output().unwrap());
    let lines = metric_lines(&read_parquet(&dir.path().join("out/metrics.parquet")));
    let figure = |stat: &str| -> (f64, u64) {
        let line = lines
            .iter()
            .find(|l| l.split('|').nth(5) == Some(stat))
            .unwrap_or_else(|| panic!("{stat} in {lines:#?}"));
        let p: Vec<&str> = line.split('|').collect();
        (p[7].parse().unwrap(), p[8].parse().unwrap())
    };
    let (value, n) = figure("value");
    assert_eq!(n, 25);
    // The package's figure (in percent) with its liblinear run to 1e-12; its default
    // tolerance of 1e-4 gives the same to 1e-6 points on this case.
    let want = case["tight"]["length_controlled_winrate"].as_f64().unwrap();
    assert!((value * 100.0 - want).abs() < 1e-6, "{value} vs {want}");
    let c = case["expected"]["C_"].as_f64().unwrap();
    assert!((figure("c").0 - c).abs() < 1e-12 * c);
    let raw = case["expected"]["win_rate"].as_f64().unwrap();
    assert!((figure("win_rate").0 * 100.0 - raw).abs() < 1e-9);
}

const BOOT_TASK: &str = r#"definition:
  scorers:
    - type: string_equals
      value: "{{ sample.got }}"
      ground_truth: "{{ sample.want }}"
      metrics:
        - {type: mean, field: is_correct, interval: bootstrap, replicates: 300, seed: 7, group_by: [subject]}
        - {type: win_rate, field: verdict, interval: bootstrap, replicates: 200, row_key: "{{ sample.q }}/{{ sample.id }}"}
"#;

fn boot_row(i: usize) -> String {
    format!(
        r#"{{"id": {i}, "q": "q{}", "got": "{}", "want": "a", "subject": "{}", "verdict": "{}"}}"#,
        i % 13,
        if i.is_multiple_of(3) { "b" } else { "a" },
        ["math", "law"][i % 2],
        ["A", "B", "tie", "A"][i % 4]
    )
}

/// `interval: bootstrap` end to end: the figures of one file equal those of the same rows
/// in three files read in another order, at one thread or two; the row keys default to the
/// `id` column, whose absence is an error at bind time.
#[test]
fn bootstrap_intervals_do_not_depend_on_the_files() {
    let n = 3000;
    let whole = jsonl(n, boot_row);
    let part = |r: std::ops::Range<usize>| r.map(|i| boot_row(i) + "\n").collect::<String>();
    let dir = folder(&[
        ("task.yaml", BOOT_TASK),
        ("rows.jsonl", &whole),
        ("parts/a.jsonl", &part(2000..3000)),
        ("parts/b.jsonl", &part(0..700)),
        ("parts/c.jsonl", &part(700..2000)),
    ]);
    succeeded(run_in(dir.path(), "one").output().unwrap());
    let one = metric_lines(&read_parquet(&dir.path().join("one/metrics.parquet")));
    succeeded(
        evalscore_process()
            .args(["run", "task.yaml", "--out", "split"])
            .args(["--input", "parts/a.jsonl", "--input", "parts/b.jsonl"])
            .args(["--input", "parts/c.jsonl"])
            .args(["--threads", "2"])
            .current_dir(dir.path())
            .output()
            .unwrap(),
    );
    let split = metric_lines(&read_parquet(&dir.path().join("split/metrics.parquet")));
    assert_eq!(one, split);
    let stat = |stat: &str, label: &str| {
        one.iter()
            .find(|l| l.starts_with(label) && l.contains(&format!("|{stat}|∅|")))
            .unwrap_or_else(|| panic!("{label} {stat} in {one:#?}"))
            .split('|')
            .nth(7)
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    let mean_row = "string_equals|string_equals|mean|mean|is_correct";
    // Two rows in three are correct; the interval holds it and is about ±1.96 standard
    // errors of a proportion over 3000 rows wide.
    assert!((stat("value", mean_row) - 2.0 / 3.0).abs() < 1e-12);
    let (lo, hi) = (stat("ci_low", mean_row), stat("ci_high", mean_row));
    let se = (2.0f64 / 9.0 / 3000.0).sqrt();
    assert!(lo < 2.0 / 3.0 && 2.0 / 3.0 < hi, "{lo} {hi}");
    assert!(
        ((hi - lo) / (2.0 * 1.96 * se) - 1.0).abs() < 0.2,
        "{lo} {hi}"
    );
    // The overall interval and each subject's.
    let intervals = one
        .iter()
        .filter(|l| l.starts_with(mean_row) && l.contains("|ci_low|") && !l.contains("|null|"))
        .count();
    assert_eq!(intervals, 3, "{one:#?}");

    // Without an `id` column, the default row key is missing.
    let dir = folder(&[
        ("task.yaml", BOOT_TASK),
        ("rows.jsonl", &whole.replace("\"id\"", "\"row\"")),
    ]);
    let out = failed(run_in(dir.path(), "out").output().unwrap(), 2);
    assert_eq!(
        stderr(&out),
        "error: task file `task.yaml`, line 7, column 11: metric `mean` with `interval: bootstrap` reads each row's key from column `id`, and the input has no column `id`\n\
         hint: name the column that identifies a row with `row_key: COLUMN`, or key a row by all its values with `row_key: \"{{ sample | tojson }}\"`; input columns: got, q, row, subject, verdict, want\n"
    );
    // Keyed by the whole row instead, the run succeeds.
    let task = BOOT_TASK
        .replace(
            "interval: bootstrap, replicates: 300",
            "interval: bootstrap, row_key: \"{{ sample | tojson }}\", replicates: 300",
        )
        .replace("/{{ sample.id }}", "/{{ sample.row }}");
    std::fs::write(dir.path().join("task.yaml"), task).unwrap();
    succeeded(run_in(dir.path(), "out").output().unwrap());
}

/// A `bradley_terry` bootstrap over 1,000 models in a chain (10,000 replicates, hours of
/// fits) stops within seconds of SIGTERM: exit 143, nothing written.
#[cfg(unix)]
#[test]
fn sigterm_stops_a_long_bradley_terry_bootstrap() {
    use std::process::Stdio;
    use std::time::Duration;
    let task = "definition:\n  scorers:\n    - type: value\n      key: battle\n      value: \"{{ sample.verdict }}\"\n      metrics:\n        - {type: bradley_terry, field: value, model_a: a, model_b: b, replicates: 10000}\n";
    let mut rows = String::new();
    for k in 0..999 {
        for (verdict, n) in [("A", 30), ("B", 10), ("tie", 4)] {
            for _ in 0..n {
                rows.push_str(&format!(
                    "{{\"verdict\": \"{verdict}\", \"a\": \"m{k:04}\", \"b\": \"m{:04}\"}}\n",
                    k + 1
                ));
            }
        }
    }
    let dir = folder(&[("task.yaml", task), ("rows.jsonl", &rows)]);
    let child = run_in(dir.path(), "out")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The rows are read in well under a second; the bootstrap has begun.
    std::thread::sleep(Duration::from_secs(4));
    kill("-TERM", child.id());
    let o = output_within(child, Duration::from_secs(10), "SIGTERM");
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: interrupted by SIGTERM; no output was written\n"
    );
    assert_eq!(files_in(&dir.path().join("out")), Vec::<String>::new());
}
