//! The judge cache: keys computed as an independent implementation computes them, replies that
//! survive the process, WAL mode, the Batch API round trip, keys that share a row, a cache of
//! the earlier layout moved over, and one cache shared by threads.
#![allow(clippy::unwrap_used)]

use evalscore_judge::{Cache, CachedReply, ChatRequest, ImportStats, Key, Message};

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

/// An empty cache in a fresh folder (kept while the folder lives).
fn temp_cache() -> (tempfile::TempDir, Cache) {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(&dir.path().join("judge.sqlite")).unwrap();
    (dir, cache)
}

fn reply(content: &str, prompt_tokens: u64) -> CachedReply {
    CachedReply {
        content: content.to_owned(),
        prompt_tokens,
        completion_tokens: 1,
    }
}

/// The key of [`request`] with another seed.
fn key_with_seed(seed: i64) -> Key {
    let mut r = request();
    r.seed = Some(seed);
    r.cache_key()
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
    let ok_without_content = serde_json::json!({"custom_id": "7".repeat(64), "error": null, "response": {"status_code": 200, "body": {}}});
    let err = cache
        .import_batch_output("results.jsonl", ok_without_content.to_string().as_bytes())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "results.jsonl, line 1: no `response.body.choices[0].message.content`"
    );

    // A file that fails midway stores nothing of it.
    let k9 = "9".repeat(64);
    let good = serde_json::json!({"custom_id": k9, "error": null, "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "yes"}}]}}});
    let err = cache
        .import_batch_output("r2.jsonl", format!("{good}\nnot json\n").as_bytes())
        .unwrap_err();
    assert!(
        err.to_string().starts_with("r2.jsonl, line 2: not JSON"),
        "{err}"
    );
    assert_eq!(cache.get(&k9).unwrap(), None);
    assert_eq!(cache.len().unwrap(), 1);

    // A successful line whose `custom_id` is not a cache key stops the import.
    let foreign = serde_json::json!({"custom_id": "request-1", "error": null, "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "yes"}}]}}});
    let err = cache
        .import_batch_output("r3.jsonl", format!("{good}\n{foreign}\n").as_bytes())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "r3.jsonl, line 2: `custom_id` \"request-1\" is not a judge cache key (64 lower-case hex digits, as `judge export` writes)"
    );
    assert_eq!(cache.get(&k9).unwrap(), None);
    assert_eq!(cache.len().unwrap(), 1);
}

/// Keys are 64 lower-case hex digits: any other text is never cached and cannot be stored.
#[test]
fn only_hex_keys_are_keys() {
    let (_dir, cache) = temp_cache();
    let key = request().key();
    for other in [
        key.to_uppercase(),
        key[..63].to_owned(),
        format!("{key}0"),
        "k".to_owned(),
    ] {
        assert_eq!(cache.get(&other).unwrap(), None);
        assert_eq!(
            cache.put(&other, &reply("yes", 1)).unwrap_err().to_string(),
            format!("`{other}` is not a judge cache key (64 lower-case hex digits)")
        );
    }
    assert_eq!(Key::from_hex(&key).unwrap().hex(), key);
    assert_eq!(Key::from_hex(&key), Some(request().cache_key()));
    assert!(cache.is_empty().unwrap());
}

/// Keys that share their first 8 bytes share a row: each finds only its own reply, the
/// latest one stored is kept and the other is a miss.
#[test]
fn keys_that_share_their_row_never_get_each_others_reply() {
    let (_dir, cache) = temp_cache();
    let a = format!("{}{}", "ab".repeat(8), "01".repeat(24));
    let b = format!("{}{}", "ab".repeat(8), "02".repeat(24));
    cache.put(&a, &reply("a", 3)).unwrap();
    assert_eq!(cache.get(&a).unwrap(), Some(reply("a", 3)));
    assert_eq!(cache.get(&b).unwrap(), None);
    cache.put(&b, &reply("b", 4)).unwrap();
    assert_eq!(cache.get(&b).unwrap(), Some(reply("b", 4)));
    assert_eq!(cache.get(&a).unwrap(), None);
    assert_eq!(cache.len().unwrap(), 1);
}

/// `get_many` answers in the order asked, whatever order it reads the rows in, and repeats.
#[test]
fn many_keys_are_read_in_the_order_asked() {
    let (_dir, cache) = temp_cache();
    let keys: Vec<Key> = (0..50).map(key_with_seed).collect();
    for (i, k) in keys.iter().enumerate().filter(|(i, _)| i % 3 != 0) {
        cache
            .put_key(k, &reply(&format!("reply {i}"), i as u64))
            .unwrap();
    }
    let mut asked = keys.clone();
    asked.reverse();
    asked.push(keys[1]);
    let got = cache.get_many(&asked).unwrap();
    let expected: Vec<Option<String>> = asked
        .iter()
        .map(|k| {
            let i = keys.iter().position(|x| x == k).unwrap();
            (i % 3 != 0).then(|| format!("reply {i}"))
        })
        .collect();
    let contents: Vec<Option<String>> = got.into_iter().map(|r| r.map(|r| r.content)).collect();
    assert_eq!(contents, expected);
}

/// A cache written before replies were stored by row id (table `replies`, keyed by the hex
/// key) is moved over when it is opened: its replies are found, nothing is lost or doubled.
#[test]
fn a_cache_of_the_earlier_layout_is_moved_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("judge.sqlite");
    let key = request().key();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE replies (
                key TEXT PRIMARY KEY,
                content TEXT NOT NULL,
                prompt_tokens INTEGER NOT NULL,
                completion_tokens INTEGER NOT NULL
             ) WITHOUT ROWID;",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO replies VALUES (?1, 'yes', 12, 3), ('not-a-key', 'no', 1, 1)",
            [&key],
        )
        .unwrap();
    }
    let expected = CachedReply {
        completion_tokens: 3,
        ..reply("yes", 12)
    };
    let cache = Cache::open(&path).unwrap();
    assert_eq!(cache.get(&key).unwrap(), Some(expected.clone()));
    assert_eq!(cache.len().unwrap(), 1);
    drop(cache);
    let cache = Cache::open(&path).unwrap();
    assert_eq!(cache.get(&key).unwrap(), Some(expected));
    assert_eq!(cache.len().unwrap(), 1);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tables, ["judge_replies"]);
}

