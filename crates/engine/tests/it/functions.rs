//! User functions (`custom` with `function:`, `python` metrics) through the library and the
//! file pipeline, with a Rust implementation of what the Python package supplies.
#![allow(clippy::unwrap_used)]

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float64Array, RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Field, Float64Type, Schema};
use evalscore_engine::{
    run, BindOptions, Functions, MetricRow, RunOptions, Scorer, States, Task, UserFunctions,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `starts_same`: the value's first character equals the ground truth's (a pass mask);
/// `length`: the value's length in characters (a float score); `bad_len`, `bad_type`,
/// `nan`, `boom`: wrong results for the error tests. Metric functions: `sum` folds a sum
/// and a count as "sum,count" text, `add` adds them, `mean` finishes to the mean and, as a
/// labelled figure, the count.
#[derive(Debug, Default)]
struct Rust {
    merges: AtomicUsize,
}

fn text(a: &ArrayRef) -> Vec<Option<String>> {
    a.as_string::<i32>()
        .iter()
        .map(|v| v.map(str::to_owned))
        .collect()
}

fn pair(b: &[u8]) -> (f64, f64) {
    let s = String::from_utf8(b.to_vec()).unwrap();
    let (a, c) = s.split_once(',').unwrap();
    (a.parse().unwrap(), c.parse().unwrap())
}

impl UserFunctions for Rust {
    fn names(&self) -> Vec<String> {
        [
            "starts_same",
            "length",
            "bad_len",
            "bad_type",
            "nan",
            "boom",
            "sum",
            "add",
            "mean",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    fn score(
        &self,
        name: &str,
        values: &ArrayRef,
        ground_truth: Option<&ArrayRef>,
    ) -> Result<ArrayRef, String> {
        let v = text(values);
        Ok(match name {
            "starts_same" => {
                let g = text(ground_truth.unwrap());
                Arc::new(BooleanArray::from(
                    v.iter()
                        .zip(&g)
                        .map(|(v, g)| match (v, g) {
                            (Some(v), Some(g)) => Some(v.chars().next() == g.chars().next()),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                ))
            }
            "length" => Arc::new(Float64Array::from(
                v.iter()
                    .map(|v| v.as_ref().map(|s| s.chars().count() as f64))
                    .collect::<Vec<_>>(),
            )),
            "bad_len" => Arc::new(BooleanArray::from(vec![true])),
            "bad_type" => Arc::new(StringArray::from(vec!["yes"; v.len()])),
            "nan" => Arc::new(Float64Array::from(
                (0..v.len())
                    .map(|i| if i == 1 { f64::NAN } else { 1.0 })
                    .collect::<Vec<_>>(),
            )),
            _ => return Err("ValueError: boom".to_owned()),
        })
    }

    fn metric_update(&self, name: &str, values: &ArrayRef) -> Result<Vec<u8>, String> {
        assert_eq!(name, "sum");
        // Scores reach metric functions as Float64, as scores.parquet holds them.
        assert_eq!(values.data_type(), &DataType::Float64);
        let f = values.as_primitive::<Float64Type>();
        let sum: f64 = f.iter().flatten().sum();
        let n = f.iter().flatten().count();
        Ok(format!("{sum},{n}").into_bytes())
    }

    fn metric_merge(&self, name: &str, parts: &[Vec<u8>]) -> Result<Vec<u8>, String> {
        assert_eq!(name, "add");
        self.merges.fetch_add(1, Ordering::Relaxed);
        let (mut s, mut n) = (0.0, 0.0);
        for p in parts {
            let (a, b) = pair(p);
            s += a;
            n += b;
        }
        Ok(format!("{s},{n}").into_bytes())
    }

    fn metric_finish(
        &self,
        name: &str,
        state: &[u8],
    ) -> Result<Vec<(Option<String>, Option<f64>)>, String> {
        assert_eq!(name, "mean");
        let (s, n) = pair(state);
        Ok(vec![
            (None, (n > 0.0).then(|| s / n)),
            (Some("count".to_owned()), Some(n)),
        ])
    }
}

const TASK: &str = r#"
definition:
  scorers:
    - type: custom
      key: first
      function: starts_same
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct}
        - {type: python, name: py_mean, field: is_correct, function: sum, merge: add, finish: mean}
        - {type: python, name: by_subject, field: is_correct, function: sum, merge: add, finish: mean, group_by: subject}
    - type: custom
      key: len
      function: length
      metrics:
        - {type: mean, field: is_correct}
"#;

fn batch(rows: usize) -> RecordBatch {
    let outputs: Vec<Option<String>> = (0..rows)
        .map(|i| match i % 5 {
            0 => None,
            1 => Some("A".to_owned()),
            2 => Some("Bee".to_owned()),
            3 => Some(format!("C{i}")),
            _ => Some("Ab".to_owned()),
        })
        .collect();
    let answers: Vec<&str> = (0..rows).map(|i| ["A", "B", "C"][i % 3]).collect();
    let subjects: Vec<&str> = (0..rows).map(|i| ["x", "y"][i % 2]).collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("output", DataType::Utf8, true),
            Field::new("answer", DataType::Utf8, false),
            Field::new("subject", DataType::Utf8, false),
        ])),
        vec![
            Arc::new(StringArray::from(outputs)),
            Arc::new(StringArray::from(answers)),
            Arc::new(StringArray::from(subjects)),
        ],
    )
    .unwrap()
}

