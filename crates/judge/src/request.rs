//! One chat-completion request and its cache key.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// A chat message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    pub content: String,
}

/// A request to an OpenAI-compatible `/chat/completions` endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The API root, such as `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    pub messages: Vec<Message>,
    pub temperature: f64,
    pub seed: Option<i64>,
    pub max_tokens: Option<u64>,
    /// The version of the scorer's reply parser: a new parser must not reuse replies cached
    /// for an older one without saying so.
    pub parser_version: u32,
}

impl ChatRequest {
    /// The request body as sent (`model`, `messages`, sampling parameters; absent options are
    /// left out).
    pub fn body(&self) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": self
                .messages
                .iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect::<Vec<_>>(),
            "temperature": self.temperature,
        });
        if let Some(seed) = self.seed {
            body["seed"] = json!(seed);
        }
        if let Some(max) = self.max_tokens {
            body["max_tokens"] = json!(max);
        }
        body
    }

    /// The cache key: lower-case hex SHA-256 of the canonical JSON of the base URL (without a
    /// trailing `/`), the body and the parser version. Canonical: object keys sorted, no
    /// whitespace, strings as serde_json writes them (the same bytes as Python's
    /// `json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` for these
    /// values; `scripts/golden/judge_key.py` computes the golden key of the tests that way).
    pub fn key(&self) -> String {
        let canonical = json!({
            "base_url": self.base_url.trim_end_matches('/'),
            "body": self.body(),
            "parser_version": self.parser_version,
        });
        // serde_json's map is sorted (no `preserve_order` feature), so this is canonical.
        let text = canonical.to_string();
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// One line of an OpenAI Batch API input file, without its newline.
    pub fn batch_line(&self) -> String {
        json!({
            "custom_id": self.key(),
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": self.body(),
        })
        .to_string()
    }
}
