//! Embeddings from an OpenAI-compatible `/embeddings` endpoint, their cache key, and the
//! cosine similarity that `similarity` with `method: embedding` scores.

use crate::client::{post_json, RequestError, RetryPolicy};
use crate::halt::Halt;
use serde_json::{json, Value};
use std::time::Duration;

/// A request to an OpenAI-compatible `/embeddings` endpoint: one vector per input text.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingRequest {
    /// The API root, such as `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    pub input: Vec<String>,
}

/// The vectors of an embeddings reply, in the order of the request's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    pub vectors: Vec<Vec<f64>>,
    /// `usage.prompt_tokens` (0 when the server does not say).
    pub prompt_tokens: u64,
    /// Attempts made (1 when the first one succeeded).
    pub attempts: u32,
    /// Time spent waiting between attempts.
    pub waited: Duration,
}

impl EmbeddingRequest {
    /// The request body as sent: `model` and `input` (a list of texts).
    pub fn body(&self) -> Value {
        json!({"model": self.model, "input": self.input})
    }

    /// The cache key: lower-case hex SHA-256 of the canonical JSON (object keys sorted, no
    /// whitespace, as [`crate::ChatRequest::key`]) of the base URL (without a trailing `/`),
    /// the body and `"endpoint": "embeddings"`, so that no chat request shares a key with it.
    /// `scripts/golden/embed_key.py` computes the golden key of the tests.
    pub fn key(&self) -> String {
        self.cache_key().hex()
    }

    /// The cache key ([`EmbeddingRequest::key`]) as bytes.
    pub fn cache_key(&self) -> crate::Key {
        let canonical = json!({
            "base_url": self.base_url.trim_end_matches('/'),
            "body": self.body(),
            "endpoint": "embeddings",
        });
        crate::Key::of(canonical.to_string().as_bytes())
    }
}

/// Sends `request` to `{base_url}/embeddings` with the retries of [`crate::send`], `api_key`
/// as a bearer token when given (never part of an error message).
pub fn send_embeddings(
    agent: &ureq::Agent,
    request: &EmbeddingRequest,
    api_key: Option<&str>,
    policy: &RetryPolicy,
) -> Result<Embeddings, RequestError> {
    send_embeddings_halted(agent, request, api_key, policy, &Halt::never())
}

/// [`send_embeddings`], stopping early when `halt` says so.
pub(crate) fn send_embeddings_halted(
    agent: &ureq::Agent,
    request: &EmbeddingRequest,
    api_key: Option<&str>,
    policy: &RetryPolicy,
    halt: &Halt,
) -> Result<Embeddings, RequestError> {
    let url = format!("{}/embeddings", request.base_url.trim_end_matches('/'));
    let n = request.input.len();
    let ((vectors, prompt_tokens), attempts, waited) = post_json(
        agent,
        &url,
        &request.body(),
        api_key,
        policy,
        halt,
        |text| parse_embeddings(text, n),
    )?;
    Ok(Embeddings {
        vectors,
        prompt_tokens,
        attempts,
        waited,
    })
}

/// `data[i].embedding` of a reply for `n` inputs, placed by `data[i].index` when given (the
/// API does not promise the order), and `usage.prompt_tokens`.
pub fn parse_embeddings(text: &str, n: usize) -> Result<(Vec<Vec<f64>>, u64), String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("the reply is not JSON ({e})"))?;
    let data = v["data"]
        .as_array()
        .ok_or_else(|| "the reply has no `data` list".to_owned())?;
    if data.len() != n {
        return Err(format!(
            "the reply has {} embeddings for {n} inputs",
            data.len()
        ));
    }
    let mut out: Vec<Option<Vec<f64>>> = vec![None; n];
    for (i, item) in data.iter().enumerate() {
        let at = match item.get("index") {
            None => i,
            Some(x) => x
                .as_u64()
                .and_then(|x| usize::try_from(x).ok())
                .filter(|&x| x < n)
                .ok_or_else(|| format!("data[{i}].index is not an input index below {n}"))?,
        };
        let vector = item["embedding"]
            .as_array()
            .and_then(|a| a.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>())
            .filter(|a| !a.is_empty())
            .ok_or_else(|| format!("data[{i}].embedding is not a list of numbers"))?;
        if out[at].replace(vector).is_some() {
            return Err(format!("two embeddings have index {at}"));
        }
    }
    let vectors = out.into_iter().flatten().collect::<Vec<_>>();
    Ok((vectors, v["usage"]["prompt_tokens"].as_u64().unwrap_or(0)))
}

/// The vectors of a cached embeddings reply (the JSON text a window stores).
pub fn embeddings_of(content: &str) -> Result<Vec<Vec<f64>>, String> {
    serde_json::from_str(content).map_err(|e| format!("a cached embedding is damaged ({e})"))
}

/// Cosine similarity of two vectors, clamped to [-1, 1]; `None` when their lengths differ or
/// either is all zeros.
pub fn cosine(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return None;
    }
    Some((dot / (na.sqrt() * nb.sqrt())).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_known_vectors() {
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 2.0]), Some(0.0));
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]).unwrap() - 1.0).abs() < 1e-15);
        assert_eq!(cosine(&[1.0, 0.0], &[-3.0, 0.0]), Some(-1.0));
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), None);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), None);
        let c = cosine(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((c - 32.0 / (14f64.sqrt() * 77f64.sqrt())).abs() < 1e-15);
    }

    #[test]
    fn replies_are_read_by_index() {
        let text = r#"{"data": [{"index": 1, "embedding": [0.5, 1]}, {"index": 0, "embedding": [2, 3]}],
                       "usage": {"prompt_tokens": 7}}"#;
        assert_eq!(
            parse_embeddings(text, 2),
            Ok((vec![vec![2.0, 3.0], vec![0.5, 1.0]], 7))
        );
        assert_eq!(
            parse_embeddings(text, 3),
            Err("the reply has 2 embeddings for 3 inputs".to_owned())
        );
        assert_eq!(
            parse_embeddings(r#"{"data": [{"embedding": "x"}]}"#, 1),
            Err("data[0].embedding is not a list of numbers".to_owned())
        );
        assert_eq!(
            parse_embeddings(
                r#"{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [1]}]}"#,
                2
            ),
            Err("two embeddings have index 0".to_owned())
        );
    }
}
