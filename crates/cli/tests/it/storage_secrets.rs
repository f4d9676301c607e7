//! Object storage credentials never shown, on any path that fails (URLs the parser refuses,
//! outputs that cannot be URLs, a store that cannot be set up), and a `run.json` PUT whose
//! reply is lost after the store committed it.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use evalscore_test_support::stores::*;
use std::path::Path;

const SECRET: &str = "pw-SECRET-never-shown";

fn evalscore_in(dir: &Path, env: &[(&str, String)], args: &[&str]) -> std::process::Output {
    let mut c = evalscore();
    c.current_dir(dir).env("AWS_EC2_METADATA_DISABLED", "true");
    for (k, v) in env {
        c.env(k, v);
    }
    c.args(args).output().unwrap()
}

/// `evalscore run qa.yaml --input s3://evals/qa.parquet --out OUT` against the S3 server at
/// `endpoint`.
fn qa_run_to(dir: &Path, endpoint: &str, out: &str) -> std::process::Output {
    let qa = examples().join("qa.yaml");
    let args = [
        "run",
        qa.to_str().unwrap(),
        "--input",
        "s3://evals/qa.parquet",
        "--out",
        out,
    ];
    evalscore_in(dir, &s3_env(endpoint), &args)
}

/// A failure (exit 2) whose stderr is `want` and holds no secret.
fn refused(o: &std::process::Output, want: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains(SECRET) && !out.contains(SECRET), "{err}{out}");
    assert_eq!(err, want);
}

