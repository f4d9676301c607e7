//! Scores an in-memory Arrow `RecordBatch` with evalscore's library API, with no file I/O:
//! bind a task to the schema once, score slices of the batch on two threads, send their
//! metric states as bytes (as Spark executors would to the driver), merge them, and print
//! the metrics.
//!
//!     cargo run --example score_batches

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::pretty::pretty_format_batches;
use evalscore_engine::{BindOptions, Error, Scorer, States, Task};
use std::sync::Arc;

const TASK: &str = r#"
definition:
  scorers:
    - type: string_equals
      ground_truth: "{{ sample.answer }}"
      normalize: [strip, ignore_case]
      metrics:
        - {type: mean, field: is_correct, name: accuracy}
    - type: pass_fail
      key: produced
      metrics:
        - {type: mean, field: is_correct}
"#;

fn main() -> Result<(), Error> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("answer", DataType::Utf8, true),
        Field::new("output", DataType::Utf8, true),
    ]));
    let answers = ["yes", "no", "yes", "no", "yes", "no", "yes", "no"];
    let outputs = [
        Some("Yes"),
        Some("no "),
        Some("no"),
        None,
        Some("YES"),
        Some(""),
        Some("yes"),
        Some("No"),
    ];
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from_iter_values(1..=8)) as ArrayRef,
            Arc::new(StringArray::from(answers.to_vec())),
            Arc::new(StringArray::from(outputs.to_vec())),
        ],
    )
    .map_err(|e| Error::new(e.to_string()))?;

    // Checked once: the same load-time errors as the CLI.
    let task = Task::from_yaml(TASK, &[]).map_err(|e| Error::new(e.to_string()))?;
    let scorer = Scorer::new(task, &schema, &BindOptions::default())?;

    // Two workers score halves of the batch and hand back their states as bytes.
    let halves = [batch.slice(0, 4), batch.slice(4, 4)];
    let results: Vec<Result<(RecordBatch, Vec<u8>), Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = halves
            .iter()
            .map(|half| {
                let scorer = &scorer;
                s.spawn(move || {
                    let (scores, states) = scorer.score(half)?;
                    Ok((scores, states.to_bytes()?))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::new("a worker panicked")))
            })
            .collect()
    });

    // The "driver": merge the states in any order.
    let mut total = scorer.empty_states();
    let mut score_batches = Vec::new();
    for r in results.into_iter().rev() {
        let (scores, bytes) = r?;
        total.merge(&States::from_bytes(&bytes)?)?;
        score_batches.push(scores);
    }
    score_batches.reverse();
    println!(
        "{}",
        pretty_format_batches(&score_batches).map_err(|e| Error::new(e.to_string()))?
    );
    for m in scorer.finish(&total)?.metrics {
        let label = m.label.map(|l| format!(" [{l}]")).unwrap_or_default();
        let value = m.value.map_or("null".to_owned(), |v| format!("{v:.4}"));
        println!(
            "{}.{} {}{label} = {value} (n={})",
            m.scorer, m.metric, m.stat, m.n
        );
    }
    Ok(())
}
