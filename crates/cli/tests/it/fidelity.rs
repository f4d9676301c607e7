//! The reference documents' own examples end to end: nested cells in templates, `model_output`, PassFail
//! without an expected output, and `--max-row-errors`.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::{ArrayRef, Int64Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use std::fs::File;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

/// An MCQA export: `choices: list<string>`, `options: list<struct<key, text>>`,
/// `meta: struct<source, level>`; answers and outputs as given.
fn mcqa_parquet(path: &Path, answers: &[&str], outputs: &[Option<&str>]) {
    let n = answers.len();
    let letters = ["A", "B", "C", "D"];
    let kt = Fields::from(vec![
        Field::new("key", DataType::Utf8, true),
        Field::new("text", DataType::Utf8, true),
    ]);
    let keys: Vec<&str> = (0..n).flat_map(|_| letters).collect();
    let texts: Vec<String> = (0..n)
        .flat_map(|r| letters.map(|l| format!("option {l} of {r}")))
        .collect();
    let entries = StructArray::new(
        kt.clone(),
        vec![
            Arc::new(StringArray::from(keys.clone())) as ArrayRef,
            Arc::new(StringArray::from(texts)),
        ],
        None,
    );
    let item = Arc::new(Field::new("item", DataType::Struct(kt), true));
    let options = ListArray::new(
        Arc::clone(&item),
        OffsetBuffer::from_lengths(vec![4; n]),
        Arc::new(entries),
        None,
    );
    let str_item = Arc::new(Field::new("item", DataType::Utf8, true));
    let choices = ListArray::new(
        Arc::clone(&str_item),
        OffsetBuffer::from_lengths(vec![4; n]),
        Arc::new(StringArray::from(keys)),
        None,
    );
    let meta_fields = Fields::from(vec![
        Field::new("source", DataType::Utf8, true),
        Field::new("level", DataType::Int64, true),
    ]);
    let meta = StructArray::new(
        meta_fields.clone(),
        vec![
            Arc::new(StringArray::from(vec!["exam"; n])) as ArrayRef,
            Arc::new(Int64Array::from((0..n as i64).collect::<Vec<_>>())),
        ],
        None,
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("answer", DataType::Utf8, true),
        Field::new("output", DataType::Utf8, true),
        Field::new("choices", DataType::List(str_item), true),
        Field::new("options", DataType::List(item), true),
        Field::new("meta", DataType::Struct(meta_fields), true),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from((1..=n as i64).collect::<Vec<_>>())),
            Arc::new(StringArray::from(answers.to_vec())),
            Arc::new(StringArray::from(outputs.to_vec())),
            Arc::new(choices),
            Arc::new(options),
            Arc::new(meta),
        ],
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn run_in(dir: &Path, task: &str, extra: &[&str]) -> Output {
    std::fs::write(dir.join("t.yaml"), task).unwrap();
    evalscore()
        .current_dir(dir)
        .args(["run", "t.yaml", "--input", "in.parquet", "--out", "out"])
        .args(extra)
        .output()
        .unwrap()
}

fn ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn fails(o: &Output, dir: &Path) -> String {
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(files_in(&dir.join("out")).is_empty(), "no output files");
    String::from_utf8(o.stderr.clone()).unwrap()
}

const ANSWERS: [&str; 5] = ["B", "A", "C", "D", "A"];
const OUTPUTS: [Option<&str>; 5] = [Some("B"), Some("A) yes"), Some("D"), Some("E"), None];

