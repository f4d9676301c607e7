//! The judge under hostile or broken conditions, each against a server on 127.0.0.1: an API
//! key that cannot be a header, a signal while requests wait, a dead endpoint, a server that
//! asks to wait forever or claims absurd token counts, a redirect, a cache that cannot store
//! or was made by another version, two processes creating one cache, and Batch API output
//! files that are not files, have endless lines or are not UTF-8.
#![allow(clippy::unwrap_used)]
use crate::fixtures::{endpoint, request};
use chat_server::{Answer, Reply};
use evalscore_judge::{
    dead_after, judge_window, open_batch_output, send, Cache, CacheError, ChatRequest, Endpoint,
    JudgeError, RetryPolicy, Stats, WindowError, IMPORT_LINE_LIMIT,
};
use evalscore_test_support::chat_server;
use std::io::{BufRead, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

fn requests(base_url: &str, n: usize) -> Vec<ChatRequest> {
    (0..n)
        .map(|i| request(base_url, &format!("q{i}")))
        .collect()
}

/// Retries that take milliseconds, not seconds.
fn quick(max_retries: u32, timeout: Duration) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(4),
        timeout,
    }
}

/// [`judge_window`] online over `n` distinct requests to `url`.
fn window(
    url: &str,
    n: usize,
    cache: Option<&Cache>,
    endpoint: &Endpoint,
    stats: &mut Stats,
) -> Result<Vec<Result<evalscore_judge::CachedReply, JudgeError>>, WindowError> {
    judge_window(&requests(url, n), cache, endpoint, false, stats)
}

fn ok(content: &str) -> Answer {
    Answer::ok(content)
}

/// Runs `f` on a thread and returns its result, or fails the test when it takes longer than
/// `bound` (a behaviour bound, far above what the behaviour needs: the bug it guards against
/// waits an hour or forever).
fn within<T: Send + 'static>(bound: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(bound)
        .unwrap_or_else(|_| panic!("did not return within {bound:?}"))
}

/// An address on 127.0.0.1 where nothing listens: port 1, which unlike a port freed by the
/// test cannot be taken meanwhile by another test's server.
fn closed_port() -> String {
    "http://127.0.0.1:1/v1".to_owned()
}

#[test]
fn a_key_that_is_not_visible_ascii_is_refused_unsent_and_never_printed() {
    let (url, seen) = chat_server::serve_counting(|_| ok("yes"));
    let secret = "sk-live-0123456789abcdef";
    for (key, problem) in [
        (
            format!("{secret}\r"),
            "holds a carriage return at byte 25 of 25",
        ),
        (
            format!("{secret}\u{a0}"),
            "holds a non-breaking space at byte 25 of 26",
        ),
        (
            format!("sk-é{secret}"),
            "holds a character that is not ASCII at byte 4 of 29",
        ),
        (format!("{secret} x"), "holds a space at byte 25 of 26"),
        (String::new(), "is empty"),
    ] {
        let agent = ureq::AgentBuilder::new().build();
        let err = send(
            &agent,
            &request(&url, "q"),
            Some(&key),
            &quick(3, Duration::from_secs(5)),
        )
        .unwrap_err();
        assert_eq!(err.attempts, 0);
        let expected = if key.is_empty() {
            "the API key is empty".to_owned()
        } else {
            format!("the API key {problem}, and an API key is visible ASCII only")
        };
        assert_eq!(err.message, expected);
        assert!(!err.to_string().contains(secret));
        assert_eq!(evalscore_judge::api_key_problem(secret), None);
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0, "nothing was sent");
}

