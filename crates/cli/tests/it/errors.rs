//! Bad input: exit code 2, an exact `error:` message naming the culprit, and no output files.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::path::Path;

/// A string_equals_mcqa scorer whose ground truth is not a choice letter.
const MCQA_TASK: &str = "definition:\n  scorers:\n    - type: string_equals_mcqa\n      ground_truth_choice: \"{{ sample.label_gt }}\"\n";

/// The error of running the task `task` on qa.parquet.
fn task_error(task: &str) -> String {
    fails_on(&Case::new().task(task), &ex("qa.parquet"))
}

/// A case with the one-scorer task [`QA_TASK`].
fn qa_case() -> Case {
    Case::new().task(QA_TASK)
}

/// The error of the case's task on `input`.
fn fails_on(c: &Case, input: &str) -> String {
    c.fails(&["t.yaml", "--input", input])
}

/// The error of [`QA_TASK`] on the input `name` holding `bytes`.
fn input_error(name: &str, bytes: &[u8]) -> String {
    let c = qa_case();
    std::fs::write(c.path(name), bytes).unwrap();
    fails_on(&c, name)
}

fn ex(name: &str) -> String {
    examples().join(name).display().to_string()
}

#[test]
fn missing_input_path() {
    assert_eq!(
        fails_on(&qa_case(), "nope.parquet"),
        "error: nope.parquet: cannot read input: No such file or directory (os error 2)\nhint: check the `--input` path\n"
    );
}

#[test]
fn directory_without_parquet_files() {
    let c = qa_case();
    std::fs::create_dir(c.path("empty")).unwrap();
    assert_eq!(
        fails_on(&c, "empty"),
        "error: empty: directory holds no Parquet files (*.parquet)\nhint: point `--input` at Parquet files or a directory of them\n"
    );
}

#[test]
fn file_that_is_not_parquet() {
    let err = input_error(
        "junk.parquet",
        b"this is not parquet at all, just some bytes",
    );
    assert_starts(&err, "error: junk.parquet: not a readable Parquet file: ");
    assert_ends(
        &err,
        "hint: the file may be truncated, still being written, or not Parquet at all\n",
    );
}

#[test]
fn truncated_parquet() {
    let bytes = std::fs::read(examples().join("qa.parquet")).unwrap();
    let err = input_error("half.parquet", &bytes[..bytes.len() / 2]);
    assert_starts(&err, "error: half.parquet: not a readable Parquet file: ");
}

#[test]
fn different_schemas_name_both_files_and_the_column() {
    let c = qa_case();
    let err = c.fails(&[
        "t.yaml",
        "--input",
        &ex("qa.parquet"),
        "--input",
        &ex("mcqa.parquet"),
    ]);
    assert_eq!(
        err,
        format!(
            "error: inputs `{}` and `{}` have different schemas: column `question` is missing from the second\nhint: all inputs of one run must share one schema; pass `--union-by-name` to read them as one table (a column a file lacks is null there, types widen to one), or run them separately\n",
            ex("qa.parquet"),
            ex("mcqa.parquet")
        )
    );
}

#[test]
fn jsonl_line_that_is_not_json() {
    let input = "{\"answer\": \"a\", \"output\": \"a\"}\n{\"answer\": \"b\", \"output\": }\n";
    assert_eq!(
        input_error("bad.jsonl", input.as_bytes()),
        "error: bad.jsonl, line 2: not valid JSON: expected value at line 1 column 27\nhint: every line of a JSON Lines file must be one JSON object\n"
    );
}

#[test]
fn jsonl_invalid_utf8() {
    let input =
        b"{\"answer\": \"a\", \"output\": \"a\"}\n{\"answer\": \"\xff\", \"output\": \"b\"}\n";
    assert_eq!(
        input_error("bad.jsonl", input),
        "error: bad.jsonl, line 2: invalid UTF-8 at byte 13 of the line\nhint: JSON Lines files must be UTF-8; re-export the file as UTF-8\n"
    );
}

#[test]
fn unknown_scorer_type_with_suggestion() {
    // The types, in the registry's order (the registry is the one list of them).
    let types = evalscore_engine::registry::type_names().join(", ");
    assert!(types.starts_with("string_equals, string_equals_mcqa, match, includes, "));
    assert_eq!(
        task_error("definition:\n  scorers:\n    - type: string_equal\n      ground_truth: \"{{ sample.answer }}\"\n"),
        format!("error: task file `t.yaml`, line 3, column 13: unknown scorer type `string_equal`\nhint: did you mean `string_equals`? scorer types: {types}\n")
    );
}

#[test]
fn unknown_key_in_scorer() {
    assert_eq!(
        task_error("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      ignore_case: true\n"),
        "error: task file `t.yaml`, line 5, column 7: unknown key `ignore_case` in scorer `string_equals`\nhint: allowed keys: type, key, display_name, purpose, metrics, normalize, extract, write_scores, write_fields, ground_truth, value\n"
    );
}

