//! Judging apart from scoring (what Spark and Ray jobs use to send each distinct request once):
//! a batch's requests listed ahead, sent once by a `TaskJudge`, and the batch scored with
//! exactly those replies, sending nothing, with the scores a scorer that asks the model gives.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_engine::{
    BindOptions, ChatRequest, JudgeCache, JudgeOptions, JudgeReplies, Scorer, Task, TaskJudge,
};
use evalscore_test_support::chat_server;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Grades each `Rate N` with N; answers `Rate fail` with a 500.
fn server() -> (String, Arc<AtomicUsize>) {
    chat_server::serve_counting(|req| {
        let asked = chat_server::last_message(&req.body);
        let n = asked.rsplit(' ').next().unwrap();
        if n == "fail" {
            return chat_server::Answer::Reply(
                chat_server::Reply {
                    status: 500,
                    body: "{}".to_owned(),
                },
                Vec::new(),
            );
        }
        chat_server::Answer::ok(&format!("{{\"score\": {n}, \"reasoning\": \"r\"}}"))
    })
}

/// A judge scorer grading column `a`, and `filter` when given.
fn task(url: &str, filter: &str) -> Task {
    let text = format!(
        "{filter}models:\n  judge: {{base_url: \"{url}\", model: m, max_retries: 0}}\ndefinition:\n  scorers:\n    - type: model_as_a_judge_scorer\n      key: grade\n      model_key: judge\n      user_prompt: \"Rate {{{{ sample.a }}}}\"\n      metrics:\n        - {{type: mean, field: score}}\n"
    );
    Task::from_yaml(&text, &[]).unwrap()
}

fn rows(values: &[Option<&str>]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("a", DataType::Utf8, true)])),
        vec![Arc::new(StringArray::from(values.to_vec()))],
    )
    .unwrap()
}

fn no_cache() -> JudgeOptions {
    JudgeOptions {
        cache: JudgeCache::Off,
        offline: false,
    }
}

fn scorer(task: Task, batch: &RecordBatch) -> Scorer {
    let opts = BindOptions {
        judge: no_cache(),
        ..BindOptions::default()
    };
    Scorer::new(task, &batch.schema(), &opts).unwrap()
}

/// The distinct requests of `scorer` over `batch`, as a job gathers them by key.
fn distinct(scorer: &Scorer, batch: &RecordBatch) -> Vec<(String, ChatRequest)> {
    let mut seen = BTreeSet::new();
    scorer
        .judge_requests(batch)
        .unwrap()
        .into_iter()
        .filter(|r| seen.insert(r.key))
        .map(|r| (r.model_key, r.request))
        .collect()
}

fn score_column(scores: &RecordBatch) -> Vec<Option<f64>> {
    let c = scores.column_by_name("grade__score").unwrap();
    let c = c.as_primitive::<arrow::datatypes::Float64Type>();
    (0..c.len())
        .map(|i| c.is_valid(i).then(|| c.value(i)))
        .collect()
}

#[test]
fn distinct_requests_are_sent_once_and_the_batch_is_scored_with_their_replies() {
    let (url, sent) = server();
    let batch = rows(&[Some("3"), Some("5"), Some("3"), Some("7"), None, Some("5")]);
    let scorer = scorer(task(&url, ""), &batch);
    let asked = scorer.judge_requests(&batch).unwrap();
    // The row without a value asks nothing; rows 0 and 2 (1 and 5) ask the same.
    assert_eq!(
        asked.iter().map(|r| r.row).collect::<Vec<_>>(),
        [0, 1, 2, 3, 5]
    );
    assert!(asked.iter().all(|r| r.model_key == "judge"));
    assert!(asked.iter().all(|r| r.key == r.request.cache_key()));
    assert_eq!(asked[0].key, asked[2].key);
    assert_eq!(asked[1].key, asked[4].key);
    assert_eq!(asked[3].request.messages.last().unwrap().content, "Rate 7");

    let requests = distinct(&scorer, &batch);
    assert_eq!(requests.len(), 3);
    let judge = TaskJudge::new(&task(&url, ""), &no_cache())
        .unwrap()
        .unwrap();
    let replies = judge.send(&requests).unwrap();
    assert_eq!(sent.load(Ordering::SeqCst), 3);
    assert_eq!(judge.stats()[0].stats.requests_sent, 3);
    assert_eq!(
        replies[2].as_ref().unwrap().content,
        "{\"score\": 7, \"reasoning\": \"r\"}"
    );
    let given = JudgeReplies::new(
        &task(&url, ""),
        requests.iter().map(|(_, r)| r.cache_key()).zip(replies),
    )
    .unwrap();
    let (scores, _) = scorer.score_with_replies(&batch, &given).unwrap();
    // Nothing more was sent, and the scorer counted nothing.
    assert_eq!(sent.load(Ordering::SeqCst), 3);
    assert_eq!(scorer.judge_stats()[0].stats.requests_sent, 0);
    let got = score_column(&scores);
    assert_eq!(
        got,
        [
            Some(0.3),
            Some(0.5),
            Some(0.3),
            Some(0.7),
            Some(0.0),
            Some(0.5)
        ]
    );
    // A scorer that asks the model itself scores the same.
    let (asking, _) = scorer.score(&batch).unwrap();
    assert_eq!(score_column(&asking), got);
    assert_eq!(sent.load(Ordering::SeqCst), 6);
}