fn functions() -> (Arc<Rust>, Functions) {
    let f = Arc::new(Rust::default());
    (Arc::clone(&f), f)
}

/// `task` bound to `schema` with `functions`.
fn bind(
    task: &str,
    schema: &Schema,
    functions: Option<Functions>,
) -> Result<Scorer, evalscore_engine::Error> {
    Scorer::new(
        Task::from_yaml(task, &[]).unwrap(),
        schema,
        &BindOptions {
            functions,
            ..BindOptions::default()
        },
    )
}

fn find<'a>(
    rows: &'a [MetricRow],
    metric: &str,
    stat: &str,
    label: Option<&str>,
    group: Option<&str>,
) -> &'a MetricRow {
    rows.iter()
        .find(|r| {
            r.metric == metric
                && r.stat == stat
                && r.label.as_deref() == label
                && r.groups.iter().flatten().next().map(String::as_str) == group
        })
        .unwrap_or_else(|| panic!("no row {metric} {stat} {label:?} {group:?}"))
}

#[test]
fn function_scorers_and_python_metrics_fold_merge_and_finish() {
    let b = batch(100);
    let (counter, f) = functions();
    let scorer = bind(TASK, &b.schema(), Some(f)).unwrap();
    // Forty batches of 100 rows: the python metric's partial states are merged by `add` as
    // they pile up (compacted past the pending limit, as a caller merging many states does).
    let task = Task::from_yaml(TASK, &[]).unwrap();
    let mut total = scorer.empty_states();
    for _ in 0..40 {
        let (scores, states) = scorer.score(&b).unwrap();
        assert_eq!(scores.num_rows(), 100);
        total
            .merge(&States::from_bytes(&states.to_bytes().unwrap()).unwrap())
            .unwrap();
        total.compact_user(&task, counter.as_ref()).unwrap();
    }
    assert!(counter.merges.load(Ordering::Relaxed) > 0);
    let report = scorer.finish(&total).unwrap();
    let rows = &report.metrics;
    // Per 100 rows: 20 null outputs (missing); "A" on rows 1 mod 5 against answers A/B/C
    // by i mod 3, and so on: the pass mask's mean is the python metric's mean.
    let (scores, _) = scorer.score(&b).unwrap();
    let first = scores.column_by_name("first__is_correct").unwrap();
    let first = arrow::compute::cast(first, &DataType::Float64).unwrap();
    let pass: f64 = first.as_primitive::<Float64Type>().iter().flatten().sum();
    let mean = find(rows, "mean", "value", None, None);
    assert_eq!(mean.value, Some(pass / 100.0));
    let py = find(rows, "py_mean", "value", None, None);
    assert_eq!(py.value, Some(pass / 100.0));
    assert_eq!(py.n, 4000);
    assert_eq!(
        find(rows, "py_mean", "value", Some("count"), None).value,
        Some(4000.0)
    );
    // Groups x (even rows) and y (odd rows), each its own state.
    let x = find(rows, "by_subject", "value", Some("count"), Some("x"));
    assert_eq!(x.value, Some(2000.0));
    let y = find(rows, "by_subject", "value", None, Some("y"));
    let odd: f64 = (0..100)
        .filter(|i| i % 2 == 1)
        .map(|i| first.as_primitive::<Float64Type>().value(i))
        .sum();
    assert_eq!(y.value, Some(odd / 50.0));
    // The float function: lengths of "A", "Bee", "C{i}", "Ab" as the score; null rows 0.0.
    let len = scores.column_by_name("len__is_correct").unwrap();
    let len = len.as_primitive::<Float64Type>();
    assert_eq!(
        (0..6).map(|i| len.value(i)).collect::<Vec<_>>(),
        vec![0.0, 1.0, 3.0, 2.0, 2.0, 0.0]
    );
    let missing = rows
        .iter()
        .find(|r| r.scorer == "len" && r.metric == "missing")
        .unwrap();
    assert_eq!(missing.value, Some(800.0));
}

