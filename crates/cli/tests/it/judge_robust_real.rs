//! A signal while a real judge is busy: llama.cpp's `llama-server` (SmolLM2-135M on
//! 127.0.0.1, built and cached by `scripts/setup/llama-server.sh`) asked for long answers, one
//! slot at a time, so that requests wait on the server. The run must stop within seconds,
//! not when the generations end.
#![allow(clippy::unwrap_used)]
use crate::common::{failed, folder, kill, output_within, run_in};
use evalscore_test_support::llama;
use std::process::Stdio;
use std::time::Duration;

#[cfg(unix)]
#[test]
fn sigint_stops_a_run_while_a_real_judge_generates() {
    // One slot: the second worker's request queues behind the first one's generation.
    let (_server, url) = llama::start_with(&["--parallel", "1"]);
    let task = format!(
        r#"
models:
  small:
    model: smollm2
    base_url: "{url}"
    timeout_s: 600
    concurrency: 2
    max_tokens: 1500
    seed: 42
definition:
  scorers:
    - type: model_as_a_judge_scorer
      key: grade
      model_key: small
      user_prompt: "Write a very long essay about the number {{{{ sample.id }}}}, then grade it."
"#
    );
    let rows: String = (0..64).map(|i| format!("{{\"id\": {i}}}\n")).collect();
    let dir = folder(&[("task.yaml", &task), ("rows.jsonl", &rows)]);
    let child = run_in(dir.path(), "out")
        .args(["--cache", "cache.sqlite"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Time for the run to start and its requests to reach the server.
    std::thread::sleep(Duration::from_secs(2));
    kill("-INT", child.id());
    // The generations take far longer (1,500 tokens each, one at a time).
    let o = failed(output_within(child, Duration::from_secs(10), "SIGINT"), 130);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: interrupted by SIGINT; no output was written\n"
    );
    let out: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(out.is_empty(), "{out:?}");
}
