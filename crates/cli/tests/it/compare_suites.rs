//! `evalscore compare` of two suites' folders, made by `evalscore run SUITE.yaml` on 20 rows
//! whose flips are chosen so that every figure is known: one compare.json and one
//! compare.parquet with a `task` column, each task's figures those of comparing its two
//! folders alone, the tasks on one side only, the gate naming each failing task, and the
//! errors of folders that are not two suites.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A task of the suites: `string_equals` of `sample.COL` against `sample.gt`.
fn task(name: &str, col: &str) -> String {
    format!(
        "  - name: {name}\n    definition:\n      scorers:\n        - type: string_equals\n          key: {name}\n          value: \"{{{{ sample.{col} }}}}\"\n          ground_truth: \"{{{{ sample.gt }}}}\"\n"
    )
}

/// 20 rows, ids 0 to 19, every answer right but those listed per column.
fn rows(path: &Path, wrong: [&[i64]; 3]) {
    let text = jsonl(20, |i| {
        let i = i as i64;
        let pred = |w: &[i64]| if w.contains(&i) { "no" } else { "yes" };
        json!({"id": i, "gt": "yes", "exact": pred(wrong[0]), "upper": pred(wrong[1]), "loose": pred(wrong[2]), "output": ""})
            .to_string()
    });
    std::fs::write(path, text).unwrap();
}

/// The base suite (`exact`, `upper`, `loose`, `legacy`) and the new one (`exact`, `upper`,
/// `loose`, `fresh`) run into `dir/base` and `dir/new`. From base to new, `exact` loses 6
/// rows (McNemar p = 2/2^6), `upper` loses 8 (p = 2/2^8), `loose` wins 2 and loses 1 (p = 1).
pub fn suites(dir: &Path) -> (PathBuf, PathBuf) {
    rows(&dir.join("base.jsonl"), [&[], &[], &[0, 1]]);
    rows(
        &dir.join("new.jsonl"),
        [&[0, 1, 2, 3, 4, 5], &[10, 11, 12, 13, 14, 15, 16, 17], &[2]],
    );
    let common = task("exact", "exact") + &task("upper", "upper") + &task("loose", "loose");
    for (side, only) in [("base", "legacy"), ("new", "fresh")] {
        let file = dir.join(format!("{side}.yaml"));
        let text = format!(
            "inputs: [{side}.jsonl]\ntasks:\n{common}{}",
            task(only, "exact")
        );
        std::fs::write(&file, text).unwrap();
        succeeded(
            evalscore()
                .arg("run")
                .arg(&file)
                .arg("--out")
                .arg(dir.join(side))
                .arg("--quiet")
                .output()
                .unwrap(),
        );
    }
    (dir.join("base"), dir.join("new"))
}

/// compare.json's rows without their `task`: a run comparison's rows.
fn untasked(rows: &[Value]) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("task");
            r
        })
        .collect()
}

