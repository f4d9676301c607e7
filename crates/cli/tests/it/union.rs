//! `--union-by-name` end to end: exports whose later partitions add a column and widen
//! another are scored as one table, the missing values null; without the option the run
//! stops with today's error, whose hint names it.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use crate::hive::TASK;
use arrow::array::{ArrayRef, Int32Array, Int64Array, StringArray};
use std::sync::Arc;

/// m1's export has `id` as Int32; m2's, written later, has it as Int64 and adds `judge_note`.
fn evolving() -> Case {
    let case = Case::quiet().task(TASK);
    case.write_parquet(
        "exports/model=m1/part-0.parquet",
        vec![
            ("id", Arc::new(Int32Array::from(vec![0, 1])) as ArrayRef),
            ("answer", Arc::new(StringArray::from(vec!["a", "b"]))),
            ("output", Arc::new(StringArray::from(vec!["a", "x"]))),
        ],
    );
    case.write_parquet(
        "exports/model=m2/part-0.parquet",
        vec![
            (
                "output",
                Arc::new(StringArray::from(vec!["c", "d", "e"])) as ArrayRef,
            ),
            ("id", Arc::new(Int64Array::from(vec![2, 3, 4]))),
            ("answer", Arc::new(StringArray::from(vec!["c", "d", "z"]))),
            (
                "judge_note",
                Arc::new(StringArray::from(vec![Some("late"), None, Some("ok")])),
            ),
        ],
    );
    case
}

#[test]
fn evolving_exports_are_scored_as_one_table() {
    let case = evolving();
    case.succeeds(&[
        "t.yaml",
        "--input",
        "exports/**/*.parquet",
        "--union-by-name",
        "--keep",
        "id,judge_note,model",
    ]);
    let out = case.path("out");
    let scores = read_parquet(&out.join("scores.parquet"));
    assert_eq!(
        column_names(&scores),
        [
            "id",
            "judge_note",
            "model",
            "exact__is_correct",
            "is_m1__is_correct"
        ]
    );
    let types: Vec<String> = scores
        .schema()
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect();
    assert_eq!(
        types,
        [
            "id: Int64",
            "judge_note: Utf8",
            "model: Utf8",
            "exact__is_correct: Float64",
            "is_m1__is_correct: Float64"
        ]
    );
    assert_eq!(column_text(&scores, "id"), "0 | 1 | 2 | 3 | 4");
    assert_eq!(column_text(&scores, "judge_note"), "∅ | ∅ | late | ∅ | ok");
    assert_eq!(column_text(&scores, "model"), "m1 | m1 | m2 | m2 | m2");
    assert_eq!(
        column_text(&scores, "exact__is_correct"),
        "1.0 | 0.0 | 1.0 | 1.0 | 0.0"
    );
    assert_eq!(
        column_text(&scores, "is_m1__is_correct"),
        "1.0 | 1.0 | 0.0 | 0.0 | 0.0"
    );
    let metrics = read_parquet(&out.join("metrics.parquet"));
    let lines: Vec<String> = metric_lines(&metrics)
        .into_iter()
        .zip(strings(&metrics, "model"))
        .map(|(line, group)| format!("{line}|{}", group.unwrap_or_else(|| "∅".into())))
        .filter(|line| line.starts_with("exact|") && line.contains("|is_correct|value|"))
        .collect();
    assert_eq!(
        lines,
        [
            "exact|string_equals|mean|mean|is_correct|value|∅|0.6|5|∅",
            "exact|string_equals|mean|mean|is_correct|value|∅|0.5|2|m1",
            "exact|string_equals|mean|mean|is_correct|value|∅|0.6666666666666666|3|m2",
        ]
    );
}

#[test]
fn without_the_option_the_schemas_must_match_and_the_hint_names_it() {
    let case = evolving();
    let err = case.fails(&["t.yaml", "--input", "exports/**/*.parquet"]);
    assert_eq!(
        err,
        "error: inputs `exports/model=m1/part-0.parquet` and `exports/model=m2/part-0.parquet` have different schemas: column `judge_note` is missing from the first\n\
         hint: all inputs of one run must share one schema; pass `--union-by-name` to read them as one table (a column a file lacks is null there, types widen to one), or run them separately\n"
    );
}

#[test]
fn incompatible_columns_stop_the_run_naming_both_files() {
    let case = evolving();
    case.write_parquet(
        "exports/model=m3/part-0.parquet",
        vec![
            ("id", Arc::new(StringArray::from(vec!["five"])) as ArrayRef),
            ("answer", Arc::new(StringArray::from(vec!["f"]))),
            ("output", Arc::new(StringArray::from(vec!["f"]))),
        ],
    );
    let err = case.fails(&[
        "t.yaml",
        "--input",
        "exports/**/*.parquet",
        "--union-by-name",
    ]);
    assert_eq!(
        err,
        "error: inputs `exports/model=m1/part-0.parquet` and `exports/model=m3/part-0.parquet` cannot be read as one table: column `id` is Int32 in the first and Utf8 in the second\n\
         hint: `--union-by-name` widens integer widths, integers to floats, string and list layouts, and timestamp units; other types must match: cast the column in the exports, or run them separately\n"
    );
}

/// Without the option, integer widths still count as one type: the kept column takes the
/// widest, so a value only the later, wider file can hold is kept, not made null.
#[test]
fn without_the_option_integer_widths_widen_to_the_widest() {
    let case = Case::quiet().task(TASK);
    case.write_parquet(
        "exports/model=m1/part-0.parquet",
        vec![
            ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
            ("answer", Arc::new(StringArray::from(vec!["a"]))),
            ("output", Arc::new(StringArray::from(vec!["a"]))),
        ],
    );
    case.write_parquet(
        "exports/model=m2/part-0.parquet",
        vec![
            (
                "id",
                Arc::new(Int64Array::from(vec![(1 << 40) + 7])) as ArrayRef,
            ),
            ("answer", Arc::new(StringArray::from(vec!["b"]))),
            ("output", Arc::new(StringArray::from(vec!["c"]))),
        ],
    );
    case.succeeds(&["t.yaml", "--input", "exports/**/*.parquet", "--keep", "id"]);
    let scores = read_parquet(&case.path("out").join("scores.parquet"));
    assert_eq!(
        scores.schema().field_with_name("id").unwrap().data_type(),
        &arrow::datatypes::DataType::Int64
    );
    assert_eq!(column_text(&scores, "id"), "1 | 1099511627783");
}
