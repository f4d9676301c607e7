//! One request over HTTP (a chat completion, or embeddings: `crate::embed`), with retries.
//!
//! Retried: connection errors and timeouts, 429 and 5xx replies, with exponential backoff
//! from [`RetryPolicy::first_delay`] (doubling, capped at [`RetryPolicy::max_delay`], with up
//! to 25% random jitter so many workers do not retry in step); a `Retry-After` header (seconds)
//! replaces the computed delay, up to [`retry_after_cap`]. Not retried: other 4xx replies (the
//! request itself is wrong), redirects (a judge request is never re-sent elsewhere) and a 200
//! whose body is not a chat completion (the server would say the same again).
//!
//! Every wait is bounded: an attempt by [`RetryPolicy::timeout`] (one second more for a DNS
//! lookup, which the HTTP client does not time), the waits between attempts as above. Inside a
//! window, each wait also ends within [`SLICE`] of a stop (`crate::halt`).

use crate::halt::{Halt, SLICE};
use crate::{CachedReply, ChatRequest};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

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
/// given. The key is never part of an error message. `agent` should not follow redirects
/// (`AgentBuilder::redirects(0)`): a redirected request is an error either way, but an agent
/// that follows one has already re-sent it.
pub fn send(
    agent: &ureq::Agent,
    request: &ChatRequest,
    api_key: Option<&str>,
    policy: &RetryPolicy,
) -> Result<Sent, RequestError> {
    send_halted(agent, request, api_key, policy, &Halt::never())
}

/// [`send`], stopping early when `halt` says so.
pub(crate) fn send_halted(
    agent: &ureq::Agent,
    request: &ChatRequest,
    api_key: Option<&str>,
    policy: &RetryPolicy,
    halt: &Halt,
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
        halt,
        parse_completion,
    )?;
    Ok(Sent {
        reply,
        attempts,
        waited,
    })
}

/// Why `key` cannot be sent as a bearer token, without a byte of the key itself: an HTTP
/// header carries visible ASCII only, and a key holding anything else (a carriage return from
/// a key file saved on Windows, a pasted non-breaking space) is a broken copy.
pub fn api_key_problem(key: &str) -> Option<String> {
    if key.is_empty() {
        return Some("is empty".to_owned());
    }
    let (at, c) = key.char_indices().find(|(_, c)| !c.is_ascii_graphic())?;
    let what = match c {
        '\r' => "a carriage return",
        '\n' => "a line feed",
        '\t' => "a tab",
        ' ' => "a space",
        '\u{a0}' => "a non-breaking space",
        c if c.is_control() => "a control character",
        _ => "a character that is not ASCII",
    };
    Some(format!(
        "holds {what} at byte {} of {}, and an API key is visible ASCII only",
        at + 1,
        key.len()
    ))
}

/// What one attempt came to.
enum Outcome {
    /// A 2xx reply's body.
    Reply(String),
    /// A failure that another attempt would meet again.
    Fatal(String),
    /// A failure worth another attempt; `refused` when no connection was made.
    Retry {
        message: String,
        retry_after: Option<Duration>,
        refused: bool,
    },
    /// Stopped by the halt while waiting.
    Halted,
}

/// How much longer than `timeout` an attempt is waited for before it is abandoned: the HTTP
/// client bounds connecting and reading by `timeout`, but not a DNS lookup.
const GRACE: Duration = Duration::from_secs(1);

