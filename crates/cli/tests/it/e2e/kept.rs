//! Scores already in the data (`value`), kept predictions (`write_fields`) and
//! `numeric_match`'s `spaced_sign`, end to end: exact scores.parquet columns, types and values,
//! and exact metrics.

use crate::common::*;
use arrow::array::RecordBatch;

/// Human-labelled answers with a judge's score (an integer column, one null), a latency
/// written as text, and a human verdict (one null).
const ROWS: &str = r#"{"id": 1, "subject": "math", "judge_score": 7, "latency_ms": "120", "human": "yes"}
{"id": 2, "subject": "math", "judge_score": 9, "latency_ms": "80.5", "human": "no"}
{"id": 3, "subject": "math", "judge_score": null, "latency_ms": "100", "human": "yes"}
{"id": 4, "subject": "history", "judge_score": 4, "latency_ms": " 60 ", "human": "yes"}
{"id": 5, "subject": "history", "judge_score": 6, "latency_ms": "40", "human": null}
{"id": 6, "subject": "history", "judge_score": 8, "latency_ms": "1e2", "human": "no"}
"#;

const VALUE_TASK: &str = r#"definition:
  scorers:
    - type: value
      key: judge
      value: "{{ sample.judge_score }}"
      metrics:
        - {type: mean, field: value, group_by: subject}
        - {type: std_dev, field: value}
    - type: value
      key: latency
      value: "{{ sample.latency_ms }}"
      parse: number
      metrics:
        - {type: mean, field: value}
    - type: value
      key: human
      value: "{{ sample.human }}"
      metrics:
        - {type: frequency, field: value}
"#;

/// Each column's name and type, as `name: type`.
fn types(b: &arrow::record_batch::RecordBatch) -> Vec<String> {
    b.schema()
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect()
}

/// Runs `task` over `rows` quietly; the job (for its other outputs) and scores.parquet.
fn run_quiet(task: &str, rows: &str) -> (Job, RecordBatch) {
    let job = Job::new(task, rows);
    succeeded(job.run(&["--quiet"]));
    let scores = read_parquet(&job.out.join("scores.parquet"));
    (job, scores)
}

#[test]
fn value_scorer_averages_a_numeric_column_per_group() {
    let (job, scores) = run_quiet(VALUE_TASK, ROWS);
    assert_eq!(
        types(&scores),
        [
            "id: Int64",
            "judge__value: Float64",
            "latency__value: Float64",
            "human__value: Utf8",
        ]
    );
    assert_eq!(
        floats(&scores, "judge__value"),
        [Some(7.0), Some(9.0), None, Some(4.0), Some(6.0), Some(8.0)]
    );
    assert_eq!(
        floats(&scores, "latency__value"),
        [
            Some(120.0),
            Some(80.5),
            Some(100.0),
            Some(60.0),
            Some(40.0),
            Some(100.0)
        ]
    );
    assert_eq!(
        strings(&scores, "human__value"),
        [
            Some("yes"),
            Some("no"),
            Some("yes"),
            Some("yes"),
            None,
            Some("no")
        ]
        .map(|s| s.map(str::to_owned))
    );

    let metrics = read_parquet(&job.out.join("metrics.parquet"));
    let groups = strings(&metrics, "subject");
    let lines: Vec<String> = metric_lines(&metrics)
        .into_iter()
        .zip(groups)
        .filter(|(l, _)| !l.contains("|stderr|") && !l.contains("|ci_"))
        .map(|(l, g)| format!("{l}|{}", g.unwrap_or_else(|| "∅".into())))
        .collect();
    // Independently: the five scores 7, 9, 4, 6, 8 average 6.8 (math 8, history 6), with a
    // sample standard deviation of sqrt(14.8 / 4); the latencies sum to 500.5 over 6 rows.
    assert_eq!(format!("{}", (14.8f64 / 4.0).sqrt()), "1.9235384061671346");
    assert_eq!(
        lines,
        [
            "judge|value|mean|mean|value|value|∅|6.8|5|∅",
            "judge|value|mean|mean|value|value|∅|6|3|history",
            "judge|value|mean|mean|value|value|∅|8|2|math",
            "judge|value|std_dev|std_dev|value|value|∅|1.9235384061671346|5|∅",
            "judge|value|missing|missing|rows|count|∅|1|6|∅",
            "latency|value|mean|mean|value|value|∅|83.41666666666667|6|∅",
            "latency|value|missing|missing|rows|count|∅|0|6|∅",
            "human|value|frequency|frequency|value|count|no|2|6|∅",
            "human|value|frequency|frequency|value|proportion|no|0.3333333333333333|6|∅",
            "human|value|frequency|frequency|value|count|yes|3|6|∅",
            "human|value|frequency|frequency|value|proportion|yes|0.5|6|∅",
            "human|value|frequency|frequency|value|count|∅|1|6|∅",
            "human|value|frequency|frequency|value|proportion|∅|0.16666666666666666|6|∅",
            "human|value|missing|missing|rows|count|∅|1|6|∅",
        ]
    );
}

