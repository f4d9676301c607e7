//! `evalscore judge import`: a Batch API output file into the judge cache.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use std::path::Path;

/// `evalscore judge import RESULTS [--cache CACHE]`, with `XDG_CACHE_HOME` set to `xdg`.
fn import(results: &Path, cache: Option<&Path>, xdg: &Path) -> std::process::Output {
    let mut cmd = Command::cargo_bin("evalscore").unwrap();
    cmd.args(["judge", "import"]).arg(results);
    if let Some(c) = cache {
        cmd.arg("--cache").arg(c);
    }
    cmd.env("XDG_CACHE_HOME", xdg).output().unwrap()
}

#[test]
fn judge_import_stores_successful_lines_and_reports_counts() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    // `custom_id`s are cache keys, as `judge export` writes them.
    let (key1, key2) = ("1a".repeat(32), "2b".repeat(32));
    std::fs::write(
        &results,
        format!(
            "{}\n{}\n",
            serde_json::json!({"id": "b1", "custom_id": key1, "error": null, "response": {"status_code": 200, "body": {"choices": [{"message": {"role": "assistant", "content": "{\"prediction\": \"yes\"}"}}], "usage": {"prompt_tokens": 20, "completion_tokens": 5}}}}),
            serde_json::json!({"id": "b2", "custom_id": key2, "error": {"code": "rate_limit"}, "response": null}),
        ),
    )
    .unwrap();
    let cache = dir.path().join("cache/judge.sqlite");
    let xdg = dir.path().join("xdg");
    let o = import(&results, Some(&cache), &xdg);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!(
            "stored 1 replies in {} (1 failed requests left out)\n",
            cache.display()
        )
    );
    assert!(cache.exists());
    {
        let stored = evalscore_judge::Cache::open(&cache).unwrap();
        let content = stored.get(&key1).unwrap().map(|r| r.content);
        assert_eq!(content.as_deref(), Some("{\"prediction\": \"yes\"}"));
        assert_eq!(stored.get(&key2).unwrap(), None);
    }

    assert!(!xdg.exists(), "--cache wins over XDG_CACHE_HOME");
    // Without --cache, the XDG cache folder.
    let o = import(&results, None, &xdg);
    assert_eq!(o.status.code(), Some(0));
    assert!(xdg.join("evalscore/judge.sqlite").exists());

    // A malformed line: exit 2 naming the file and line.
    std::fs::write(&results, "{\"custom_id\": \"k\"}\n[1,\n").unwrap();
    let o = import(&results, Some(&cache), &xdg);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        format!(
            "error: {}, line 2: not JSON: EOF while parsing a value at line 1 column 3\n",
            results.display()
        )
    );
}
