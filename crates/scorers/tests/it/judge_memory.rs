//! A batch's judge replies are read as they arrive: the batch keeps each reply's grade (and its
//! reasoning only when it is written), not the reply's text; a reply longer than
//! `MAX_REPLY_BYTES` is a row error naming the model and the row.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_judge::MAX_REPLY_BYTES;
use evalscore_scorers::judge::{JudgeCache, JudgeCtx, JudgeOptions, JudgeRuntime, Memo};
use evalscore_scorers::{BatchInput, Task};
use evalscore_task::RowContext;
use evalscore_test_support::chat_server;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Replies to each row (`the answer N`) with a grade of N and a reasoning of `size` bytes; to
/// `the answer big`, with a body longer than the limit.
fn server(size: usize) -> String {
    chat_server::serve(move |req| {
        let asked = chat_server::last_message(&req.body).to_owned();
        let n = asked.rsplit(' ').next().unwrap().to_owned();
        if n == "big" {
            return chat_server::Reply::ok(&"x".repeat(MAX_REPLY_BYTES));
        }
        let answer =
            serde_json::json!({"reasoning": "r".repeat(size), "score": n.parse::<u32>().unwrap()});
        chat_server::Reply::ok(&answer.to_string())
    })
}

fn task(url: &str) -> Task {
    let text = format!(
        "models:\n  judge: {{base_url: \"{url}\", model: m, concurrency: 4, max_retries: 2}}\ndefinition:\n  scorers:\n    - type: model_as_a_judge_scorer\n      model_key: judge\n      user_prompt: \"Rate {{{{ sample.a }}}}\"\n"
    );
    Task::from_yaml(&text, &[]).unwrap()
}

fn rows(values: &[String]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("a", DataType::Utf8, true)])),
        vec![Arc::new(StringArray::from(values.to_vec()))],
    )
    .unwrap()
}

/// Each row's grade, or the row error's row and message.
type Scored = Result<Vec<Option<f64>>, (usize, String)>;

/// Scores `batch` with the fields `needed`; the memo it filled, and the grades or the error.
fn score(task: &Task, batch: &RecordBatch, needed: &[&'static str]) -> (Memo, Scored) {
    let runtime = JudgeRuntime::new(
        &task.models,
        &task.model_keys(),
        &JudgeOptions {
            cache: JudgeCache::Off,
            offline: false,
        },
        None,
    )
    .unwrap()
    .unwrap();
    let needed: BTreeSet<&'static str> = needed.iter().copied().collect();
    let memo = Memo::for_fields(&needed);
    let ctx = RowContext {
        batch,
        model_output: None,
        model_output_raw: None,
    };
    let judge = JudgeCtx {
        runtime: &runtime,
        memo: &memo,
    };
    let input = BatchInput {
        ctx: &ctx,
        rows: batch.num_rows(),
        needed: &needed,
        judge: Some(&judge),
        functions: None,
        memo: None,
    };
    let got = task.scorers[0]
        .scorer
        .score(&input)
        .map(|out| {
            let grades = out.fields["grade"]
                .as_primitive::<arrow::datatypes::Float64Type>()
                .clone();
            (0..grades.len())
                .map(|i| grades.is_valid(i).then(|| grades.value(i)))
                .collect()
        })
        .map_err(|e| (e.row, e.message));
    (memo, got)
}

#[test]
fn replies_are_read_as_they_arrive_and_their_text_is_not_kept() {
    let url = server(200_000);
    let task = task(&url);
    let values: Vec<String> = (0..20).map(|i| format!("the answer {}", i % 11)).collect();
    let batch = rows(&values);
    // 20 rows, 11 distinct requests of 200 KB replies: the memo holds 11 grades.
    let (memo, grades) = score(&task, &batch, &["score", "is_correct", "grade"]);
    let want: Vec<Option<f64>> = (0..20).map(|i| Some(f64::from(i % 11))).collect();
    assert_eq!(grades.unwrap(), want);
    assert_eq!(memo.len(), 11);
    assert_eq!(memo.text_bytes(), 0);
    // Written, the reasoning is kept, and only it.
    let (memo, grades) = score(&task, &batch, &["score", "grade", "reasoning"]);
    assert_eq!(grades.unwrap(), want);
    assert_eq!(memo.text_bytes(), 11 * 200_000);
}

#[test]
fn an_over_long_reply_is_a_row_error_naming_the_model_and_row() {
    let url = server(10);
    let task = task(&url);
    let values: Vec<String> = ["1", "2", "big", "3"]
        .iter()
        .map(|v| format!("the answer {v}"))
        .collect();
    let (memo, got) = score(&task, &rows(&values), &["score", "grade"]);
    assert_eq!(
        got.unwrap_err(),
        (
            2,
            format!(
                "judge model `judge` ({url}): {url}/chat/completions: the reply is longer than 1048576 bytes, the limit of a judge reply (a `max_tokens` in the model's entry bounds it) (after 1 attempts)"
            )
        )
    );
    // The other rows' replies were read and kept, for the rows scored again around it.
    assert_eq!(memo.len(), 4);
}