#[test]
fn value_scorer_errors_name_the_row_or_the_metric() {
    // A text that is not a number under `parse: number`: a row error naming row and column.
    let job = Job::new(VALUE_TASK, &ROWS.replace("\"1e2\"", "\"n/a\""));
    let o = failed(job.run(&[]), 2);
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}, row 6: scorer `latency`: column `latency_ms` (`value.value`) value \"n/a\" is not a number (`parse: number`)\nhint: no output was written; `--max-row-errors N` (or `N%`) scores up to N such rows 0.0 and lists them in run.json\n",
            job.input.display()
        )
    );
    // Allowed, the row's value is null.
    succeeded(job.run(&["--quiet", "--max-row-errors", "1"]));
    let scores = read_parquet(&job.out.join("scores.parquet"));
    assert_eq!(
        floats(&scores, "latency__value"),
        [
            Some(120.0),
            Some(80.5),
            Some(100.0),
            Some(60.0),
            Some(40.0),
            None
        ]
    );

    // `mean` over one column of text: refused once the input is known, before any row.
    let task = "definition:\n  scorers:\n    - type: value\n      value: \"{{ sample.human }}\"\n      metrics:\n        - {type: mean, field: value}\n";
    let job = Job::new(task, ROWS);
    let o = failed(job.run(&[]), 2);
    assert_eq!(
        stderr(&o),
        format!(
            "error: task file `{}`, line 6, column 11: metric `mean` needs a numeric field, and `value` of scorer `value` is text\nhint: the column it reads holds text: `parse: number` reads its texts as numbers; use `frequency` to count text values\n",
            job.task.display()
        )
    );
    assert!(!job.out.exists());
}

#[test]
fn write_fields_keep_the_predictions_typed_and_in_order() {
    let task = r#"definition:
  scorers:
    - type: string_equals
      key: exact
      ground_truth: "{{ sample.human }}"
      value: "{{ sample.subject }}"
      write_fields: [ground_truth, value]
    - type: value
      key: judge
      value: "{{ sample.judge_score }}"
      write_scores: false
      write_fields: [value]
    - type: string_equals
      key: plain
      ground_truth: "{{ sample.human }}"
      value: "{{ sample.human }}"
"#;
    let (_job, scores) = run_quiet(task, ROWS);
    assert_eq!(
        types(&scores),
        [
            "id: Int64",
            "exact__is_correct: Float64",
            "exact__ground_truth: Utf8",
            "exact__value: Utf8",
            "judge__value: Float64",
            "plain__is_correct: Float64",
        ]
    );
    let text = |col: &str| column_text(&scores, col);
    assert_eq!(text("exact__ground_truth"), "yes | no | yes | yes | ∅ | no");
    assert_eq!(
        text("exact__value"),
        "math | math | math | history | history | history"
    );
    assert_eq!(text("judge__value"), "7.0 | 9.0 | ∅ | 4.0 | 6.0 | 8.0");
    assert_eq!(
        text("plain__is_correct"),
        "1.0 | 1.0 | 1.0 | 1.0 | 0.0 | 1.0"
    );

    // An unknown field: located, with the scorer's fields, worded as a metric's.
    let job = Job::new(
        &task.replace("[ground_truth, value]", "[ground_truth, predicted_label]"),
        ROWS,
    );
    let o = failed(job.run(&[]), 2);
    assert_eq!(
        stderr(&o),
        format!(
            "error: task file `{}`, line 7, column 36: scorer `string_equals` has no field `predicted_label`\nhint: fields of `string_equals`: is_correct, value, ground_truth\n",
            job.task.display()
        )
    );
}

