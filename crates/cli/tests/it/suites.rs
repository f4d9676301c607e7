//! Suites: `evalscore run SUITE.yaml` scores many tasks in one pass, each into
//! DIR/task=NAME/ with the outputs a run of that task alone writes, DIR/suite.json last;
//! a failing task fails the suite (exit 2, nothing committed) unless --keep-going (exit 3).
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::RecordBatch;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Output;

/// One scorer comparing the output with `answer`: the inline task of the suite, as a file.
const INLINE_TASK: &str =
    "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n";

/// Shared inputs, a task with its own inputs and a `set:`, and an inline definition.
pub(crate) const SUITE: &str = "\
inputs: [qa.parquet]
labels: {model: m1, team: a}
tasks:
  - name: qa
    task: qa.yaml
  - name: mcqa
    task: mcqa.yaml
    inputs: [mcqa.parquet]
    set: {answer_column: answer}
  - name: inline
    definition:
      scorers:
        - type: string_equals
          ground_truth: \"{{ sample.answer }}\"
";

/// A folder holding the examples' tasks and inputs, `suite.yaml` and `inline.yaml`.
pub(crate) fn workspace(suite: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["qa.yaml", "mcqa.yaml", "qa.parquet", "mcqa.parquet"] {
        std::fs::copy(examples().join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join("suite.yaml"), suite).unwrap();
    std::fs::write(dir.path().join("inline.yaml"), INLINE_TASK).unwrap();
    dir
}

/// `evalscore run ARGS...` in `dir`.
pub(crate) fn run_in_dir(dir: &Path, args: &[&str]) -> Output {
    evalscore()
        .current_dir(dir)
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

/// A JSON value without the keys that hold times (and `skip`).
pub(crate) fn timeless(v: &serde_json::Value, skip: &[&str]) -> serde_json::Value {
    const TIMES: [&str; 5] = [
        "started_at",
        "finished_at",
        "wall_seconds",
        "run_started_at",
        "threads",
    ];
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .filter(|(k, _)| !TIMES.contains(&k.as_str()) && !skip.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), timeless(v, skip)))
            .collect(),
        serde_json::Value::Array(a) => a.iter().map(|v| timeless(v, skip)).collect(),
        other => other.clone(),
    }
}

/// A Parquet file's rows (none, for a file without rows).
fn table(path: &Path) -> RecordBatch {
    let f = std::fs::File::open(path).unwrap();
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let schema = r.schema().clone();
    let batches: Vec<RecordBatch> = r.build().unwrap().map(|b| b.unwrap()).collect();
    arrow::compute::concat_batches(&schema, &batches).unwrap()
}

/// A table without its `run_started_at` column.
fn without_start(b: RecordBatch) -> RecordBatch {
    let keep: Vec<usize> = (0..b.num_columns())
        .filter(|&i| b.schema().field(i).name() != "run_started_at")
        .collect();
    b.project(&keep).unwrap()
}

/// The five files of `a` and `b` are the same, times aside: scores.parquet byte for byte,
/// the tables but for `run_started_at`, the JSON files but for times (and `skip` in run.json).
pub(crate) fn assert_same_outputs(a: &Path, b: &Path, skip: &[&str]) {
    assert_eq!(files_in(a), OUTPUT_FILES, "{}", a.display());
    assert_eq!(files_in(b), OUTPUT_FILES, "{}", b.display());
    assert!(
        std::fs::read(a.join("scores.parquet")).unwrap()
            == std::fs::read(b.join("scores.parquet")).unwrap(),
        "scores.parquet of {} and {} differ",
        a.display(),
        b.display()
    );
    for t in ["metrics.parquet", "confusion.parquet"] {
        assert_eq!(
            without_start(table(&a.join(t))),
            without_start(table(&b.join(t))),
            "{t}"
        );
    }
    assert_eq!(
        timeless(&read_json(&a.join("metrics.json")), &[]),
        timeless(&read_json(&b.join("metrics.json")), &[])
    );
    assert_eq!(
        timeless(&read_json(&a.join("run.json")), skip),
        timeless(&read_json(&b.join("run.json")), skip)
    );
}

