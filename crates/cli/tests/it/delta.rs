//! `run --format delta`: a run appended to the Delta tables under one root, checked through
//! the tables' own logs (the Python tests read them back with deltalake, Polars and DuckDB).
#![allow(clippy::unwrap_used)]

use crate::common::*;
use crate::suites::{run_in_dir, workspace, SUITE};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every commit of `table`, in version order, as its actions.
fn commits(root: &Path, table: &str) -> Vec<Vec<Value>> {
    let dir = root.join(table).join("_delta_log");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        })
        .collect()
}

/// The table's live files (path → partition values), from its log.
fn live(root: &Path, table: &str) -> BTreeMap<String, Value> {
    let mut files = BTreeMap::new();
    for c in commits(root, table) {
        for a in c {
            if let Some(add) = a.get("add") {
                files.insert(
                    add["path"].as_str().unwrap().to_owned(),
                    add["partitionValues"].clone(),
                );
            }
            if let Some(r) = a.get("remove") {
                files.remove(r["path"].as_str().unwrap());
            }
        }
    }
    files
}

/// The run ids of the live files of `table`, sorted, one per file.
fn run_ids(root: &Path, table: &str) -> Vec<String> {
    let mut ids: Vec<String> = live(root, table)
        .values()
        .map(|v| v["run_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

fn delta_run(task: &str, input: &str, root: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--format", "delta"];
    args.extend_from_slice(extra);
    run_task(&examples().join(task), &examples().join(input), root, &args)
}

/// The schema's column names of `table`'s newest metadata.
fn columns(root: &Path, table: &str) -> Vec<String> {
    let meta = commits(root, table)
        .into_iter()
        .flatten()
        .filter_map(|a| a.get("metaData").cloned())
        .next_back()
        .unwrap();
    let schema: Value = serde_json::from_str(meta["schemaString"].as_str().unwrap()).unwrap();
    schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn runs_append_a_rerun_is_refused_and_overwrite_replaces_it_in_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("lake");
    succeeded(delta_run(
        "mcqa.yaml",
        "mcqa.parquet",
        &root,
        &["--run-id", "r1", "--label", "model=m1"],
    ));
    succeeded(delta_run(
        "mcqa.yaml",
        "mcqa.parquet",
        &root,
        &["--run-id", "r2"],
    ));
    for table in ["scores", "metrics", "confusion", "runs"] {
        assert_eq!(commits(&root, table).len(), 2, "{table}");
        let protocol = &commits(&root, table)[0][1]["protocol"];
        assert_eq!(
            protocol,
            &serde_json::json!({"minReaderVersion": 1, "minWriterVersion": 2})
        );
    }
    assert_eq!(run_ids(&root, "scores"), ["r1", "r2"]);
    let scores = columns(&root, "scores");
    assert_eq!(scores.first().unwrap(), "id");
    assert_eq!(&scores[scores.len() - 2..], ["run_id", "task"]);
    let metrics = columns(&root, "metrics");
    assert_eq!(
        &metrics[metrics.len() - 4..],
        ["run_started_at", "labels", "run_id", "task"]
    );
    // A data file is the file a folder run writes (no run_id column: it is in the log).
    let folder = dir.path().join("folder");
    succeeded(run_task(
        &examples().join("mcqa.yaml"),
        &examples().join("mcqa.parquet"),
        &folder,
        &[],
    ));
    let (path, values) = live(&root, "scores").into_iter().next().unwrap();
    assert_eq!(values, serde_json::json!({"run_id": "r1", "task": "mcqa"}));
    assert!(
        path.starts_with("run_id=r1/task=mcqa/part-00000-"),
        "{path}"
    );
    assert_eq!(
        std::fs::read(root.join("scores").join(&path)).unwrap(),
        std::fs::read(folder.join("scores.parquet")).unwrap()
    );
    // No staging folder is left in the root.
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["confusion", "metrics", "runs", "scores"]);

    let o = failed(
        delta_run("mcqa.yaml", "mcqa.parquet", &root, &["--run-id", "r2"]),
        2,
    );
    assert_eq!(
        stderr(&o),
        format!(
            "error: `{}`: run `r2` is already in the `runs` table\nhint: pass `--overwrite` to replace that run's rows, or give another `--run-id`\n",
            root.display()
        )
    );
    assert_eq!(commits(&root, "scores").len(), 2);

    let before = live(&root, "scores");
    succeeded(delta_run(
        "mcqa.yaml",
        "mcqa.parquet",
        &root,
        &["--run-id", "r2", "--overwrite"],
    ));
    for table in ["scores", "metrics", "confusion", "runs"] {
        let c = commits(&root, table);
        assert_eq!(c.len(), 3, "{table}: one commit");
        let removes: Vec<&Value> = c[2].iter().filter_map(|a| a.get("remove")).collect();
        let adds: Vec<&Value> = c[2].iter().filter_map(|a| a.get("add")).collect();
        assert_eq!((removes.len(), adds.len()), (1, 1), "{table}");
        assert_eq!(adds[0]["partitionValues"]["run_id"], "r2");
    }
    let after = live(&root, "scores");
    assert_eq!(run_ids(&root, "scores"), ["r1", "r2"]);
    let r1 = |m: &BTreeMap<String, Value>| {
        m.iter()
            .find(|(_, v)| v["run_id"] == "r1")
            .map(|(k, _)| k.clone())
    };
    assert_eq!(r1(&before), r1(&after));
}

#[test]
fn a_task_that_gains_a_scorer_adds_columns_and_a_changed_type_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("lake");
    let one = dir.path().join("one.yaml");
    std::fs::write(&one, QA_TASK).unwrap();
    succeeded(run_task(
        &one,
        &examples().join("qa.parquet"),
        &root,
        &["--format", "delta", "--run-id", "a"],
    ));
    let two = dir.path().join("one.yaml");
    std::fs::write(
        &two,
        format!("{QA_TASK}    - type: string_equals\n      key: lenient\n      value: \"{{{{ sample.output | lower }}}}\"\n      ground_truth: \"{{{{ sample.answer }}}}\"\n"),
    )
    .unwrap();
    succeeded(run_task(
        &two,
        &examples().join("qa.parquet"),
        &root,
        &["--format", "delta", "--run-id", "b"],
    ));
    assert_eq!(
        columns(&root, "scores"),
        [
            "id",
            "string_equals__is_correct",
            "run_id",
            "task",
            "lenient__is_correct"
        ]
    );
    let evolved = commits(&root, "scores");
    assert!(evolved[1].iter().any(|a| a.get("metaData").is_some()));

    // `id` as text where the table has it as integers.
    let jsonl = dir.path().join("text_ids.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\":\"x1\",\"answer\":\"yes\",\"output\":\"yes\"}\n",
    )
    .unwrap();
    let o = failed(
        run_task(&two, &jsonl, &root, &["--format", "delta", "--run-id", "c"]),
        2,
    );
    assert_eq!(
        stderr(&o).lines().next().unwrap(),
        format!(
            "error: `{}`: column `id` of the `scores` table is long in the table but string in this run; nothing was written",
            root.display()
        )
    );
    for table in ["scores", "metrics", "confusion", "runs"] {
        assert_eq!(commits(&root, table).len(), 2, "{table}");
    }
    let files = walk(&root.join("scores"));
    assert_eq!(
        files.iter().filter(|f| f.contains("run_id=c")).count(),
        0,
        "{files:?}"
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

#[test]
fn a_run_killed_before_the_runs_commit_is_not_a_run_and_its_rerun_replaces_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("lake");
    succeeded(delta_run(
        "qa.yaml",
        "qa.parquet",
        &root,
        &["--run-id", "first"],
    ));
    let killed = evalscore()
        .env("EVALSCORE_TEST_ABORT_BEFORE_RUNS", "1")
        .args(["run", "--format", "delta", "--run-id", "r1", "--out"])
        .arg(&root)
        .arg(examples().join("qa.yaml"))
        .arg("--input")
        .arg(examples().join("qa.parquet"))
        .output()
        .unwrap();
    assert_eq!(killed.status.code(), None, "killed by a signal");
    // The data tables hold the killed run's rows; `runs` does not list it.
    assert_eq!(run_ids(&root, "scores"), ["first", "r1"]);
    assert_eq!(run_ids(&root, "runs"), ["first"]);
    // Its rerun is not refused, and replaces them: one file of r1 in each table.
    succeeded(delta_run(
        "qa.yaml",
        "qa.parquet",
        &root,
        &["--run-id", "r1"],
    ));
    for table in ["scores", "metrics", "confusion"] {
        assert_eq!(run_ids(&root, table), ["first", "r1"], "{table}");
        let last = commits(&root, table).pop().unwrap();
        assert_eq!(
            last.iter().filter(|a| a.get("remove").is_some()).count(),
            1,
            "{table}"
        );
    }
    assert_eq!(run_ids(&root, "runs"), ["first", "r1"]);
}

#[test]
fn two_processes_appending_at_once_both_commit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("lake");
    for round in 0..3 {
        let spawn = |id: String| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("evalscore"))
                .args([
                    "run", "--format", "delta", "--quiet", "--run-id", &id, "--out",
                ])
                .arg(&root)
                .arg(examples().join("qa.yaml"))
                .arg("--input")
                .arg(examples().join("qa.parquet"))
                .spawn()
                .unwrap()
        };
        let (mut a, mut b) = (spawn(format!("a{round}")), spawn(format!("b{round}")));
        assert!(a.wait().unwrap().success());
        assert!(b.wait().unwrap().success());
    }
    let want = ["a0", "a1", "a2", "b0", "b1", "b2"];
    for table in ["scores", "metrics", "runs"] {
        assert_eq!(run_ids(&root, table), want, "{table}");
    }
}