/// AI GO!'s three documented `choices` forms (a literal list, a list column, and
/// `map(attribute='key') | list` over list<struct>) give the same scores.
#[test]
fn seed_001_choices_forms_agree_on_list_struct_data() {
    let dir = tempfile::tempdir().unwrap();
    mcqa_parquet(&dir.path().join("in.parquet"), &ANSWERS, &OUTPUTS);
    let task = r#"definition:
  scorers:
    - type: string_equals_mcqa
      key: fixed
      ground_truth_choice: "{{ sample.answer }}"
      choices: ["A", "B", "C", "D"]
    - type: string_equals_mcqa
      key: column
      ground_truth_choice: "{{ sample.answer }}"
      choices: "{{ sample.choices }}"
    - type: string_equals_mcqa
      key: structs
      ground_truth_choice: "{{ sample.answer }}"
      choices: "{{ sample.options | map(attribute='key') | list }}"
"#;
    let o = run_in(dir.path(), task, &[]);
    ok(&o);
    let scores = read_parquet(&dir.path().join("out/scores.parquet"));
    for key in ["fixed", "column", "structs"] {
        assert_eq!(
            floats(&scores, &format!("{key}__is_correct")),
            [Some(1.0), Some(1.0), Some(0.0), Some(0.0), Some(0.0)],
            "{key}"
        );
        assert_eq!(
            strings(&scores, &format!("{key}__completion_validity")),
            ["VALID", "VALID", "VALID", "INVALID", "INVALID"].map(|s| Some(s.to_owned())),
            "{key}"
        );
    }
}

/// Struct fields read in a rendered value; a field the schema does not have is a load
/// error; an attribute no row has is a row error naming scorer, template, file and row.
#[test]
fn struct_fields_in_templates_and_undefined_values() {
    let dir = tempfile::tempdir().unwrap();
    mcqa_parquet(&dir.path().join("in.parquet"), &ANSWERS, &OUTPUTS);
    let o = run_in(
        dir.path(),
        "definition:\n  scorers:\n    - type: string_equals\n      value: \"{{ sample.meta.source }}-{{ sample.meta.level }}-{{ sample.options[1].text }}\"\n      ground_truth: \"exam-2-option B of 2\"\n",
        &[],
    );
    ok(&o);
    let scores = read_parquet(&dir.path().join("out/scores.parquet"));
    assert_eq!(
        floats(&scores, "string_equals__is_correct"),
        [Some(0.0), Some(0.0), Some(1.0), Some(0.0), Some(0.0)]
    );
    std::fs::remove_dir_all(dir.path().join("out")).unwrap();

    let o = run_in(
        dir.path(),
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.meta.sorce }}\"\n",
        &[],
    );
    assert_eq!(
        fails(&o, dir.path()),
        "error: task file `t.yaml`, line 4, column 21: template of `string_equals.ground_truth` reads `sample.meta.sorce`, but the struct column `meta` has no field `sorce`\nhint: did you mean `source`? `meta` has the fields source, level\n"
    );

    let o = run_in(
        dir.path(),
        "definition:\n  scorers:\n    - type: string_equals\n      key: label\n      ground_truth: \"Label: {{ sample.options[0].label }}\"\n",
        &[],
    );
    assert_eq!(
        fails(&o, dir.path()),
        "error: in.parquet, row 1: scorer `label`: template of `string_equals.ground_truth` failed: reaches an attribute, key or variable that does not exist (undefined value)\nhint: no output was written; `--max-row-errors N` (or `N%`) scores up to N such rows 0.0 and lists them in run.json\n"
    );
    let o = run_in(
        dir.path(),
        "definition:\n  scorers:\n    - type: string_equals_mcqa\n      ground_truth_choice: \"{{ sample.answer }}\"\n      choices: \"{{ sample.options | map(attribute='label') | list }}\"\n",
        &[],
    );
    let err = fails(&o, dir.path());
    assert!(
        err.starts_with("error: in.parquet, row 1: scorer `string_equals_mcqa`: template of `string_equals_mcqa.choices` failed: reaches an attribute, key or variable that does not exist (undefined value)\n"),
        "{err}"
    );
}

/// AI GO!'s judge prompt reads `model_output.choices[0].message.content`: over a plain
/// text output it is the text.
#[test]
fn model_output_reads_as_a_chat_completion() {
    let dir = tempfile::tempdir().unwrap();
    mcqa_parquet(&dir.path().join("in.parquet"), &ANSWERS, &OUTPUTS);
    let task = r#"definition:
  scorers:
    - type: string_equals
      value: "{{ model_output.choices[0].message.content }}"
      ground_truth: "{{ sample.answer }}"
    - type: string_equals
      key: rendered
      value: "<{{ model_output }}>"
      ground_truth: "<{{ solver_output.output }}>"
"#;
    let o = run_in(dir.path(), task, &[]);
    ok(&o);
    let scores = read_parquet(&dir.path().join("out/scores.parquet"));
    assert_eq!(
        floats(&scores, "string_equals__is_correct"),
        [Some(1.0), Some(0.0), Some(0.0), Some(0.0), Some(0.0)]
    );
    // Equal on every row with an output; the null output is missing, not "<none>".
    assert_eq!(
        floats(&scores, "rendered__is_correct"),
        [Some(1.0), Some(1.0), Some(1.0), Some(1.0), Some(0.0)]
    );
    let metrics = read_parquet(&dir.path().join("out/metrics.parquet"));
    assert!(metric_lines(&metrics)
        .contains(&"rendered|string_equals|missing|missing|rows|count|∅|1|5".to_owned()));
}

