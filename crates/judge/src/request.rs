//! One chat-completion request and its cache key.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Feeds written bytes to a hash.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

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
        // The canonical JSON is written straight into the hash: the same bytes as
        // `json!({"base_url", "body", "parser_version"}).to_string()` (keys sorted, no
        // whitespace), without building the value tree (a cached rerun computes one key per
        // row). A test checks both forms give the same bytes.
        let mut h = Sha256::new();
        self.write_canonical(&mut HashWriter(&mut h));
        hex(&h.finalize())
    }

    /// The canonical JSON the key hashes.
    fn write_canonical(&self, w: &mut impl std::io::Write) {
        let s = |w: &mut dyn std::io::Write, v: &str| {
            let _ = serde_json::to_writer(&mut *w, v);
        };
        let _ = w.write_all(b"{\"base_url\":");
        s(w, self.base_url.trim_end_matches('/'));
        let _ = w.write_all(b",\"body\":{");
        if let Some(max) = self.max_tokens {
            let _ = write!(w, "\"max_tokens\":{max},");
        }
        let _ = w.write_all(b"\"messages\":[");
        for (i, m) in self.messages.iter().enumerate() {
            let _ = w.write_all(if i == 0 {
                b"{\"content\":"
            } else {
                b",{\"content\":"
            });
            s(w, &m.content);
            let _ = w.write_all(b",\"role\":");
            s(w, &m.role);
            let _ = w.write_all(b"}");
        }
        let _ = w.write_all(b"],\"model\":");
        s(w, &self.model);
        if let Some(seed) = self.seed {
            let _ = write!(w, ",\"seed\":{seed}");
        }
        let _ = w.write_all(b",\"temperature\":");
        let _ = serde_json::to_writer(&mut *w, &self.temperature);
        let _ = write!(w, "}},\"parser_version\":{}}}", self.parser_version);
    }

    /// The canonical JSON built as a value tree, as the key was first defined; for the test
    /// that the streamed form is the same.
    #[cfg(test)]
    fn canonical_value(&self) -> String {
        json!({
            "base_url": self.base_url.trim_end_matches('/'),
            "body": self.body(),
            "parser_version": self.parser_version,
        })
        .to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streamed_canonical_json_is_the_value_trees() {
        let mut r = ChatRequest {
            base_url: "http://h/v1/".to_owned(),
            model: "m \"q\" é".to_owned(),
            messages: vec![
                Message {
                    role: "system".to_owned(),
                    content: "line\n\ttab \u{1} \\ ünï".to_owned(),
                },
                Message {
                    role: "user".to_owned(),
                    content: String::new(),
                },
            ],
            temperature: 0.0,
            seed: Some(-7),
            max_tokens: Some(256),
            parser_version: 3,
        };
        for (temperature, seed, max) in [
            (0.0, Some(-7), Some(256)),
            (0.7, None, None),
            (1e-3, Some(i64::MAX), None),
        ] {
            (r.temperature, r.seed, r.max_tokens) = (temperature, seed, max);
            let mut streamed = Vec::new();
            r.write_canonical(&mut streamed);
            assert_eq!(String::from_utf8(streamed).unwrap(), r.canonical_value());
            assert_eq!(
                r.key(),
                hex(&Sha256::digest(r.canonical_value().as_bytes()))
            );
        }
    }
}