#[test]
fn compare_and_report_of_a_root_give_the_figures_of_the_same_runs_as_folders() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("lake");
    let (base, new) = (dir.path().join("base"), dir.path().join("new"));
    let qa = examples().join("qa.yaml");
    let mcqa_in = examples().join("qa.parquet");
    let strict = dir.path().join("strict.yaml");
    std::fs::write(
        &strict,
        std::fs::read_to_string(&qa)
            .unwrap()
            .replace("| trim | lower", "| trim"),
    )
    .unwrap();
    succeeded(run_task(&qa, &mcqa_in, &base, &[]));
    succeeded(run_task(&strict, &mcqa_in, &new, &[]));
    succeeded(run_task(
        &qa,
        &mcqa_in,
        &root,
        &["--format", "delta", "--run-id", "base"],
    ));
    succeeded(run_task(
        &strict,
        &mcqa_in,
        &root,
        &["--format", "delta", "--run-id", "new"],
    ));
    let folders = succeeded(compare_runs(&base, &new, &dir.path().join("c1"), &[]));
    let table = succeeded(
        evalscore()
            .arg("compare")
            .arg(&root)
            .args(["--base", "base", "--new", "new", "--out"])
            .arg(dir.path().join("c2"))
            .output()
            .unwrap(),
    );
    assert_eq!(stdout(&folders), stdout(&table));
    let figures = |p: PathBuf| {
        let mut v = read_json(&p.join("compare.json"));
        v.as_object_mut().unwrap().remove("base");
        v.as_object_mut().unwrap().remove("new");
        v
    };
    assert_eq!(
        figures(dir.path().join("c1")),
        figures(dir.path().join("c2"))
    );

    let page = dir.path().join("report.html");
    succeeded(
        evalscore()
            .arg("report")
            .arg(&root)
            .args(["--run-id", "new", "--baseline-run-id", "base", "-o"])
            .arg(&page)
            .output()
            .unwrap(),
    );
    let folder_page = dir.path().join("folder.html");
    succeeded(report_against(&new, &base, &folder_page));
    // The same page but for how the runs are named, their ids and times.
    let parts = |p: &Path| -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap()
            .split("><")
            .filter(|l| {
                !l.starts_with("td id=\"run-id\"")
                    && !l.contains(" s, 2 threads)")
                    && !l.contains(" threads)")
            })
            .map(str::to_owned)
            .collect()
    };
    let (table_page, folder_page) = (parts(&page), parts(&folder_page));
    let named = |p: &[String], run: &str, base: &str| {
        let p = p.join("><");
        p.contains(&format!("p class=\"muted\">{run}</p"))
            && p.contains(&format!("Baseline <code>{base}</code>"))
    };
    let shown = root.display().to_string().replace('/', "&#x2f;");
    assert!(named(
        &table_page,
        &format!("{shown}, run new"),
        &format!("{shown}, run base")
    ));
    let folder_name = |p: &Path| p.display().to_string().replace('/', "&#x2f;");
    assert!(named(&folder_page, &folder_name(&new), &folder_name(&base)));
    let same = |p: &[String], run: &str, base: &str| -> Vec<String> {
        p.iter()
            .map(|l| l.replace(run, "RUN").replace(base, "BASE"))
            .collect()
    };
    assert_eq!(
        same(
            &table_page,
            &format!("{shown}, run new"),
            &format!("{shown}, run base")
        ),
        same(&folder_page, &folder_name(&new), &folder_name(&base))
    );

    let o = failed(
        evalscore()
            .arg("compare")
            .arg(&root)
            .args(["--base", "base", "--new", "nope", "--out"])
            .arg(dir.path().join("c3"))
            .output()
            .unwrap(),
        2,
    );
    assert!(
        stderr(&o).starts_with(&format!(
            "error: `{}`: no run `nope` in the `runs` table\n",
            root.display()
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_suite_publishes_every_task_in_one_commit_per_table() {
    let ws = workspace(SUITE);
    succeeded(run_in_dir(
        ws.path(),
        &[
            "suite.yaml",
            "--out",
            "lake",
            "--format",
            "delta",
            "--run-id",
            "s1",
        ],
    ));
    let root = ws.path().join("lake");
    for table in ["scores", "metrics", "confusion", "runs"] {
        assert_eq!(commits(&root, table).len(), 1, "{table}");
    }
    let mut tasks: Vec<String> = live(&root, "scores")
        .values()
        .map(|v| v["task"].as_str().unwrap().to_owned())
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["inline", "mcqa", "qa"]);
    assert!(!root.join("suite.json").exists());
    assert!(!root.join("task=qa").exists());

    // A second night, compared with the first as two suites are: every task, by name.
    succeeded(run_in_dir(
        ws.path(),
        &[
            "suite.yaml",
            "--out",
            "lake",
            "--format",
            "delta",
            "--run-id",
            "s2",
        ],
    ));
    let o = succeeded(
        evalscore()
            .current_dir(ws.path())
            .args([
                "compare", "lake", "--base", "s1", "--new", "s2", "--out", "cmp",
            ])
            .output()
            .unwrap(),
    );
    let c = read_json(&ws.path().join("cmp/compare.json"));
    let mut tasks: Vec<String> = c["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().unwrap().to_owned())
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["inline", "mcqa", "qa"], "{}", stdout(&o));
}