/// AgenticAssure's PassFail "can run with just an output-produced check".
#[test]
fn pass_fail_without_expected_output_checks_an_output_was_produced() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = [Some("B"), Some("   "), Some(""), Some("no idea"), None];
    mcqa_parquet(&dir.path().join("in.parquet"), &ANSWERS, &outputs);
    let task = "definition:\n  scorers:\n    - type: pass_fail\n    - type: pass_fail\n      key: empty\n      expected_output: \"\"\n    - type: pass_fail\n      key: answer\n      expected_output: \"{{ sample.answer }}\"\n";
    let o = run_in(dir.path(), task, &[]);
    ok(&o);
    let scores = read_parquet(&dir.path().join("out/scores.parquet"));
    for key in ["pass_fail", "empty"] {
        assert_eq!(
            floats(&scores, &format!("{key}__is_correct")),
            [Some(1.0), Some(0.0), Some(0.0), Some(1.0), Some(0.0)],
            "{key}"
        );
    }
    // With an expected output: a case-insensitive substring ("no idea" holds "D" as "d").
    assert_eq!(
        floats(&scores, "answer__is_correct"),
        [Some(1.0), Some(0.0), Some(0.0), Some(1.0), Some(0.0)]
    );
}

const MCQA_TASK: &str = "definition:\n  scorers:\n    - type: string_equals_mcqa\n      key: mcqa\n      ground_truth_choice: \"{{ sample.answer }}\"\n      choices: [A, B, C, D]\n      metrics:\n        - {type: mean, field: is_correct}\n        - {type: frequency, field: completion_validity}\n    - type: pass_fail\n      key: produced\n      metrics:\n        - {type: mean, field: is_correct}\n";

/// Two ground truths that are not one character (`Au`, `Ag`) in five rows.
fn bad_rows(dir: &Path) {
    mcqa_parquet(
        &dir.join("in.parquet"),
        &["B", "Au", "C", "Ag", "A"],
        &[Some("B"), Some("A"), Some("C"), Some("D"), Some("A")],
    );
}

#[test]
fn row_errors_within_the_limit_score_zero_and_are_reported() {
    for limit in ["2", "40%", "1000"] {
        let dir = tempfile::tempdir().unwrap();
        bad_rows(dir.path());
        let o = run_in(dir.path(), MCQA_TASK, &["--max-row-errors", limit]);
        ok(&o);
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "warning: 2 row errors scored 0.0 (--max-row-errors {limit}: {} allowed); run.json lists the first 2\n",
                if limit == "1000" { "1000" } else { "2" }
            )
        );
        let out = dir.path().join("out");
        let scores = read_parquet(&out.join("scores.parquet"));
        assert_eq!(
            floats(&scores, "mcqa__is_correct"),
            [Some(1.0), Some(0.0), Some(1.0), Some(0.0), Some(1.0)]
        );
        assert_eq!(
            strings(&scores, "mcqa__completion_validity"),
            ["VALID", "INVALID", "VALID", "INVALID", "VALID"].map(|s| Some(s.to_owned()))
        );
        let metrics = metric_lines(&read_parquet(&out.join("metrics.parquet")));
        for line in [
            "mcqa|string_equals_mcqa|mean|mean|is_correct|value|∅|0.6|5",
            "mcqa|string_equals_mcqa|frequency|frequency|completion_validity|count|INVALID|2|5",
            "mcqa|string_equals_mcqa|missing|missing|rows|count|∅|0|5",
            "mcqa|string_equals_mcqa|row_errors|row_errors|rows|count|∅|2|5",
            "produced|pass_fail|row_errors|row_errors|rows|count|∅|0|5",
        ] {
            assert!(metrics.contains(&line.to_owned()), "{line} in {metrics:#?}");
        }
        let mj: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("metrics.json")).unwrap()).unwrap();
        assert_eq!(mj["scorers"][0]["row_errors"], 2);
        assert_eq!(
            mj["scorers"][0]["metrics"][2],
            serde_json::json!({"name": "row_errors", "type": "row_errors", "field": "rows", "n": 5, "value": 2.0,
                "figures": [{"stat": "count", "label": null, "value": 2.0, "n": 5}]})
        );
        let rj: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(rj["row_error_count"], 2);
        let msg = |v: &str| {
            format!("column `answer` (`string_equals_mcqa.ground_truth_choice`) value \"{v}\" is not a single character (string_equals_mcqa needs one choice letter such as \"B\")")
        };
        assert_eq!(
            rj["row_errors"],
            serde_json::json!([
                {"file": "in.parquet", "row": 2, "scorer": "mcqa", "column": "answer", "value": "Au", "message": msg("Au")},
                {"file": "in.parquet", "row": 4, "scorer": "mcqa", "column": "answer", "value": "Ag", "message": msg("Ag")},
            ])
        );
    }
}

