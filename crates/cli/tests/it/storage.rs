//! Object storage inputs and outputs against real servers started here: moto (S3) and
//! azurite (Azure Blob), installed by `scripts/setup/storage-servers.sh`. A counting,
//! fault-injecting proxy sits in front of them where a test needs bytes counted, connections
//! dropped, a request refused or held.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_test_support::stores::*;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SECRET: &str = "s3-secret-never-printed";
const NETWORK_HINT: &str = "check the URL, the endpoint and the network; requests were retried with backoff before giving up";
const CREDENTIALS_HINT: &str = "check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AZURE_STORAGE_ACCOUNT_KEY, GOOGLE_SERVICE_ACCOUNT, or `--storage-option`)";

fn run_with(env: &[(&str, String)], args: &[&str], cwd: &Path) -> std::process::Output {
    let mut c = evalscore();
    c.current_dir(cwd);
    for k in [
        "AWS_PROFILE",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
    ] {
        c.env_remove(k);
    }
    c.env("AWS_EC2_METADATA_DISABLED", "true");
    for (k, v) in env {
        c.env(k, v);
    }
    c.args(args).output().unwrap()
}

/// `evalscore run TASK --input INPUT --out OUT EXTRA...` in `cwd` with `env`. TASK is a
/// path, or the name of one of data/examples.
fn run_task(
    env: &[(&str, String)],
    task: &str,
    input: &str,
    out: &str,
    extra: &[&str],
    cwd: &Path,
) -> std::process::Output {
    let example = examples().join(task);
    let task = match example.exists() {
        true => example.to_str().unwrap().to_owned(),
        false => task.to_owned(),
    };
    let mut args = vec!["run", task.as_str(), "--input", input, "--out", out];
    args.extend_from_slice(extra);
    run_with(env, &args, cwd)
}

/// Creates the bucket `evals` holding the example `qa.parquet`.
fn evals_with_qa(port: u16) {
    create_bucket(port, "evals");
    put_object(
        port,
        "evals",
        "qa.parquet",
        &std::fs::read(examples().join("qa.parquet")).unwrap(),
    );
}