#[test]
fn an_interrupt_stops_a_window_whose_request_never_gets_an_answer() {
    let (url, seen) = chat_server::serve_counting(|_| Answer::Hang);
    let flag = Arc::new(AtomicUsize::new(0));
    let mut ep = endpoint(2, quick(5, Duration::from_secs(30)));
    ep.interrupt = Some(Arc::clone(&flag));
    let dir = tempfile::tempdir().unwrap();
    let cache_path = dir.path().join("judge.sqlite");
    let signal = {
        let (flag, seen) = (Arc::clone(&flag), Arc::clone(&seen));
        std::thread::spawn(move || {
            while seen.load(Ordering::SeqCst) < 2 {
                std::thread::sleep(Duration::from_millis(10));
            }
            flag.store(2, Ordering::SeqCst);
        })
    };
    let started = Instant::now();
    let got = within(Duration::from_secs(25), move || {
        let cache = Cache::open(&cache_path).unwrap();
        let r = window(&url, 10, Some(&cache), &ep, &mut Stats::default());
        (r.map(|_| ()), cache.len().unwrap())
    });
    signal.join().unwrap();
    // Well before the attempt's 30 s timeout: the waits were abandoned, not sat out.
    assert!(started.elapsed() < Duration::from_secs(25));
    assert!(matches!(got.0, Err(WindowError::Interrupted)), "{got:?}");
    assert_eq!(got.1, 0, "nothing stored");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "no request after the signal"
    );

    // A flag already set sends nothing at all.
    let (url, seen) = chat_server::serve_counting(|_| ok("yes"));
    let flag = Arc::new(AtomicUsize::new(15));
    let mut ep = endpoint(2, quick(0, Duration::from_secs(5)));
    ep.interrupt = Some(flag);
    let r = judge_window(&requests(&url, 3), None, &ep, false, &mut Stats::default());
    assert!(matches!(r, Err(WindowError::Interrupted)));
    assert_eq!(seen.load(Ordering::SeqCst), 0);
}

#[test]
fn an_interrupt_ends_a_retry_after_wait() {
    let (url, seen) = chat_server::serve_counting(|_| {
        Answer::Reply(
            Reply {
                status: 429,
                body: "{}".to_owned(),
            },
            vec![("Retry-After", "50".to_owned())],
        )
    });
    let flag = Arc::new(AtomicUsize::new(0));
    // Retry-After is obeyed up to the 60 s timeout here: 50 s.
    let mut ep = endpoint(1, quick(3, Duration::from_secs(60)));
    ep.interrupt = Some(Arc::clone(&flag));
    let setter = {
        let (flag, seen) = (Arc::clone(&flag), Arc::clone(&seen));
        std::thread::spawn(move || {
            while seen.load(Ordering::SeqCst) < 1 {
                std::thread::sleep(Duration::from_millis(10));
            }
            std::thread::sleep(Duration::from_millis(200));
            flag.store(1, Ordering::SeqCst);
        })
    };
    let r = within(Duration::from_secs(40), move || {
        judge_window(&requests(&url, 1), None, &ep, false, &mut Stats::default()).map(|_| ())
    });
    setter.join().unwrap();
    assert!(matches!(r, Err(WindowError::Interrupted)), "{r:?}");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[test]
fn a_dead_endpoint_stops_the_window_after_connection_failures_in_a_row() {
    let url = closed_port();
    let mut stats = Stats::default();
    let r = window(
        &url,
        50,
        None,
        &endpoint(4, quick(5, Duration::from_secs(5))),
        &mut stats,
    );
    let Err(WindowError::Unreachable { failures, last }) = r else {
        panic!("{r:?}");
    };
    assert_eq!(failures, dead_after(4));
    assert_eq!(failures, 8);
    assert!(
        last.starts_with(&format!(
            "{url}/chat/completions: Connection Failed: Connect error: "
        )),
        "{last}"
    );
    // Each worker gave up when the limit was reached: far fewer attempts than 50 x 6.
    assert!(stats.requests_sent < 20, "{stats:?}");
    assert_eq!(
        WindowError::Unreachable {
            failures: 8,
            last: "x".to_owned()
        }
        .to_string(),
        "8 connection attempts in a row failed, the last: x"
    );
}

/// A server that answers its first `n` connections (one request each, then closes them) and
/// then stops listening, so that later connections are refused.
fn dies_after(n: usize) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for _ in 0..n {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut len = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let reply = chat_server::completion("yes");
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{reply}",
                reply.len()
            )
            .unwrap();
        }
        drop(listener);
    });
    url
}

