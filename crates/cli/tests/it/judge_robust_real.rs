//! A signal while a real judge is busy: llama.cpp's `llama-server` (SmolLM2-135M on
//! 127.0.0.1, built and cached by `scripts/setup/llama-server.sh`) asked for long answers, one
//! slot at a time, so that requests wait on the server. The run must stop within seconds,
//! not when the generations end.
#![allow(clippy::unwrap_used)]
use evalscore_test_support::llama;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[cfg(unix)]
#[test]
fn sigint_stops_a_run_while_a_real_judge_generates() {
    // One slot: the second worker's request queues behind the first one's generation.
    let (_server, url) = llama::start_with(&["--parallel", "1"]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("task.yaml"),
        format!(
            r#"
models:
  small:
    base_url: "{url}"
    model: smollm2
    seed: 42
    max_tokens: 1500
    concurrency: 2
    timeout_s: 600
definition:
  scorers:
    - type: model_as_a_judge_scorer
      key: grade
      model_key: small
      user_prompt: "Write a very long essay about the number {{{{ sample.id }}}}, then grade it."
"#
        ),
    )
    .unwrap();
    let rows: String = (0..64).map(|i| format!("{{\"id\": {i}}}\n")).collect();
    std::fs::write(dir.path().join("rows.jsonl"), rows).unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("evalscore"))
        .args([
            "run",
            "task.yaml",
            "--input",
            "rows.jsonl",
            "--out",
            "out",
            "--cache",
            "cache.sqlite",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Time for the run to start and its requests to reach the server.
    std::thread::sleep(Duration::from_secs(2));
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let signalled = Instant::now();
    let o = child.wait_with_output().unwrap();
    // A behaviour bound: the generations take far longer (1,500 tokens each, one at a time).
    assert!(
        signalled.elapsed() < Duration::from_secs(10),
        "{:?}",
        signalled.elapsed()
    );
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: interrupted by SIGINT; no output was written\n"
    );
    let out: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(out.is_empty(), "{out:?}");
}
