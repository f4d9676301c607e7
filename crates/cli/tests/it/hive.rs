//! Hive partitions end to end: the `key=value` folders of a glob scored as input columns, in
//! templates, `group_by`, a metric's `field` and `--keep`.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use std::sync::Arc;

/// One string_equals scorer whose accuracy is grouped by the partition `model`, one whose
/// value is the partition itself, and the partition's frequency as a metric's `field`.
pub(crate) const TASK: &str = r#"definition:
  scorers:
    - type: string_equals
      key: exact
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct, group_by: [model]}
        - {type: frequency, field: model}
    - type: string_equals
      key: is_m1
      value: "{{ sample.model }}"
      ground_truth: "m1"
      metrics:
        - {type: mean, field: is_correct}
"#;

/// A Parquet file of `id`, `answer` and `output` at `rel` in `case`.
pub(crate) fn write_part(case: &Case, rel: &str, ids: &[i64], answers: &[&str], outputs: &[&str]) {
    case.write_parquet(
        rel,
        vec![
            ("id", Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef),
            ("answer", Arc::new(StringArray::from(answers.to_vec()))),
            ("output", Arc::new(StringArray::from(outputs.to_vec()))),
        ],
    );
}

/// Two models' exports, as Spark's `partitionBy("model", "date")` writes them.
pub(crate) fn exports() -> Case {
    let case = Case::quiet().task(TASK);
    write_part(
        &case,
        "exports/model=m1/date=2001-02-03/part-0.parquet",
        &[0, 1],
        &["a", "b"],
        &["a", "x"],
    );
    write_part(
        &case,
        "exports/model=m2/date=2001-02-04/part-0.parquet",
        &[2, 3, 4],
        &["c", "d", "e"],
        &["c", "d", "e"],
    );
    case.write("exports/_SUCCESS", "");
    case
}

/// Each column of `b` as `name: type`.
fn typed_columns(b: &RecordBatch) -> Vec<String> {
    b.schema()
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect()
}

#[test]
fn partition_folders_are_columns_to_group_keep_and_template() {
    let case = exports();
    case.succeeds(&[
        "t.yaml",
        "--input",
        "exports/**/*.parquet",
        "--keep",
        "id,model,date",
    ]);
    let out = case.path("out");
    let metrics = read_parquet(&out.join("metrics.parquet"));
    // Each figure's line and its group (`∅` overall), less the intervals.
    let groups = strings(&metrics, "model");
    let lines: Vec<String> = metric_lines(&metrics)
        .into_iter()
        .zip(groups)
        .map(|(line, group)| format!("{line}|{}", group.unwrap_or_else(|| "∅".into())))
        .filter(|line| !line.contains("|ci_") && !line.contains("|stderr|"))
        .collect();
    assert_eq!(
        lines,
        [
            "exact|string_equals|mean|mean|is_correct|value|∅|0.8|5|∅",
            "exact|string_equals|mean|mean|is_correct|value|∅|0.5|2|m1",
            "exact|string_equals|mean|mean|is_correct|value|∅|1|3|m2",
            "exact|string_equals|frequency|frequency|model|count|m1|2|5|∅",
            "exact|string_equals|frequency|frequency|model|proportion|m1|0.4|5|∅",
            "exact|string_equals|frequency|frequency|model|count|m2|3|5|∅",
            "exact|string_equals|frequency|frequency|model|proportion|m2|0.6|5|∅",
            "exact|string_equals|missing|missing|rows|count|∅|0|5|∅",
            "is_m1|string_equals|mean|mean|is_correct|value|∅|0.4|5|∅",
            "is_m1|string_equals|missing|missing|rows|count|∅|0|5|∅",
        ]
    );
    let scores = read_parquet(&out.join("scores.parquet"));
    assert_eq!(
        typed_columns(&scores),
        [
            "id: Int64",
            "model: Utf8",
            "date: Date32",
            "exact__is_correct: Float64",
            "is_m1__is_correct: Float64"
        ]
    );
    assert_eq!(column_text(&scores, "id"), "0 | 1 | 2 | 3 | 4");
    assert_eq!(column_text(&scores, "model"), "m1 | m1 | m2 | m2 | m2");
    assert_eq!(
        column_text(&scores, "date"),
        "2001-02-03 | 2001-02-03 | 2001-02-04 | 2001-02-04 | 2001-02-04"
    );
}

