//! Judged runs under broken conditions, through the `evalscore` binary against test servers
//! on 127.0.0.1: an API key that cannot be a header, signals while a request hangs, a dead
//! endpoint, a cache that cannot store, two runs creating the default cache at once, a
//! redirect, and `judge import` / `judge export` on files that are not what they should be.
#![allow(clippy::unwrap_used)]
use crate::common::{
    assert_ends, evalscore_process, export_in, failed, kill, output_within, run_in,
};
use chat_server::Answer;
use evalscore_test_support::{chat_server, wait};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const KEY: &str = "sk-test-1234567890-secret";

/// A classifier judge (concurrency 2) and, with `other`, an ordinary scorer too (the judge's
/// windows are then sent while the ordinary scorer runs).
fn task(url: &str, other: bool) -> String {
    let mut t = format!(
        r#"
models:
  judge:
    base_url: "{url}"
    model: fake-judge
    api_key_env: EVALSCORE_TEST_JUDGE_KEY
    concurrency: 2
definition:
  scorers:
    - type: model_as_a_judge_classifier
      key: cls
      model_key: judge
      correct_labels: ["yes"]
      incorrect_labels: ["no"]
      user_prompt: "Question: {{{{ sample.question }}}}\nResponse: {{{{ solver_output.output }}}}"
      system_prompt: "Does the response correctly answer the question? Reply yes or no."
"#
    );
    if other {
        t.push_str(
            "    - type: string_equals\n      key: exact\n      ground_truth: \"{{ sample.answer }}\"\n",
        );
    }
    t
}

