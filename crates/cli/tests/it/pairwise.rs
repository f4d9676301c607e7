//! The pairwise judge (`model_as_a_judge_pairwise`) end to end: against a test server that
//! answers by rule (so every verdict is known, position bias and unreadable replies on
//! request), and against the real llama-server of the test suite.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use evalscore_test_support::{chat_server, llama};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::Ordering;

/// The text between the markers of answer `name` in a pairwise user message.
fn answer_text<'a>(user: &'a str, name: &str) -> &'a str {
    let start = format!("[The Start of Answer {name}]\n");
    let end = format!("\n[The End of Answer {name}]");
    let from = user.find(&start).unwrap() + start.len();
    &user[from..from + user[from..].find(&end).unwrap()]
}

/// The rule the test server judges by: the answer naming Paris wins (`tie` when both or
/// neither do); a prompt holding `[biased]` always gets `A` (a judge that prefers the first
/// position), `[garbage]` an unreadable reply. Answers as JSON unless the prompt holds
/// `[brackets]` (MT-Bench's `[[B]]` on the last line).
fn verdict(body: &serde_json::Value) -> String {
    let user = chat_server::last_message(body);
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("\"winner\""), "{system}");
    if user.contains("[garbage]") {
        return "I cannot decide.".to_owned();
    }
    let (a, b) = (answer_text(user, "A"), answer_text(user, "B"));
    let winner = if user.contains("[biased]") {
        "A"
    } else {
        match (a.contains("Paris"), b.contains("Paris")) {
            (true, false) => "A",
            (false, true) => "B",
            _ => "tie",
        }
    };
    if user.contains("[brackets]") {
        format!("Both are short.\n[[{winner}]]")
    } else {
        json!({"winner": winner, "reasoning": format!("{a} vs {b}")}).to_string()
    }
}

fn task(url: &str, swap: bool) -> String {
    format!(
        r#"
models:
  judge:
    base_url: "{url}"
    model: fake-judge
    concurrency: 4
    max_retries: 0
definition:
  scorers:
    - type: model_as_a_judge_pairwise
      key: pair
      model_key: judge
      user_prompt: "{{{{ sample.question }}}}"
      output_a: "{{{{ sample.a }}}}"
      output_b: "{{{{ sample.b }}}}"
      swap: {swap}
      metrics:
        - {{type: mean, field: score_a}}
        - {{type: mean, field: consistent}}
        - {{type: frequency, field: winner}}
        - {{type: win_rate, field: winner}}
"#
    )
}

const ROWS: &str = r#"{"id": 1, "question": "Capital of France?", "a": "Paris", "b": "Lyon"}
{"id": 2, "question": "Capital of France?", "a": "Lyon", "b": "Paris"}
{"id": 3, "question": "Capital of France? [biased]", "a": "Lyon", "b": "Paris"}
{"id": 4, "question": "Capital of France? [brackets]", "a": "Paris", "b": "Paris"}
{"id": 5, "question": "Capital of France? [garbage]", "a": "Paris", "b": "Lyon"}
{"id": 6, "question": "Capital of France?", "a": "Paris", "b": null}
{"id": 7, "question": "Capital of France?", "a": "Paris", "b": "Lyon"}
"#;

fn scored(dir: &Path, out: &str) -> arrow::array::RecordBatch {
    read_parquet(&dir.join(out).join("scores.parquet"))
}

