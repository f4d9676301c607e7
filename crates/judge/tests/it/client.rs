//! Requests against a fault-injecting OpenAI-compatible server (test code: 429 with
//! Retry-After, 500s, resets, timeouts, malformed replies), with exact attempt counts.
#![allow(clippy::unwrap_used)]

use evalscore_judge::{send, ChatRequest, Message, RequestError, RetryPolicy};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server does with one request.
#[derive(Clone)]
enum Act {
    Reply(u16, &'static str, String),
    /// Closes the connection without answering.
    Reset,
    /// Answers 200 after a pause.
    Slow(Duration),
}

const OK_BODY: &str = r#"{"choices":[{"message":{"role":"assistant","content":"yes"}}],"usage":{"prompt_tokens":12,"completion_tokens":1}}"#;

fn ok() -> Act {
    Act::Reply(200, "", OK_BODY.to_owned())
}

/// Serves `acts` in order (one per connection) on 127.0.0.1; returns the base URL and the
/// requests seen (head and body).
fn server(acts: Vec<Act>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for act in acts {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let log = Arc::clone(&log);
            // Each connection on its own thread, so a slow reply does not hold up the next.
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                    head.push_str(&line);
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                log.lock()
                    .unwrap()
                    .push(format!("{head}\n{}", String::from_utf8_lossy(&body)));
                let mut stream = stream;
                let (status, extra, text) = match act {
                    Act::Reset => {
                        drop(stream);
                        return;
                    }
                    Act::Slow(d) => {
                        std::thread::sleep(d);
                        (200, "", OK_BODY.to_owned())
                    }
                    Act::Reply(s, h, t) => (s, h, t),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{text}",
                    text.len()
                );
            });
        }
    });
    (url, seen)
}

fn request(base_url: &str) -> ChatRequest {
    ChatRequest {
        base_url: base_url.to_owned(),
        model: "judge".to_owned(),
        messages: vec![Message {
            role: "user".to_owned(),
            content: "Is 2+2 4? Answer yes or no.".to_owned(),
        }],
        temperature: 0.0,
        seed: Some(1),
        max_tokens: Some(8),
        parser_version: 1,
    }
}

fn policy(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(4),
        timeout: Duration::from_millis(500),
    }
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new().build()
}

#[test]
fn a_429_is_retried_after_its_retry_after_and_the_reply_is_read() {
    let (url, seen) = server(vec![
        Act::Reply(429, "Retry-After: 0.2\r\n", "{}".to_owned()),
        ok(),
    ]);
    let sent = send(&agent(), &request(&url), Some("sk-secret"), &policy(3)).unwrap();
    assert_eq!(sent.attempts, 2);
    assert_eq!(sent.waited, Duration::from_millis(200));
    assert_eq!(sent.reply.content, "yes");
    assert_eq!(
        (sent.reply.prompt_tokens, sent.reply.completion_tokens),
        (12, 1)
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].starts_with("POST /v1/chat/completions HTTP/1.1\r\n"));
    assert!(
        seen[0].contains("authorization: Bearer sk-secret\r\n")
            || seen[0].contains("Authorization: Bearer sk-secret\r\n")
    );
    assert!(seen[0].ends_with(&format!("\n{}", request(&url).body())));
}

#[test]
fn server_errors_and_resets_are_retried_up_to_the_limit() {
    let (url, seen) = server(vec![
        Act::Reply(500, "", "oops".to_owned()),
        Act::Reset,
        Act::Reply(503, "", "busy".to_owned()),
    ]);
    let err = send(&agent(), &request(&url), Some("sk-secret"), &policy(2)).unwrap_err();
    assert_eq!(
        err,
        RequestError {
            message: format!("{url}/chat/completions answered HTTP 503"),
            attempts: 3
        }
    );
    assert!(!err.to_string().contains("sk-secret"));
    assert_eq!(seen.lock().unwrap().len(), 3);

    let (url, _) = server(vec![Act::Reset, ok()]);
    let sent = send(&agent(), &request(&url), None, &policy(2)).unwrap();
    assert_eq!(sent.attempts, 2);
}

#[test]
fn client_errors_and_malformed_replies_are_not_retried() {
    let (url, seen) = server(vec![Act::Reply(400, "", "{}".to_owned()), ok()]);
    let err = send(&agent(), &request(&url), None, &policy(5)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{url}/chat/completions answered HTTP 400 (after 1 attempts)")
    );
    assert_eq!(seen.lock().unwrap().len(), 1);

    let (url, _) = server(vec![Act::Reply(200, "", "{\"choices\": [".to_owned())]);
    let err = send(&agent(), &request(&url), None, &policy(5)).unwrap_err();
    assert_eq!(err.attempts, 1);
    assert!(
        err.message.starts_with("the reply is not JSON ("),
        "{}",
        err.message
    );

    let (url, _) = server(vec![Act::Reply(200, "", "{\"choices\": []}".to_owned())]);
    let err = send(&agent(), &request(&url), None, &policy(5)).unwrap_err();
    assert_eq!(err.message, "the reply has no choices[0].message.content");
}

#[test]
fn a_slow_reply_times_out_and_is_retried() {
    let (url, seen) = server(vec![Act::Slow(Duration::from_millis(1500)), ok()]);
    let sent = send(&agent(), &request(&url), None, &policy(1)).unwrap();
    assert_eq!(sent.attempts, 2);
    assert_eq!(seen.lock().unwrap().len(), 2);
}