#[test]
fn the_replies_before_an_endpoint_died_stay_in_the_cache() {
    let url = dies_after(3);
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(&dir.path().join("judge.sqlite")).unwrap();
    let mut stats = Stats::default();
    let r = window(
        &url,
        10,
        Some(&cache),
        &endpoint(1, quick(5, Duration::from_secs(5))),
        &mut stats,
    );
    assert!(
        matches!(r, Err(WindowError::Unreachable { failures: 4, .. })),
        "{r:?}"
    );
    assert_eq!(cache.len().unwrap(), 3);
    assert_eq!(stats.failures, 0, "abandoned, not failed");
}

#[test]
fn retry_after_is_obeyed_only_up_to_its_cap() {
    let (url, seen) = chat_server::serve_counting({
        let n = AtomicUsize::new(0);
        move |_| {
            if n.fetch_add(1, Ordering::SeqCst) == 0 {
                Answer::Reply(
                    Reply {
                        status: 429,
                        body: "{}".to_owned(),
                    },
                    vec![("Retry-After", "999999999".to_owned())],
                )
            } else {
                ok("yes")
            }
        }
    });
    let policy = RetryPolicy {
        max_retries: 2,
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(50),
        timeout: Duration::from_millis(300),
    };
    assert_eq!(
        evalscore_judge::retry_after_cap(&policy),
        Duration::from_millis(300)
    );
    let sent = within(Duration::from_secs(30), move || {
        send(
            &ureq::AgentBuilder::new().build(),
            &request(&url, "q"),
            None,
            &policy,
        )
    })
    .unwrap();
    assert_eq!(sent.attempts, 2);
    assert_eq!(sent.waited, Duration::from_millis(300));
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    // The defaults: Retry-After up to 60 s.
    assert_eq!(
        evalscore_judge::retry_after_cap(&RetryPolicy::default()),
        Duration::from_secs(60)
    );
}

#[test]
fn absurd_token_counts_neither_overflow_nor_park_the_pace() {
    let huge = 1u64 << 63;
    let body = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": "yes"}}],
        "usage": {"prompt_tokens": huge, "completion_tokens": huge}
    })
    .to_string();
    let (url, _) = chat_server::serve_counting(move |_| {
        Answer::Reply(
            Reply {
                status: 200,
                body: body.clone(),
            },
            Vec::new(),
        )
    });
    let mut stats = Stats::default();
    let replies = window(
        &url,
        3,
        None,
        &endpoint(2, quick(0, Duration::from_secs(5))),
        &mut stats,
    )
    .unwrap();
    assert!(replies.iter().all(|r| r.as_ref().unwrap().content == "yes"));
    assert_eq!(
        (stats.prompt_tokens, stats.completion_tokens),
        (u64::MAX, u64::MAX)
    );

    // 2^62 tokens at 6,000 a minute would be ~15 days; the pace moves at most a minute ahead.
    let t0 = Instant::now();
    let mut pace = evalscore_judge::Pace::new(None, Some(6000));
    assert_eq!(pace.reserve(t0), t0);
    pace.spent(1 << 62, t0);
    pace.spent(1 << 62, t0);
    assert_eq!(pace.reserve(t0), t0 + evalscore_judge::PACE_AHEAD_LIMIT);
    assert_eq!(evalscore_judge::PACE_AHEAD_LIMIT, Duration::from_secs(60));
}

#[test]
fn a_redirect_is_an_error_never_a_cached_reply() {
    let (elsewhere, other) = chat_server::serve_counting(|_| ok("from elsewhere"));
    let location = format!("{elsewhere}/chat/completions");
    let (url, seen) = chat_server::serve_counting(move |_| Answer::redirect(&location));
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(&dir.path().join("judge.sqlite")).unwrap();
    let mut stats = Stats::default();
    let replies = window(
        &url,
        1,
        Some(&cache),
        &endpoint(1, quick(3, Duration::from_secs(5))),
        &mut stats,
    )
    .unwrap();
    let Err(JudgeError::Request(e)) = &replies[0] else {
        panic!("{replies:?}");
    };
    assert_eq!(
        e.message,
        format!("{url}/chat/completions answered HTTP 302 (a redirect to {elsewhere}/chat/completions); judge requests are not redirected: set base_url to the address that answers")
    );
    assert_eq!(e.attempts, 1, "not retried");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    assert_eq!(other.load(Ordering::SeqCst), 0, "never re-sent elsewhere");
    assert_eq!(cache.len().unwrap(), 0);

    // An agent that follows redirects has re-sent it (as a GET): its reply is refused.
    let err = send(
        &ureq::AgentBuilder::new().build(),
        &request(&url, "q"),
        None,
        &quick(3, Duration::from_secs(5)),
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        format!("{url}/chat/completions redirected the request to {elsewhere}/chat/completions; judge requests are not redirected: set base_url to the address that answers")
    );
    assert_eq!(other.load(Ordering::SeqCst), 1);
}

