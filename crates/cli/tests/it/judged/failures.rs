//! Judge failures: a failed request, an offline miss, no API key, a bad task, a killed run resumed.

use super::*;

#[test]
fn a_failed_request_is_a_row_error_after_its_retries() {
    let rows = "{\"id\": 1, \"question\": \"q\", \"answer\": \"Paris\", \"output\": \"Paris\", \"label\": \"yes\"}\n{\"id\": 2, \"question\": \"q\", \"answer\": \"Paris\", \"output\": \"[fail]\", \"label\": \"yes\"}\n";
    let s = Setup::new(rows);
    let o = s.run("out", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with(&format!("error: rows.jsonl, row 2: scorer `cls`: judge model `judge` ({0}): {0}/chat/completions answered HTTP 500 (after 2 attempts)\n", s.url)),
        "{err}"
    );
    assert!(!s.path("out/run.json").exists());
    // The first scorer's good reply was cached as it came; the run stopped at its failed row,
    // before the other five scorers asked anything. A rerun allowing the errors sends the
    // failing requests (two attempts each, six scorers) and the other scorers' first row.
    let before = s.sent();
    let o = s.run("out", &["--max-row-errors", "6"]);
    ok(&o);
    assert_eq!(s.sent() - before, 6 * 2 + 5);
    let scores = read_parquet(&s.path("out/scores.parquet"));
    assert_eq!(
        strings(&scores, "cls__judge_status"),
        [Some("ok".into()), Some("error".into())]
    );
    assert_eq!(floats(&scores, "grade__score"), [Some(0.8), Some(0.0)]);
    let rj = run_json(&s.path("out"));
    assert_eq!(rj["row_error_count"], 6);
    assert_eq!(rj["judge"]["models"]["judge"]["failures"], 6);
    assert_eq!(rj["judge"]["models"]["judge"]["retries"], 6);
}

#[test]
fn offline_without_a_cached_reply_is_a_row_error() {
    let s = Setup::new(ROWS.lines().next().unwrap());
    let o = s.run("out", &["--offline"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(s.sent(), 0);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with(&format!("error: rows.jsonl, row 1: scorer `cls`: judge model `judge` ({}): the reply is not in the judge cache, and --offline forbids sending the request\n", s.url)),
        "{err}"
    );
    let o = s.run("out", &["--offline", "--no-cache"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: --offline needs the judge cache, and --no-cache turns it off\nhint: drop --no-cache (or give --cache PATH) to score from cached replies\n"
    );
}

#[test]
fn a_missing_api_key_stops_before_any_row() {
    let s = Setup::new(ROWS);
    let o = run_in(s.dir.path(), "out")
        .args(["--cache", "c.sqlite"])
        .arg("--set")
        .arg(format!("url={}", s.url))
        .env_remove("EVALSCORE_TEST_JUDGE_KEY")
        .current_dir(s.dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: the environment variable `EVALSCORE_TEST_JUDGE_KEY` (models.judge.api_key_env) is not set\nhint: export EVALSCORE_TEST_JUDGE_KEY=... with the API key of model `judge`\n"
    );
    assert_eq!(s.sent(), 0);
}

#[test]
fn task_errors_name_the_line() {
    let s = Setup::new(ROWS);
    let bad = TASK.replace(
        "      model_key: judge\n      system_prompt",
        "      model_key: judg\n      system_prompt",
    );
    std::fs::write(s.path("task.yaml"), bad).unwrap();
    let o = s.run("out", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("task.yaml`, line 17, column 18: `model_key` `judg` is not a model of the task's `models:`"),
        "{err}"
    );
    assert!(err.contains("hint: models of this task: judge"), "{err}");
}

#[test]
fn a_run_killed_midway_resumes_with_only_the_unfinished_requests() {
    let rows = jsonl(30, |i| {
        format!("{{\"id\": {i}, \"question\": \"q\", \"answer\": \"a\", \"output\": \"text {i}\", \"label\": \"yes\"}}")
    });
    let mut s = Setup::new(&rows);
    let (url, seen) = server_with(std::time::Duration::from_millis(100));
    (s.url, s.seen) = (url, seen);
    std::fs::write(
        s.path("task.yaml"),
        only(SECURITY).replace("concurrency: 4", "concurrency: 2"),
    )
    .unwrap();
    let cache = s.path("cache.sqlite");
    let mut child = run_in(s.dir.path(), "out")
        .args(["--cache", "cache.sqlite"])
        .arg("--set")
        .arg(format!("url={}", s.url))
        .env("EVALSCORE_TEST_JUDGE_KEY", KEY)
        .current_dir(s.dir.path())
        .spawn()
        .unwrap();
    while s.sent() < 8 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SIGKILL: no handler runs, nothing is cleaned up.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!s.path("out/run.json").exists());
    let sent_before = s.sent();
    let kept = evalscore_judge::Cache::open(&cache).unwrap().len().unwrap() as usize;
    assert!((6..30).contains(&kept), "kept {kept}");
    let o = s.run("out", &[]);
    ok(&o);
    assert_eq!(
        s.sent() - sent_before,
        30 - kept,
        "only the unfinished requests"
    );
    let rj = run_json(&s.path("out"));
    assert_eq!(rj["judge"]["models"]["judge"]["cache_hits"], kept as u64);
}