#[test]
fn a_reply_not_given_is_a_row_error_and_a_failed_one_fails_as_it_did() {
    let (url, sent) = server();
    let batch = rows(&[Some("3"), Some("fail"), Some("7")]);
    let scorer = scorer(task(&url, ""), &batch);
    let requests = distinct(&scorer, &batch);
    let judge = TaskJudge::new(&task(&url, ""), &no_cache())
        .unwrap()
        .unwrap();
    let replies = judge.send(&requests).unwrap();
    assert_eq!(judge.stats()[0].stats.failures, 1);
    let keyed: Vec<_> = requests
        .iter()
        .map(|(_, r)| r.cache_key())
        .zip(replies)
        .collect();
    let before = sent.load(Ordering::SeqCst);

    // Without the failed one's and the last one's replies: the first row missing one fails.
    let given = JudgeReplies::new(&task(&url, ""), keyed[..1].to_vec()).unwrap();
    let err = scorer.score_with_replies(&batch, &given).unwrap_err();
    assert_eq!(
        err.message,
        format!("row 2: scorer `grade`: judge model `judge` ({url}): the reply is not in the judge cache, and --offline forbids sending the request")
    );
    // With the failure: it fails as it did when it was sent.
    let given = JudgeReplies::new(&task(&url, ""), keyed).unwrap();
    let err = scorer.score_with_replies(&batch, &given).unwrap_err();
    assert_eq!(
        err.message,
        format!("row 2: scorer `grade`: judge model `judge` ({url}): {url}/chat/completions answered HTTP 500 (after 1 attempts)")
    );
    assert_eq!(sent.load(Ordering::SeqCst), before);
}

/// Rows a `filter:` leaves out ask nothing; rows are numbered in the caller's batch.
#[test]
fn rows_left_out_by_the_filter_ask_nothing() {
    let (url, _) = server();
    let batch = rows(&[Some("3"), Some("5"), Some("9"), Some("7")]);
    let scorer = scorer(task(&url, "filter: \"a != '5'\"\n"), &batch);
    let asked = scorer.judge_requests(&batch).unwrap();
    assert_eq!(asked.iter().map(|r| r.row).collect::<Vec<_>>(), [0, 2, 3]);
    assert_eq!(asked[1].request.messages.last().unwrap().content, "Rate 9");
}

/// A row whose prompt fails asks nothing, the rows around it ask theirs, and scoring with
/// the replies meets the row's error again.
#[test]
fn a_row_whose_prompt_fails_asks_nothing() {
    let (url, sent) = server();
    let text = format!(
        "models:\n  judge: {{base_url: \"{url}\", model: m, max_retries: 0}}\ndefinition:\n  scorers:\n    - type: model_as_a_judge_scorer\n      key: grade\n      model_key: judge\n      user_prompt: \"Rate {{{{ 10 // (sample.a | int) }}}}\"\n"
    );
    let batch = rows(&[Some("5"), Some("0"), Some("2"), Some("0"), Some("1")]);
    let scorer = scorer(Task::from_yaml(&text, &[]).unwrap(), &batch);
    let asked = scorer.judge_requests(&batch).unwrap();
    assert_eq!(asked.iter().map(|r| r.row).collect::<Vec<_>>(), [0, 2, 4]);
    let contents: Vec<&str> = asked
        .iter()
        .map(|r| r.request.messages.last().unwrap().content.as_str())
        .collect();
    assert_eq!(contents, ["Rate 2", "Rate 5", "Rate 10"]);
    let requests = distinct(&scorer, &batch);
    let task = Task::from_yaml(&text, &[]).unwrap();
    let replies = TaskJudge::new(&task, &no_cache())
        .unwrap()
        .unwrap()
        .send(&requests)
        .unwrap();
    let given = JudgeReplies::new(
        &task,
        requests.iter().map(|(_, r)| r.cache_key()).zip(replies),
    )
    .unwrap();
    let err = scorer.score_with_replies(&batch, &given).unwrap_err();
    assert!(
        err.message.starts_with("row 2: scorer `grade`: "),
        "{}",
        err.message
    );
    assert_eq!(sent.load(Ordering::SeqCst), 3);
}