/// A cache that opens but refuses every store (as a full disk would).
fn refusing_cache(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("judge.sqlite");
    drop(Cache::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER full BEFORE INSERT ON judge_replies BEGIN SELECT RAISE(ABORT, 'no room'); END;",
    )
    .unwrap();
    path
}

#[test]
fn a_cache_that_cannot_store_stops_the_window_and_every_later_one_unsent() {
    let (url, seen) = chat_server::serve_counting(|_| ok("yes"));
    let dir = tempfile::tempdir().unwrap();
    let path = refusing_cache(dir.path());
    let cache = Cache::open(&path).unwrap();
    let ep = endpoint(2, quick(0, Duration::from_secs(5)));
    let expected = format!(
        "judge cache `{}`: cannot store a reply: no room",
        path.display()
    );
    let r = window(&url, 40, Some(&cache), &ep, &mut Stats::default());
    let Err(WindowError::Cache(e @ CacheError::Store { .. })) = r else {
        panic!("{r:?}");
    };
    assert_eq!(e.to_string(), expected);
    let sent = seen.load(Ordering::SeqCst);
    // The requests in flight when the first store failed, at most one more per worker.
    assert!(sent <= 4, "{sent} requests sent");
    // The next window (the batch scored again) fails at once, sending nothing.
    let r = window(&url, 40, Some(&cache), &ep, &mut Stats::default());
    let Err(WindowError::Cache(e)) = r else {
        panic!("{r:?}");
    };
    assert_eq!(e.to_string(), expected);
    assert_eq!(seen.load(Ordering::SeqCst), sent);
    assert_eq!(cache.store_failure().unwrap().to_string(), expected);
}

/// The judge cache's table as this version makes it, with one more column `column`.
fn replies_table(column: &str) -> String {
    format!(
        "CREATE TABLE judge_replies (id INTEGER PRIMARY KEY, key BLOB NOT NULL,
               content TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
               completion_tokens INTEGER NOT NULL, {column});"
    )
}

#[test]
fn a_cache_made_by_another_version_is_refused_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.sqlite");
    let newer = "model_version TEXT NOT NULL";
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(&replies_table(newer))
        .unwrap();
    assert_eq!(
        Cache::open(&path).unwrap_err().to_string(),
        format!("judge cache `{}` was made by another version of evalscore: its table `judge_replies` has a column `model_version` that this version does not fill (NOT NULL, no default)", path.display())
    );
    // A column with a default is filled by SQLite: usable.
    let path = dir.path().join("extra.sqlite");
    let extra = replies_table("note TEXT NOT NULL DEFAULT ''");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(&extra)
        .unwrap();
    let cache = Cache::open(&path).unwrap();
    cache
        .put(
            &"ab".repeat(32),
            &evalscore_judge::CachedReply {
                content: "yes".to_owned(),
                prompt_tokens: 1,
                completion_tokens: 1,
            },
        )
        .unwrap();
    assert_eq!(cache.len().unwrap(), 1);
    let path = dir.path().join("older.sqlite");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE judge_replies (id INTEGER PRIMARY KEY, key BLOB NOT NULL);")
        .unwrap();
    assert_eq!(
        Cache::open(&path).unwrap_err().to_string(),
        format!("judge cache `{}` was made by another version of evalscore: its table `judge_replies` has no column `content`", path.display())
    );
}

