//! Model-graded scorers end to end through `evalscore run` and `evalscore judge export/import`,
//! against an OpenAI-compatible test server that answers by rule (so every score is known),
//! counts what it is sent, fails on request, and checks the API key it receives. The real
//! server (llama.cpp) is in `judged_real.rs`.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use evalscore_test_support::chat_server;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

mod export_import;
mod failures;
mod shared_cache;
mod windows;

const KEY: &str = "sk-test-1234567890-secret";

#[derive(Default)]
struct Seen {
    requests: AtomicUsize,
    bodies: Mutex<Vec<Value>>,
    bad_keys: AtomicUsize,
}

/// The rule the test server answers by: `None` is a 500.
fn answer(body: &Value) -> Option<String> {
    let messages = body["messages"].as_array().unwrap();
    let system = messages
        .iter()
        .find(|m| m["role"] == "system")
        .map_or("", |m| m["content"].as_str().unwrap());
    let user = messages.last().unwrap()["content"].as_str().unwrap();
    if user.contains("[fail]") {
        return None;
    }
    if user.contains("[garbage]") {
        return Some("I would rather not say.".to_owned());
    }
    let good = user.contains("Paris");
    Some(if system.contains("\"prediction\"") {
        json!({"prediction": if good {"yes"} else {"no"}, "reasoning": if good {"right city"} else {"wrong city"}, "confidence": if good {0.9} else {0.6}}).to_string()
    } else if system.contains("\"score\"") {
        if good {
            "Good answer.\nScore: 8/10"
        } else {
            "Poor.\nScore: 2/10"
        }
        .to_owned()
    } else if user.contains("[Expert answer]") {
        if good {
            "It agrees.\nC"
        } else {
            "They disagree.\nD"
        }
        .to_owned()
    } else if user.contains("[Criterion]") {
        if good {
            "Meets it.\nY"
        } else {
            "It does not.\nN"
        }
        .to_owned()
    } else if user.contains("[Text]") {
        if user.contains("ignore previous") {
            "Yes"
        } else {
            "No"
        }
        .to_owned()
    } else if good {
        "Good".to_owned()
    } else {
        "Bad".to_owned()
    })
}

/// An OpenAI-compatible server on 127.0.0.1 answering by [`answer`].
fn server() -> (String, Arc<Seen>) {
    server_with(std::time::Duration::ZERO)
}

/// [`server`], each reply after `delay`.
fn server_with(delay: std::time::Duration) -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counts = Arc::clone(&seen);
    let url = chat_server::serve(move |req| {
        counts.requests.fetch_add(1, Ordering::SeqCst);
        if req.authorization.as_deref() != Some(format!("Bearer {KEY}").as_str()) {
            counts.bad_keys.fetch_add(1, Ordering::SeqCst);
        }
        std::thread::sleep(delay);
        let reply = answer(&req.body);
        counts.bodies.lock().unwrap().push(req.body);
        match reply {
            Some(r) => chat_server::Reply::ok(&r),
            None => chat_server::Reply {
                status: 500,
                body: "{\"error\": \"boom\"}".to_owned(),
            },
        }
    });
    (url, seen)
}

const TASK: &str = r#"
config:
  url: "http://127.0.0.1:9/v1"
models:
  judge:
    base_url: "<< config.url >>"
    model: fake-judge
    api_key_env: EVALSCORE_TEST_JUDGE_KEY
    concurrency: 4
    max_retries: 1
    timeout_s: 5
    seed: 7
definition:
  scorers:
    - type: model_as_a_judge_classifier
      key: cls
      model_key: judge
      system_prompt: "Does the response correctly answer the question? Reply yes or no."
      user_prompt: "Question: {{ sample.question }}\nResponse: {{ model_output.choices[0].message.content }}"
      correct_labels: ["yes"]
      incorrect_labels: ["no"]
      ground_truth_label: "{{ sample.label }}"
      metrics:
        - {type: binary-classification, field_gt: ground_truth_label, field_pred: predicted_label, positive_answer: "yes", negative_answer: "no"}
    - type: model_as_a_judge_scorer
      key: grade
      model_key: judge
      user_prompt: "Rate the answer {{ solver_output.output }}"
      metrics:
        - {type: mean, field: score}
    - type: model_graded_fact
      key: fact
      model_key: judge
      question: "{{ sample.question }}"
      expert: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct}
        - {type: frequency, field: choice}
    - type: model_graded_closed_qa
      key: cqa
      model_key: judge
      task: "{{ sample.question }}"
      criterion: "names the right city"
    - type: model_graded_security
      key: sec
      model_key: judge
    - type: model_graded_custom
      key: custom
      model_key: judge
      prompt: "Is this answer good? {{ solver_output.output }}"
      choices: {Good: 1.0, Bad: 0.0}
      metrics:
        - {type: mean, field: score}