#[test]
fn each_task_of_a_suite_writes_what_its_own_run_writes() {
    let dir = workspace(SUITE);
    let d = dir.path();
    let out = succeeded(run_in_dir(
        d,
        &[
            "suite.yaml",
            "--out",
            "out",
            "--run-id",
            "r7",
            "--label",
            "team=b",
        ],
    ));
    assert_eq!(
        stdout(&out).lines().take(5).collect::<Vec<_>>(),
        [
            "task    status  rows  outputs",
            "------  ------  ----  ---------------",
            "qa      ok       300  out/task=qa",
            "mcqa    ok       300  out/task=mcqa",
            "inline  ok       300  out/task=inline",
        ]
    );
    assert_eq!(
        files_in(&d.join("out")),
        ["suite.json", "task=inline", "task=mcqa", "task=qa"]
    );
    // Each task alone, with the same run id and labels (the command line's `team` wins).
    let labels = ["--run-id", "r7", "--label", "model=m1", "--label", "team=b"];
    let alone = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(labels);
        succeeded(run_in_dir(d, &all));
    };
    alone(&["qa.yaml", "--input", "qa.parquet", "--out", "qa"]);
    alone(&[
        "mcqa.yaml",
        "--input",
        "mcqa.parquet",
        "--set",
        "answer_column=answer",
        "--out",
        "mcqa",
    ]);
    alone(&["inline.yaml", "--input", "qa.parquet", "--out", "inline"]);
    assert_same_outputs(&d.join("out/task=qa"), &d.join("qa"), &[]);
    assert_same_outputs(&d.join("out/task=mcqa"), &d.join("mcqa"), &[]);
    // The inline task's run.json names the suite file as its task.
    assert_same_outputs(&d.join("out/task=inline"), &d.join("inline"), &["task"]);
    let run = read_json(&d.join("out/task=inline/run.json"));
    assert_eq!(run["task"]["path"], "suite.yaml");

    let suite = read_json(&d.join("out/suite.json"));
    assert_eq!(
        timeless(&suite, &[]),
        serde_json::json!({
            "suite": {"path": "suite.yaml", "sha256": format!("{:x}", Sha256::digest(SUITE.as_bytes()))},
            "run_id": "r7",
            "labels": {"model": "m1", "team": "b"},
            "evalscore_version": env!("CARGO_PKG_VERSION"),
            "tasks": [
                {"name": "qa", "task": "qa.yaml", "inputs": ["qa.parquet"], "status": "ok",
                 "error": null, "rows": 300, "out": "out/task=qa"},
                {"name": "mcqa", "task": "mcqa.yaml", "inputs": ["mcqa.parquet"], "status": "ok",
                 "error": null, "rows": 300, "out": "out/task=mcqa"},
                {"name": "inline", "task": "inline", "inputs": ["qa.parquet"], "status": "ok",
                 "error": null, "rows": 300, "out": "out/task=inline"},
            ],
        })
    );
}

/// A suite whose second task fails on its first row, and whose third names a column the
/// input does not have.
const FAILING: &str = "\
inputs: [qa.parquet]
tasks:
  - name: qa
    task: qa.yaml
  - name: badrow
    definition:
      scorers:
        - type: string_equals_mcqa
          ground_truth_choice: \"{{ sample.answer }}\"
          choices: [A, B]
  - name: badcol
    definition:
      scorers:
        - type: string_equals
          ground_truth: \"{{ sample.nope }}\"
";

const BADROW: &str = "task `badrow`: qa.parquet, row 1: scorer `string_equals_mcqa`: column `answer` (`string_equals_mcqa.ground_truth_choice`) value \"yes\" is not a single character (string_equals_mcqa needs one choice letter such as \"B\")\nhint: no output was written; `--max-row-errors N` (or `N%`) scores up to N such rows 0.0 and lists them in run.json";
const BADCOL: &str = "task `badcol`: task file `suite.yaml`, line 15, column 25: template of `string_equals.ground_truth` names column `nope`, which the input does not have\nhint: available columns: id, question, subject, answer, output, label_gt, label_pred";

#[test]
fn a_failing_task_fails_the_suite_and_nothing_is_committed() {
    let dir = workspace(FAILING);
    let d = dir.path();
    let out = failed(run_in_dir(d, &["suite.yaml", "--out", "out"]), 2);
    // Every task is bound before a row is read: the missing column is found first.
    assert_eq!(stderr(&out), format!("error: {BADCOL}\n"));
    assert_eq!(stdout(&out), "");
    assert_eq!(files_in(&d.join("out")), Vec::<String>::new());

    // Without the bad column, the bad row fails the suite during the scoring.
    let only_row = FAILING.split("  - name: badcol").next().unwrap();
    std::fs::write(d.join("suite.yaml"), only_row).unwrap();
    let out = failed(run_in_dir(d, &["suite.yaml", "--out", "out"]), 2);
    assert_eq!(stderr(&out), format!("error: {BADROW}\n"));
    assert_eq!(files_in(&d.join("out")), Vec::<String>::new());
}

