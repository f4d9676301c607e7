//! Suites over trees and in object storage: each task's `filter:` (in its task file, or
//! beside an inline `definition:`) picks its partitions of the shared inputs; a suite writes
//! into a prefix what it writes into a folder.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use crate::suites::{assert_same_outputs, run_in_dir, timeless, workspace, SUITE};

/// The kept ids of task `name`'s scores.parquet under `case`'s `out/`.
fn task_ids(case: &Case, name: &str) -> Vec<i64> {
    ints(
        &read_parquet(&case.path(&format!("out/task={name}/scores.parquet"))),
        "id",
    )
}

#[test]
fn each_task_of_a_suite_reads_the_partitions_its_filter_selects() {
    let case = crate::hive::exports();
    let task = |filter: &str| {
        format!("{filter}definition:\n  scorers:\n    - type: string_equals\n      key: exact\n      ground_truth: \"{{{{ sample.answer }}}}\"\n")
    };
    case.write("all.yaml", &task(""));
    case.write("m1.yaml", &task("filter: \"model = 'm1'\"\n"));
    case.write("m2.yaml", &task("filter: \"model = 'm2'\"\n"));
    case.write(
        "suite.yaml",
        "inputs: [\"exports/**/*.parquet\"]\ntasks:\n  - {name: all, task: all.yaml}\n  - {name: m1, task: m1.yaml}\n  - {name: m2, task: m2.yaml}\n  - {name: also_m1, task: m1.yaml}\n",
    );
    let (code, out, err) = case.run(&["suite.yaml", "--keep", "id"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let ids = |name: &str| task_ids(&case, name);
    assert_eq!(ids("all"), vec![0, 1, 2, 3, 4]);
    assert_eq!(ids("m1"), vec![0, 1]);
    assert_eq!(ids("also_m1"), vec![0, 1]);
    assert_eq!(ids("m2"), vec![2, 3, 4]);
    let run = read_json(&case.path("out/task=m2/run.json"));
    assert_eq!(run["input_partitions"]["filter"], "model = 'm2'", "{run}");
    assert_eq!(run["input_partitions"]["files_matched"], 1, "{run}");
}

/// An inline task takes its `filter:` beside its `definition:` (block or flow style); beside
/// `task:` it is an error, the task file giving its own.
#[test]
fn an_inline_task_filters_its_partitions_as_a_task_file_does() {
    let case = crate::hive::exports();
    case.write(
        "suite.yaml",
        "inputs: [\"exports/**/*.parquet\"]\ntasks:\n  - name: m2\n    filter: \"model = 'm2'\"\n    definition:\n      scorers:\n        - type: string_equals\n          ground_truth: \"{{ sample.answer }}\"\n  - {name: m1, definition: {scorers: [{type: string_equals, ground_truth: \"{{ sample.answer }}\"}]}, filter: \"model = 'm1'\"}\n",
    );
    let (code, out, err) = case.run(&["suite.yaml", "--keep", "id"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let ids = |name: &str| task_ids(&case, name);
    assert_eq!(ids("m2"), vec![2, 3, 4]);
    assert_eq!(ids("m1"), vec![0, 1]);
    let run = read_json(&case.path("out/task=m2/run.json"));
    assert_eq!(run["input_partitions"]["filter"], "model = 'm2'", "{run}");

    case.write("all.yaml", "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n");
    case.write(
        "bad.yaml",
        "inputs: [\"exports/**/*.parquet\"]\ntasks:\n  - name: all\n    task: all.yaml\n    filter: \"model = 'm2'\"\n",
    );
    let err = case.fails(&["bad.yaml"]);
    assert_eq!(
        err,
        "error: suite file `bad.yaml`, line 5, column 13: task `all` has `filter:` beside `task:`\n\
         hint: a task file gives its own `filter:`; or filter every task with `--where`\n"
    );
}

#[test]
fn a_suite_writes_into_object_storage_what_it_writes_into_a_folder() {
    use evalscore_test_support::stores::*;
    let s3 = moto();
    create_bucket(s3.port, "evals");
    let env = s3_env(&format!("http://127.0.0.1:{}", s3.port));
    let dir = workspace(SUITE);
    let d = dir.path();
    succeeded(run_in_dir(
        d,
        &["suite.yaml", "--run-id", "r7", "--out", "out"],
    ));
    let remote = |extra: &[&str]| {
        let mut c = evalscore();
        c.current_dir(d)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .arg("run")
            .args(["suite.yaml", "--out", "s3://evals/suites/m1/"])
            .args(extra);
        c.output().unwrap()
    };
    let o = succeeded(remote(&["--run-id", "r7"]));
    assert!(stdout(&o).contains("qa      ok       300  s3://evals/suites/m1/task=qa"));
    let tasks = ["inline", "mcqa", "qa"];
    let mut expected = vec!["suites/m1/suite.json".to_owned()];
    for t in tasks {
        expected.extend(
            OUTPUT_FILES
                .iter()
                .map(|f| format!("suites/m1/task={t}/{f}")),
        );
    }
    expected.sort();
    assert_eq!(list_keys(s3.port, "evals", "suites/"), expected);
    // Each task's objects are the local suite's files, times aside.
    for t in tasks {
        let got = d.join("got").join(format!("task={t}"));
        std::fs::create_dir_all(&got).unwrap();
        for f in OUTPUT_FILES {
            let key = format!("suites/m1/task={t}/{f}");
            std::fs::write(got.join(f), get_object(s3.port, "evals", &key).unwrap()).unwrap();
        }
        assert_same_outputs(&d.join(format!("out/task={t}")), &got, &[]);
    }
    let suite: serde_json::Value =
        serde_json::from_slice(&get_object(s3.port, "evals", "suites/m1/suite.json").unwrap())
            .unwrap();
    let mut want = timeless(&read_json(&d.join("out/suite.json")), &[]);
    for (i, t) in ["qa", "mcqa", "inline"].iter().enumerate() {
        want["tasks"][i]["out"] = format!("s3://evals/suites/m1/task={t}").into();
    }
    assert_eq!(timeless(&suite, &[]), want);

    // Again: refused before anything is read, unless --overwrite.
    let o = remote(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: the output folder `s3://evals/suites/m1/` already holds suite.json\nhint: pass `--overwrite` to replace them, or choose another `--out` prefix\n"
    );
    succeeded(remote(&["--overwrite", "--run-id", "r8"]));
    let suite: serde_json::Value =
        serde_json::from_slice(&get_object(s3.port, "evals", "suites/m1/suite.json").unwrap())
            .unwrap();
    assert_eq!(suite["run_id"], "r8");
    assert_eq!(list_keys(s3.port, "evals", "suites/"), expected);
    // The inline task failing now, with --keep-going: the earlier run's objects are gone.
    let failing = SUITE.replace("{{ sample.answer }}", "{{ sample.nope }}");
    std::fs::write(d.join("suite.yaml"), failing).unwrap();
    assert_eq!(
        remote(&["--overwrite", "--keep-going"]).status.code(),
        Some(3)
    );
    expected.retain(|k| !k.starts_with("suites/m1/task=inline/"));
    assert_eq!(list_keys(s3.port, "evals", "suites/"), expected);
    // A suite of `qa` alone: the other tasks' objects of the earlier suite go too.
    std::fs::write(
        d.join("suite.yaml"),
        "inputs: [qa.parquet]\ntasks:\n  - {name: qa, task: qa.yaml}\n",
    )
    .unwrap();
    assert_eq!(remote(&["--overwrite"]).status.code(), Some(0));
    expected.retain(|k| !k.starts_with("suites/m1/task=mcqa/"));
    assert_eq!(list_keys(s3.port, "evals", "suites/"), expected);
}