#[test]
fn without_partitions_the_folders_are_not_columns() {
    let case = exports();
    let no_model = "error: task file `t.yaml`, line 11, column 14: template of `string_equals.value` names column `model`, which the input does not have\n\
                    hint: available columns: id, answer, output\n";
    let err = case.fails(&[
        "t.yaml",
        "--input",
        "exports/**/*.parquet",
        "--no-hive-partitioning",
    ]);
    assert_eq!(err, no_model);
    // A file without the keys turns the default off, and is an error when they are asked for.
    write_part(&case, "exports/late.parquet", &[5], &["f"], &["f"]);
    let err = case.fails(&["t.yaml", "--input", "exports/**/*.parquet"]);
    assert_eq!(err, no_model);
    let err = case.fails(&[
        "t.yaml",
        "--input",
        "exports/**/*.parquet",
        "--hive-partitioning",
    ]);
    assert_eq!(
        err,
        "error: inputs `exports/late.parquet` and `exports/model=m1/date=2001-02-03/part-0.parquet` have different Hive partition keys: none in the first, `model`, `date` in the second\n\
         hint: with `--hive-partitioning` every file's path must hold the same `key=value` folders; without it, files whose keys differ are read without partition columns\n"
    );
}

#[test]
fn a_partition_that_is_also_a_column_is_an_error() {
    let case = exports();
    write_part(&case, "both/answer=a/part-0.parquet", &[0], &["a"], &["a"]);
    let err = case.fails(&["t.yaml", "--input", "both/**/*.parquet"]);
    assert_eq!(
        err,
        "error: both/answer=a/part-0.parquet: column `answer` is in the file and also a Hive partition key of its path (`answer=...`)\n\
         hint: rename the column or the `answer=` folders, or pass `--no-hive-partitioning` to read the file's column and ignore the folders\n"
    );
}

/// A `date=` folder (Date32) reads as its `YYYY-MM-DD` text in a template, alone or within
/// other text; zero-padded `month=` folders stay text, as DuckDB reads them.
#[test]
fn date_partitions_read_as_text_in_templates() {
    let case = Case::quiet().task(
        r#"definition:
  scorers:
    - type: string_equals
      key: day
      value: "{{ sample.date }}"
      ground_truth: "2001-02-03"
      metrics:
        - {type: mean, field: is_correct}
    - type: string_equals
      key: both
      value: "{{ sample.model }}@{{ sample.date }}/{{ sample.month }}"
      ground_truth: "m2@2001-02-04/11"
      metrics:
        - {type: mean, field: is_correct}
"#,
    );
    write_part(
        &case,
        "e/model=m1/date=2001-02-03/month=01/p.parquet",
        &[0],
        &["a"],
        &["a"],
    );
    write_part(
        &case,
        "e/model=m2/date=2001-02-04/month=11/p.parquet",
        &[1],
        &["b"],
        &["b"],
    );
    case.succeeds(&["t.yaml", "--input", "e/**/*.parquet", "--keep", "month"]);
    let scores = read_parquet(&case.path("out").join("scores.parquet"));
    assert_eq!(
        typed_columns(&scores),
        [
            "month: Utf8",
            "day__is_correct: Float64",
            "both__is_correct: Float64"
        ]
    );
    assert_eq!(column_text(&scores, "month"), "01 | 11");
    assert_eq!(column_text(&scores, "day__is_correct"), "1.0 | 0.0");
    assert_eq!(column_text(&scores, "both__is_correct"), "0.0 | 1.0");
}
