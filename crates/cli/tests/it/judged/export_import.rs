//! `judge export` and `judge import`: Batch API requests out, results in, an offline run scores.

use super::*;

#[test]
fn export_then_import_lets_an_offline_run_score_everything() {
    let s = Setup::new(ROWS);
    let o = s.export("requests.jsonl", &["--cache", "cache.sqlite"]);
    ok(&o);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "wrote 18 uncached requests of 5 rows to requests.jsonl\n"
    );
    assert_eq!(s.sent(), 0, "export sends nothing");
    let text = std::fs::read_to_string(s.path("requests.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), DISTINCT);
    // A provider's Batch API answers each line; here, the test server's rule does.
    let mut results = String::new();
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["method"], "POST");
        assert_eq!(l["url"], "/v1/chat/completions");
        assert_eq!(l["custom_id"].as_str().unwrap().len(), 64);
        let body: Value =
            serde_json::from_str(&chat_server::completion(&answer(&l["body"]).unwrap())).unwrap();
        results.push_str(&json!({"id": format!("r{i}"), "custom_id": l["custom_id"], "error": null, "response": {"status_code": 200, "body": body}}).to_string());
        results.push('\n');
    }
    std::fs::write(s.path("results.jsonl"), results).unwrap();
    ok(&s.evalscore(&[
        "judge",
        "import",
        "results.jsonl",
        "--cache",
        "cache.sqlite",
    ]));
    let o = s.run("offline", &["--offline"]);
    ok(&o);
    assert_eq!(s.sent(), 0);
    // The same scores as an online run.
    let online = Setup::new(ROWS);
    ok(&online.run("out", &[]));
    assert_eq!(
        read_parquet(&s.path("offline/scores.parquet")),
        read_parquet(&online.path("out/scores.parquet"))
    );
    // Nothing left to export: an empty file; an existing file is refused without --overwrite.
    let o = s.export("requests.jsonl", &["--cache", "cache.sqlite"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "error: `requests.jsonl` already exists\nhint: pass --overwrite to replace it, or choose another --out\n"
    );
    let o = s.export(
        "requests.jsonl",
        &["--cache", "cache.sqlite", "--overwrite"],
    );
    ok(&o);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "wrote 0 uncached requests of 5 rows to requests.jsonl\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.path("requests.jsonl")).unwrap(),
        ""
    );
}

#[test]
fn export_splits_at_fifty_thousand_requests() {
    let rows = jsonl(50_001, |i| {
        format!("{{\"id\": {i}, \"question\": \"q{i}\", \"answer\": \"a\", \"output\": \"o{i}\", \"label\": \"yes\"}}")
    });
    let s = Setup::new(&rows);
    // Only the security scorer: one request per row.
    std::fs::write(s.path("task.yaml"), only(SECURITY)).unwrap();
    let o = s.export("req.jsonl", &["--no-cache"]);
    ok(&o);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "wrote 50001 uncached requests of 50001 rows to req.jsonl, req.2.jsonl\n"
    );
    let count = |f: &str| std::fs::read_to_string(s.path(f)).unwrap().lines().count();
    assert_eq!(count("req.jsonl"), 50_000);
    assert_eq!(count("req.2.jsonl"), 1);
}