#[test]
fn two_suites_are_compared_whole_into_one_file_with_a_task_column() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, new) = suites(tmp.path());
    let out = tmp.path().join("cmp");
    let o = compare_runs(&base, &new, &out, &["--max-drop", "0.1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(
        stdout(&o),
        "task   column             group  pairs    base     new     diff            interval       p  p_holm  verdict\n\
         -----  -----------------  -----  -----  ------  ------  -------  ------------------  ------  ------  ---------\n\
         exact  exact__is_correct  (all)     20  1.0000  0.7000  -0.3000  [-0.5200, -0.0800]  0.0312  0.0312  regressed\n\
         upper  upper__is_correct  (all)     20  1.0000  0.6000  -0.4000  [-0.6352, -0.1648]  0.0078  0.0078  regressed\n\
         loose  loose__is_correct  (all)     20  0.9000  0.9500  +0.0500  [-0.1344, +0.2344]  1.0000  1.0000  tied\n\
         \n\
         exact: 20 rows in base, 20 in new; 0 only in base, 0 only in new\n\
         upper: 20 rows in base, 20 in new; 0 only in base, 0 only in new\n\
         loose: 20 rows in base, 20 in new; 0 only in base, 0 only in new\n\
         3 task(s) compared; only in base: legacy; only in new: fresh\n\
         gate: FAILED, 2 comparison(s) regressed by more than 0.1 in 2 task(s): exact (1), upper (1)\n"
    );
    assert_eq!(files_in(&out), ["compare.json", "compare.parquet"]);

    let b = read_parquet(&out.join("compare.parquet"));
    let names = column_names(&b);
    assert_eq!(names[0], "task");
    assert_eq!(names.len(), 21);
    let some = |v: &[&str]| v.iter().map(|s| Some((*s).to_owned())).collect::<Vec<_>>();
    assert_eq!(strings(&b, "task"), some(&["exact", "upper", "loose"]));
    assert_eq!(
        strings(&b, "column"),
        some(&[
            "exact__is_correct",
            "upper__is_correct",
            "loose__is_correct"
        ])
    );
    assert_eq!(strings(&b, "group"), [None, None, None]);
    assert_eq!(
        strings(&b, "test"),
        some(&["mcnemar_exact", "mcnemar_exact", "mcnemar_exact"])
    );
    assert_eq!(
        strings(&b, "verdict"),
        some(&["regressed", "regressed", "tied"])
    );
    assert_eq!(uints(&b, "n_pairs"), [20, 20, 20]);
    assert_eq!(uints(&b, "pass_to_fail"), [6, 8, 1]);
    assert_eq!(uints(&b, "fail_to_pass"), [0, 0, 2]);
    assert_eq!(uints(&b, "only_base"), [0, 0, 0]);
    assert_eq!(floats(&b, "base_mean"), [Some(1.0), Some(1.0), Some(0.9)]);
    assert_eq!(floats(&b, "new_mean"), [Some(0.7), Some(0.6), Some(0.95)]);
    assert_eq!(floats(&b, "diff"), [Some(-0.3), Some(-0.4), Some(0.05)]);
    // McNemar's exact test: 2 · P(X ≤ 0) for X ~ Bin(6, ½) and Bin(8, ½); min(1, 2 · P(X ≤ 1))
    // for Bin(3, ½).
    assert_eq!(
        floats(&b, "p_value"),
        [Some(2.0 / 64.0), Some(2.0 / 256.0), Some(1.0)]
    );
    // Holm within each task: one row each, so the p-value itself.
    assert_eq!(floats(&b, "p_value_holm"), floats(&b, "p_value"));
    // The paired standard error of 6 (then 8) differences of -1 and 14 (12) of 0, and of
    // 2 of +1, 1 of -1 and 17 of 0, over 20 pairs.
    let se = |sum_sq: f64, mean: f64| (((sum_sq - 20.0 * mean * mean) / 19.0) / 20.0).sqrt();
    let want = [se(6.0, -0.3), se(8.0, -0.4), se(3.0, 0.05)];
    for (got, want) in floats(&b, "diff_se").iter().zip(want) {
        assert!(
            (got.unwrap() - want).abs() < 1e-15,
            "{got:?} against {want}"
        );
    }

    let j = read_json(&out.join("compare.json"));
    assert_eq!(j["gate"], "failed");
    assert_eq!(j["base"], base.display().to_string());
    assert_eq!(j["new"], new.display().to_string());
    assert_eq!(j["max_drop"], 0.1);
    assert_eq!(j["regressed_tasks"], json!(["exact", "upper"]));
    assert_eq!(j["only_base_tasks"], json!(["legacy"]));
    assert_eq!(j["only_new_tasks"], json!(["fresh"]));
    let tasks = j["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 3);
    assert_eq!(
        tasks[0],
        json!({
            "task": "exact",
            "base": base.join("task=exact").display().to_string(),
            "new": new.join("task=exact").display().to_string(),
            "gate": "failed",
            "base_rows": 20,
            "new_rows": 20,
            "only_base_keys": [],
            "only_new_keys": [],
        })
    );
    assert_eq!(tasks[2]["gate"], "passed");
    let comps = j["comparisons"].as_array().unwrap();
    let task_of: Vec<&str> = comps.iter().map(|c| c["task"].as_str().unwrap()).collect();
    assert_eq!(task_of, ["exact", "upper", "loose"]);
    assert_eq!(comps[0]["pass_to_fail_keys"], json!([0, 1, 2, 3, 4, 5]));
    assert_eq!(comps[2]["fail_to_pass_keys"], json!([0, 1]));

    // Each task's rows are, bit for bit, those of comparing its two folders alone.
    for (i, name) in ["exact", "upper", "loose"].iter().enumerate() {
        let alone = tmp.path().join(format!("alone-{name}"));
        let folder = format!("task={name}");
        compare_runs(
            &base.join(&folder),
            &new.join(&folder),
            &alone,
            &["--max-drop", "0.1"],
        );
        let a = read_json(&alone.join("compare.json"));
        assert_eq!(
            untasked(&comps[i..=i]),
            a["comparisons"].as_array().unwrap().clone(),
            "{name}"
        );
    }
}

#[test]
fn the_gate_passes_or_is_off_over_every_task() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, new) = suites(tmp.path());
    let o = compare_runs(&base, &new, &tmp.path().join("a"), &["--max-drop", "0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ends(&stdout(&o), "gate: passed (max drop 0.5)\n");
    assert_eq!(
        read_json(&tmp.path().join("a/compare.json"))["gate"],
        "passed"
    );
    let o = compare_runs(&base, &new, &tmp.path().join("b"), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ends(&stdout(&o), "gate: off (pass --max-drop to turn it on)\n");
    let j = read_json(&tmp.path().join("b/compare.json"));
    assert_eq!(j["gate"], "off");
    assert_eq!(j["regressed_tasks"], json!(["exact", "upper"]));
}

/// Marks task `name` of the suite in `dir` as failed, as a suite run with `--keep-going`
/// records a task that failed (its folder is not written).
fn fail_task(dir: &Path, name: &str) {
    let path = dir.join("suite.json");
    let mut v = read_json(&path);
    for t in v["tasks"].as_array_mut().unwrap() {
        if t["name"] == name {
            t["status"] = json!("failed");
            t["error"] = json!("task `upper`: boom");
            t["rows"] = Value::Null;
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    std::fs::remove_dir_all(dir.join(format!("task={name}"))).unwrap();
}

#[test]
fn a_task_that_failed_in_one_suite_is_on_the_other_side_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, new) = suites(tmp.path());
    fail_task(&new, "upper");
    let out = tmp.path().join("cmp");
    let o = compare_runs(&base, &new, &out, &["--max-drop", "0.1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_ends(
        &stdout(&o),
        "2 task(s) compared; only in base: upper, legacy; only in new: fresh\n\
         gate: FAILED, 1 comparison(s) regressed by more than 0.1 in 1 task(s): exact (1)\n",
    );
    let j = read_json(&out.join("compare.json"));
    assert_eq!(j["only_base_tasks"], json!(["upper", "legacy"]));
    assert_eq!(
        strings(&read_parquet(&out.join("compare.parquet")), "task"),
        [Some("exact".to_owned()), Some("loose".to_owned())]
    );
}

fn compare_fails(base: &Path, new: &Path, extra: &[&str]) -> String {
    let out = base.parent().unwrap().join("never");
    let o = compare_runs(base, new, &out, extra);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(!out.exists(), "no output folder on errors");
    stderr(&o)
}

#[test]
fn folders_that_are_not_two_suites_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, new) = suites(tmp.path());
    let run = new.join("task=exact");
    assert_eq!(
        compare_fails(&base, &run, &[]),
        format!(
            "error: the base folder `{}` is a suite's output (it holds suite.json) but the new folder `{}` is not\n\
             hint: compare two suites' folders, or two runs' folders; one task of a suite is its folder `{}`\n",
            base.display(),
            run.display(),
            base.join("task=NAME").display()
        )
    );
    assert_eq!(
        compare_fails(&run, &base, &[]),
        format!(
            "error: the new folder `{}` is a suite's output (it holds suite.json) but the base folder `{}` is not\n\
             hint: compare two suites' folders, or two runs' folders; one task of a suite is its folder `{}`\n",
            base.display(),
            run.display(),
            base.join("task=NAME").display()
        )
    );

    // A task's error is led by its name; no file is written.
    assert_eq!(
        compare_fails(&base, &new, &["--group-by", "subject"]),
        format!(
            "error: task `exact`: --group-by `subject`: neither `{}` nor `{}` has that column\n\
             hint: keep it in the run: `evalscore run --keep id,subject`\n",
            base.join("task=exact/scores.parquet").display(),
            new.join("task=exact/scores.parquet").display()
        )
    );

    // Two suites without a task in common.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("suite.json"), r#"{"tasks": []}"#).unwrap();
    assert_eq!(
        compare_fails(&base, &other, &[]),
        format!(
            "error: the suites `{}` and `{}` have no task in common\n\
             \x20 Caused by: base tasks: exact, upper, loose, legacy\n\
             \x20 Caused by: new tasks: none\n\
             hint: compare two runs of the same suite\n",
            base.display(),
            other.display()
        )
    );

    // A suite.json whose task name would lead out of the folder.
    std::fs::write(
        other.join("suite.json"),
        r#"{"tasks": [{"name": "../exact", "status": "ok"}]}"#,
    )
    .unwrap();
    assert_eq!(
        compare_fails(&base, &other, &[]),
        format!(
            "error: `{}`: task 1: `../exact` is not a task name (1 to 128 letters, digits, `_`, `-` or `.`, not starting with `.`)\n\
             hint: pass the `--out` folder of a finished `evalscore run SUITE.yaml`\n",
            other.join("suite.json").display()
        )
    );

    // A suite that did not finish: its task folders but no suite.json.
    std::fs::remove_file(new.join("suite.json")).unwrap();
    assert_eq!(
        compare_fails(&base.join("task=exact"), &new, &[]),
        format!(
            "error: the new folder `{}` holds task=NAME folders but no suite.json\n\
             hint: a suite writes suite.json last, after every task: run the suite to its end, or compare one task's `task=NAME` folder\n",
            new.display()
        )
    );
}
