//! Object storage inputs and outputs against real servers started here: moto (S3) and
//! azurite (Azure Blob), installed by `scripts/setup/storage-servers.sh`. A counting,
//! fault-injecting proxy sits in front of them where a test needs bytes counted, connections
//! dropped, a request refused or held.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::RecordBatch;
use evalscore_test_support::stores::*;
use std::path::Path;

mod backends;
mod credentials;
mod delta_tables;
mod output_commits;
mod ranged_reads;
mod shared_judge_cache;
mod small_objects;

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
    succeeded(c.arg("--out").arg(&out).output().unwrap());
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

    let o = succeeded(run_task(
        &env,
        "qa.yaml",
        "s3://evals/nightly/",
        "s3://evals/out/run_date=d1/",
        &["--run-id", "nightly-1"],
        dir.path(),
    ));
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
    let inputs = input_paths(&run_json);
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
    succeeded(run_task(
        &env,
        "classification.yaml",
        "s3://evals/nightly/part-0.parquet",
        "s3://evals/one/",
        &[],
        dir.path(),
    ));
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
    let dir = tempfile::tempdir().unwrap();
    let s3 = moto();
    let endpoint = format!("http://127.0.0.1:{}", s3.port);
    create_bucket(s3.port, "evals");
    let out = dir.path().join("out");
    for (url, what) in [
        ("s3://evals/nope.parquet", "not found"),
        ("s3://no-such-bucket/x.parquet", "not found"),
    ] {
        let o = run_task(
            &s3_env(&endpoint),
            "qa.yaml",
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
        let o = run_task(&s3_env(&endpoint), "qa.yaml", input, out, &[], dir.path());
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
        "qa.yaml",
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

fn qa_run(env: &[(&str, String)], out: &str, extra: &[&str], cwd: &Path) -> std::process::Output {
    run_task(env, "qa.yaml", "s3://evals/qa.parquet", out, extra, cwd)
}