/// One cache shared by threads that read and write at once (each call takes the connection
/// in turn): every reply stored is found.
#[test]
fn one_cache_serves_many_threads() {
    let (_dir, cache) = temp_cache();
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let cache = &cache;
            s.spawn(move || {
                let keys: Vec<Key> = (0..100).map(|i| key_with_seed(t * 1000 + i)).collect();
                for (i, k) in keys.iter().enumerate() {
                    cache.put_key(k, &reply(&format!("{t}/{i}"), 1)).unwrap();
                }
                let got = cache.get_many(&keys).unwrap();
                for (i, r) in got.into_iter().enumerate() {
                    assert_eq!(r.unwrap().content, format!("{t}/{i}"));
                }
            });
        }
    });
    assert_eq!(cache.len().unwrap(), 400);
}

#[test]
fn an_object_storage_url_is_refused_and_nothing_is_written_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    for url in [
        "s3://lake/evalscore/judge-cache/",
        "gs://b/c.sqlite",
        "az://c/judge",
    ] {
        let err = Cache::open(std::path::Path::new(url)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("judge cache `{url}`: an object-storage URL is a shared cache, which `Cache::open_shared` opens in front of a local SQLite file; nothing was written")
        );
    }
    // A relative URL-looking path would have made `s3:/lake/...` in the working folder.
    assert!(!std::path::Path::new("s3:").exists());
    // A local path with `:` in it is still a path.
    let local = dir.path().join("a:b").join("judge.sqlite");
    Cache::open(&local).unwrap();
    assert!(local.exists());
}
