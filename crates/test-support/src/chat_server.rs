//! An OpenAI-compatible chat-completions server on 127.0.0.1 for tests: it reads each request
//! (HTTP/1.1 keep-alive, one thread per connection, bodies by `Content-Length`) and answers
//! with what the test's handler returns for it, so each test decides the replies and counts
//! what it is sent; [`serve_answers`] also adds headers (`Retry-After`, `Location`) or never
//! answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

/// One request as the server read it.
pub struct Request {
    /// The body, read as JSON (null when there is none).
    pub body: serde_json::Value,
    /// The `Authorization` header's value, if any.
    pub authorization: Option<String>,
}

/// The answer to one request.
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl Reply {
    /// A 200 whose body is [`completion`]`(content)`.
    pub fn ok(content: &str) -> Reply {
        Reply {
            status: 200,
            body: completion(content),
        }
    }
}

/// What the server does with one request ([`serve_answers`]).
pub enum Answer {
    /// A reply, with more header lines (`("Retry-After", "5")`, `("Location", ...)`).
    Reply(Reply, Vec<(&'static str, String)>),
    /// Reads the request and never answers; the connection stays open.
    Hang,
}

/// A chat completion whose assistant message is `content`, costing 10 prompt and 2
/// completion tokens.
pub fn completion(content: &str) -> String {
    serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2}
    })
    .to_string()
}

/// The content of the last message of a request body.
pub fn last_message(body: &serde_json::Value) -> &str {
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
}

/// Serves `handler` on 127.0.0.1 for the rest of the test; returns the base URL
/// (`http://127.0.0.1:PORT/v1`).
pub fn serve(handler: impl Fn(Request) -> Reply + Send + Sync + 'static) -> String {
    serve_answers(move |req| Answer::Reply(handler(req), Vec::new()))
}

/// [`serve`] with a handler that may add headers or never answer.
pub fn serve_answers(handler: impl Fn(Request) -> Answer + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let handler = Arc::clone(&handler);
            std::thread::spawn(move || connection(stream, &*handler));
        }
    });
    url
}

/// Answers the requests of one connection until the client closes it.
fn connection(stream: TcpStream, handler: &dyn Fn(Request) -> Answer) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let (mut len, mut any, mut authorization) = (0, false, None);
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            any = true;
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
            if lower.starts_with("authorization:") {
                authorization = Some(line["authorization:".len()..].trim().to_owned());
            }
        }
        if !any {
            return;
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let answer = handler(Request {
            // A request without a body (a GET) reads as null.
            body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
            authorization,
        });
        let (reply, headers) = match answer {
            Answer::Reply(reply, headers) => (reply, headers),
            Answer::Hang => {
                // Holds the connection open until the client goes away.
                let mut rest = Vec::new();
                let _ = reader.read_to_end(&mut rest);
                return;
            }
        };
        let reason = match reply.status {
            200 => "OK",
            302 => "Found",
            429 => "Too Many Requests",
            500 => "Internal Server Error",
            _ => "Status",
        };
        let extra: String = headers
            .iter()
            .map(|(name, value)| format!("{name}: {value}\r\n"))
            .collect();
        let mut out = &stream;
        let _ = write!(
            out,
            "HTTP/1.1 {} {reason}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{}",
            reply.status,
            reply.body.len(),
            reply.body
        );
    }
}