#[test]
fn python_metric_states_without_their_functions_cannot_be_finished() {
    let b = batch(10);
    let scorer = bind(TASK, &b.schema(), Some(functions().1)).unwrap();
    let (_, states) = scorer.score(&b).unwrap();
    let task = Task::from_yaml(TASK, &[]).unwrap();
    let e = states.report(&task, false, None).unwrap_err();
    assert_eq!(
        e.message,
        "the task has python metrics, whose figures need their functions"
    );
}

fn bind_error(task: &str, functions: Option<Functions>) -> evalscore_engine::Error {
    bind(task, &batch(1).schema(), functions).unwrap_err()
}

#[test]
fn a_task_naming_a_function_is_refused_without_it() {
    let e = bind_error(TASK, None);
    assert_eq!(
        e.message,
        "task, line 6, column 17: scorer `first` calls the Python function `starts_same`, which only evalscore's Python package can run"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("score this task from Python: `evalscore.Task.from_yaml(\"task.yaml\", functions={\"starts_same\": fn})` (docs/python.md)")
    );
    let other = "definition:\n  scorers:\n    - type: custom\n      function: nope\n";
    let e = bind_error(other, Some(functions().1));
    assert_eq!(
        e.message,
        "task, line 4, column 17: scorer `custom` calls the function `nope`, which is not among the functions given"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("functions given: add, bad_len, bad_type, boom, length, mean, nan, starts_same, sum; pass it as `functions={\"nope\": fn}`")
    );
}

fn score_error(function: &str) -> String {
    let task = format!("definition:\n  scorers:\n    - type: custom\n      function: {function}\n");
    let b = batch(4);
    let scorer = bind(&task, &b.schema(), Some(functions().1)).unwrap();
    scorer.score(&b).unwrap_err().message
}

#[test]
fn a_function_that_returns_the_wrong_thing_is_a_clear_error() {
    assert_eq!(
        score_error("bad_len"),
        "row 1: scorer `custom`: function `bad_len` returned 1 values for a batch of 4 rows"
    );
    assert_eq!(
        score_error("bad_type"),
        "row 1: scorer `custom`: function `bad_type` returned values of type Utf8; a scorer function returns booleans or numbers"
    );
    assert_eq!(
        score_error("boom"),
        "row 1: scorer `custom`: function `boom` failed: ValueError: boom"
    );
    assert_eq!(
        score_error("nan"),
        "row 2: scorer `custom`: function `nan` returned NaN for this row"
    );
}

#[test]
fn the_file_pipeline_runs_functions_and_the_cli_path_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("in.parquet");
    let b = batch(1000);
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&data).unwrap(),
        b.schema(),
        None,
    )
    .unwrap();
    w.write(&b.slice(0, 500)).unwrap();
    w.flush().unwrap();
    w.write(&b.slice(500, 500)).unwrap();
    w.close().unwrap();
    let task_path = dir.path().join("task.yaml");
    std::fs::write(&task_path, TASK).unwrap();
    let opts = |out: &str, functions: Option<Functions>| RunOptions {
        task: task_path.clone(),
        inputs: vec![data.clone()],
        out_dir: dir.path().join(out),
        threads: 2,
        functions,
        ..RunOptions::default()
    };
    let summary = run(&opts("out", Some(functions().1))).unwrap();
    let py = find(&summary.metrics, "py_mean", "value", Some("count"), None);
    assert_eq!(py.value, Some(1000.0));
    let e = run(&opts("refused", None)).unwrap_err();
    assert!(
        e.message.ends_with(
            "line 6, column 17: scorer `first` calls the Python function `starts_same`, which only evalscore's Python package can run"
        ),
        "{}",
        e.message
    );
    assert!(!dir.path().join("refused").exists());
    // The python metric and the built-in mean agree through the file pipeline too.
    let first: f64 = find(&summary.metrics, "py_mean", "value", None, None)
        .value
        .unwrap();
    let mean: f64 = find(&summary.metrics, "mean", "value", None, None)
        .value
        .unwrap();
    assert_eq!(first, mean);
    // The float function's scores (lengths, not a pass mask) survive the file: its mean is
    // the library's over the same rows.
    let len_mean = |rows: &[MetricRow]| {
        rows.iter()
            .find(|r| r.scorer == "len" && r.metric == "mean" && r.stat == "value")
            .and_then(|r| r.value)
            .unwrap()
    };
    let scorer = bind(TASK, &b.schema(), Some(functions().1)).unwrap();
    let (_, states) = scorer.score(&b).unwrap();
    let library = scorer.finish(&states).unwrap();
    assert!(len_mean(&library.metrics) > 1.0);
    assert_eq!(len_mean(&summary.metrics), len_mean(&library.metrics));
}