/// The message of a run that failed (exit 2), checked to start with `head`, to end with the
/// hint line `hint`, and to hold no secret of the tests.
fn failure(o: &std::process::Output, head: &str, hint: &str) -> String {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let err = stderr(o);
    assert!(err.starts_with(head), "{err}");
    assert!(err.ends_with(&format!("\nhint: {hint}\n")), "{err}");
    assert!(!err.contains(SECRET), "{err}");
    err
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A Parquet file's content, from its bytes (written to `dir/name` to be read).
fn batch_of(bytes: &[u8], dir: &Path, name: &str) -> RecordBatch {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    read_parquet(&p)
}

/// Checks that a remote run's outputs (`get` fetches one by name) hold the same figures (the
/// run identity aside: each run has its own) and the same scores, every column and row, as
/// the local run's folder `local`; returns the scores.
fn same_outputs(get: &dyn Fn(&str) -> Vec<u8>, local: &Path, dir: &Path) -> RecordBatch {
    let fetched = tempfile::tempdir_in(dir).unwrap();
    let remote = |name: &str| batch_of(&get(name), fetched.path(), name);
    assert_eq!(
        metric_lines(&remote("metrics.parquet")),
        metric_lines(&read_parquet(&local.join("metrics.parquet")))
    );
    let scores = remote("scores.parquet");
    let local_scores = read_parquet(&local.join("scores.parquet"));
    assert_eq!(scores.schema(), local_scores.schema());
    assert_eq!(scores.columns(), local_scores.columns());
    scores
}

/// A local run's outputs, for comparison.
fn local_run(dir: &Path, task: &str, inputs: &[&Path]) -> std::path::PathBuf {
    let out = tempfile::Builder::new()
        .prefix("local-")
        .tempdir_in(dir)
        .unwrap()
        .keep();
    let mut c = evalscore();
    c.arg("run").arg(examples().join(task));
    for i in inputs {
        c.arg("--input").arg(i);
    }
    let o = c.arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

#[test]
fn s3_file_and_prefix_inputs_and_outputs_match_a_local_run() {
    let s3 = moto();
    let endpoint = format!("http://127.0.0.1:{}", s3.port);
    create_bucket(s3.port, "evals");
    let qa = std::fs::read(examples().join("qa.parquet")).unwrap();
    put_object(s3.port, "evals", "nightly/part-0.parquet", &qa);
    put_object(s3.port, "evals", "nightly/part-1.parquet", &qa);
    // Neither is listed: not Parquet, and deeper than the prefix (as a local subfolder).
    put_object(s3.port, "evals", "nightly/README.txt", b"not data");
    put_object(s3.port, "evals", "nightly/old/part-9.parquet", b"not read");
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("in");
    std::fs::create_dir(&local).unwrap();
    std::fs::write(local.join("part-0.parquet"), &qa).unwrap();
    std::fs::write(local.join("part-1.parquet"), &qa).unwrap();
    let local_out = local_run(dir.path(), "qa.yaml", &[&local]);
    let env = s3_env(&endpoint);

    let task = examples().join("qa.yaml");
    let o = run_task(
        &env,
        task.to_str().unwrap(),
        "s3://evals/nightly/",
        "s3://evals/out/run_date=d1/",
        &["--run-id", "nightly-1"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        list_keys(s3.port, "evals", "out/"),
        [
            "out/run_date=d1/confusion.parquet",
            "out/run_date=d1/metrics.json",
            "out/run_date=d1/metrics.parquet",
            "out/run_date=d1/run.json",
            "out/run_date=d1/scores.parquet",
        ]
    );
    let get = |k: &str| get_object(s3.port, "evals", &format!("out/run_date=d1/{k}")).unwrap();
    let remote_scores = same_outputs(&get, &local_out, dir.path());
    assert_eq!(remote_scores.num_rows(), 600);
    assert_eq!(
        column_names(&remote_scores),
        ["id", "exact__is_correct", "normalized__is_correct"]
    );
    let figures = |v: serde_json::Value| v["scorers"].clone();
    let remote_metrics: serde_json::Value = serde_json::from_slice(&get("metrics.json")).unwrap();
    let local_metrics: serde_json::Value =
        serde_json::from_slice(&std::fs::read(local_out.join("metrics.json")).unwrap()).unwrap();
    assert_eq!(figures(remote_metrics.clone()), figures(local_metrics));
    assert_eq!(remote_metrics["run_id"], "nightly-1");
    let run_json: serde_json::Value = serde_json::from_slice(&get("run.json")).unwrap();
    assert_eq!(run_json["run_id"], "nightly-1");
    let inputs: Vec<String> = run_json["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        inputs,
        [
            "s3://evals/nightly/part-0.parquet",
            "s3://evals/nightly/part-1.parquet"
        ]
    );
    for k in ["run.json", "metrics.json"] {
        assert!(!String::from_utf8_lossy(&get(k)).contains(SECRET));
    }
    assert!(!stderr(&o).contains(SECRET));
    assert!(!String::from_utf8_lossy(&o.stdout).contains(SECRET));

    // One object, by its key, with a task that fills confusion.parquet.
    let classification = examples().join("classification.yaml");
    let o = run_task(
        &env,
        classification.to_str().unwrap(),
        "s3://evals/nightly/part-0.parquet",
        "s3://evals/one/",
        &[],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let local_one = local_run(
        dir.path(),
        "classification.yaml",
        &[&examples().join("qa.parquet")],
    );
    let get = |k: &str| get_object(s3.port, "evals", &format!("one/{k}")).unwrap();
    let remote_scores = same_outputs(&get, &local_one, dir.path());
    assert_eq!(column_names(&remote_scores), ["id", "judge__is_correct"]);
    // confusion.parquet: the same cells; only the last three columns (the run's identity)
    // differ.
    let remote_confusion = batch_of(&get("confusion.parquet"), dir.path(), "c1.parquet");
    let local_confusion = read_parquet(&local_one.join("confusion.parquet"));
    assert!(local_confusion.num_rows() > 10);
    assert_eq!(remote_confusion.schema(), local_confusion.schema());
    let n = local_confusion.num_columns() - 3;
    assert_eq!(
        column_names(&local_confusion)[n..],
        ["run_id", "run_started_at", "labels"]
    );
    assert_eq!(
        remote_confusion.columns()[..n],
        local_confusion.columns()[..n]
    );
}

#[test]
fn missing_buckets_and_keys_exit_2_naming_the_url() {
    let s3 = moto();
    let endpoint = format!("http://127.0.0.1:{}", s3.port);
    create_bucket(s3.port, "evals");
    let dir = tempfile::tempdir().unwrap();
    let task = examples().join("qa.yaml");
    let out = dir.path().join("out");
    for (url, what) in [
        ("s3://evals/nope.parquet", "not found"),
        ("s3://no-such-bucket/x.parquet", "not found"),
    ] {
        let o = run_task(
            &s3_env(&endpoint),
            task.to_str().unwrap(),
            url,
            out.to_str().unwrap(),
            &[],
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "error: {url}: cannot read input: {what}\nhint: check the bucket (or container) and the key\n"
            )
        );
        assert!(!out.exists());
    }
    // A prefix in a missing bucket, as an input and as an output: found by its listing,
    // before anything is scored.
    let qa = examples().join("qa.parquet");
    for (input, out, url, what) in [
        (
            "s3://no-such-bucket/in/",
            "local-out",
            "s3://no-such-bucket/in/",
            "list the prefix",
        ),
        (
            qa.to_str().unwrap(),
            "s3://no-such-bucket/out",
            "s3://no-such-bucket/out/",
            "list the output prefix",
        ),
    ] {
        let o = run_task(
            &s3_env(&endpoint),
            task.to_str().unwrap(),
            input,
            out,
            &[],
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "error: {url}: cannot {what}: not found\nhint: check the bucket (or container) and the key\n"
            )
        );
        assert!(!dir.path().join("local-out").exists());
    }
    // An empty prefix.
    let o = run_task(
        &s3_env(&endpoint),
        task.to_str().unwrap(),
        "s3://evals/empty/",
        out.to_str().unwrap(),
        &[],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: s3://evals/empty/: prefix holds no Parquet files (*.parquet)\nhint: point `--input` at Parquet objects or a prefix of them (ending in `/`)\n"
    );
}

/// A Parquet file of `rows` rows whose `padding` column, which the task does not read, is
/// most of its bytes. Uncompressed, so the chunk sizes are the data's.
fn padded_parquet(rows: usize) -> Vec<u8> {
    let mut seed = 7u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let word = |n: u64, len: usize| -> String {
        (0..len)
            .map(|i| (b'a' + ((n >> (i * 4)) % 26) as u8) as char)
            .collect()
    };
    let ids: Vec<i64> = (0..rows as i64).collect();
    let outputs: Vec<String> = (0..rows).map(|_| word(next(), 12)).collect();
    let answers: Vec<String> = outputs
        .iter()
        .map(|o| {
            if next() % 3 == 0 {
                word(next(), 12)
            } else {
                o.clone()
            }
        })
        .collect();
    let padding: Vec<String> = (0..rows)
        .map(|_| (0..8).map(|_| word(next(), 16)).collect())
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("output", DataType::Utf8, true),
        Field::new("padding", DataType::Utf8, true),
        Field::new("answer", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(outputs)),
            Arc::new(StringArray::from(padding)),
            Arc::new(StringArray::from(answers)),
        ],
    )
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(rows / 2))
        .build();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    buf
}

