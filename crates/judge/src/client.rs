//! One request over HTTP (a chat completion, or embeddings: `crate::embed`), with retries.
//!
//! Retried: connection errors and timeouts, 429 and 5xx replies, with exponential backoff
//! from [`RetryPolicy::first_delay`] (doubling, capped at [`RetryPolicy::max_delay`], with up
//! to 25% random jitter so many workers do not retry in step); a `Retry-After` header (seconds)
//! replaces the computed delay. Not retried: other 4xx replies (the request itself is wrong)
//! and a 200 whose body is not a chat completion (the server would say the same again).

use crate::{CachedReply, ChatRequest};
use std::time::Duration;

/// How often and how patiently a request is retried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub first_delay: Duration,
    pub max_delay: Duration,
    /// Per attempt: connecting, sending and reading the reply.
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            first_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            timeout: Duration::from_secs(60),
        }
    }
}

/// A request that failed for good.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (after {attempts} attempts)")]
pub struct RequestError {
    pub message: String,
    pub attempts: u32,
}

/// A reply and what getting it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    pub reply: CachedReply,
    /// Attempts made (1 when the first one succeeded).
    pub attempts: u32,
    /// Time spent waiting between attempts.
    pub waited: Duration,
}

/// Sends `request` to `{base_url}/chat/completions`, with `api_key` as a bearer token when
/// given. The key is never part of an error message.
pub fn send(
    agent: &ureq::Agent,
    request: &ChatRequest,
    api_key: Option<&str>,
    policy: &RetryPolicy,
) -> Result<Sent, RequestError> {
    let url = format!(
        "{}/chat/completions",
        request.base_url.trim_end_matches('/')
    );
    let (reply, attempts, waited) = post_json(
        agent,
        &url,
        &request.body(),
        api_key,
        policy,
        parse_completion,
    )?;
    Ok(Sent {
        reply,
        attempts,
        waited,
    })
}

/// POSTs `body` to `url` under the retry rules of this module and reads a 200 reply's text
/// with `parse`. Returns the parsed reply, the attempts made and the time waited between them.
pub(crate) fn post_json<T>(
    agent: &ureq::Agent,
    url: &str,
    body: &serde_json::Value,
    api_key: Option<&str>,
    policy: &RetryPolicy,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<(T, u32, Duration), RequestError> {
    let mut waited = Duration::ZERO;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut call = agent
            .post(url)
            .timeout(policy.timeout)
            .set("Content-Type", "application/json");
        if let Some(key) = api_key {
            call = call.set("Authorization", &format!("Bearer {key}"));
        }
        let (message, retry_after) = match call.send_string(&body.to_string()) {
            Ok(resp) => {
                return match resp.into_string() {
                    Ok(text) => {
                        parse(&text)
                            .map(|reply| (reply, attempt, waited))
                            .map_err(|message| RequestError {
                                message,
                                attempts: attempt,
                            })
                    }
                    Err(e) => Err(RequestError {
                        message: format!("cannot read the reply of {url}: {e}"),
                        attempts: attempt,
                    }),
                };
            }
            Err(ureq::Error::Status(code, resp)) => {
                let retry_after = resp
                    .header("Retry-After")
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .map(|s| Duration::from_secs_f64(s.min(3600.0)));
                let message = format!("{url} answered HTTP {code}");
                if code != 429 && !(500..600).contains(&code) {
                    return Err(RequestError {
                        message,
                        attempts: attempt,
                    });
                }
                (message, retry_after)
            }
            // Its text names the URL already.
            Err(ureq::Error::Transport(t)) => (t.to_string(), None),
        };
        if attempt > policy.max_retries {
            return Err(RequestError {
                message,
                attempts: attempt,
            });
        }
        let delay = retry_after.unwrap_or_else(|| backoff(policy, attempt));
        std::thread::sleep(delay);
        waited += delay;
    }
}

/// The delay before retry `attempt` (1-based): doubling from the first delay, capped, plus up
/// to 25% jitter.
fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let base = policy
        .first_delay
        .saturating_mul(1u32 << (attempt - 1).min(20))
        .min(policy.max_delay);
    let jitter = (random_unit() * 0.25 * base.as_secs_f64()).max(0.0);
    base + Duration::from_secs_f64(jitter)
}

/// A number in [0, 1) from the standard library's per-process random hasher keys.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The assistant text and token counts of a chat-completion reply body.
fn parse_completion(text: &str) -> Result<CachedReply, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("the reply is not JSON ({e})"))?;
    let content = v["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| "the reply has no choices[0].message.content".to_owned())?;
    Ok(CachedReply {
        content: content.to_owned(),
        prompt_tokens: v["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
        completion_tokens: v["usage"]["completion_tokens"].as_u64().unwrap_or(0),
    })
}
