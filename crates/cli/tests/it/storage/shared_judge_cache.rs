//! `--cache s3://...`: a shared judge cache on moto, written by two processes at once and
//! read by a machine with an empty home folder, which sends nothing for the rows it holds.

use super::*;
use evalscore_test_support::chat_server::{self, Answer, Reply};

const TASK: &str = r#"
models:
  judge:
    base_url: "<< config.url >>"
    model: fake-judge
    max_retries: 0
definition:
  scorers:
    - type: model_graded_security
      model_key: judge
"#;

fn rows(w: usize) -> String {
    (0..5)
        .map(|j| format!("{{\"id\": {j}, \"output\": \"text {w}-{j}\"}}\n"))
        .collect()
}

#[test]
fn processes_share_a_judge_cache_on_s3_and_a_fresh_machine_sends_nothing() {
    let s3 = moto();
    let endpoint = format!("http://127.0.0.1:{}", s3.port);
    create_bucket(s3.port, "lake");
    let env = s3_env(&endpoint);
    let (url, sent) = chat_server::serve_counting(|_| Answer::Reply(Reply::ok("No"), Vec::new()));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task.yaml"), TASK).unwrap();
    for w in 0..2 {
        std::fs::write(dir.path().join(format!("rows{w}.jsonl")), rows(w)).unwrap();
    }
    std::fs::write(dir.path().join("all.jsonl"), rows(0) + &rows(1)).unwrap();
    let cache = "s3://lake/evalscore/judge-cache/";
    let command = |machine: &str, args: &[&str]| {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("evalscore"));
        c.env("AWS_EC2_METADATA_DISABLED", "true");
        for (k, v) in &env {
            c.env(k, v);
        }
        c.env("XDG_CACHE_HOME", dir.path().join(machine))
            .current_dir(dir.path())
            .args(args);
        if args[0] == "run" {
            c.args(["--set", &format!("url={url}")]);
            if !args.contains(&"--cache") {
                c.args(["--cache", cache]);
            }
        }
        c
    };
    let children: Vec<_> = (0..2)
        .map(|w| {
            let (rows, out) = (format!("rows{w}.jsonl"), format!("out{w}"));
            command(
                &format!("m{w}"),
                &["run", "task.yaml", "--input", &rows, "--out", &out],
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(!String::from_utf8_lossy(&o.stderr).contains(SECRET));
    }
    assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 10);
    let keys = list_keys(s3.port, "lake", "evalscore/judge-cache/");
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys
        .iter()
        .all(|k| k.starts_with("evalscore/judge-cache/seg-") && k.ends_with(".parquet")));

    // A fresh machine: every reply from S3.
    let o = command(
        "fresh",
        &["run", "task.yaml", "--input", "all.jsonl", "--out", "all"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 10);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("all/run.json")).unwrap())
            .unwrap();
    assert_eq!(run["judge"]["cache"], cache);
    assert_eq!(run["judge"]["models"]["judge"]["cache_hits"], 10);
    assert_eq!(run["judge"]["shared_cache"]["replies_fetched"], 10);
    assert_eq!(run["judge"]["shared_cache"]["segments_indexed"], 2);

    let o = command("admin", &["judge", "cache", "compact", cache])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        format!("judge cache {cache}: merged 2 segments into 1 (10 replies, 0 duplicates dropped); 0 segments kept\n")
    );
    let o = command("admin", &["judge", "cache", "stats", cache])
        .output()
        .unwrap();
    assert!(
        stdout(&o).starts_with(&format!(
            "judge cache {cache}\nsegments    1\nentries     10\n"
        )),
        "{}",
        stdout(&o)
    );
    // A bucket that does not exist fails the run before any row, naming the URL.
    let o = command(
        "m9",
        &[
            "run",
            "task.yaml",
            "--input",
            "rows0.jsonl",
            "--out",
            "x",
            "--cache",
            "s3://no-such-bucket/cache/",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("s3://no-such-bucket/cache/"), "{stderr}");
    assert!(!stderr.contains(SECRET));
    assert!(!dir.path().join("x").exists());
}