const EXACT_TASK: &str = r#"
definition:
  scorers:
    - type: string_equals
      key: exact
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct}
"#;

/// moto with `padded_parquet(rows)` at s3://evals/padded.parquet, and a folder holding the
/// same file and `EXACT_TASK` as task.yaml.
fn padded_setup(rows: usize) -> (Server, tempfile::TempDir, Vec<u8>) {
    let s3 = moto();
    create_bucket(s3.port, "evals");
    let data = padded_parquet(rows);
    put_object(s3.port, "evals", "padded.parquet", &data);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task.yaml"), EXACT_TASK).unwrap();
    std::fs::write(dir.path().join("padded.parquet"), &data).unwrap();
    (s3, dir, data)
}

#[test]
fn reads_fetch_the_footer_and_the_needed_column_chunks_only() {
    let (s3, dir, data) = padded_setup(60_000);

    // What the task needs: `output` and `answer`, and `id` (kept in scores.parquet).
    let meta = parquet::file::serialized_reader::SerializedFileReader::new(
        std::fs::File::open(dir.path().join("padded.parquet")).unwrap(),
    )
    .unwrap();
    use parquet::file::reader::FileReader;
    let md = meta.metadata();
    let mut needed = 0u64;
    let mut all = 0u64;
    for rg in md.row_groups() {
        for c in rg.columns() {
            let (_, len) = c.byte_range();
            all += len;
            if c.column_path().string() != "padding" {
                needed += len;
            }
        }
    }
    assert_eq!(md.num_row_groups(), 2);
    let footer = {
        let n = data.len();
        u64::from(u32::from_le_bytes(data[n - 8..n - 4].try_into().unwrap())) + 8
    };
    let expected = needed + footer;
    assert!(
        all > 3 * needed,
        "padding should dominate: {all} vs {needed}"
    );

    let proxy = proxy(s3.port);
    let o = run_task(
        &s3_env(&proxy.endpoint()),
        "task.yaml",
        "s3://evals/padded.parquet",
        "out",
        &[],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sent = proxy.sent.load(Ordering::SeqCst);
    eprintln!(
        "sent {sent} bytes for {expected} needed ({:.2}%), of a {}-byte file",
        100.0 * sent as f64 / expected as f64,
        data.len()
    );
    assert!(
        sent >= expected && (sent as f64) <= expected as f64 * 1.10,
        "the server sent {sent} bytes; the footer and the needed chunks are {expected} (the whole file {})",
        data.len()
    );
    // Same figures as from local disk.
    let o = run_task(&[], "task.yaml", "padded.parquet", "local", &[], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        metric_lines(&read_parquet(&dir.path().join("out/metrics.parquet"))),
        metric_lines(&read_parquet(&dir.path().join("local/metrics.parquet")))
    );
    // One GET per needed chunk (3 columns × 2 row groups), the footer's, and a HEAD.
    let requests = proxy.requests.lock().unwrap().clone();
    let gets = requests.iter().filter(|r| r.starts_with("GET ")).count();
    let heads = requests.iter().filter(|r| r.starts_with("HEAD ")).count();
    assert_eq!((gets, heads), (7, 1), "{requests:?}");
}

#[test]
fn a_dropped_connection_is_retried_then_reported() {
    let (s3, dir, _) = padded_setup(20_000);
    let o = run_task(&[], "task.yaml", "padded.parquet", "local", &[], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));

    // The first three connections are cut 20,000 bytes into their replies: retried.
    let proxy = proxy(s3.port);
    proxy.rules.lock().unwrap().drop = Some((3, 20_000));
    let o = run_task(
        &s3_env(&proxy.endpoint()),
        "task.yaml",
        "s3://evals/padded.parquet",
        "out",
        &[],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(proxy.rules.lock().unwrap().drop, Some((0, 20_000)));
    assert_eq!(
        metric_lines(&read_parquet(&dir.path().join("out/metrics.parquet"))),
        metric_lines(&read_parquet(&dir.path().join("local/metrics.parquet")))
    );

    // Every connection cut: a clear error after the retries, and no output.
    proxy.rules.lock().unwrap().drop = Some((10_000, 20_000));
    let started = Instant::now();
    let o = run_task(
        &s3_env(&proxy.endpoint()),
        "task.yaml",
        "s3://evals/padded.parquet",
        "out2",
        &[],
        dir.path(),
    );
    failure(
        &o,
        "error: s3://evals/padded.parquet: cannot read: ",
        NETWORK_HINT,
    );
    assert!(started.elapsed() < Duration::from_secs(120));
    // The failure came while scoring, after the output folder was made: it holds nothing.
    assert!(files_in(&dir.path().join("out2")).is_empty());
}

fn qa_run(env: &[(&str, String)], out: &str, extra: &[&str], cwd: &Path) -> std::process::Output {
    run_task(env, "qa.yaml", "s3://evals/qa.parquet", out, extra, cwd)
}

/// The requests the proxy saw that touch the output prefix `out/` (not the input), each
/// cut after its query's `uploadId=` (a fresh id each time) and without ` HTTP/1.1`.
fn output_requests(proxy: &Proxy) -> Vec<String> {
    proxy
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.contains("/evals/out/") || r.contains("prefix=out") || r.contains("?delete"))
        .map(|r| {
            let r = r.trim_end_matches(" HTTP/1.1");
            match r.find("uploadId=") {
                Some(i) => r[..i + "uploadId=".len()].to_owned(),
                None => r.to_owned(),
            }
        })
        .collect()
}

