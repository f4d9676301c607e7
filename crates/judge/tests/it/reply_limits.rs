//! Judge replies are bounded: a body longer than `MAX_REPLY_BYTES` is a failed request (not
//! retried, and not the window's failure), and a window keeps only what its caller makes of
//! each reply while the cache keeps the reply whole.
#![allow(clippy::unwrap_used)]

use evalscore_judge::{
    judge_keyed, judge_window, Cache, ChatRequest, Endpoint, JudgeError, Message, RetryPolicy,
    Stats, WindowRequest, MAX_REPLY_BYTES,
};
use evalscore_test_support::chat_server;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Replies to `N` with a completion whose content is N bytes; counts requests.
fn server() -> (String, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let counts = Arc::clone(&seen);
    let url = chat_server::serve(move |req| {
        counts.fetch_add(1, Ordering::SeqCst);
        let n: usize = chat_server::last_message(&req.body).parse().unwrap();
        chat_server::Reply::ok(&"y".repeat(n))
    });
    (url, seen)
}

fn request(base_url: &str, size: usize) -> ChatRequest {
    ChatRequest {
        base_url: base_url.to_owned(),
        model: "judge".to_owned(),
        messages: vec![Message {
            role: "user".to_owned(),
            content: size.to_string(),
        }],
        temperature: 0.0,
        seed: None,
        max_tokens: None,
        parser_version: 1,
    }
}

fn endpoint() -> Endpoint {
    crate::fixtures::endpoint(
        2,
        RetryPolicy {
            max_retries: 3,
            first_delay: Duration::from_millis(1),
            timeout: Duration::from_secs(20),
            ..RetryPolicy::default()
        },
    )
}

#[test]
fn an_over_long_reply_fails_its_row_only_and_is_not_retried() {
    let (url, seen) = server();
    // A completion's JSON adds about 100 bytes to its content.
    let sizes = [10, MAX_REPLY_BYTES - 1000, MAX_REPLY_BYTES, 20];
    let requests: Vec<ChatRequest> = sizes.iter().map(|&n| request(&url, n)).collect();
    let mut stats = Stats::default();
    let replies = judge_window(&requests, None, &endpoint(), false, &mut stats).unwrap();
    let lengths: Vec<Result<usize, JudgeError>> = replies
        .into_iter()
        .map(|r| r.map(|r| r.content.len()))
        .collect();
    assert_eq!(lengths[0], Ok(10));
    assert_eq!(lengths[1], Ok(MAX_REPLY_BYTES - 1000));
    assert_eq!(lengths[3], Ok(20));
    assert_eq!(
        lengths[2].as_ref().unwrap_err().to_string(),
        format!("{url}/chat/completions: the reply is longer than 1048576 bytes, the limit of a judge reply (a `max_tokens` in the model's entry bounds it) (after 1 attempts)")
    );
    assert_eq!(seen.load(Ordering::SeqCst), 4);
    assert_eq!(stats.failures, 1);
}

/// The window hands each reply to `keep` as it arrives, sent or cached, and holds only what
/// it returns; the cache holds the whole reply.
#[test]
fn a_window_keeps_what_keep_returns_and_caches_the_reply() {
    let (url, _) = server();
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(&dir.path().join("c.sqlite")).unwrap();
    let sizes = [300_000, 5, 300_000, 7];
    let requests: Vec<ChatRequest> = sizes.iter().map(|&n| request(&url, n)).collect();
    let keys: Vec<_> = requests.iter().map(WindowRequest::key).collect();
    let kept = AtomicUsize::new(0);
    let keep = |reply: evalscore_judge::CachedReply| {
        kept.fetch_add(1, Ordering::SeqCst);
        reply.content.len() as u32
    };
    for round in 1..=2 {
        let mut stats = Stats::default();
        let got = judge_keyed(
            &keys,
            |i| &requests[i],
            Some(&cache),
            &endpoint(),
            false,
            &mut stats,
            keep,
        )
        .unwrap();
        let got: Vec<u32> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(got, [300_000, 5, 300_000, 7]);
        // Three distinct requests, read once each per round: sent, then cached.
        assert_eq!(kept.load(Ordering::SeqCst), 3 * round);
        assert_eq!(stats.cache_hits, if round == 1 { 0 } else { 3 });
    }
    let cached = cache.get(&requests[0].key()).unwrap().unwrap();
    assert_eq!(cached.content.len(), 300_000);
}