/// Credentials in a URL are never repeated: not when the URL parser refuses it (a bad port,
/// a space in the host), nor where a URL cannot be an output (`--out https://`, `judge
/// export --out`, `compare`'s and `report`'s folders and files).
#[test]
fn credentials_in_urls_are_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let qa = examples().join("qa.yaml");
    let qa = qa.to_str().unwrap();
    let input = examples().join("qa.parquet");
    let input = input.to_str().unwrap();
    let bad_port = format!("s3://AKIA:{SECRET}@evals:99999/qa.parquet");
    let o = evalscore_in(d, &[], &["run", qa, "--input", &bad_port, "--out", "out"]);
    refused(
        &o,
        "error: s3://AKIA@evals:99999/qa.parquet: not a valid URL: invalid port number\n",
    );
    let space = format!("s3://user:{SECRET}@ev als/qa.parquet");
    let o = evalscore_in(d, &[], &["run", qa, "--input", &space, "--out", "out"]);
    refused(
        &o,
        "error: s3://user@ev als/qa.parquet: not a valid URL: invalid domain character\n",
    );
    let out = format!("s3://AKIA:{SECRET}@evals:99999/out/");
    let o = evalscore_in(d, &[], &["run", qa, "--input", input, "--out", &out]);
    refused(
        &o,
        "error: s3://AKIA@evals:99999/out/: not a valid URL: invalid port number\n",
    );
    let web = format!("https://user:{SECRET}@h.example/out/");
    let o = evalscore_in(d, &[], &["run", qa, "--input", input, "--out", &web]);
    refused(
        &o,
        "error: `https://h.example/out/`: an http(s):// URL is an input only; outputs go to object storage\nhint: use an s3://, gs://, az:// or abfss:// prefix, or a local folder, as `--out`\n",
    );
    assert!(!d.join("out").exists());

    // Local-only outputs.
    std::fs::write(
        d.join("judge.yaml"),
        "models:\n  judge:\n    base_url: http://127.0.0.1:9/v1\n    model: m\ndefinition:\n  scorers:\n    - type: model_graded_security\n      key: sec\n      model_key: judge\n",
    )
    .unwrap();
    let requests = format!("s3://AKIA:{SECRET}@evals/requests.jsonl");
    let o = evalscore_in(
        d,
        &[],
        &[
            "judge",
            "export",
            "judge.yaml",
            "--input",
            input,
            "--out",
            &requests,
        ],
    );
    let local_only = |url: &str| {
        format!("error: `{url}` is an object storage URL; this command writes to local files only\nhint: write to a local path, or use `evalscore run`, whose `--out` may be an s3://, gs://, az:// or abfss:// prefix\n")
    };
    refused(&o, &local_only("s3://AKIA@evals/requests.jsonl"));
    let o = evalscore_in(d, &[], &["run", qa, "--input", input, "--out", "run1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let compare_out = format!("gs://AKIA:{SECRET}@evals/cmp/");
    let o = evalscore_in(d, &[], &["compare", "run1", "run1", "--out", &compare_out]);
    refused(&o, &local_only("gs://AKIA@evals/cmp/"));
    let remote_run = format!("s3://AKIA:{SECRET}@evals/run1/");
    let no_run = "error: the base run folder `s3://AKIA@evals/run1/` does not exist\nhint: pass the `--out` folder of an `evalscore run`\n";
    let o = evalscore_in(d, &[], &["compare", &remote_run, "run1", "--out", "cmp"]);
    refused(&o, no_run);
    let report = format!("az://AKIA:{SECRET}@evals/r/report.html");
    let o = evalscore_in(d, &[], &["report", "run1", "-o", &report]);
    refused(&o, &local_only("az://AKIA@evals/r"));
    // A report of a run folder that is a URL, or with one as its baseline.
    for args in [
        vec!["report", remote_run.as_str(), "-o", "r.html"],
        vec![
            "report",
            "run1",
            "--baseline",
            remote_run.as_str(),
            "-o",
            "r.html",
        ],
    ] {
        let o = evalscore_in(d, &[], &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(!err.contains(SECRET), "{err}");
        assert!(
            err.contains(" run folder `s3://AKIA@evals/run1/` does not exist\n"),
            "{err}"
        );
    }
}

/// `GOOGLE_APPLICATION_CREDENTIALS` holding the service account's JSON itself (a fake one,
/// with a fake private key) instead of its file's path: the store cannot be set up, and the
/// message shows none of the JSON.
#[test]
fn a_service_account_json_in_the_environment_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let json = format!(
        r#"{{"type": "service_account", "project_id": "p", "private_key_id": "k-{SECRET}", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE{SECRET}\n-----END PRIVATE KEY-----\n", "client_email": "x@p.iam.gserviceaccount.com"}}"#
    );
    let qa = examples().join("qa.yaml");
    let o = evalscore_in(
        dir.path(),
        &[("GOOGLE_APPLICATION_CREDENTIALS", json)],
        &[
            "run",
            qa.to_str().unwrap(),
            "--input",
            "gs://evals/qa.parquet",
            "--out",
            "out",
        ],
    );
    refused(
        &o,
        "error: gs://evals/qa.parquet: cannot set up the store: Generic GCS error: Unable to open service account file from <redacted>: No such file or directory (os error 2)\nhint: check the URL and the storage settings (environment variables and `--storage-option`)\n",
    );
}

/// An endpoint holding a password (in the environment or a `--storage-option`) that cannot
/// be reached: the failed request's URL is shown without it.
#[test]
fn an_endpoint_password_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let qa = examples().join("qa.yaml");
    let qa = qa.to_str().unwrap();
    // Nothing listens on port 1.
    let endpoint = format!("http://admin:{SECRET}@127.0.0.1:1");
    let env = s3_env(&endpoint);
    let option = format!("aws_endpoint={endpoint}");
    for (env, extra) in [
        (env, vec![]),
        (
            s3_env("http://127.0.0.1:2"),
            vec!["--storage-option", option.as_str()],
        ),
    ] {
        let mut args = vec!["run", qa, "--input", "s3://evals/order/", "--out", "out"];
        args.extend(extra);
        let o = evalscore_in(dir.path(), &env, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(!err.contains(SECRET), "{err}");
        assert!(
            err.starts_with("error: s3://evals/order/: cannot list the prefix: ")
                && err.contains(" GET http://admin@127.0.0.1:1/evals?"),
            "{err}"
        );
    }
}

/// The reply to the `run.json` PUT is lost after the store committed it (the connection cut;
/// a gateway's 503, retried into a 412 against our own `run.json`): the run is checked
/// against the object, succeeds, and leaves its complete set, never a `run.json` without its
/// data nor a claim that another run finished into the prefix.
#[test]
fn a_lost_reply_to_the_run_json_put_is_checked_and_the_run_succeeds() {
    let s3 = moto();
    create_bucket(s3.port, "evals");
    put_object(
        s3.port,
        "evals",
        "qa.parquet",
        &std::fs::read(examples().join("qa.parquet")).unwrap(),
    );
    let proxy = proxy(s3.port);
    let dir = tempfile::tempdir().unwrap();
    for (out, how) in [("cut", Lost::Cut), ("unavailable", Lost::Unavailable)] {
        proxy.rules.lock().unwrap().lose_reply = Some((format!("PUT /evals/{out}/run.json "), how));
        let o = qa_run_to(dir.path(), &proxy.endpoint(), &format!("s3://evals/{out}/"));
        assert!(
            o.status.success(),
            "{how:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(proxy.rules.lock().unwrap().lose_reply.is_none());
        let keys: Vec<String> = [
            "confusion.parquet",
            "metrics.json",
            "metrics.parquet",
            "run.json",
            "scores.parquet",
        ]
        .iter()
        .map(|f| format!("{out}/{f}"))
        .collect();
        assert_eq!(list_keys(s3.port, "evals", &format!("{out}/")), keys);
    }

    // The reply lost and the look at the object refused too: whether run.json was written is
    // unknown (here it was), so the data files uploaded before it stay beside it.
    {
        let mut rules = proxy.rules.lock().unwrap();
        rules.lose_reply = Some(("PUT /evals/unknown/run.json ".into(), Lost::Cut));
        rules.forbid = Some("HEAD /evals/unknown/run.json ".into());
    }
    let o = qa_run_to(dir.path(), &proxy.endpoint(), "s3://evals/unknown/");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: s3://evals/unknown/run.json: cannot write: "),
        "{err}"
    );
    assert!(
        err.ends_with("\nhint: whether `run.json` was written could not be checked, so the files uploaded before it were left in place; check the prefix, and run again with `--overwrite`\n"),
        "{err}"
    );
    let keys = list_keys(s3.port, "evals", "unknown/");
    assert_eq!(keys.len(), 5, "{keys:?}");
}
