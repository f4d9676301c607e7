//! Against a real OpenAI-compatible server: llama.cpp's `llama-server` with SmolLM2-135M,
//! built and cached by `scripts/setup/llama-server.sh` (run here; instant once cached) and
//! started on 127.0.0.1 by this test. A 135M model grades badly: this checks the protocol, the
//! token accounting and that a deterministic request (temperature 0, a seed) gives the same
//! reply twice, not the grade.
#![allow(clippy::unwrap_used)]

use evalscore_judge::{send, ChatRequest, Message, RetryPolicy};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the setup script and returns (server binary, model file).
fn installed() -> (PathBuf, PathBuf) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/setup/llama-server.sh"))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/setup/llama-server.sh failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let get = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("no {name} in the setup script's output: {text}"))
    };
    (get("LLAMA_SERVER"), get("LLAMA_MODEL"))
}

fn start() -> (Server, String) {
    let (server, model) = installed();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(server)
        .args(["-m"])
        .arg(model)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "-c",
            "2048",
            "-t",
            "2",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let base = format!("http://127.0.0.1:{port}");
    let agent = ureq::AgentBuilder::new().build();
    let started = Instant::now();
    loop {
        if let Ok(r) = agent.get(&format!("{base}/health")).call() {
            if r.status() == 200 {
                break;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "llama-server did not start"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (server, format!("{base}/v1"))
}

#[test]
fn a_real_server_answers_deterministically_with_token_counts() {
    let (_server, base_url) = start();
    let request = ChatRequest {
        base_url,
        model: "smollm2".to_owned(),
        messages: vec![
            Message {
                role: "system".to_owned(),
                content: "You are a strict grader. Answer with one word: yes or no.".to_owned(),
            },
            Message {
                role: "user".to_owned(),
                content: "Is Paris the capital of France?".to_owned(),
            },
        ],
        temperature: 0.0,
        seed: Some(42),
        max_tokens: Some(16),
        parser_version: 1,
    };
    let agent = ureq::AgentBuilder::new().build();
    let policy = RetryPolicy {
        timeout: Duration::from_secs(60),
        ..RetryPolicy::default()
    };
    let first = send(&agent, &request, None, &policy).unwrap();
    let second = send(&agent, &request, None, &policy).unwrap();
    assert_eq!(first.attempts, 1);
    assert!(!first.reply.content.trim().is_empty());
    assert!(first.reply.prompt_tokens > 10, "{:?}", first.reply);
    assert!(
        (1..=16).contains(&first.reply.completion_tokens),
        "{:?}",
        first.reply
    );
    assert_eq!(first.reply, second.reply);
}
