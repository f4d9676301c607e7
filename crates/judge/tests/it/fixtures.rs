//! Requests and retry policies the tests share.

use evalscore_judge::{ChatRequest, Endpoint, Message, RetryPolicy};
use std::time::Duration;

/// A request of model `judge` at `base_url` with one user message, `question`.
pub fn request(base_url: &str, question: &str) -> ChatRequest {
    ChatRequest {
        base_url: base_url.to_owned(),
        model: "judge".to_owned(),
        messages: vec![Message {
            role: "user".to_owned(),
            content: question.to_owned(),
        }],
        temperature: 0.0,
        seed: None,
        max_tokens: None,
        parser_version: 1,
    }
}

/// The default retries with a 60 s timeout: a real server's first answer can be slow.
pub fn patient() -> RetryPolicy {
    RetryPolicy {
        timeout: Duration::from_secs(60),
        ..RetryPolicy::default()
    }
}

/// An endpoint with no key, no pacing and no interrupt: `concurrency` requests at a time,
/// retried by `policy`.
pub fn endpoint(concurrency: usize, policy: RetryPolicy) -> Endpoint {
    Endpoint {
        api_key: None,
        concurrency,
        policy,
        pace: None,
        gate: None,
        live: None,
        interrupt: None,
    }
}
