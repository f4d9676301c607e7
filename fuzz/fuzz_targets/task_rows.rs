//! A task file and the rows it scores, both from the fuzzer: the bytes before the first NUL
//! are the task (UTF-8), the rest are rows, one per line, fields split at a tab (`answer`,
//! `output`, `choices`; a missing field is null). Every template of a task that loads is
//! evaluated on those rows, and every condition with them; none may panic, hang or exhaust
//! memory, whatever the data (the budgets: fuel, the per-row byte budget, nesting limits).
#![no_main]

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_scorers::Task;
use evalscore_task::RowContext;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

/// At most this many rows per input, so one input stays quick.
const MAX_ROWS: usize = 16;

fn batch(rows: &str) -> RecordBatch {
    let mut cols: [Vec<Option<&str>>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for line in rows.lines().take(MAX_ROWS) {
        let mut fields = line.split('\t');
        for col in &mut cols {
            col.push(fields.next());
        }
    }
    let schema = Schema::new(vec![
        Field::new("answer", DataType::Utf8, true),
        Field::new("output", DataType::Utf8, true),
        Field::new("choices", DataType::Utf8, true),
    ]);
    let [a, o, c] = cols;
    let col = |v: Vec<Option<&str>>| Arc::new(StringArray::from(v)) as ArrayRef;
    RecordBatch::try_new(Arc::new(schema), vec![col(a), col(o), col(c)]).expect("text columns")
}

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|b| *b == 0).unwrap_or(data.len());
    let (Ok(text), Ok(rows)) = (
        std::str::from_utf8(&data[..split]),
        std::str::from_utf8(data.get(split + 1..).unwrap_or_default()),
    ) else {
        return;
    };
    let sets = [("col".to_owned(), "answer".to_owned())];
    let Ok(task) = Task::from_yaml(text, &sets) else {
        return;
    };
    let b = batch(rows);
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