#[test]
fn one_row_error_more_than_the_limit_fails_with_the_count() {
    for limit in ["1", "39%"] {
        let dir = tempfile::tempdir().unwrap();
        bad_rows(dir.path());
        let o = run_in(
            dir.path(),
            MCQA_TASK,
            &["--max-row-errors", limit, "--threads", "1"],
        );
        assert_eq!(
            fails(&o, dir.path()),
            "error: in.parquet, row 4: scorer `mcqa`: column `answer` (`string_equals_mcqa.ground_truth_choice`) value \"Ag\" is not a single character (string_equals_mcqa needs one choice letter such as \"B\") (2 row errors, more than the 1 that --max-row-errors allows)\n"
        );
    }
    // Without the option (0), the first bad row stops the run as before.
    let dir = tempfile::tempdir().unwrap();
    bad_rows(dir.path());
    let o = run_in(dir.path(), MCQA_TASK, &[]);
    assert!(fails(&o, dir.path()).starts_with("error: in.parquet, row 2: scorer `mcqa`: "));
    let o = run_in(dir.path(), MCQA_TASK, &["--max-row-errors", "2x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("`2x` is not a row count or a percentage (e.g. `100` or `0.1%`)"));
}

/// Template failures are row errors too; the rows around them keep their scores.
#[test]
fn template_row_errors_are_allowed_per_row() {
    let dir = tempfile::tempdir().unwrap();
    mcqa_parquet(&dir.path().join("in.parquet"), &ANSWERS, &OUTPUTS);
    // `options[meta.level]` exists for levels 0-3 and not for level 4 (row 5).
    let task = "definition:\n  scorers:\n    - type: string_equals\n      key: pick\n      value: \"{{ sample.options[sample.meta.level].key }}\"\n      ground_truth: \"{{ sample.answer }}\"\n";
    let o = run_in(dir.path(), task, &["--max-row-errors", "1"]);
    ok(&o);
    let scores = read_parquet(&dir.path().join("out/scores.parquet"));
    assert_eq!(
        floats(&scores, "pick__is_correct"),
        [Some(0.0), Some(0.0), Some(1.0), Some(1.0), Some(0.0)]
    );
    let rj: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/run.json")).unwrap()).unwrap();
    assert_eq!(
        rj["row_errors"],
        serde_json::json!([{"file": "in.parquet", "row": 5, "scorer": "pick", "column": "string_equals.value", "value": null,
            "message": "template of `string_equals.value` failed: reaches an attribute, key or variable that does not exist (undefined value)"}])
    );
}

/// The cli's Linux-only table holds only Linux-only dependencies, so the binary builds on
/// macOS and Windows.
#[test]
fn linux_target_table_holds_only_libc() {
    let toml =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let table = toml
        .split("[target.'cfg(target_os = \"linux\")'.dependencies]")
        .nth(1)
        .unwrap();
    let deps: Vec<&str> = table
        .lines()
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    assert_eq!(deps, ["libc.workspace = true"]);
}