#[test]
fn invalid_regex_is_a_load_error_at_its_line() {
    let err = task_error(
        "definition:\n  scorers:\n    - type: regex\n      pattern: \"(?i)answer: (\\\\d+\"\n",
    );
    assert_starts(&err, "error: task file `t.yaml`, line 4, column 16: invalid regular expression in `regex.pattern`: unclosed group\nhint: patterns use Rust regex syntax");
}

#[test]
fn oversized_regex_is_a_load_error_at_its_line() {
    assert_eq!(
        task_error("definition:\n  scorers:\n    - type: regex\n      pattern: \"(?:a{1000}){1000}\"\n"),
        "error: task file `t.yaml`, line 4, column 16: the regular expression in `regex.pattern` is too large: compiled, it exceeds the size limit of 1 MiB\nhint: counted repetitions multiply (`\\w{5000}`, `(?:a{1000}){1000}`): use a smaller count, or `+` or `*`\n"
    );
}

#[test]
fn custom_condition_failing_on_a_row_names_the_row() {
    let err =
        task_error("definition:\n  scorers:\n    - type: custom\n      condition: \"value + 1\"\n");
    assert!(
        err.contains("row 1: scorer `custom`: `custom.condition` failed:"),
        "{err}"
    );
}

#[test]
fn template_naming_a_missing_column_lists_the_columns() {
    assert_eq!(
        task_error("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answr }}\"\n"),
        "error: task file `t.yaml`, line 4, column 21: template of `string_equals.ground_truth` names column `answr`, which the input does not have\nhint: did you mean `answer`? available columns: id, question, subject, answer, output, label_gt, label_pred\n"
    );
}

#[test]
fn template_syntax_error() {
    let err = task_error("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer | }}\"\n");
    assert_starts(&err, "error: task file `t.yaml`, line 4, column 21: template syntax error in `string_equals.ground_truth`: ");
}

#[test]
fn yaml_syntax_error_is_located() {
    let err = task_error("definition:\n  scorers: [\n    {type: string_equals\n");
    assert_starts(&err, "error: task file `t.yaml`, line ");
    assert!(err.contains("invalid YAML: "), "{err}");
}

#[test]
fn placeholder_without_value() {
    assert_eq!(
        task_error("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.<< config.col >> }}\"\n"),
        "error: task file `t.yaml`, line 4, column 32: placeholder `<< config.col >>` has no value\nhint: add `config: {col: ...}` to the task file or pass `--set col=VALUE`\n"
    );
}

#[test]
fn missing_model_output_column() {
    let c = qa_case();
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet"), "--output-column", "completion"]),
        "error: scorer `string_equals` has no `value:`, so it scores the model output, but the input has no model output column `completion` (from --output-column)\n  Caused by: available columns: id, question, subject, answer, output, label_gt, label_pred\nhint: name the model output column with `--output-column COL` (or `definition.output_column`), or give the scorer a `value:` template\n"
    );
}

#[test]
fn mcqa_ground_truth_that_is_not_one_character_names_row_column_value() {
    let err = task_error(MCQA_TASK);
    let input = read_parquet(&examples().join("qa.parquet"));
    let first = strings(&input, "label_gt")[0].clone().unwrap();
    assert_eq!(
        err,
        format!(
            "error: {}, row 1: scorer `string_equals_mcqa`: column `label_gt` (`string_equals_mcqa.ground_truth_choice`) value {first:?} is not a single character (string_equals_mcqa needs one choice letter such as \"B\")\nhint: no output was written; `--max-row-errors N` (or `N%`) scores up to N such rows 0.0 and lists them in run.json\n",
            ex("qa.parquet")
        )
    );
}

#[test]
fn existing_outputs_are_not_overwritten() {
    let c = qa_case();
    c.write("out/metrics.json", "{}");
    assert_eq!(
        fails_on(&c, &ex("qa.parquet")),
        "error: the output folder `out` already holds metrics.json\nhint: pass `--overwrite` to replace them, or choose another `--out` folder\n"
    );
    assert_eq!(
        std::fs::read_to_string(c.path("out/metrics.json")).unwrap(),
        "{}"
    );
}

#[test]
fn a_failing_run_leaves_no_partial_files() {
    // The error is found while scoring (row 1), after the output files were opened.
    let c = Case::new().task(MCQA_TASK);
    fails_on(&c, &ex("qa.parquet"));
    assert_eq!(files_in(&c.path("out")), Vec::<String>::new());
}

#[test]
fn unwritable_output_folder() {
    let c = qa_case();
    c.write("file", "a file, not a folder");
    let err = c.fails_out(&["t.yaml", "--input", &ex("qa.parquet")], "file/sub");
    assert_starts(
        &err,
        "error: cannot create the output folder `file/sub`\n  Caused by: ",
    );
    assert!(Path::new(&c.path("file")).is_file());
}

#[test]
fn group_by_a_missing_column() {
    assert_eq!(
        task_error("definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, group_by: [topic]}\n"),
        "error: task file `t.yaml`, line 6, column 11: metric `mean` groups by column `topic`, which the input does not have\nhint: available columns: id, question, subject, answer, output, label_gt, label_pred\n"
    );
}
