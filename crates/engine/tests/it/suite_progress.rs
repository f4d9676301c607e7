//! A suite's live judge counters: while its tasks are scored, `judge_progress` gets the
//! counters of every task's judge summed, and last the final ones.
#![allow(clippy::unwrap_used)]

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use evalscore_engine::{
    run_suite, JudgeCache, JudgeOptions, JudgeProgress, RunOptions, SuiteOptions,
};
use evalscore_test_support::chat_server;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ROWS: i64 = 6;

/// A task judging each row's `output` with the model at `url`, two requests at a time.
fn judged_task(url: &str) -> String {
    format!(
        r#"
models:
  judge:
    base_url: "{url}"
    model: fake-judge
    concurrency: 2
    max_retries: 0
    timeout_s: 60
definition:
  scorers:
    - type: model_as_a_judge_classifier
      key: cls
      model_key: judge
      user_prompt: "Is {{{{ sample.output }}}} right?"
      correct_labels: ["yes"]
      incorrect_labels: ["no"]
"#
    )
}

fn write_input(path: &Path) {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..ROWS));
    let outputs: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..ROWS).map(|i| format!("answer {i}")),
    ));
    let batch = RecordBatch::try_from_iter([("id", ids), ("output", outputs)]).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn a_suite_reports_its_judges_counters_summed_while_it_runs() {
    // Each reply waits until the progress callback has seen a request in flight (or twenty seconds
    // has passed, so a broken callback fails the assertion below instead of hanging).
    let seen_in_flight = Arc::new(AtomicBool::new(false));
    let gate = Arc::clone(&seen_in_flight);
    let url = chat_server::serve(move |_| {
        for _ in 0..200 {
            if gate.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        chat_server::Reply::ok("yes")
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_input(&d.join("rows.parquet"));
    std::fs::write(d.join("judged.yaml"), judged_task(&url)).unwrap();
    std::fs::write(
        d.join("suite.yaml"),
        "inputs: [rows.parquet]\ntasks:\n  - {name: a, task: judged.yaml}\n  - {name: b, task: judged.yaml}\n",
    )
    .unwrap();
    let reports: Arc<Mutex<Vec<JudgeProgress>>> = Arc::default();
    let sink = Arc::clone(&reports);
    let summary = run_suite(SuiteOptions {
        run: RunOptions {
            task: d.join("suite.yaml"),
            out_dir: d.join("out"),
            threads: 1,
            judge: JudgeOptions {
                cache: JudgeCache::Off,
                offline: false,
            },
            judge_progress: Some(Box::new(move |p: JudgeProgress| {
                if p.in_flight > 0 {
                    seen_in_flight.store(true, Ordering::SeqCst);
                }
                sink.lock().unwrap().push(p);
            })),
            ..RunOptions::default()
        },
        keep_going: false,
    })
    .unwrap();
    assert!(summary.tasks.iter().all(|t| t.result.is_ok()));
    let reports = reports.lock().unwrap();
    assert!(
        reports.iter().any(|p| p.in_flight > 0),
        "no report while requests were in flight: {reports:?}"
    );
    // The last report comes after scoring: both tasks' rows, every request answered.
    assert_eq!(
        *reports.last().unwrap(),
        JudgeProgress {
            rows_judged: 2 * ROWS as u64,
            in_flight: 0,
            requests_sent: 2 * ROWS as u64,
            cache_hits: 0,
            retries: 0,
            tokens: 2 * ROWS as u64 * 12,
        }
    );
}
