//! Bad input: exit code 2, an exact `error:` message naming the culprit, and no output files.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::path::Path;

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        Case {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> std::path::PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Runs in the case folder (so paths in messages are short) and returns stderr.
    fn fails(&self, args: &[&str]) -> String {
        self.fails_out(args, "out")
    }

    fn fails_out(&self, args: &[&str], out_name: &str) -> String {
        let out = self.path(out_name);
        let before = files_in(&out);
        let o = evalscore()
            .current_dir(self.dir.path())
            .arg("run")
            .args(args)
            .arg("--out")
            .arg(out_name)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "stdout: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(o.stdout.is_empty());
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.starts_with("error: "), "{err}");
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{err}"
        );
        assert_eq!(files_in(&out), before, "no new files in the output folder");
        err
    }
}

fn ex(name: &str) -> String {
    examples().join(name).display().to_string()
}

const QA_TASK: &str = "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n";

#[test]
fn missing_input_path() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    assert_eq!(
        c.fails(&["t.yaml", "--input", "nope.parquet"]),
        "error: nope.parquet: cannot read input: No such file or directory (os error 2)\nhint: check the `--input` path\n"
    );
}

#[test]
fn directory_without_parquet_files() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    std::fs::create_dir(c.path("empty")).unwrap();
    assert_eq!(
        c.fails(&["t.yaml", "--input", "empty"]),
        "error: empty: directory holds no Parquet files (*.parquet)\nhint: point `--input` at Parquet files or a directory of them\n"
    );
}

#[test]
fn file_that_is_not_parquet() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    c.write(
        "junk.parquet",
        "this is not parquet at all, just some bytes",
    );
    let err = c.fails(&["t.yaml", "--input", "junk.parquet"]);
    assert!(
        err.starts_with("error: junk.parquet: not a readable Parquet file: "),
        "{err}"
    );
    assert!(
        err.ends_with(
            "hint: the file may be truncated, still being written, or not Parquet at all\n"
        ),
        "{err}"
    );
}

#[test]
fn truncated_parquet() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    let bytes = std::fs::read(examples().join("qa.parquet")).unwrap();
    std::fs::write(c.path("half.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    let err = c.fails(&["t.yaml", "--input", "half.parquet"]);
    assert!(
        err.starts_with("error: half.parquet: not a readable Parquet file: "),
        "{err}"
    );
}

#[test]
fn different_schemas_name_both_files_and_the_column() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
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
            "error: inputs `{}` and `{}` have different schemas: column `question` is missing from the second\nhint: all inputs of one run must share one schema; run them separately\n",
            ex("qa.parquet"),
            ex("mcqa.parquet")
        )
    );
}

#[test]
fn jsonl_line_that_is_not_json() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    c.write(
        "bad.jsonl",
        "{\"answer\": \"a\", \"output\": \"a\"}\n{\"answer\": \"b\", \"output\": }\n",
    );
    assert_eq!(
        c.fails(&["t.yaml", "--input", "bad.jsonl"]),
        "error: bad.jsonl, line 2: not valid JSON: expected value at line 1 column 27\nhint: every line of a JSON Lines file must be one JSON object\n"
    );
}

#[test]
fn jsonl_invalid_utf8() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    std::fs::write(
        c.path("bad.jsonl"),
        b"{\"answer\": \"a\", \"output\": \"a\"}\n{\"answer\": \"\xff\", \"output\": \"b\"}\n",
    )
    .unwrap();
    assert_eq!(
        c.fails(&["t.yaml", "--input", "bad.jsonl"]),
        "error: bad.jsonl, line 2: invalid UTF-8 at byte 13 of the line\nhint: JSON Lines files must be UTF-8; re-export the file as UTF-8\n"
    );
}

#[test]
fn unknown_scorer_type_with_suggestion() {
    let c = Case::new();
    c.write("t.yaml", "definition:\n  scorers:\n    - type: string_equal\n      ground_truth: \"{{ sample.answer }}\"\n");
    // The types, in the registry's order (the registry is the one list of them).
    let types = evalscore_engine::registry::type_names().join(", ");
    assert!(types.starts_with("string_equals, string_equals_mcqa, match, includes, "));
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet")]),
        format!("error: task file `t.yaml`, line 3, column 13: unknown scorer type `string_equal`\nhint: did you mean `string_equals`? scorer types: {types}\n")
    );
}

#[test]
fn unknown_key_in_scorer() {
    let c = Case::new();
    c.write("t.yaml", "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      ignore_case: true\n");
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet")]),
        "error: task file `t.yaml`, line 5, column 7: unknown key `ignore_case` in scorer `string_equals`\nhint: allowed keys: type, key, display_name, purpose, metrics, normalize, extract, write_scores, ground_truth, value\n"
    );
}

#[test]
fn invalid_regex_is_a_load_error_at_its_line() {
    let c = Case::new();
    c.write(
        "t.yaml",
        "definition:\n  scorers:\n    - type: regex\n      pattern: \"(?i)answer: (\\\\d+\"\n",
    );
    let err = c.fails(&["t.yaml", "--input", &ex("qa.parquet")]);
    assert!(
        err.starts_with("error: task file `t.yaml`, line 4, column 16: invalid regular expression in `regex.pattern`: unclosed group\nhint: patterns use Rust regex syntax"),
        "{err}"
    );
}