#[test]
fn numeric_match_spaced_sign_reads_the_intercept() {
    let rows = concat!(
        "{\"id\": 1, \"ideal\": \"y = 0.91x - 8.97\", \"output\": \"The intercept is -8.97\"}\n",
        "{\"id\": 2, \"ideal\": \"y = 0.91x - 8.97\", \"output\": \"8.97\"}\n",
        "{\"id\": 3, \"ideal\": \"y = 0.91x -8.97\", \"output\": \"y = 0.91x - 8.97\"}\n",
    );
    let task = "definition:\n  scorers:\n    - {type: numeric_match, key: inspect, expected: \"{{ sample.ideal }}\"}\n    - {type: numeric_match, key: spaced, expected: \"{{ sample.ideal }}\", spaced_sign: true}\n";
    let (_job, scores) = run_quiet(task, rows);
    assert_eq!(
        column_names(&scores),
        ["id", "inspect__is_correct", "spaced__is_correct"]
    );
    // Inspect AI's reading (the default): the first ideal is +8.97, the third -8.97, and the
    // third output's spaced minus is no sign. With `spaced_sign`, all three read -8.97.
    assert_eq!(
        floats(&scores, "inspect__is_correct"),
        [Some(0.0), Some(1.0), Some(0.0)]
    );
    assert_eq!(
        floats(&scores, "spaced__is_correct"),
        [Some(1.0), Some(0.0), Some(1.0)]
    );
}

#[test]
fn value_scorer_extracts_numbers_reads_booleans_and_normalizes_labels() {
    let rows = concat!(
        "{\"id\": 1, \"reply\": \"Reasoning... Score: 7/10\", \"flag\": true, \"lab\": \"Yes\"}\n",
        "{\"id\": 2, \"reply\": \"Score: 3\", \"flag\": false, \"lab\": \"yes \"}\n",
        "{\"id\": 3, \"reply\": null, \"flag\": null, \"lab\": \"NO\"}\n",
    );
    let task = r#"definition:
  scorers:
    - type: value
      key: judged
      value: "{{ sample.reply }}"
      extract: {regex: "Score: ([0-9]+)"}
      parse: number
    - {type: value, key: flag_number, value: "{{ sample.flag }}", parse: number}
    - {type: value, key: flag_text, value: "{{ sample.flag }}"}
    - type: value
      key: label
      value: "{{ sample.lab }}"
      normalize: [strip, ignore_case]
      metrics: [{type: frequency, field: value}]
"#;
    let (job, scores) = run_quiet(task, rows);
    assert_eq!(
        types(&scores),
        [
            "id: Int64",
            "judged__value: Float64",
            "flag_number__value: Float64",
            "flag_text__value: Utf8",
            "label__value: Utf8",
        ]
    );
    let text = |col: &str| column_text(&scores, col);
    assert_eq!(text("judged__value"), "7.0 | 3.0 | ∅");
    assert_eq!(text("flag_number__value"), "1.0 | 0.0 | ∅");
    assert_eq!(text("flag_text__value"), "true | false | ∅");
    assert_eq!(text("label__value"), "yes | yes | no");
    let lines = metric_lines(&read_parquet(&job.out.join("metrics.parquet")));
    let label: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("label|"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        label,
        [
            "label|value|frequency|frequency|value|count|no|1|3",
            "label|value|frequency|frequency|value|proportion|no|0.3333333333333333|3",
            "label|value|frequency|frequency|value|count|yes|2|3",
            "label|value|frequency|frequency|value|proportion|yes|0.6666666666666666|3",
            "label|value|missing|missing|rows|count|∅|0|3",
        ]
    );
}