#[test]
fn first_opens_of_a_new_cache_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let mut failed = Vec::new();
    // Four at once rather than two: the race is short, and more openers meet it more often.
    for i in 0..100 {
        let path = dir.path().join(format!("c{i}/judge.sqlite"));
        let barrier = Arc::new(std::sync::Barrier::new(4));
        let opens: Vec<_> = (0..4)
            .map(|_| {
                let (path, barrier) = (path.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    Cache::open(&path).map(|c| c.journal_mode().unwrap())
                })
            })
            .collect();
        for open in opens {
            match open.join().unwrap() {
                Ok(mode) => assert_eq!(mode, "wal"),
                Err(e) => failed.push(e.to_string()),
            }
        }
    }
    assert_eq!(failed, Vec::<String>::new());
}

/// Another connection holds the write lock of a new cache file (still in rollback mode, as
/// while another process turns WAL on) when it is opened: turning WAL on waits for the lock
/// instead of failing at once (SQLite's busy timeout does not cover it).
#[test]
fn opening_a_new_cache_that_another_connection_is_writing_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("judge.sqlite");
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        other.execute_batch("COMMIT").unwrap();
    });
    let cache = Cache::open(&path).unwrap();
    release.join().unwrap();
    assert_eq!(cache.journal_mode().unwrap(), "wal");
}

#[cfg(unix)]
#[test]
fn batch_output_files_must_be_regular_files() {
    let err = open_batch_output(std::path::Path::new("/dev/zero")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot read `/dev/zero`: not a regular file (a character device)"
    );
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        open_batch_output(dir.path()).unwrap_err().to_string(),
        format!(
            "cannot read `{}`: not a regular file (a directory)",
            dir.path().display()
        )
    );
    let fifo = dir.path().join("fifo");
    evalscore_test_support::special_files::mkfifo(&fifo);
    // Refused without opening it (opening a FIFO blocks until it has a writer).
    let err = within(Duration::from_secs(20), move || {
        open_batch_output(&fifo).unwrap_err().to_string()
    });
    assert!(err.ends_with(": not a regular file (a FIFO)"), "{err}");
    let missing = dir.path().join("missing.jsonl");
    assert!(open_batch_output(&missing)
        .unwrap_err()
        .to_string()
        .starts_with(&format!("cannot read `{}`: ", missing.display())));
}

fn good_line(key: &str) -> String {
    serde_json::json!({"custom_id": key, "error": null, "response": {"status_code": 200, "body": {"choices": [{"message": {"role": "assistant", "content": "yes"}}]}}}).to_string()
}

#[test]
fn import_names_the_line_that_is_too_long_or_not_utf8_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(&dir.path().join("judge.sqlite")).unwrap();
    let good = good_line(&"ab".repeat(32));

    // An endless line (no newline, ever) stops at the limit instead of filling memory.
    let endless = format!("{good}\n").into_bytes();
    let reader = std::io::BufReader::new(endless.chain(std::io::repeat(b' ')));
    let err = cache.import_batch_output("big.jsonl", reader).unwrap_err();
    assert_eq!(
        err.to_string(),
        "big.jsonl, line 2: the line is longer than 16 MiB, the limit of a Batch API output line"
    );
    assert_eq!(IMPORT_LINE_LIMIT, 16 << 20);
    // A line of exactly the limit is read (and here, not JSON).
    let mut at_limit = vec![b' '; IMPORT_LINE_LIMIT - 1];
    at_limit.push(b'x');
    let err = cache
        .import_batch_output("limit.jsonl", &at_limit[..])
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("limit.jsonl, line 1: not JSON: "),
        "{err}"
    );

    let mut bytes = format!("{good}\n\n").into_bytes();
    bytes.extend_from_slice(b"{\"custom_id\": \"\xff\xfe\"}\r\n");
    let err = cache
        .import_batch_output("results.jsonl", &bytes[..])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "results.jsonl, line 3: not UTF-8 (an invalid byte at column 16)"
    );
    assert_eq!(cache.len().unwrap(), 0, "stored whole or not at all");

    // CRLF lines are read as lines.
    let crlf = format!("{good}\r\n");
    let stats = cache
        .import_batch_output("crlf.jsonl", crlf.as_bytes())
        .unwrap();
    assert_eq!(stats.stored, 1);
}