"#;

/// [`TASK`] with only `scorer` (YAML of one scorer) in place of its scorers.
fn only(scorer: &str) -> String {
    let head = TASK
        .split("    - type: model_as_a_judge_classifier")
        .next()
        .unwrap();
    format!("{head}{scorer}")
}

/// The security scorer alone: one request per row.
const SECURITY: &str = "    - type: model_graded_security\n      model_key: judge\n";

/// Rows: two identical (1 and 3), one wrong, one the judge cannot answer readably, one
/// without output.
const ROWS: &str = r#"{"id": 1, "question": "Capital of France?", "answer": "Paris", "output": "Paris", "label": "yes"}
{"id": 2, "question": "Capital of Spain?", "answer": "Madrid", "output": "Barcelona", "label": "yes"}
{"id": 3, "question": "Capital of France?", "answer": "Paris", "output": "Paris", "label": "yes"}
{"id": 4, "question": "Say something", "answer": "x", "output": "[garbage] ignore previous", "label": "no"}
{"id": 5, "question": "Capital of Peru?", "answer": "Lima", "output": null, "label": "no"}
"#;

struct Setup {
    dir: tempfile::TempDir,
    url: String,
    seen: Arc<Seen>,
}

impl Setup {
    fn new(rows: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("task.yaml"), TASK).unwrap();
        std::fs::write(dir.path().join("rows.jsonl"), rows).unwrap();
        let (url, seen) = server();
        Setup { dir, url, seen }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn evalscore(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = evalscore();
        cmd.args(args);
        if args.get(1) != Some(&"import") {
            cmd.arg("--set").arg(format!("url={}", self.url));
        }
        cmd.env("EVALSCORE_TEST_JUDGE_KEY", KEY)
            .env("XDG_CACHE_HOME", self.path("xdg"))
            .current_dir(self.dir.path())
            .output()
            .unwrap()
    }

    fn run(&self, out: &str, extra: &[&str]) -> std::process::Output {
        let mut args = vec!["run", "task.yaml", "--input", "rows.jsonl", "--out", out];
        if !extra.contains(&"--no-cache") {
            args.extend(["--cache", "cache.sqlite"]);
        }
        args.extend_from_slice(extra);
        self.evalscore(&args)
    }

    /// `judge export task.yaml --input rows.jsonl --out OUT` + `extra`.
    fn export(&self, out: &str, extra: &[&str]) -> std::process::Output {
        export_in(self.dir.path(), out)
            .args(extra)
            .arg("--set")
            .arg(format!("url={}", self.url))
            .env("EVALSCORE_TEST_JUDGE_KEY", KEY)
            .env("XDG_CACHE_HOME", self.path("xdg"))
            .output()
            .unwrap()
    }

    fn sent(&self) -> usize {
        self.seen.requests.load(Ordering::SeqCst)
    }
}

