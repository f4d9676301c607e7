//! A window of judged rows against a test server that answers every request after a pause and
//! counts what it sees: identical requests sent once, concurrency bounded, replies cached as
//! they arrive, `--offline` served from the cache only.
#![allow(clippy::unwrap_used)]

use crate::fixtures::{self, request};
use evalscore_judge::{judge_window, Cache, ChatRequest, Endpoint, JudgeError, RetryPolicy, Stats};
use evalscore_test_support::{chat_server, wait};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Default)]
struct Seen {
    requests: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

/// Answers each request, after `pause`, with `re: <the last message's content>` and token
/// counts 10 / 2.
fn server(pause: Duration) -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let counts = Arc::clone(&seen);
    let url = chat_server::serve(move |req| {
        counts.requests.fetch_add(1, Ordering::SeqCst);
        let now = counts.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        counts.max_in_flight.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(pause);
        counts.in_flight.fetch_sub(1, Ordering::SeqCst);
        chat_server::Reply::ok(&format!("re: {}", chat_server::last_message(&req.body)))
    });
    (url, seen)
}

fn endpoint(concurrency: usize) -> Endpoint {
    fixtures::endpoint(
        concurrency,
        RetryPolicy {
            max_retries: 0,
            timeout: Duration::from_secs(10),
            ..RetryPolicy::default()
        },
    )
}

#[test]
fn identical_requests_go_once_and_concurrency_is_bounded() {
    let (url, seen) = server(Duration::from_millis(100));
    let questions = ["q0", "q1", "q2", "q1", "q3", "q4", "q5", "q0", "q6", "q7"];
    let requests: Vec<ChatRequest> = questions.iter().map(|q| request(&url, q)).collect();
    let mut stats = Stats::default();
    let replies = judge_window(&requests, None, &endpoint(3), false, &mut stats).unwrap();
    let texts: Vec<String> = replies.into_iter().map(|r| r.unwrap().content).collect();
    let expected: Vec<String> = questions.iter().map(|q| format!("re: {q}")).collect();
    assert_eq!(texts, expected);
    assert_eq!(seen.requests.load(Ordering::SeqCst), 8);
    assert_eq!(seen.max_in_flight.load(Ordering::SeqCst), 3);
    assert_eq!(
        stats,
        Stats {
            requests_sent: 8,
            cache_hits: 0,
            deduplicated: 2,
            retries: 0,
            failures: 0,
            prompt_tokens: 80,
            completion_tokens: 16,
            waited: Duration::ZERO,
        }
    );
}

#[test]
fn replies_are_cached_and_a_rerun_or_offline_run_sends_nothing() {
    let (url, seen) = server(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(&dir.path().join("judge.sqlite")).unwrap();
    let first: Vec<ChatRequest> = ["a", "b", "c"].iter().map(|q| request(&url, q)).collect();
    let mut stats = Stats::default();
    judge_window(&first, Some(&cache), &endpoint(2), false, &mut stats).unwrap();
    assert_eq!(seen.requests.load(Ordering::SeqCst), 3);
    assert_eq!(cache.len().unwrap(), 3);

    // A rerun with one new row sends only that row.
    let second: Vec<ChatRequest> = ["a", "b", "c", "d"]
        .iter()
        .map(|q| request(&url, q))
        .collect();
    let mut stats = Stats::default();
    let replies = judge_window(&second, Some(&cache), &endpoint(2), false, &mut stats).unwrap();
    assert_eq!(replies[3].as_ref().unwrap().content, "re: d");
    assert_eq!(seen.requests.load(Ordering::SeqCst), 4);
    assert_eq!((stats.cache_hits, stats.requests_sent), (3, 1));

    // Offline: cached rows are answered, the rest are errors, nothing is sent.
    let third: Vec<ChatRequest> = ["a", "e"].iter().map(|q| request(&url, q)).collect();
    let mut stats = Stats::default();
    let replies = judge_window(&third, Some(&cache), &endpoint(2), true, &mut stats).unwrap();
    assert_eq!(replies[0].as_ref().unwrap().content, "re: a");
    assert_eq!(replies[1], Err(JudgeError::Offline));
    assert_eq!(
        replies[1].as_ref().unwrap_err().to_string(),
        "the reply is not in the judge cache, and --offline forbids sending the request"
    );
    assert_eq!(seen.requests.load(Ordering::SeqCst), 4);
}

/// Run as a child by `a_killed_run_resumes_with_only_the_unfinished_requests` (it sets the
/// variables); otherwise returns at once.
#[test]
fn sigkill_helper() {
    let (Ok(url), Ok(cache)) = (
        std::env::var("JUDGE_HELPER_URL"),
        std::env::var("JUDGE_HELPER_CACHE"),
    ) else {
        return;
    };
    let cache = Cache::open(std::path::Path::new(&cache)).unwrap();
    let requests: Vec<ChatRequest> = (0..40).map(|i| request(&url, &format!("q{i}"))).collect();
    let mut stats = Stats::default();
    judge_window(&requests, Some(&cache), &endpoint(1), false, &mut stats).unwrap();
}

/// A run killed with SIGKILL midway keeps every reply it got; run again, it sends exactly the
/// requests that had no reply.
#[test]
fn a_killed_run_resumes_with_only_the_unfinished_requests() {
    let (url, seen) = server(Duration::from_millis(50));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("judge.sqlite");
    // The harness names a test by its path in the test binary, without the binary's crate
    // (`window::sigkill_helper`); an unknown name would run nothing.
    let (_, module) = module_path!().split_once("::").unwrap();
    let helper = format!("{module}::sigkill_helper");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &helper, "--nocapture", "--test-threads", "1"])
        .env("JUDGE_HELPER_URL", &url)
        .env("JUDGE_HELPER_CACHE", &path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait::until(Duration::from_secs(60), "the child sent nothing", || {
        seen.requests.load(Ordering::SeqCst) >= 10
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let cache = Cache::open(&path).unwrap();
    let kept = cache.len().unwrap() as usize;
    let sent_before = seen.requests.load(Ordering::SeqCst);
    assert!((1..40).contains(&kept), "{kept} replies kept");
    // Lost at the kill: at most the request in flight and a reply not yet stored.
    assert!(sent_before - kept <= 2, "{sent_before} sent, {kept} kept");

    let requests: Vec<ChatRequest> = (0..40).map(|i| request(&url, &format!("q{i}"))).collect();
    let mut stats = Stats::default();
    let replies = judge_window(&requests, Some(&cache), &endpoint(4), false, &mut stats).unwrap();
    assert!(replies.iter().all(Result::is_ok));
    assert_eq!(stats.cache_hits as usize, kept);
    assert_eq!(stats.requests_sent as usize, 40 - kept);
    assert_eq!(
        seen.requests.load(Ordering::SeqCst) - sent_before,
        40 - kept
    );
    assert_eq!(cache.len().unwrap(), 40);
}

/// With `requests_per_minute: 600`, five requests start 100 ms apart however many workers
/// there are (a lower bound on the elapsed time: the pace waits, never hurries).
#[test]
fn the_request_rate_spaces_the_starts() {
    let (url, seen) = server(Duration::ZERO);
    let requests: Vec<ChatRequest> = (0..5).map(|i| request(&url, &format!("p{i}"))).collect();
    let mut paced = endpoint(5);
    paced.pace = Some(Arc::new(std::sync::Mutex::new(evalscore_judge::Pace::new(
        Some(600),
        None,
    ))));
    let started = std::time::Instant::now();
    let mut stats = Stats::default();
    judge_window(&requests, None, &paced, false, &mut stats).unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(seen.requests.load(Ordering::SeqCst), 5);
}