/// POSTs `body` to `url` under the retry rules of this module and reads a 200 reply's text
/// with `parse`. Returns the parsed reply, the attempts made and the time waited between them.
pub(crate) fn post_json<T>(
    agent: &ureq::Agent,
    url: &str,
    body: &serde_json::Value,
    api_key: Option<&str>,
    policy: &RetryPolicy,
    halt: &Halt,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<(T, u32, Duration), RequestError> {
    if let Some(problem) = api_key.and_then(api_key_problem) {
        return Err(RequestError {
            message: format!("the API key {problem}"),
            attempts: 0,
        });
    }
    // Nothing a server or the HTTP client says may carry the key into a message.
    let clean = |message: String| match api_key {
        Some(key) if message.contains(key) => message.replace(key, "[API key]"),
        _ => message,
    };
    let body: Arc<str> = body.to_string().into();
    let mut waited = Duration::ZERO;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let fail = |message: String| RequestError {
            message: clean(message),
            attempts: attempt,
        };
        let (message, retry_after) = match exchange(agent, url, &body, api_key, policy, halt) {
            Outcome::Reply(text) => {
                halt.connected();
                return parse(&text)
                    .map(|reply| (reply, attempt, waited))
                    .map_err(fail);
            }
            Outcome::Fatal(message) => {
                halt.connected();
                return Err(fail(message));
            }
            Outcome::Halted => return Err(fail(halted(url))),
            Outcome::Retry {
                message,
                retry_after,
                refused,
            } => {
                let message = clean(message);
                if refused {
                    halt.connect_failed(&message);
                } else {
                    halt.connected();
                }
                (message, retry_after)
            }
        };
        if attempt > policy.max_retries {
            return Err(fail(message));
        }
        let delay = match retry_after {
            Some(asked) => asked.min(retry_after_cap(policy)),
            None => backoff(policy, attempt),
        };
        if !halt.sleep(delay) {
            return Err(fail(halted(url)));
        }
        waited += delay;
    }
}

fn halted(url: &str) -> String {
    format!("{url}: abandoned, the requests were stopped")
}

/// The longest a `Retry-After` header is obeyed: the backoff cap, or the attempt timeout when
/// longer, so that a server cannot park a request for an hour.
pub fn retry_after_cap(policy: &RetryPolicy) -> Duration {
    policy.max_delay.max(policy.timeout)
}

/// One attempt's inputs, owned by the thread that makes it.
struct Job {
    agent: ureq::Agent,
    url: String,
    body: Arc<str>,
    api_key: Option<String>,
    timeout: Duration,
}

/// A thread that makes the attempts of the thread that owns it, so that the owner can stop
/// waiting for one: the HTTP client cannot be interrupted. Kept per owning thread and reused
/// (one thread per window worker, not one per attempt); an attempt given up on takes its
/// exchanger with it, left to end with the attempt's timeout (or with the process).
struct Exchanger {
    jobs: mpsc::Sender<Job>,
    outcomes: mpsc::Receiver<Outcome>,
}

