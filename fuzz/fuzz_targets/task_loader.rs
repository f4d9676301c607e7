//! The task loader on arbitrary UTF-8: `Task::from_yaml` must return Ok or a located error,
//! never panic, hang or exhaust memory. When a task loads, its templates are also evaluated
//! on a small fixed batch (fuel-limited), which must not panic either.
#![no_main]

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_scorers::Task;
use evalscore_task::RowContext;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fn batch() -> RecordBatch {
    let col = |v: Vec<Option<&str>>| Arc::new(StringArray::from(v)) as ArrayRef;
    let schema = Schema::new(vec![
        Field::new("answer", DataType::Utf8, true),
        Field::new("output", DataType::Utf8, true),
        Field::new("choices", DataType::Utf8, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            col(vec![Some("A"), None, Some("ü")]),
            col(vec![Some("A"), Some("b"), None]),
            col(vec![Some("[\"A\",\"B\"]"), Some("x"), None]),
        ],
    )
    .expect("fixed batch")
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sets = [("col".to_owned(), "answer".to_owned())];
    let Ok(task) = Task::from_yaml(text, &sets) else {
        return;
    };
    let b = batch();
    let out: ArrayRef = Arc::clone(b.column(1));
    let ctx = RowContext {
        batch: &b,
        model_output: Some(&out),
        model_output_raw: Some(&out),
    };
    for s in &task.scorers {
        for t in s.scorer.templates() {
            let _ = t.evaluate(&ctx);
        }
    }
});