#[test]
fn keep_going_commits_the_other_tasks_and_records_the_failures() {
    let dir = workspace(FAILING);
    let d = dir.path();
    let out = failed(
        run_in_dir(d, &["suite.yaml", "--out", "out", "--keep-going"]),
        3,
    );
    assert_eq!(
        stderr(&out),
        format!("error: {BADROW}\nerror: {BADCOL}\n"),
        "the failures in the suite's order"
    );
    assert_eq!(
        stdout(&out).lines().take(5).collect::<Vec<_>>(),
        [
            "task    status  rows  outputs",
            "------  ------  ----  ---------------",
            "qa      ok       300  out/task=qa",
            "badrow  failed        out/task=badrow",
            "badcol  failed        out/task=badcol",
        ]
    );
    assert_eq!(files_in(&d.join("out")), ["suite.json", "task=qa"]);
    assert_eq!(files_in(&d.join("out/task=qa")), OUTPUT_FILES);
    let suite = read_json(&d.join("out/suite.json"));
    let tasks = timeless(&suite["tasks"], &[]);
    assert_eq!(
        tasks,
        serde_json::json!([
            {"name": "qa", "task": "qa.yaml", "inputs": ["qa.parquet"], "status": "ok",
             "error": null, "rows": 300, "out": "out/task=qa"},
            {"name": "badrow", "task": "inline", "inputs": ["qa.parquet"], "status": "failed",
             "error": BADROW, "rows": null, "out": "out/task=badrow"},
            {"name": "badcol", "task": "inline", "inputs": ["qa.parquet"], "status": "failed",
             "error": BADCOL, "rows": null, "out": "out/task=badcol"},
        ])
    );
    // The suite's run id is every task's.
    let run = read_json(&d.join("out/task=qa/run.json"));
    assert_eq!(run["run_id"], suite["run_id"]);
}

