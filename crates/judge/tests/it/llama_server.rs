//! Against a real OpenAI-compatible server: llama.cpp's `llama-server` with SmolLM2-135M,
//! built and cached by `scripts/setup/llama-server.sh` (run here; instant once cached) and
//! started on 127.0.0.1 by this test. A 135M model grades badly: this checks the protocol, the
//! token accounting and that a deterministic request (temperature 0, a seed) gives the same
//! reply twice, not the grade.
#![allow(clippy::unwrap_used)]

use evalscore_judge::{send, ChatRequest, Message, RetryPolicy};
use evalscore_test_support::llama::start;
use std::time::Duration;

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
