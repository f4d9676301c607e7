//! The judge cache: keys computed as an independent implementation computes them, replies that
//! survive the process, WAL mode, and the Batch API round trip.
#![allow(clippy::unwrap_used)]

use evalscore_judge::{Cache, CachedReply, ChatRequest, ImportStats, Message};

fn request() -> ChatRequest {
    ChatRequest {
        base_url: "http://127.0.0.1:8080/v1/".to_owned(),
        model: "smollm2".to_owned(),
        messages: vec![
            Message {
                role: "system".to_owned(),
                content: "You grade answers. Reply with JSON.".to_owned(),
            },
            Message {
                role: "user".to_owned(),
                content: "Question: 2+2?\nAnswer: «4» été\tok".to_owned(),
            },
        ],
        temperature: 0.0,
        seed: Some(7),
        max_tokens: Some(64),
        parser_version: 1,
    }
}

/// `scripts/golden/judge_key.py` (Python's json and hashlib) prints this key; the trailing `/`
/// of the base URL does not count. Any sampling parameter or the parser version changes it.
#[test]
fn the_key_is_the_sha256_of_the_canonical_request() {
    let r = request();
    assert_eq!(
        r.key(),
        "91fbe15f29c3652186fb1f422db0724a60fd2b0f777898f75a5ace78e5898396"
    );
    let mut other = r.clone();
    other.temperature = 0.5;
    assert_ne!(other.key(), r.key());
    let mut other = r.clone();
    other.parser_version = 2;
    assert_ne!(other.key(), r.key());
    let mut other = r.clone();
    other.seed = None;
    assert_ne!(other.key(), r.key());
}

#[test]
fn replies_persist_across_opens_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/judge.sqlite");
    let key = request().key();
    let reply = CachedReply {
        content: "{\"prediction\": \"yes\"}".to_owned(),
        prompt_tokens: 31,
        completion_tokens: 9,
    };
    {
        let cache = Cache::open(&path).unwrap();
        assert_eq!(cache.journal_mode().unwrap(), "wal");
        assert_eq!(cache.get(&key).unwrap(), None);
        cache.put(&key, &reply).unwrap();
    }
    let cache = Cache::open(&path).unwrap();
    assert_eq!(cache.get(&key).unwrap(), Some(reply));
    assert_eq!(cache.len().unwrap(), 1);
}

/// A request line carries the key as `custom_id`; an output file's successful lines are
/// stored under it, failed ones counted and left out, a malformed one named by line.
#[test]
fn batch_files_round_trip_through_the_cache() {
    let r = request();
    let line: serde_json::Value = serde_json::from_str(&r.batch_line()).unwrap();
    assert_eq!(line["custom_id"], r.key());
    assert_eq!(line["method"], "POST");
    assert_eq!(line["url"], "/v1/chat/completions");
    assert_eq!(line["body"], r.body());
    assert_eq!(line["body"]["max_tokens"], 64);

    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(&dir.path().join("judge.sqlite")).unwrap();
    let output = format!(
        "{}\n\n{}\n{}\n",
        serde_json::json!({"id": "b1", "custom_id": r.key(), "error": null, "response": {"status_code": 200, "body": {"choices": [{"message": {"role": "assistant", "content": "no"}}], "usage": {"prompt_tokens": 40, "completion_tokens": 1}}}}),
        serde_json::json!({"id": "b2", "custom_id": "k2", "error": {"code": "server_error"}, "response": null}),
        serde_json::json!({"id": "b3", "custom_id": "k3", "error": null, "response": {"status_code": 429, "body": {}}}),
    );
    let stats = cache
        .import_batch_output("results.jsonl", output.as_bytes())
        .unwrap();
    assert_eq!(
        stats,
        ImportStats {
            stored: 1,
            failed: 2
        }
    );
    assert_eq!(
        cache.get(&r.key()).unwrap(),
        Some(CachedReply {
            content: "no".to_owned(),
            prompt_tokens: 40,
            completion_tokens: 1
        })
    );
    assert_eq!(cache.get("k2").unwrap(), None);

    // A line with no response counts as failed; one that is not JSON stops the import.
    let err = cache
        .import_batch_output(
            "results.jsonl",
            "{\"custom_id\": \"k\"}\nnot json\n".as_bytes(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "results.jsonl, line 2: not JSON: expected ident at line 1 column 2"
    );
    let ok_without_content =
        "{\"custom_id\": \"k\", \"error\": null, \"response\": {\"status_code\": 200, \"body\": {}}}";
    let err = cache
        .import_batch_output("results.jsonl", ok_without_content.as_bytes())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "results.jsonl, line 1: no `response.body.choices[0].message.content`"
    );

    // A file that fails midway stores nothing of it.
    let good = serde_json::json!({"custom_id": "k9", "error": null, "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "yes"}}]}}});
    let err = cache
        .import_batch_output("r2.jsonl", format!("{good}\nnot json\n").as_bytes())
        .unwrap_err();
    assert!(
        err.to_string().starts_with("r2.jsonl, line 2: not JSON"),
        "{err}"
    );
    assert_eq!(cache.get("k9").unwrap(), None);
    assert_eq!(cache.len().unwrap(), 1);
}