#[test]
fn swap_asks_each_pair_both_ways_and_an_inconsistent_verdict_is_a_tie() {
    let (url, sent) =
        chat_server::serve_counting(|req| chat_server::Answer::ok(&verdict(&req.body)));
    let dir = folder(&[("task.yaml", &task(&url, true)), ("rows.jsonl", ROWS)]);
    run_cached(dir.path(), "out");
    // Twelve requests (six rows with both answers, both ways), seven distinct: row 7 repeats
    // row 1, rows 1 and 2 are each other's swap, and row 4's swap is itself. Row 6 (no
    // answer B) sends none.
    assert_eq!(sent.load(Ordering::SeqCst), 7);
    let s = scored(dir.path(), "out");
    let winner = strings(&s, "pair__winner");
    let want = |v: &[Option<&str>]| v.iter().map(|x| x.map(str::to_owned)).collect::<Vec<_>>();
    assert_eq!(
        winner,
        want(&[
            Some("A"),
            Some("B"),
            Some("tie"),
            Some("tie"),
            None,
            None,
            Some("A")
        ])
    );
    assert_eq!(
        floats(&s, "pair__score_a"),
        vec![
            Some(1.0),
            Some(0.0),
            Some(0.5),
            Some(0.5),
            None,
            None,
            Some(1.0)
        ]
    );
    // Row 3's judge chose the first position both times: inconsistent.
    assert_eq!(
        floats(&s, "pair__consistent"),
        vec![
            Some(1.0),
            Some(1.0),
            Some(0.0),
            Some(1.0),
            None,
            None,
            Some(1.0)
        ]
    );
    assert_eq!(
        strings(&s, "pair__judge_status"),
        want(&[
            Some("ok"),
            Some("ok"),
            Some("ok"),
            Some("ok"),
            Some("invalid"),
            Some("missing"),
            Some("ok")
        ])
    );
    // The reasoning is the first verdict's (answers in the order given); row 4 answered
    // in prose, row 5 unreadably.
    assert_eq!(
        strings(&s, "pair__reasoning")[..5],
        want(&[
            Some("Paris vs Lyon"),
            Some("Lyon vs Paris"),
            Some("Lyon vs Paris"),
            None,
            None
        ])[..]
    );
    let run = read_json(&dir.path().join("out/run.json"));
    let m = &run["judge"]["models"]["judge"];
    assert_eq!(m["requests_sent"], 7, "{run}");
    assert_eq!(m["deduplicated"], 5, "{run}");
    assert_eq!(run["judge"]["invalid"]["pair"], 1, "{run}");
    let metrics = read_parquet(&dir.path().join("out/metrics.parquet"));
    let lines = metric_lines(&metrics);
    // score_a over the five rows with a verdict: (1 + 0 + 0.5 + 0.5 + 1) / 5.
    let line = |metric: &str, field: &str, value: &str| {
        format!("pair|model_as_a_judge_pairwise|{metric}|mean|{field}|value|∅|{value}|5")
    };
    assert!(
        lines.contains(&line("mean(score_a)", "score_a", "0.6")),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&line("mean(consistent)", "consistent", "0.8")),
        "{lines:#?}"
    );
    // Wins A, B, tie, tie, A: (2 + 2 / 2) / 5; the unreadable and the missing rows are
    // excluded.
    for (stat, value) in [
        ("value", "0.6"),
        ("wins", "2"),
        ("ties", "2"),
        ("losses", "1"),
        ("excluded", "2"),
    ] {
        let want =
            format!("pair|model_as_a_judge_pairwise|win_rate|win_rate|winner|{stat}|∅|{value}|5");
        assert!(lines.contains(&want), "{want} in {lines:#?}");
    }

    // A rerun is answered from the cache: nothing sent, the same scores.
    run_cached(dir.path(), "again");
    assert_eq!(sent.load(Ordering::SeqCst), 7);
    assert_eq!(scored(dir.path(), "again"), s);
}

#[test]
fn without_swap_each_pair_is_asked_once_and_consistent_is_null() {
    let (url, sent) =
        chat_server::serve_counting(|req| chat_server::Answer::ok(&verdict(&req.body)));
    let dir = folder(&[("task.yaml", &task(&url, false)), ("rows.jsonl", ROWS)]);
    succeeded(
        run_in(dir.path(), "out")
            .arg("--no-cache")
            .output()
            .unwrap(),
    );
    assert_eq!(sent.load(Ordering::SeqCst), 5);
    let s = scored(dir.path(), "out");
    assert_eq!(
        strings(&s, "pair__winner"),
        vec![
            Some("A".to_owned()),
            Some("B".to_owned()),
            Some("A".to_owned()),
            Some("tie".to_owned()),
            None,
            None,
            Some("A".to_owned())
        ]
    );
    assert_eq!(null_count(&s, "pair__consistent"), 7);
}

