//! A suite without `--keep-going` commits all its tasks or none: a task whose folder cannot
//! be committed (an output written there since the start) fails the suite before any task's
//! files or `suite.json` are put in place.
#![allow(clippy::unwrap_used)]

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use evalscore_engine::{run_suite, RunOptions, SuiteOptions};
use std::path::Path;
use std::sync::Arc;

fn write_input(path: &Path) {
    let column = |v: [&str; 3]| -> ArrayRef { Arc::new(StringArray::from(v.to_vec())) };
    let batch = RecordBatch::try_from_iter([
        ("output", column(["a", "b", "c"])),
        ("answer", column(["a", "x", "c"])),
    ])
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Runs the two-task suite of `d`; while its rows are read, `metrics.json` appears in
/// `out/task=b/`.
fn run(
    d: &Path,
    keep_going: bool,
) -> Result<evalscore_engine::SuiteSummary, evalscore_engine::Error> {
    let planted = d.join("out/task=b/metrics.json");
    run_suite(SuiteOptions {
        run: RunOptions {
            task: d.join("suite.yaml"),
            out_dir: d.join("out"),
            threads: 1,
            progress: Some(Box::new(move |_, _| {
                if !planted.exists() {
                    std::fs::write(&planted, "{}").unwrap();
                }
            })),
            ..RunOptions::default()
        },
        keep_going,
    })
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_input(&d.join("rows.parquet"));
    std::fs::write(
        d.join("suite.yaml"),
        "inputs: [rows.parquet]\ntasks:\n  - name: a\n    definition:\n      scorers:\n        - {type: string_equals, ground_truth: \"{{ sample.answer }}\"}\n  - name: b\n    definition:\n      scorers:\n        - {type: string_equals, ground_truth: \"{{ sample.answer }}\"}\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_task_that_cannot_commit_fails_the_suite_with_nothing_committed() {
    let dir = workspace();
    let d = dir.path();
    let e = run(d, false).unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "task `b`: the output folder `{}` now holds (written since this run started) metrics.json",
            d.join("out/task=b").display()
        )
    );
    assert!(!d.join("out/suite.json").exists());
    assert!(!d.join("out/task=a/run.json").exists());
    assert!(!d.join("out/task=a/metrics.parquet").exists());
    // The planted file is left alone.
    assert_eq!(
        std::fs::read_to_string(d.join("out/task=b/metrics.json")).unwrap(),
        "{}"
    );
}

#[test]
fn with_keep_going_the_other_tasks_are_committed() {
    let dir = workspace();
    let d = dir.path();
    let summary = run(d, true).unwrap();
    assert_eq!(
        summary
            .failed()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["b"]
    );
    assert!(d.join("out/suite.json").exists());
    assert!(d.join("out/task=a/run.json").exists());
}