/// The head (request line and headers, lowercased) of the last request starting `line`.
fn last_head(proxy: &Proxy, line: &str) -> String {
    proxy
        .heads
        .lock()
        .unwrap()
        .iter()
        .rev()
        .find(|h| h.starts_with(line))
        .unwrap_or_else(|| panic!("no request {line}"))
        .to_ascii_lowercase()
}

#[test]
fn outputs_present_are_refused_and_overwrite_replaces_them() {
    let s3 = moto();
    evals_with_qa(s3.port);
    // Through the proxy, which records what was sent to the output prefix and how.
    let proxy = proxy(s3.port);
    let env = s3_env(&proxy.endpoint());
    let dir = tempfile::tempdir().unwrap();
    let o = qa_run(&env, "s3://evals/out", &["--run-id", "first"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    // One listing of the prefix, then each data file as a multipart upload (begun, one part,
    // completed), then run.json last, in one PUT that is create-only.
    let mut data_uploads = Vec::new();
    for f in [
        "scores.parquet",
        "metrics.parquet",
        "confusion.parquet",
        "metrics.json",
    ] {
        data_uploads.extend([
            format!("POST /evals/out/{f}?uploads="),
            format!("PUT /evals/out/{f}?partNumber=1&uploadId="),
            format!("POST /evals/out/{f}?uploadId="),
        ]);
    }
    let listing = "GET /evals?delimiter=%2F&list-type=2&prefix=out%2F".to_owned();
    let mut want = vec![listing.clone(), listing.clone()];
    want.extend(data_uploads.iter().cloned());
    want.push("PUT /evals/out/run.json".to_owned());
    assert_eq!(output_requests(&proxy), want);
    let run_json_put = last_head(&proxy, "PUT /evals/out/run.json ");
    assert!(
        run_json_put.contains("\r\nif-none-match: *\r\n"),
        "{run_json_put}"
    );

    let o = qa_run(&env, "s3://evals/out", &["--run-id", "second"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: the output folder `s3://evals/out/` already holds scores.parquet, metrics.parquet, confusion.parquet, metrics.json, run.json\nhint: pass `--overwrite` to replace them, or choose another `--out` prefix\n"
    );
    let run_id = |port| {
        let v: serde_json::Value =
            serde_json::from_slice(&get_object(port, "evals", "out/run.json").unwrap()).unwrap();
        v["run_id"].as_str().unwrap().to_owned()
    };
    assert_eq!(run_id(s3.port), "first");
    proxy.requests.lock().unwrap().clear();
    proxy.heads.lock().unwrap().clear();
    let o = qa_run(
        &env,
        "s3://evals/out",
        &["--run-id", "second", "--overwrite"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(run_id(s3.port), "second");
    // With --overwrite: the old run.json is deleted first (S3's DeleteObjects), and the new
    // one is written whether or not one is there.
    let mut want = vec![listing.clone(), listing, "POST /evals?delete".to_owned()];
    want.extend(data_uploads);
    want.push("PUT /evals/out/run.json".to_owned());
    assert_eq!(output_requests(&proxy), want);
    assert!(!last_head(&proxy, "PUT /evals/out/run.json ").contains("if-none-match"));
    let metrics = get_object(s3.port, "evals", "out/metrics.parquet").unwrap();
    assert_eq!(
        strings(&batch_of(&metrics, dir.path(), "m.parquet"), "run_id")[0].as_deref(),
        Some("second")
    );
    assert_eq!(open_uploads(s3.port, "evals"), Vec::<String>::new());

    // A local-only command refuses a URL instead of making a folder named `s3:`.
    let o = evalscore()
        .current_dir(dir.path())
        .args(["judge", "export"])
        .arg(examples().join("qa.yaml"))
        .args(["--input"])
        .arg(examples().join("qa.parquet"))
        .args(["--out", "s3://evals/requests.jsonl"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!dir.path().join("s3:").exists());
}

#[test]
fn a_failed_upload_removes_what_it_uploaded_and_writes_no_run_json() {
    let s3 = moto();
    evals_with_qa(s3.port);
    let proxy = proxy(s3.port);
    // The upload of metrics.json (a multipart upload starts with a POST), after the other three.
    proxy.rules.lock().unwrap().forbid = Some("POST /evals/out/metrics.json".into());
    let dir = tempfile::tempdir().unwrap();
    let o = qa_run(
        &s3_env(&proxy.endpoint()),
        "s3://evals/out/",
        &[],
        dir.path(),
    );
    failure(
        &o,
        "error: s3://evals/out/metrics.json: cannot start the upload: ",
        CREDENTIALS_HINT,
    );
    // The three files uploaded before it were deleted; nothing marks a finished run.
    assert_eq!(list_keys(s3.port, "evals", "out/"), Vec::<String>::new());
    let requests = proxy.requests.lock().unwrap().clone();
    for f in ["scores.parquet", "metrics.parquet", "confusion.parquet"] {
        let put = format!("POST /evals/out/{f}?uploads");
        assert!(requests.iter().any(|r| r.starts_with(&put)), "{requests:?}");
    }
    // One delete each (S3's DeleteObjects call, which object_store uses for a delete).
    let deletes = requests
        .iter()
        .filter(|r| r.starts_with("POST /evals?delete"))
        .count();
    assert_eq!(deletes, 3, "{requests:?}");
    assert!(
        !requests.iter().any(|r| r.contains("run.json")),
        "{requests:?}"
    );

    // A part refused in the middle of a multipart upload: that upload is aborted, so no
    // part of it stays stored, and the files uploaded before it are deleted.
    proxy.requests.lock().unwrap().clear();
    proxy.rules.lock().unwrap().forbid = Some("PUT /evals/out/metrics.parquet?partNumber=".into());
    let o = qa_run(
        &s3_env(&proxy.endpoint()),
        "s3://evals/out/",
        &[],
        dir.path(),
    );
    failure(
        &o,
        "error: s3://evals/out/metrics.parquet: cannot upload: ",
        CREDENTIALS_HINT,
    );
    let requests = proxy.requests.lock().unwrap().clone();
    let aborts: Vec<&String> = requests
        .iter()
        .filter(|r| r.starts_with("DELETE /evals/out/metrics.parquet?uploadId="))
        .collect();
    assert_eq!(aborts.len(), 1, "{requests:?}");
    assert_eq!(open_uploads(s3.port, "evals"), Vec::<String>::new());
    assert_eq!(list_keys(s3.port, "evals", "out/"), Vec::<String>::new());
    assert!(
        !requests.iter().any(|r| r.contains("run.json")),
        "{requests:?}"
    );
}

#[test]
fn a_killed_run_leaves_no_run_json() {
    let s3 = moto();
    evals_with_qa(s3.port);
    let proxy = proxy(s3.port);
    proxy.rules.lock().unwrap().hold = Some("POST /evals/out/metrics.json".into());
    let dir = tempfile::tempdir().unwrap();
    let task = examples().join("qa.yaml");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("evalscore"));
    cmd.current_dir(dir.path())
        .args(["run", task.to_str().unwrap()])
        .args([
            "--input",
            "s3://evals/qa.parquet",
            "--out",
            "s3://evals/out/",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in s3_env(&proxy.endpoint()) {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    while !proxy.held.load(Ordering::SeqCst) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never reached metrics.json"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let keys = list_keys(s3.port, "evals", "out/");
    assert!(!keys.iter().any(|k| k.ends_with("run.json")), "{keys:?}");
    assert!(keys.contains(&"out/scores.parquet".to_owned()), "{keys:?}");
    // The next run into the prefix refuses the leftovers, and `--overwrite` completes it.
    let env = s3_env(&format!("http://127.0.0.1:{}", s3.port));
    let o = qa_run(&env, "s3://evals/out/", &[], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let o = qa_run(&env, "s3://evals/out/", &["--overwrite"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(get_object(s3.port, "evals", "out/run.json").is_some());
}

#[test]
fn compressed_jsonl_and_http_inputs() {
    let s3 = moto();
    let env = s3_env(&format!("http://127.0.0.1:{}", s3.port));
    create_bucket(s3.port, "evals");
    let jsonl = std::fs::read(examples().join("qa.jsonl")).unwrap();
    let gzip = |data: &[u8]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, data).unwrap();
        gz.finish().unwrap()
    };
    let half = jsonl.len() / 2;
    put_object(s3.port, "evals", "qa.jsonl.gz", &gzip(&jsonl));
    // Two gzip members, cut in the middle of a line.
    put_object(
        s3.port,
        "evals",
        "qa.ndjson.gz",
        &[gzip(&jsonl[..half]), gzip(&jsonl[half..])].concat(),
    );
    put_object(
        s3.port,
        "evals",
        "qa.jsonl.zst",
        &zstd::encode_all(&jsonl[..], 3).unwrap(),
    );
    put_object(
        s3.port,
        "evals",
        "qa.ndjson.zst",
        &zstd::encode_all(&jsonl[..], 19).unwrap(),
    );
    put_object(s3.port, "evals", "qa.jsonl", &jsonl);
    put_object(
        s3.port,
        "evals",
        "qa.parquet",
        &std::fs::read(examples().join("qa.parquet")).unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    let local = local_run(dir.path(), "qa.yaml", &[&examples().join("qa.jsonl")]);
    let want = metric_lines(&read_parquet(&local.join("metrics.parquet")));
    let want_scores = read_parquet(&local.join("scores.parquet"));
    let task = examples().join("qa.yaml");
    let http = format!("http://127.0.0.1:{}/evals/qa.parquet", s3.port);
    for (i, (url, format, compression)) in [
        ("s3://evals/qa.jsonl.gz", "jsonl", Some("gzip")),
        ("s3://evals/qa.ndjson.gz", "jsonl", Some("gzip")),
        ("s3://evals/qa.jsonl.zst", "jsonl", Some("zstd")),
        ("s3://evals/qa.ndjson.zst", "jsonl", Some("zstd")),
        ("s3://evals/qa.jsonl", "jsonl", None),
        // moto serves objects to anonymous GETs: a plain web URL, no credentials.
        (http.as_str(), "parquet", None),
    ]
    .into_iter()
    .enumerate()
    {
        let out = dir.path().join(format!("out{i}"));
        let o = run_task(
            &env,
            task.to_str().unwrap(),
            url,
            out.to_str().unwrap(),
            &[],
            dir.path(),
        );
        assert!(o.status.success(), "{url}: {}", stderr(&o));
        assert_eq!(
            metric_lines(&read_parquet(&out.join("metrics.parquet"))),
            want,
            "{url}"
        );
        let scores = read_parquet(&out.join("scores.parquet"));
        assert_eq!(scores.columns(), want_scores.columns(), "{url}");
        let rj: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(rj["inputs"][0]["path"], url);
        assert_eq!(rj["inputs"][0]["format"], format, "{url}");
        assert_eq!(
            rj["inputs"][0]["compression"],
            serde_json::json!(compression)
        );
        assert_eq!(rj["inputs"][0]["rows"], 300, "{url}");
    }
}

#[test]
fn azure_blob_inputs_outputs_and_bad_credentials() {
    let az = azurite();
    let endpoint = format!("http://127.0.0.1:{}", az.port);
    create_container(az.port, "evals");
    let dir = tempfile::tempdir().unwrap();
    let env = az_env(&endpoint);
    let task = examples().join("classification.yaml");
    // Upload the input with evalscore itself: a local run's outputs to `az://`, then read
    // one back as an input.
    let o = run_task(
        &env,
        task.to_str().unwrap(),
        examples().join("qa.parquet").to_str().unwrap(),
        "az://evals/runs/first",
        &["--run-id", "az-1"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // scores.parquet in Azure as an input: all 300 ids came back.
    std::fs::write(
        dir.path().join("ids.yaml"),
        "definition:\n  scorers:\n    - type: string_equals\n      key: ids\n      value: \"{{ sample.id }}\"\n      ground_truth: \"{{ sample.id }}\"\n      metrics:\n        - {type: mean, field: is_correct}\n",
    )
    .unwrap();
    // The same object as an ADLS Gen2 URL (container@account).
    for (url, out) in [
        ("az://evals/runs/first/scores.parquet", "from-az"),
        (
            "abfss://evals@devstoreaccount1.dfs.core.windows.net/runs/first/scores.parquet",
            "from-abfss",
        ),
    ] {
        let o = run_task(&env, "ids.yaml", url, out, &[], dir.path());
        assert!(o.status.success(), "{url}: {}", stderr(&o));
        let m = read_parquet(&dir.path().join(out).join("metrics.parquet"));
        assert_eq!(floats(&m, "value")[0], Some(1.0), "{url}");
        assert_eq!(uints(&m, "n")[0], 300, "{url}");
    }
    let o = run_task(
        &env,
        task.to_str().unwrap(),
        examples().join("qa.parquet").to_str().unwrap(),
        "az://evals/runs/first",
        &[],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with(
        "error: the output folder `az://evals/runs/first/` already holds scores.parquet"
    ));

    // A wrong account key: access denied, exit 2, and the key is never printed.
    let wrong = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ==";
    let mut bad = env.clone();
    bad.retain(|(k, _)| *k != "AZURE_STORAGE_ACCOUNT_KEY");
    bad.push(("AZURE_STORAGE_ACCOUNT_KEY", wrong.into()));
    let o = run_task(
        &bad,
        "ids.yaml",
        "az://evals/runs/first/scores.parquet",
        "denied",
        &[],
        dir.path(),
    );
    let err = failure(
        &o,
        "error: az://evals/runs/first/scores.parquet: cannot read input: ",
        CREDENTIALS_HINT,
    );
    assert!(!err.contains(wrong) && !err.contains(AZ_KEY), "{err}");
    assert!(!dir.path().join("denied").exists());
}

/// `run.json`'s create-only PUT on both real servers: a second create of one object fails as
/// "already exists", and an overwrite replaces it.
#[test]
fn create_only_writes_refuse_an_existing_object() {
    let s3 = moto();
    create_bucket(s3.port, "evals");
    let az = azurite();
    create_container(az.port, "evals");
    let s3_opts: Vec<(String, String)> = s3_env(&format!("http://127.0.0.1:{}", s3.port))
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    // Options only (no emulator switch): the account's endpoint set as for any Azure-compatible
    // service.
    let az_opts: Vec<(String, String)> = vec![
        ("azure_storage_account_name".into(), AZ_ACCOUNT.into()),
        ("azure_storage_account_key".into(), AZ_KEY.into()),
        (
            "azure_storage_endpoint".into(),
            format!("http://127.0.0.1:{}/{AZ_ACCOUNT}", az.port),
        ),
        ("azure_allow_http".into(), "true".into()),
    ];
    for (url, opts) in [
        ("s3://evals/marker.json", &s3_opts),
        ("az://evals/marker.json", &az_opts),
    ] {
        let loc = evalscore_storage::StoreUrl::parse(url)
            .unwrap()
            .connect(opts)
            .unwrap();
        assert!(!loc.exists().unwrap());
        loc.put(b"first".to_vec(), false).unwrap();
        let e = loc.put(b"second".to_vec(), false).unwrap_err();
        assert!(e.already_exists, "{url}: {e}");
        assert_eq!(
            e.to_string(),
            format!("{url}: cannot write: it already exists")
        );
        loc.put(b"third".to_vec(), true).unwrap();
        assert_eq!(
            &loc.object().unwrap().get_range(0..5).unwrap()[..],
            b"third",
            "{url}"
        );
        loc.delete().unwrap();
        assert!(!loc.exists().unwrap());
    }
}

/// `--storage-option` overrides the environment, and no secret, whether from the environment,
/// an option or a URL, reaches an output or a message.
#[test]
fn storage_options_override_the_environment_and_secrets_are_never_shown() {
    let s3 = moto();
    evals_with_qa(s3.port);
    let dir = tempfile::tempdir().unwrap();
    // The environment points at a port nobody listens on; the options set the real endpoint
    // and the credentials.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_port = dead.local_addr().unwrap().port();
    drop(dead);
    let env = s3_env(&format!("http://127.0.0.1:{dead_port}"));
    let opt_secret = "option-secret-never-printed-0123456789";
    let endpoint = format!("aws_endpoint=http://127.0.0.1:{}", s3.port);
    let secret_opt = format!("aws_secret_access_key={opt_secret}");
    let opts = [
        "--storage-option",
        endpoint.as_str(),
        "--storage-option",
        "AWS_ACCESS_KEY_ID=from-option",
        "--storage-option",
        secret_opt.as_str(),
    ];
    let o = qa_run(&env, "s3://evals/out/", &opts, dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let mut shown = vec![String::from_utf8_lossy(&o.stdout).into_owned(), stderr(&o)];
    for k in [
        "run.json",
        "metrics.json",
        "scores.parquet",
        "metrics.parquet",
        "confusion.parquet",
    ] {
        let bytes = get_object(s3.port, "evals", &format!("out/{k}")).unwrap();
        shown.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    for text in &shown {
        assert!(
            !text.contains(opt_secret) && !text.contains(SECRET),
            "{text}"
        );
    }

    let task = examples().join("qa.yaml");
    let refused = |args: &[&str], want: &str| {
        let mut all = vec!["run", task.to_str().unwrap()];
        all.extend_from_slice(args);
        if !args.contains(&"--out") {
            all.extend(["--out", "never"]);
        }
        let o = run_with(&env, &all, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), want, "{args:?}");
        assert!(!dir.path().join("never").exists());
    };
    // A malformed option is named by its position, never by its text.
    refused(
        &[
            "--input",
            "s3://evals/qa.parquet",
            "--storage-option",
            endpoint.as_str(),
            "--storage-option",
            opt_secret,
        ],
        "error: `--storage-option` number 2 is not KEY=VALUE\nhint: write `--storage-option aws_region=eu-west-1`; see docs/storage.md for the keys\n",
    );
    // An unknown key is named, its value is not.
    let unknown = format!("aws_secret_key_typo={opt_secret}");
    refused(
        &["--input", "s3://evals/qa.parquet", "--storage-option", &unknown],
        "error: s3://evals/qa.parquet: unknown storage option `aws_secret_key_typo` for S3\nhint: the keys are object_store's configuration keys (docs/storage.md lists the common ones)\n",
    );
    // A signature in a query string, or a password in the URL, is refused and not repeated.
    let presigned = format!(
        "http://127.0.0.1:{}/evals/qa.parquet?X-Amz-Signature={opt_secret}",
        s3.port
    );
    let with_password = format!(
        "https://user:{opt_secret}@127.0.0.1:{}/evals/qa.parquet",
        s3.port
    );
    for (url, shown) in [
        (
            presigned.as_str(),
            format!("http://127.0.0.1:{}/evals/qa.parquet", s3.port),
        ),
        (
            with_password.as_str(),
            format!("https://127.0.0.1:{}/evals/qa.parquet", s3.port),
        ),
        (
            "s3://evals/qa.parquet?versionId=1",
            "s3://evals/qa.parquet".to_owned(),
        ),
    ] {
        refused(
            &["--input", url],
            &format!("error: {shown}: a URL with a query string or user credentials is not supported\nhint: give credentials through the environment or `--storage-option`, not in the URL\n"),
        );
    }
    // A web URL is an input only.
    let qa = examples().join("qa.parquet");
    refused(
        &["--input", qa.to_str().unwrap(), "--out", "https://127.0.0.1:9/out/"],
        "error: `https://127.0.0.1:9/out/`: an http(s):// URL is an input only; outputs go to object storage\nhint: use an s3://, gs://, az:// or abfss:// prefix, or a local folder, as `--out`\n",
    );
}

/// `https://` inputs over TLS (moto's certificate, made at its start and signed by nobody),
/// and `s3://` through an https endpoint: refused until `allow_invalid_certificates` says
/// to accept that certificate, then the same figures and scores as the local run.
#[test]
fn https_inputs_over_tls() {
    let s3 = moto_with(&["-s"], &[]);
    let qa = std::fs::read(examples().join("qa.parquet")).unwrap();
    tls_bucket_with(s3.port, "evals", "qa.parquet", &qa);
    let dir = tempfile::tempdir().unwrap();
    let local = local_run(dir.path(), "qa.yaml", &[&examples().join("qa.parquet")]);
    let env = s3_env(&format!("https://127.0.0.1:{}", s3.port));
    let url = format!("https://127.0.0.1:{}/evals/qa.parquet", s3.port);
    let task = examples().join("qa.yaml");
    let task = task.to_str().unwrap();
    let o = run_task(&env, task, &url, "refused", &[], dir.path());
    let err = failure(
        &o,
        &format!("error: {url}: cannot read input: "),
        NETWORK_HINT,
    );
    assert!(
        err.contains("invalid peer certificate: UnknownIssuer"),
        "{err}"
    );
    assert!(!dir.path().join("refused").exists());
    for (i, (input, option)) in [
        (url.as_str(), "allow_invalid_certificates=true"),
        (
            "s3://evals/qa.parquet",
            "aws_allow_invalid_certificates=true",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let out = format!("out{i}");
        let o = run_task(
            &env,
            task,
            input,
            &out,
            &["--storage-option", option],
            dir.path(),
        );
        assert!(o.status.success(), "{input}: {}", stderr(&o));
        let out = dir.path().join(out);
        assert_eq!(
            metric_lines(&read_parquet(&out.join("metrics.parquet"))),
            metric_lines(&read_parquet(&local.join("metrics.parquet"))),
            "{input}"
        );
        assert_eq!(
            read_parquet(&out.join("scores.parquet")).columns(),
            read_parquet(&local.join("scores.parquet")).columns(),
            "{input}"
        );
    }
}

/// S3 credentials refused by the server: moto checking signatures (after the test's own
/// three setup requests) against its users, of which the key given is none. An input is
/// refused at its first request, an output prefix at its listing, before anything is scored;
/// exit 2, the URL, the store's reason, a hint about credentials, and never the secret.
#[test]
fn s3_bad_credentials_are_refused() {
    let s3 = moto_with(&[], &[("INITIAL_NO_AUTH_ACTION_COUNT", "3")]);
    evals_with_qa(s3.port);
    let dir = tempfile::tempdir().unwrap();
    let env = s3_env(&format!("http://127.0.0.1:{}", s3.port));
    let task = examples().join("qa.yaml");
    let qa = examples().join("qa.parquet");
    for (input, out, head) in [
        (
            "s3://evals/qa.parquet",
            "local-out",
            "error: s3://evals/qa.parquet: cannot read input: access denied: ",
        ),
        (
            qa.to_str().unwrap(),
            "s3://evals/out",
            "error: s3://evals/out/: cannot list the output prefix: ",
        ),
    ] {
        let o = run_task(&env, task.to_str().unwrap(), input, out, &[], dir.path());
        let err = failure(&o, head, CREDENTIALS_HINT);
        assert!(err.contains("403 Forbidden"), "{err}");
        assert!(!dir.path().join("local-out").exists());
    }
}