impl Exchanger {
    fn start() -> Option<Exchanger> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (outbox, outcomes) = mpsc::channel();
        std::thread::Builder::new()
            .name("evalscore-judge-request".to_owned())
            .spawn(move || {
                for job in inbox {
                    let outcome = attempt(
                        &job.agent,
                        &job.url,
                        &job.body,
                        job.api_key.as_deref(),
                        job.timeout,
                    );
                    if outbox.send(outcome).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Exchanger { jobs, outcomes })
    }
}

thread_local! {
    /// This thread's exchanger, while it has one that is idle.
    static EXCHANGER: std::cell::RefCell<Option<Exchanger>> = const { std::cell::RefCell::new(None) };
}

/// One attempt, made by this thread's [`Exchanger`] while this thread waits for it in
/// slices of [`SLICE`], giving up when `halt` stops or the timeout (plus [`GRACE`]) passes.
fn exchange(
    agent: &ureq::Agent,
    url: &str,
    body: &Arc<str>,
    api_key: Option<&str>,
    policy: &RetryPolicy,
    halt: &Halt,
) -> Outcome {
    let job = Job {
        agent: agent.clone(),
        url: url.to_owned(),
        body: Arc::clone(body),
        api_key: api_key.map(str::to_owned),
        timeout: policy.timeout,
    };
    let exchanger = EXCHANGER
        .with(|e| e.borrow_mut().take())
        .or_else(Exchanger::start);
    let Some(exchanger) = exchanger.filter(|e| e.jobs.send(job).is_ok()) else {
        // No thread to be had: the attempt is made here, bounded by its timeout alone.
        return attempt(agent, url, body, api_key, policy.timeout);
    };
    let deadline = Instant::now() + policy.timeout + GRACE;
    loop {
        match exchanger.outcomes.recv_timeout(SLICE) {
            Ok(outcome) => {
                EXCHANGER.with(|e| *e.borrow_mut() = Some(exchanger));
                return outcome;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Outcome::Fatal(format!("{url}: the request failed without a reply"))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if halt.is_stopped() {
                    return Outcome::Halted;
                }
                if Instant::now() >= deadline {
                    return Outcome::Retry {
                        message: format!(
                            "{url}: no reply within {} s (timeout_s)",
                            policy.timeout.as_secs_f64()
                        ),
                        retry_after: None,
                        refused: false,
                    };
                }
            }
        }
    }
}

/// One HTTP exchange: the request, then the reply read whole.
fn attempt(
    agent: &ureq::Agent,
    url: &str,
    body: &str,
    api_key: Option<&str>,
    timeout: Duration,
) -> Outcome {
    let mut call = agent
        .post(url)
        .timeout(timeout)
        .set("Content-Type", "application/json");
    if let Some(key) = api_key {
        call = call.set("Authorization", &format!("Bearer {key}"));
    }
    let asked = call
        .request_url()
        .map(|u| u.as_url().as_str().to_owned())
        .ok();
    match call.send_string(body) {
        Ok(resp) if (300..400).contains(&resp.status()) => {
            let to = resp
                .header("Location")
                .map_or_else(String::new, |l| format!(" to {l}"));
            Outcome::Fatal(format!(
                "{url} answered HTTP {} (a redirect{to}); judge requests are not redirected: set base_url to the address that answers",
                resp.status()
            ))
        }
        // An agent that follows redirects has already re-sent the request elsewhere: the
        // reply is not the judge's.
        Ok(resp) if asked.as_deref().is_some_and(|a| a != resp.get_url()) => {
            Outcome::Fatal(format!(
                "{url} redirected the request to {}; judge requests are not redirected: set base_url to the address that answers",
                resp.get_url()
            ))
        }
        Ok(resp) => read_reply(resp, url),
        Err(ureq::Error::Status(code, resp)) => {
            let retry_after = resp
                .header("Retry-After")
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Duration::from_secs_f64(s.min(1e9)));
            let message = format!("{url} answered HTTP {code}");
            if code != 429 && !(500..600).contains(&code) {
                return Outcome::Fatal(message);
            }
            Outcome::Retry {
                message,
                retry_after,
                refused: false,
            }
        }
        // Its text names the URL already.
        Err(ureq::Error::Transport(t)) => Outcome::Retry {
            refused: matches!(
                t.kind(),
                ureq::ErrorKind::ConnectionFailed
                    | ureq::ErrorKind::Dns
                    | ureq::ErrorKind::ProxyConnect
                    | ureq::ErrorKind::InvalidUrl
                    | ureq::ErrorKind::UnknownScheme
            ),
            message: t.to_string(),
            retry_after: None,
        },
    }
}

/// The longest reply body read, in bytes (a chat completion or embeddings); a longer one is a
/// failed request, not retried: a judge asked again would write as much again.
pub const MAX_REPLY_BYTES: usize = 1 << 20;

/// A 2xx reply's body, at most [`MAX_REPLY_BYTES`] of it.
fn read_reply(resp: ureq::Response, url: &str) -> Outcome {
    use std::io::Read;
    let mut body = Vec::new();
    let read = resp
        .into_reader()
        .take(MAX_REPLY_BYTES as u64 + 1)
        .read_to_end(&mut body);
    match read {
        Err(e) => Outcome::Fatal(format!("cannot read the reply of {url}: {e}")),
        Ok(n) if n > MAX_REPLY_BYTES => Outcome::Fatal(format!(
            "{url}: the reply is longer than {MAX_REPLY_BYTES} bytes, the limit of a judge reply (a `max_tokens` in the model's entry bounds it)"
        )),
        Ok(_) => match String::from_utf8(body) {
            Ok(text) => Outcome::Reply(text),
            Err(_) => Outcome::Fatal(format!("cannot read the reply of {url}: it is not UTF-8")),
        },
    }
}

/// The delay before retry `attempt` (1-based): doubling from the first delay, capped, plus up
/// to 25% jitter.
fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let base = policy
        .first_delay
        .saturating_mul(1u32 << (attempt - 1).min(20))
        .min(policy.max_delay);
    base + base.mul_f64(0.25 * fastrand::f64())
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