/// With `--overwrite`, a task that fails now leaves no folder, though an earlier suite wrote
/// one: no reader of the tree finds the earlier run's rows under the new suite.json. A file
/// of the user's in that folder stays, and so does the folder.
#[test]
fn keep_going_with_overwrite_clears_the_earlier_run_of_a_failed_task() {
    // The same tasks, all scoring, then `badrow` and `badcol` failing.
    let passing = FAILING
        .replace(
            "string_equals_mcqa\n          ground_truth_choice: \"{{ sample.answer }}\"\n          choices: [A, B]",
            "string_equals\n          ground_truth: \"{{ sample.answer }}\"",
        )
        .replace("{{ sample.nope }}", "{{ sample.answer }}");
    assert!(
        !passing.contains("mcqa") && !passing.contains("nope"),
        "{passing}"
    );
    let dir = workspace(&passing);
    let d = dir.path();
    let out = run_in_dir(d, &["suite.yaml", "--out", "out", "--run-id", "RUN1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(files_in(&d.join("out/task=badcol")), OUTPUT_FILES);
    std::fs::write(d.join("out/task=badrow/notes.txt"), "mine").unwrap();
    std::fs::write(d.join("suite.yaml"), FAILING).unwrap();
    let args = [
        "suite.yaml",
        "--out",
        "out",
        "--keep-going",
        "--overwrite",
        "--run-id",
        "RUN2",
    ];
    failed(run_in_dir(d, &args), 3);
    assert_eq!(
        files_in(&d.join("out")),
        ["suite.json", "task=badrow", "task=qa"]
    );
    assert_eq!(files_in(&d.join("out/task=badrow")), ["notes.txt"]);
    assert_eq!(read_json(&d.join("out/task=qa/run.json"))["run_id"], "RUN2");
    assert_eq!(read_json(&d.join("out/suite.json"))["run_id"], "RUN2");

    // A suite without `badcol` over the same folder: the earlier `task=badcol` is cleared too.
    std::fs::write(d.join("suite.yaml"), &passing).unwrap();
    succeeded(run_in_dir(
        d,
        &[
            "suite.yaml",
            "--out",
            "out",
            "--overwrite",
            "--run-id",
            "RUN3",
        ],
    ));
    std::fs::write(
        d.join("one.yaml"),
        "inputs: [qa.parquet]\ntasks:\n  - {name: qa, task: qa.yaml}\n",
    )
    .unwrap();
    succeeded(run_in_dir(
        d,
        &[
            "one.yaml",
            "--out",
            "out",
            "--overwrite",
            "--run-id",
            "RUN4",
        ],
    ));
    assert_eq!(
        files_in(&d.join("out")),
        ["suite.json", "task=badrow", "task=qa"]
    );
    assert_eq!(files_in(&d.join("out/task=badrow")), ["notes.txt"]);
}

#[test]
fn input_on_the_command_line_replaces_the_shared_inputs() {
    let suite = "inputs: [nowhere.parquet]\ntasks:\n  - name: qa\n    task: qa.yaml\n  - name: mcqa\n    task: mcqa.yaml\n    inputs: [mcqa.parquet]\n";
    let dir = workspace(suite);
    let d = dir.path();
    succeeded(run_in_dir(
        d,
        &["suite.yaml", "--input", "qa.parquet", "--out", "out"],
    ));
    let suite = read_json(&d.join("out/suite.json"));
    assert_eq!(
        suite["tasks"][0]["inputs"],
        serde_json::json!(["qa.parquet"])
    );
    assert_eq!(
        suite["tasks"][1]["inputs"],
        serde_json::json!(["mcqa.parquet"])
    );
    assert_eq!(suite["labels"], serde_json::Value::Null);
}

#[test]
fn suite_paths_are_relative_to_the_suite_file() {
    let dir = workspace(SUITE);
    let d = dir.path();
    let out = succeeded(
        evalscore()
            .arg("run")
            .arg(d.join("suite.yaml"))
            .arg("--out")
            .arg(d.join("out"))
            .output()
            .unwrap(),
    );
    assert!(
        stdout(&out).contains("3 tasks (3 ok, 0 failed)"),
        "{}",
        stdout(&out)
    );
    let run = read_json(&d.join("out/task=qa/run.json"));
    assert_eq!(run["task"]["path"], d.join("qa.yaml").display().to_string());
    assert_eq!(
        input_paths(&run),
        [d.join("qa.parquet").display().to_string()]
    );
}

#[test]
fn suite_mistakes_are_located_and_task_options_keep_their_messages() {
    let dir =
        workspace("tasks:\n  - name: a\n    task: qa.yaml\n  - name: a\n    task: mcqa.yaml\n");
    let d = dir.path();
    let out = failed(
        run_in_dir(d, &["suite.yaml", "--input", "qa.parquet", "--out", "out"]),
        2,
    );
    assert_eq!(
        stderr(&out),
        "error: suite file `suite.yaml`, line 4, column 5: task name `a` is given twice (first at line 2, column 5)\nhint: each task writes to DIR/task=NAME/: give every task its own name\n"
    );
    let dir = workspace("tasks:\n  - name: a\n    task: qa.yaml\n");
    let out = failed(run_in_dir(dir.path(), &["suite.yaml", "--out", "out"]), 2);
    assert_eq!(
        stderr(&out),
        "error: suite file `suite.yaml`: task `a` has no inputs\nhint: give the suite shared `inputs:`, the task its own `inputs:`, or pass --input\n"
    );
    // A task without --input: clap's message, as before suites.
    let out = failed(run_in_dir(dir.path(), &["qa.yaml", "--out", "out"]), 2);
    assert_starts(
        &stderr(&out),
        "error: the following required arguments were not provided:\n  --input <PATH>\n",
    );
    let out = failed(
        run_in_dir(
            dir.path(),
            &[
                "qa.yaml",
                "--input",
                "qa.parquet",
                "--out",
                "out",
                "--keep-going",
            ],
        ),
        2,
    );
    assert_eq!(
        stderr(&out),
        "error: --keep-going applies to a suite file (YAML with top-level `tasks:`), not to a task\nhint: drop --keep-going, or run a suite\n"
    );
}

/// Runs each task `NAME.yaml` of `tasks` alone over `input` with run id `r1` and `extra`,
/// into `NAME/`, and checks its outputs equal the suite's `out/task=NAME/`.
fn each_alone_as_in_suite(d: &Path, tasks: &[&str], input: &str, extra: &[&str]) {
    for t in tasks {
        let task_file = format!("{t}.yaml");
        let mut args = vec![
            task_file.as_str(),
            "--input",
            input,
            "--out",
            t,
            "--run-id",
            "r1",
        ];
        args.extend(extra);
        succeeded(run_in_dir(d, &args));
        assert_same_outputs(&d.join(format!("out/task={t}")), &d.join(t), &[]);
    }
}

/// Tasks of one group read the model output from different columns, one of them JSON chat
/// completions: the text a suite makes once per column is each task's own.
#[test]
fn tasks_reading_the_model_output_from_different_columns_score_as_alone() {
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use std::sync::Arc;
    let case = Case::new();
    let n = 40usize;
    let answers: Vec<String> = (0..n).map(|i| ["A", "B", "C"][i % 3].to_owned()).collect();
    // Even rows: a chat completion whose content is the answer; odd rows: plain text.
    let chat: Vec<String> = (0..n)
        .map(|i| match i % 2 {
            0 => format!(
                "{{\"choices\": [{{\"message\": {{\"role\": \"assistant\", \"content\": \"{}\"}}}}]}}",
                answers[i]
            ),
            _ => "wrong".to_owned(),
        })
        .collect();
    let plain: Vec<String> = (0..n)
        .map(|i| match i % 3 {
            0 => answers[i].clone(),
            _ => "nope".to_owned(),
        })
        .collect();
    case.write_parquet(
        "rows.parquet",
        vec![
            (
                "id",
                Arc::new(Int64Array::from_iter_values(0..n as i64)) as ArrayRef,
            ),
            ("chat", Arc::new(StringArray::from(chat)) as ArrayRef),
            ("plain", Arc::new(StringArray::from(plain)) as ArrayRef),
            ("answer", Arc::new(StringArray::from(answers)) as ArrayRef),
        ],
    );
    let task = |column: &str, scorer: &str, option: &str| {
        format!("definition:\n  output_column: {column}\n  scorers:\n    - type: {scorer}\n      {option}: \"{{{{ sample.answer }}}}\"\n      metrics:\n        - {{type: mean, field: is_correct}}\n")
    };
    case.write("chat.yaml", &task("chat", "string_equals", "ground_truth"));
    case.write(
        "plain.yaml",
        &task("plain", "string_equals", "ground_truth"),
    );
    case.write("chat_in.yaml", &task("chat", "includes", "expected"));
    case.write(
        "suite.yaml",
        "inputs: [rows.parquet]\ntasks:\n  - {name: chat, task: chat.yaml}\n  - {name: plain, task: plain.yaml}\n  - {name: chat_in, task: chat_in.yaml}\n",
    );
    let d = case.dir.path();
    succeeded(run_in_dir(
        d,
        &[
            "suite.yaml",
            "--out",
            "out",
            "--run-id",
            "r1",
            "--keep",
            "id",
        ],
    ));
    each_alone_as_in_suite(
        d,
        &["chat", "plain", "chat_in"],
        "rows.parquet",
        &["--keep", "id"],
    );
    // The chat column's text is each completion's content: its even rows match.
    let mean = |t: &str| {
        read_json(&d.join(format!("out/task={t}/metrics.json")))["scorers"][0]["metrics"][0]
            ["value"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(mean("chat"), 0.5);
    assert_eq!(mean("chat_in"), 0.5);
    assert_eq!(mean("plain"), 14.0 / 40.0);
}

/// Tasks folding the same label columns into binary classifications share the batch's 2x2
/// counts where their classes agree: each task's outputs are those of its run alone, the
/// task whose classes are swapped included.
#[test]
fn tasks_classifying_the_same_labels_score_as_alone() {
    let dir = workspace("");
    let d = dir.path();
    let same = std::fs::read_to_string(examples().join("classification.yaml")).unwrap();
    std::fs::write(d.join("a.yaml"), &same).unwrap();
    std::fs::write(d.join("b.yaml"), &same).unwrap();
    let swapped = same
        .replace("positive_answer: \"yes\"", "positive_answer: \"tmp\"")
        .replace("negative_answer: \"no\"", "negative_answer: \"yes\"")
        .replace("positive_answer: \"tmp\"", "positive_answer: \"no\"");
    assert_ne!(swapped, same);
    std::fs::write(d.join("swapped.yaml"), swapped).unwrap();
    std::fs::write(
        d.join("suite.yaml"),
        "inputs: [qa.parquet]\ntasks:\n  - {name: a, task: a.yaml}\n  - {name: swapped, task: swapped.yaml}\n  - {name: b, task: b.yaml}\n",
    )
    .unwrap();
    succeeded(run_in_dir(
        d,
        &["suite.yaml", "--out", "out", "--run-id", "r1"],
    ));
    each_alone_as_in_suite(d, &["a", "swapped", "b"], "qa.parquet", &[]);
    // Precision of "yes" and of "no": the swap is the other class's figure.
    let precision = |t: &str| {
        let m = read_json(&d.join(format!("out/task={t}/metrics.json")));
        m["scorers"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["type"] == "precision")
            .unwrap()["value"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(precision("a"), precision("b"));
    assert_ne!(precision("a"), precision("swapped"));
}

/// suite.json cannot be put in place (a folder has its name) after tasks failed with
/// `--keep-going`: the error says so, and its hint still names the tasks' failures, which
/// the summary would have shown.
#[test]
fn a_suite_json_that_cannot_be_written_names_the_failed_tasks() {
    let dir = workspace(FAILING);
    let d = dir.path();
    std::fs::create_dir_all(d.join("out/suite.json")).unwrap();
    let args = ["suite.yaml", "--out", "out", "--keep-going", "--overwrite"];
    let err = stderr(&failed(run_in_dir(d, &args), 2));
    assert!(
        err.starts_with("error: cannot replace `out/suite.json`: it is a directory\nhint: "),
        "{err}"
    );
    // Each failure's message, without its own hint.
    let message = |e: &'static str| e.split("\nhint: ").next().unwrap();
    let (row, col) = (message(BADROW), message(BADCOL));
    assert!(
        err.ends_with(&format!(
            "; the tasks that failed before it: {row}; {col}\n"
        )),
        "{err}"
    );
}

/// Values are read as written (YAML 1.2): a task named `y`, a label `010` or `yes`, a `set:`
/// value `yes` are that text, as `--label` and `--set` give them, not `true` or `10.0`.
#[test]
fn suite_values_are_the_text_written() {
    let suite = "inputs: [qa.parquet]\nlabels: {model: 010, flag: yes}\ntasks:\n  - name: y\n    task: qa.yaml\n";
    let dir = workspace(suite);
    let d = dir.path();
    succeeded(run_in_dir(d, &["suite.yaml", "--out", "out"]));
    assert_eq!(files_in(&d.join("out")), ["suite.json", "task=y"]);
    let json = read_json(&d.join("out/suite.json"));
    assert_eq!(
        json["labels"],
        serde_json::json!({"model": "010", "flag": "yes"})
    );
}

/// A suite file that is not YAML is reported as the suite file it is (not as a task file
/// lacking `--input`); a task file that is not there is the suite's mistake, located.
#[test]
fn suite_file_mistakes_found_early_are_located() {
    let dir = workspace(
        "inputs: [qa.parquet]\ntasks:\n  - name: a\n    task: qa.yaml\nlabels: {model: m1\n",
    );
    let d = dir.path();
    let err = stderr(&failed(run_in_dir(d, &["suite.yaml", "--out", "out"]), 2));
    assert!(
        err.starts_with("error: suite file `suite.yaml`, line "),
        "{err}"
    );
    assert!(err.contains("invalid YAML"), "{err}");
    std::fs::write(
        d.join("suite.yaml"),
        "inputs: [qa.parquet]\ntasks:\n  - name: a\n    task: qa.yaml\n  - name: b\n    task: nope/missing.yaml\n",
    )
    .unwrap();
    let err = stderr(&failed(
        run_in_dir(d, &["suite.yaml", "--out", "out", "--keep-going"]),
        2,
    ));
    assert_eq!(
        err,
        "error: suite file `suite.yaml`, line 5, column 5: task `b`: cannot read task file `nope/missing.yaml`: No such file or directory (os error 2)\nhint: a task file's path is relative to the suite file's folder\n"
    );
    assert!(!d.join("out/suite.json").exists());
}

/// A suite holds about 7 descriptors a task until its commit: 40 tasks under a soft limit of
/// 128 open files run, the soft limit raised to the hard one at start.
#[cfg(unix)]
#[test]
fn a_suite_of_many_tasks_runs_under_a_low_soft_limit_on_open_files() {
    let tasks: String = (0..40)
        .map(|i| format!("  - {{name: t{i}, task: inline.yaml}}\n"))
        .collect();
    let dir = workspace(&format!("inputs: [qa.parquet]\ntasks:\n{tasks}"));
    let o = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg("ulimit -Sn 128 && exec \"$0\" run suite.yaml --out out --quiet")
        .arg(assert_cmd::cargo::cargo_bin("evalscore"))
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    succeeded(o);
    for i in 0..40 {
        assert!(
            dir.path().join(format!("out/task=t{i}/run.json")).exists(),
            "t{i}"
        );
    }
}