#[test]
fn oversized_regex_is_a_load_error_at_its_line() {
    let c = Case::new();
    c.write(
        "t.yaml",
        "definition:\n  scorers:\n    - type: regex\n      pattern: \"(?:a{1000}){1000}\"\n",
    );
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet")]),
        "error: task file `t.yaml`, line 4, column 16: the regular expression in `regex.pattern` is too large: compiled, it exceeds the size limit of 1 MiB\nhint: counted repetitions multiply (`\\w{5000}`, `(?:a{1000}){1000}`): use a smaller count, or `+` or `*`\n"
    );
}

#[test]
fn custom_condition_failing_on_a_row_names_the_row() {
    let c = Case::new();
    c.write(
        "t.yaml",
        "definition:\n  scorers:\n    - type: custom\n      condition: \"value + 1\"\n",
    );
    let err = c.fails(&["t.yaml", "--input", &ex("qa.parquet")]);
    assert!(
        err.contains("row 1: scorer `custom`: `custom.condition` failed:"),
        "{err}"
    );
}

#[test]
fn template_naming_a_missing_column_lists_the_columns() {
    let c = Case::new();
    c.write("t.yaml", "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answr }}\"\n");
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet")]),
        "error: task file `t.yaml`, line 4, column 21: template of `string_equals.ground_truth` names column `answr`, which the input does not have\nhint: did you mean `answer`? available columns: id, question, subject, answer, output, label_gt, label_pred\n"
    );
}

#[test]
fn template_syntax_error() {
    let c = Case::new();
    c.write("t.yaml", "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer | }}\"\n");
    let err = c.fails(&["t.yaml", "--input", &ex("qa.parquet")]);
    assert!(err.starts_with("error: task file `t.yaml`, line 4, column 21: template syntax error in `string_equals.ground_truth`: "), "{err}");
}

#[test]
fn placeholder_without_value() {
    let c = Case::new();
    c.write("t.yaml", "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.<< config.col >> }}\"\n");
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet")]),
        "error: task file `t.yaml`, line 4, column 32: placeholder `<< config.col >>` has no value\nhint: add `config: {col: ...}` to the task file or pass `--set col=VALUE`\n"
    );
}

#[test]
fn yaml_syntax_error_is_located() {
    let c = Case::new();
    c.write(
        "t.yaml",
        "definition:\n  scorers: [\n    {type: string_equals\n",
    );
    let err = c.fails(&["t.yaml", "--input", &ex("qa.parquet")]);
    assert!(err.starts_with("error: task file `t.yaml`, line "), "{err}");
    assert!(err.contains("invalid YAML: "), "{err}");
}

#[test]
fn missing_model_output_column() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet"), "--output-column", "completion"]),
        "error: scorer `string_equals` has no `value:`, so it scores the model output, but the input has no model output column `completion` (from --output-column)\n  Caused by: available columns: id, question, subject, answer, output, label_gt, label_pred\nhint: name the model output column with `--output-column COL` (or `definition.output_column`), or give the scorer a `value:` template\n"
    );
}

#[test]
fn mcqa_ground_truth_that_is_not_one_character_names_row_column_value() {
    let c = Case::new();
    c.write("t.yaml", "definition:\n  scorers:\n    - type: string_equals_mcqa\n      ground_truth_choice: \"{{ sample.label_gt }}\"\n");
    let err = c.fails(&["t.yaml", "--input", &ex("qa.parquet")]);
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
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    std::fs::create_dir(c.path("out")).unwrap();
    std::fs::write(c.path("out/metrics.json"), "{}").unwrap();
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet")]),
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
    let c = Case::new();
    c.write("t.yaml", "definition:\n  scorers:\n    - type: string_equals_mcqa\n      ground_truth_choice: \"{{ sample.label_gt }}\"\n");
    c.fails(&["t.yaml", "--input", &ex("qa.parquet")]);
    assert_eq!(files_in(&c.path("out")), Vec::<String>::new());
}

#[test]
fn unwritable_output_folder() {
    let c = Case::new();
    c.write("t.yaml", QA_TASK);
    c.write("file", "a file, not a folder");
    let err = c.fails_out(&["t.yaml", "--input", &ex("qa.parquet")], "file/sub");
    assert!(
        err.starts_with("error: cannot create the output folder `file/sub`\n  Caused by: "),
        "{err}"
    );
    assert!(Path::new(&c.path("file")).is_file());
}

#[test]
fn group_by_a_missing_column() {
    let c = Case::new();
    c.write(
        "t.yaml",
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, group_by: [topic]}\n",
    );
    assert_eq!(
        c.fails(&["t.yaml", "--input", &ex("qa.parquet")]),
        "error: task file `t.yaml`, line 6, column 11: metric `mean` groups by column `topic`, which the input does not have\nhint: available columns: id, question, subject, answer, output, label_gt, label_pred\n"
    );
}