#[test]
fn a_real_judge_gives_a_verdict_or_invalid_for_every_pair_and_a_rerun_is_cached() {
    let (_server, url) = llama::start();
    let task = format!(
        r#"
models:
  small:
    base_url: "{url}"
    model: smollm2
    seed: 42
    max_tokens: 48
    concurrency: 2
definition:
  scorers:
    - type: model_as_a_judge_pairwise
      key: pair
      model_key: small
      user_prompt: "{{{{ sample.question }}}}"
      output_a: "{{{{ sample.a }}}}"
      output_b: "{{{{ sample.b }}}}"
      reference: "{{{{ sample.ref }}}}"
      swap: true
"#
    );
    let rows = "{\"question\": \"What is the capital of France?\", \"a\": \"Paris\", \"b\": \"Berlin\", \"ref\": \"Paris\"}\n\
                {\"question\": \"What is 2 + 2?\", \"a\": \"5\", \"b\": \"4\", \"ref\": \"4\"}\n\
                {\"question\": \"What is the capital of France?\", \"a\": \"Paris\", \"b\": \"Berlin\", \"ref\": \"Paris\"}\n";
    let dir = folder(&[("task.yaml", &task), ("rows.jsonl", rows)]);
    let run = |out: &str| run_cached(dir.path(), out);
    let first = run("a");
    let m = &first["judge"]["models"]["small"];
    // Two distinct pairs, each asked both ways; row 3 repeats row 1.
    assert_eq!(m["requests_sent"], 4, "{first}");
    assert_eq!(m["deduplicated"], 2, "{first}");
    assert_eq!(m["failures"], 0, "{first}");
    let s = scored(dir.path(), "a");
    let (winner, status) = (
        strings(&s, "pair__winner"),
        strings(&s, "pair__judge_status"),
    );
    let (score, consistent) = (floats(&s, "pair__score_a"), floats(&s, "pair__consistent"));
    for r in 0..3 {
        match status[r].as_deref() {
            Some("ok") => {
                let w = winner[r].as_deref().unwrap();
                let want = match w {
                    "A" => 1.0,
                    "B" => 0.0,
                    "tie" => 0.5,
                    other => panic!("winner {other}"),
                };
                assert_eq!(score[r], Some(want));
                let c = consistent[r].unwrap();
                assert!(c == 0.0 || c == 1.0);
                if c == 0.0 {
                    assert_eq!(w, "tie", "an inconsistent pair is a tie");
                }
            }
            Some("invalid") => {
                assert_eq!((&winner[r], score[r], consistent[r]), (&None, None, None));
            }
            other => panic!("row {r}: status {other:?}"),
        }
    }
    assert_eq!(winner[0], winner[2], "the same pair, the same verdict");
    let again = run("b");
    assert_eq!(again["judge"]["models"]["small"]["requests_sent"], 0);
    assert_eq!(scored(dir.path(), "b"), s);
}

#[test]
fn a_throttled_swap_is_retried_and_a_failed_one_is_a_row_error_naming_the_row() {
    // Every distinct request is refused once with a 429, then answered.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    let first_time = std::sync::Arc::clone(&seen);
    let (url, sent) = chat_server::serve_counting(move |req| {
        let user = chat_server::last_message(&req.body).to_owned();
        if first_time.lock().unwrap().insert(user) {
            let reply = chat_server::Reply {
                status: 429,
                body: "{\"error\": \"slow down\"}".to_owned(),
            };
            return chat_server::Answer::Reply(reply, vec![("Retry-After", "0".to_owned())]);
        }
        chat_server::Answer::ok(&verdict(&req.body))
    });
    let retrying = task(&url, true).replace("max_retries: 0", "max_retries: 2");
    let dir = folder(&[("task.yaml", &retrying), ("rows.jsonl", ROWS)]);
    succeeded(
        run_in(dir.path(), "out")
            .arg("--no-cache")
            .output()
            .unwrap(),
    );
    assert_eq!(
        sent.load(Ordering::SeqCst),
        14,
        "seven requests, each twice"
    );
    let run = read_json(&dir.path().join("out/run.json"));
    assert_eq!(run["judge"]["models"]["judge"]["retries"], 7, "{run}");
    assert_eq!(
        strings(&scored(dir.path(), "out"), "pair__winner")[..4],
        [
            Some("A".to_owned()),
            Some("B".to_owned()),
            Some("tie".to_owned()),
            Some("tie".to_owned())
        ]
    );

    // The swapped request of the only row fails: the run stops with an error at that row.
    let (url, _) = chat_server::serve_counting(|req| {
        let user = chat_server::last_message(&req.body);
        if answer_text(user, "A") == "Lyon" {
            let reply = chat_server::Reply {
                status: 500,
                body: "{\"error\": \"boom\"}".to_owned(),
            };
            return chat_server::Answer::Reply(reply, Vec::new());
        }
        chat_server::Answer::ok(&verdict(&req.body))
    });
    let rows =
        "{\"id\": 1, \"question\": \"Capital of France?\", \"a\": \"Paris\", \"b\": \"Lyon\"}\n";
    let dir = folder(&[("task.yaml", &task(&url, true)), ("rows.jsonl", rows)]);
    let err = stderr(&failed(
        run_in(dir.path(), "out")
            .arg("--no-cache")
            .output()
            .unwrap(),
        2,
    ));
    assert_starts(
        &err,
        &format!("error: rows.jsonl, row 1: scorer `pair`: judge model `judge` ({url}): "),
    );
    assert!(!dir.path().join("out/scores.parquet").exists());
}