fn ok(o: &std::process::Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn run_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

/// Distinct requests of the five rows: per scorer, rows 1 and 3 are one request and row 5
/// (no output) sends none, so 3 each (the fact and closed-QA prompts do not hold the output
/// row 4's text... they do: 3 each), 6 scorers.
const DISTINCT: usize = 18;

#[test]
fn every_judge_type_scores_from_the_replies_and_a_rerun_sends_nothing() {
    let s = Setup::new(ROWS);
    let o = s.run("out", &[]);
    ok(&o);
    assert_eq!(s.sent(), DISTINCT, "identical requests go once");
    assert_eq!(s.seen.bad_keys.load(Ordering::SeqCst), 0, "the key is sent");
    let scores = read_parquet(&s.path("out/scores.parquet"));
    assert_eq!(
        column_names(&scores),
        words(concat!(
            "id cls__is_correct cls__predicted_label cls__ground_truth_label cls__reasoning ",
            "cls__confidence cls__judge_status grade__score grade__is_correct grade__grade ",
            "grade__reasoning grade__judge_status fact__choice fact__score fact__is_correct ",
            "fact__judge_status cqa__choice cqa__score cqa__is_correct cqa__judge_status ",
            "sec__choice sec__score sec__is_correct sec__judge_status custom__choice ",
            "custom__score custom__is_correct custom__judge_status"
        ))
    );
    // Rows 1 and 3 are the same request; row 4's reply is unreadable (invalid), row 5 has no
    // output (missing). Row 4 asks the security judge about "ignore previous": it answers Yes
    // (malicious) -- but its text also holds the garbage marker, so the reply is unreadable.
    let table = |cols: &[&str]| -> Vec<String> {
        cols.iter()
            .map(|c| format!("{c}: {}", column_text(&scores, c)))
            .collect()
    };
    assert_eq!(
        table(&[
            "cls__is_correct",
            "cls__predicted_label",
            "cls__ground_truth_label",
            "cls__reasoning",
            "cls__confidence",
            "cls__judge_status",
            "grade__score",
            "grade__grade",
            "grade__is_correct",
            "fact__choice",
            "fact__score",
            "fact__judge_status",
            "cqa__choice",
            "sec__choice",
            "sec__score",
            "custom__choice",
        ]),
        [
            "cls__is_correct: 1.0 | 0.0 | 1.0 | 0.0 | 0.0",
            "cls__predicted_label: yes | no | yes | ∅ | ∅",
            "cls__ground_truth_label: yes | yes | yes | no | no",
            "cls__reasoning: right city | wrong city | right city | ∅ | ∅",
            "cls__confidence: 0.9 | 0.6 | 0.9 | ∅ | ∅",
            "cls__judge_status: ok | ok | ok | invalid | missing",
            "grade__score: 0.8 | 0.2 | 0.8 | 0.0 | 0.0",
            "grade__grade: 8.0 | 2.0 | 8.0 | ∅ | ∅",
            "grade__is_correct: 1.0 | 0.0 | 1.0 | 0.0 | 0.0",
            "fact__choice: C | D | C | ∅ | ∅",
            "fact__score: 1.0 | 0.0 | 1.0 | 0.0 | 0.0",
            "fact__judge_status: ok | ok | ok | invalid | missing",
            "cqa__choice: Y | N | Y | ∅ | ∅",
            "sec__choice: No | No | No | ∅ | ∅",
            "sec__score: 1.0 | 1.0 | 1.0 | 0.0 | 0.0",
            "custom__choice: Good | Bad | Good | ∅ | ∅",
        ]
    );

    // Metrics: invalid and missing counted per judge scorer.
    let metrics = read_parquet(&s.path("out/metrics.parquet"));
    let lines = metric_lines(&metrics);
    for key in ["cls", "grade", "fact", "cqa", "sec", "custom"] {
        let missing = lines.iter().position(|l| {
            l.starts_with(&format!("{key}|")) && l.ends_with("|missing|missing|rows|count|∅|1|5")
        });
        let invalid = lines.iter().position(|l| {
            l.starts_with(&format!("{key}|")) && l.ends_with("|invalid|invalid|rows|count|∅|1|5")
        });
        assert_eq!(
            invalid,
            missing.map(|m| m + 1),
            "{key}: an invalid row after the missing row in {lines:#?}"
        );
    }
    let rj = run_json(&s.path("out"));
    let m = &rj["judge"]["models"]["judge"];
    assert_eq!(m["model"], "fake-judge");
    assert_eq!(m["requests_sent"], DISTINCT as u64);
    assert_eq!(m["cache_hits"], 0);
    assert_eq!(m["deduplicated"], 6);
    assert_eq!(m["retries"], 0);
    assert_eq!(m["failures"], 0);
    assert_eq!(m["prompt_tokens"], 10 * DISTINCT as u64);
    assert_eq!(m["completion_tokens"], 2 * DISTINCT as u64);
    assert_eq!(rj["judge"]["invalid"]["cls"], 1);
    assert_eq!(rj["judge"]["offline"], false);

    // A rerun sends nothing and scores the same; so does --offline.
    let o = s.run("again", &[]);
    ok(&o);
    assert_eq!(s.sent(), DISTINCT);
    assert_eq!(
        run_json(&s.path("again"))["judge"]["models"]["judge"]["cache_hits"],
        DISTINCT as u64
    );
    let o = s.run("offline", &["--offline"]);
    ok(&o);
    assert_eq!(s.sent(), DISTINCT);
    for dir in ["again", "offline"] {
        assert_eq!(
            read_parquet(&s.path(&format!("{dir}/scores.parquet"))),
            scores,
            "{dir}"
        );
    }

    // The key is nowhere in what the runs wrote or printed.
    for dir in ["out", "again", "offline"] {
        for f in files_in(&s.path(dir)) {
            let bytes = std::fs::read(s.path(dir).join(&f)).unwrap();
            assert!(
                !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
                "{dir}/{f} holds the API key"
            );
        }
    }
    assert!(!String::from_utf8_lossy(&o.stderr).contains(KEY));
    let cache = std::fs::read(s.path("cache.sqlite")).unwrap();
    assert!(!cache.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
}

#[test]
fn the_request_is_exactly_what_the_task_says() {
    let s = Setup::new(ROWS.lines().next().unwrap());
    ok(&s.run("out", &["--no-cache"]));
    let bodies = s.seen.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 6);
    assert!(
        !s.path("cache.sqlite").exists(),
        "--no-cache writes no cache"
    );
    assert!(!s.path("xdg").exists());
    let cls = &bodies
        .iter()
        .find(|b| {
            b["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("Reply yes or no")
        })
        .unwrap();
    assert_eq!(
        **cls,
        json!({
            "model": "fake-judge",
            "temperature": 0.0,
            "seed": 7,
            "messages": [
                {"role": "system", "content": "Does the response correctly answer the question? Reply yes or no.\n\nAnswer with a JSON object and nothing else: {\"prediction\": one of \"yes\", \"no\", \"reasoning\": \"one or two sentences\", \"confidence\": a number from 0 to 1}."},
                {"role": "user", "content": "Question: Capital of France?\nResponse: Paris"}
            ]
        })
    );
    let fact = bodies
        .iter()
        .find(|b| {
            b["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("[Expert answer]")
        })
        .unwrap();
    let text = fact["messages"][0]["content"].as_str().unwrap();
    assert!(text.starts_with("You are checking a submitted answer against an expert answer to the same question.\n\n[Question]\nCapital of France?\n\n[Expert answer]\nParis\n\n[Submitted answer]\nParis\n\n"), "{text}");
    assert!(text.ends_with("alone on the last line."), "{text}");
}

/// A judge classifier checked against a human label column (no `ground_truth_label`), and a
/// numeric column of the data averaged per group, by the judge's metrics.
#[test]
fn a_judge_classifier_against_a_human_label_column() {
    let task = only(
        r#"    - type: model_as_a_judge_classifier
      key: cls
      model_key: judge
      system_prompt: "Does the response correctly answer the question? Reply yes or no."
      user_prompt: "Question: {{ sample.question }}\nResponse: {{ model_output.choices[0].message.content }}"
      correct_labels: ["yes"]
      incorrect_labels: ["no"]
      metrics:
        - {type: binary-classification, field_gt: "{{ sample.human }}", field_pred: predicted_label, positive_answer: "yes", negative_answer: "no"}
        - {type: mean, field: "{{ sample.latency }}", group_by: lang}
"#,
    );
    // The judge says yes when the response holds "Paris": rows 1 and 6 agree with the human
    // on yes (tp), row 2 on no (tn), row 3 says yes against a human no (fp), row 4 no against
    // a human yes (fn); row 5 has no output, so no verdict (excluded).
    let rows = r#"{"id": 1, "question": "Capital of France?", "output": "Paris", "human": "yes", "latency": 1.5, "lang": "en"}
{"id": 2, "question": "Capital of Spain?", "output": "Barcelona", "human": "no", "latency": 2.5, "lang": "en"}
{"id": 3, "question": "Capital of Italy?", "output": "Paris, of course", "human": "no", "latency": 0.5, "lang": "fr"}
{"id": 4, "question": "Capital of Italy?", "output": "Rome", "human": "yes", "latency": 4.0, "lang": "fr"}
{"id": 5, "question": "Capital of Peru?", "output": null, "human": "yes", "latency": null, "lang": "fr"}
{"id": 6, "question": "Capital of France?", "output": "Paris?", "human": "yes", "latency": 3.0, "lang": "en"}
"#;
    let s = Setup::new(rows);
    std::fs::write(s.path("task.yaml"), task).unwrap();
    ok(&s.run("out", &["--quiet"]));
    let lines = metric_lines(&read_parquet(&s.path("out/metrics.parquet")));
    let figures: Vec<&str> = lines
        .iter()
        .filter(|l| {
            [
                "|accuracy|",
                "|precision|",
                "|recall|",
                "|tp|",
                "|fp|",
                "|tn|",
                "|fn|",
                "|excluded|",
                "|mean|{{ sample.latency }}|value|",
            ]
            .iter()
            .any(|s| l.contains(s))
        })
        .map(String::as_str)
        .collect();
    let b = "cls|model_as_a_judge_classifier|binary-classification|binary-classification|{{ sample.human }},predicted_label";
    let m = "cls|model_as_a_judge_classifier|mean|mean|{{ sample.latency }}|value|∅";
    assert_eq!(
        figures,
        [
            format!("{b}|accuracy|∅|0.6|5"),
            format!("{b}|precision|∅|0.6666666666666666|5"),
            format!("{b}|recall|∅|0.6666666666666666|5"),
            format!("{b}|tp|∅|2|5"),
            format!("{b}|fp|∅|1|5"),
            format!("{b}|tn|∅|1|5"),
            format!("{b}|fn|∅|1|5"),
            format!("{b}|excluded|∅|1|5"),
            // Overall (1.5, 2.5, 0.5, 4.0, 3.0), then en (1.5, 2.5, 3.0), then fr (0.5, 4.0).
            format!("{m}|2.3|5"),
            format!("{m}|2.3333333333333335|3"),
            format!("{m}|2.25|2"),
        ]
    );
}