/// `n` rows, each a distinct request.
fn rows(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!("{{\"id\": {i}, \"question\": \"Capital number {i}?\", \"answer\": \"Paris\", \"output\": \"Paris {i}\"}}\n")
        })
        .collect()
}

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(url: &str, other: bool, n: usize) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("task.yaml"), task(url, other)).unwrap();
        std::fs::write(dir.path().join("rows.jsonl"), rows(n)).unwrap();
        Setup { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `evalscore run task.yaml --input rows.jsonl --out out` + `extra`, with `key` in the
    /// key's variable and `XDG_CACHE_HOME` in the folder.
    fn command(&self, key: &str, extra: &[&str]) -> Command {
        let mut cmd = run_in(self.dir.path(), "out");
        cmd.args(extra)
            .env("EVALSCORE_TEST_JUDGE_KEY", key)
            .env("XDG_CACHE_HOME", self.path("xdg"));
        cmd
    }

    fn run(&self, key: &str, extra: &[&str]) -> Output {
        self.command(key, extra).output().unwrap()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A [`Setup`] whose judge counts the requests and answers each `yes`.
fn answering_yes(other: bool, n: usize) -> (Setup, Arc<AtomicUsize>) {
    let (url, seen) = chat_server::serve_counting(|_| yes());
    (Setup::new(&url, other, n), seen)
}

fn yes() -> Answer {
    Answer::ok("{\"prediction\": \"yes\"}")
}

/// Every file in the folder, hidden ones included (none if it does not exist).
fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_key_with_a_carriage_return_stops_the_run_before_any_request_without_printing_it() {
    let (s, seen) = answering_yes(false, 3);
    for extra in [&[][..], &["--max-row-errors", "100%"][..]] {
        let o = s.run(&format!("{KEY}\r"), extra);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            stderr(&o),
            "error: the API key in `EVALSCORE_TEST_JUDGE_KEY` (models.judge.api_key_env) holds a carriage return at byte 26 of 26, and an API key is visible ASCII only\nhint: remove the line ending or the pasted space from the key (a key file saved on Windows ends its line with a carriage return)\n"
        );
        assert!(!stderr(&o).contains(KEY));
        assert!(o.stdout.is_empty());
    }
    // With --offline nothing is sent, so the key is not looked at.
    let o = s.run(
        &format!("{KEY}\u{a0}"),
        &["--offline", "--max-row-errors", "100%"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = std::fs::read_to_string(s.path("out/run.json")).unwrap();
    assert!(!run.contains(KEY));
    assert_eq!(seen.load(Ordering::SeqCst), 0);
}

/// SIGINT, SIGTERM and SIGHUP while every judge request hangs: the run stops within seconds
/// (not the attempts' 60 s timeouts), exits with 128 + the signal, and writes nothing.
#[cfg(unix)]
#[test]
fn signals_stop_a_run_whose_judge_requests_hang() {
    let (url, seen) = chat_server::serve_counting(|_| Answer::Hang);
    for other in [false, true] {
        let s = Setup::new(&url, other, 50);
        for (sig, code, name) in [
            ("-INT", 130, "SIGINT"),
            ("-TERM", 143, "SIGTERM"),
            ("-HUP", 129, "SIGHUP"),
        ] {
            let before = seen.load(Ordering::SeqCst);
            let child = s
                .command(KEY, &["--cache", "cache.sqlite"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Both workers of the judge are waiting on their requests.
            wait::until(Duration::from_secs(30), "no request", || {
                seen.load(Ordering::SeqCst) >= before + 2
            });
            kill(sig, child.id());
            // The requests wait 60 s each.
            let o = output_within(child, Duration::from_secs(10), name);
            assert_eq!(o.status.code(), Some(code), "{name}: {}", stderr(&o));
            assert_eq!(
                stderr(&o),
                format!("error: interrupted by {name}; no output was written\n")
            );
            assert!(o.stdout.is_empty());
            assert_eq!(files_in(&s.path("out")), Vec::<String>::new());
            assert_eq!(seen.load(Ordering::SeqCst), before + 2, "{name}");
        }
        let cache = evalscore_judge::Cache::open(&s.path("cache.sqlite")).unwrap();
        assert_eq!(cache.len().unwrap(), 0);
    }
}

#[test]
fn a_dead_endpoint_stops_the_run_with_one_error_naming_the_model_and_url() {
    // Port 1: nothing listens there, and unlike a port freed by the test it cannot be taken
    // meanwhile by another test's server (which would answer, not refuse).
    let url = "http://127.0.0.1:1/v1".to_owned();
    let s = Setup::new(&url, true, 200);
    let args = ["--cache", "cache.sqlite", "--max-row-errors", "100%"];
    let err = stderr(&failed(s.run(KEY, &args), 2));
    let head = format!(
        "error: rows.jsonl, row 1: scorer `cls`: judge model `judge` ({url}) is unreachable: 4 connection attempts in a row failed, the last: {url}/chat/completions: Connection Failed: Connect error: "
    );
    assert!(err.starts_with(&head), "{err}");
    assert_ends(&err, "\nhint: check the model's base_url and that its server is up; the replies received so far are in the judge cache, so a rerun sends only the rest\n");
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(!err.contains(KEY));
    assert_eq!(files_in(&s.path("out")), Vec::<String>::new());
}

#[test]
fn a_cache_that_cannot_store_stops_the_run_without_sending_the_batch_again() {
    let (s, seen) = answering_yes(true, 40);
    let cache = s.path("cache.sqlite");
    drop(evalscore_judge::Cache::open(&cache).unwrap());
    // As a full disk would: every insert fails.
    rusqlite::Connection::open(&cache)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER full BEFORE INSERT ON judge_replies BEGIN SELECT RAISE(ABORT, 'no room'); END;",
        )
        .unwrap();
    let o = failed(s.run(KEY, &["--cache", "cache.sqlite"]), 2);
    let sent = seen.load(Ordering::SeqCst);
    // Those in flight when the first store failed (2 workers), not 40, nor 80.
    assert!(sent <= 4, "{sent} requests for 40 rows");
    assert_eq!(
        stderr(&o),
        "error: rows.jsonl, row 1: scorer `cls`: the judge cache failed: judge cache `cache.sqlite`: cannot store a reply: no room\nhint: check the --cache path (a SQLite file on a local disk), or run with --no-cache\n"
    );
    assert_eq!(files_in(&s.path("out")), Vec::<String>::new());
}

/// Another process is creating the default cache (it holds a lock on the new file) when the
/// run opens it: the run waits for the lock instead of failing with `database is locked`.
#[test]
fn a_run_opening_the_default_cache_while_another_creates_it_waits_for_the_lock() {
    let (s, seen) = answering_yes(false, 2);
    let cache = s.path("xdg/evalscore/judge.sqlite");
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    let other = rusqlite::Connection::open(&cache).unwrap();
    // A new file in rollback mode whose write lock another process holds (as while it turns
    // WAL on): the run's turning WAL on must wait.
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let child = s
        .command(KEY, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    other.execute_batch("COMMIT").unwrap();
    drop(other);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    let cache = evalscore_judge::Cache::open(&cache).unwrap();
    assert_eq!(cache.journal_mode().unwrap(), "wal");
    assert_eq!(cache.len().unwrap(), 2);
}

#[test]
fn a_redirected_judge_request_is_a_row_error_and_nothing_is_cached() {
    let (elsewhere, other) = chat_server::serve_counting(|_| yes());
    let location = format!("{elsewhere}/chat/completions");
    let (url, seen) = chat_server::serve_counting(move |_| Answer::redirect(&location));
    let s = Setup::new(&url, false, 1);
    let o = s.run(KEY, &["--cache", "cache.sqlite"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: rows.jsonl, row 1: scorer `cls`: judge model `judge` ({url}): {url}/chat/completions answered HTTP 302 (a redirect to {elsewhere}/chat/completions); judge requests are not redirected: set base_url to the address that answers (after 1 attempts)\nhint: the request was retried as `max_retries` allows; a rerun sends only the requests without a cached reply\n"
        )
    );
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    assert_eq!(other.load(Ordering::SeqCst), 0);
    let cache = evalscore_judge::Cache::open(&s.path("cache.sqlite")).unwrap();
    assert_eq!(cache.len().unwrap(), 0);
}

fn import(results: &Path, cache: &Path) -> Output {
    evalscore_process()
        .args(["judge", "import"])
        .arg(results)
        .arg("--cache")
        .arg(cache)
        .output()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn judge_import_refuses_special_files_and_names_the_line_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("judge.sqlite");
    let o = import(Path::new("/dev/zero"), &cache);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: cannot read `/dev/zero`: not a regular file (a character device)\n"
    );
    assert!(!cache.exists(), "refused before the cache is opened");

    let results = dir.path().join("results.jsonl");
    let mut bytes = Vec::new();
    bytes.extend_from_slice(
        serde_json::json!({"custom_id": "ab".repeat(32), "error": null, "response": {"status_code": 200, "body": {"choices": [{"message": {"role": "assistant", "content": "yes"}}]}}})
            .to_string()
            .as_bytes(),
    );
    bytes.extend_from_slice(b"\n{\"custom_id\": \"caf\xe9\"}\n");
    std::fs::write(&results, bytes).unwrap();
    let o = import(&results, &cache);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}, line 2: not UTF-8 (an invalid byte at column 19)\n",
            results.display()
        )
    );
}

#[test]
fn judge_export_with_overwrite_removes_the_parts_of_an_earlier_larger_export() {
    let s = Setup::new("http://127.0.0.1:9/v1", false, 3);
    let export = |extra: &[&str]| {
        export_in(s.dir.path(), "requests.jsonl")
            .args(["--cache", "cache.sqlite"])
            .args(extra)
            .env("EVALSCORE_TEST_JUDGE_KEY", KEY)
            .output()
            .unwrap()
    };
    // What an earlier export of more than 100,000 requests left.
    for part in ["requests.jsonl", "requests.2.jsonl", "requests.3.jsonl"] {
        std::fs::write(s.path(part), "stale\n").unwrap();
    }
    std::fs::write(s.path("requests.backup.jsonl"), "kept\n").unwrap();
    let o = export(&["--overwrite"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut names = files_in(s.dir.path());
    names.sort();
    assert_eq!(
        names,
        [
            "cache.sqlite",
            "requests.backup.jsonl",
            "requests.jsonl",
            "rows.jsonl",
            "task.yaml"
        ]
    );
    let written = std::fs::read_to_string(s.path("requests.jsonl")).unwrap();
    assert_eq!(written.lines().count(), 3);

    // Without --overwrite, a stale part alone is refused, naming it.
    std::fs::remove_file(s.path("requests.jsonl")).unwrap();
    std::fs::write(s.path("requests.3.jsonl"), "stale\n").unwrap();
    let o = export(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: `{}` already exists\nhint: pass --overwrite to replace it, or choose another --out\n",
            Path::new("requests.3.jsonl").display()
        )
    );
    assert!(!s.path("requests.jsonl").exists());
}
