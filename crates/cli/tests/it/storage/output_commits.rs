//! Output commits: refused or overwritten, a failed upload removed, a killed run, create-only PUT.

use super::*;
use evalscore_test_support::wait;
use std::sync::atomic::Ordering;
use std::time::Duration;

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
    succeeded(qa_run(
        &env,
        "s3://evals/out",
        &["--run-id", "first"],
        dir.path(),
    ));
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
    succeeded(qa_run(
        &env,
        "s3://evals/out",
        &["--run-id", "second", "--overwrite"],
        dir.path(),
    ));
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

/// moto holding the bucket `evals` with the example `qa.parquet`, a proxy in front of it,
/// and a temporary folder.
fn evals_behind_a_proxy() -> (Server, Proxy, tempfile::TempDir) {
    let s3 = moto();
    evals_with_qa(s3.port);
    let proxy = proxy(s3.port);
    (s3, proxy, tempfile::tempdir().unwrap())
}

/// Runs qa.yaml through `proxy` into `s3://evals/out/`, which fails with `head` and the
/// credentials hint.
fn upload_fails(proxy: &Proxy, cwd: &Path, head: &str) {
    let o = qa_run(&s3_env(&proxy.endpoint()), "s3://evals/out/", &[], cwd);
    failure(&o, head, CREDENTIALS_HINT);
}

/// Checks that none of the `requests` a proxy saw touched a run.json.
fn assert_no_run_json(requests: &[String]) {
    assert!(
        !requests.iter().any(|r| r.contains("run.json")),
        "{requests:?}"
    );
}

#[test]
fn a_failed_upload_removes_what_it_uploaded_and_writes_no_run_json() {
    let (s3, proxy, dir) = evals_behind_a_proxy();
    // The upload of metrics.json (a multipart upload starts with a POST), after the other three.
    proxy.rules.lock().unwrap().forbid = Some("POST /evals/out/metrics.json".into());
    upload_fails(
        &proxy,
        dir.path(),
        "error: s3://evals/out/metrics.json: cannot start the upload: ",
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
    assert_no_run_json(&requests);

    // A part refused in the middle of a multipart upload: that upload is aborted, so no
    // part of it stays stored, and the files uploaded before it are deleted.
    proxy.requests.lock().unwrap().clear();
    proxy.rules.lock().unwrap().forbid = Some("PUT /evals/out/metrics.parquet?partNumber=".into());
    upload_fails(
        &proxy,
        dir.path(),
        "error: s3://evals/out/metrics.parquet: cannot upload: ",
    );
    let requests = proxy.requests.lock().unwrap().clone();
    let aborts: Vec<&String> = requests
        .iter()
        .filter(|r| r.starts_with("DELETE /evals/out/metrics.parquet?uploadId="))
        .collect();
    assert_eq!(aborts.len(), 1, "{requests:?}");
    assert_eq!(open_uploads(s3.port, "evals"), Vec::<String>::new());
    assert_eq!(list_keys(s3.port, "evals", "out/"), Vec::<String>::new());
    assert_no_run_json(&requests);
}

#[test]
fn a_killed_run_leaves_no_run_json() {
    let (s3, proxy, dir) = evals_behind_a_proxy();
    proxy.rules.lock().unwrap().hold = Some("POST /evals/out/metrics.json".into());
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("evalscore"));
    cmd.current_dir(dir.path())
        .arg("run")
        .arg(examples().join("qa.yaml"))
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
    wait::until(
        Duration::from_secs(60),
        "never reached metrics.json",
        || proxy.held.load(Ordering::SeqCst),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let keys = list_keys(s3.port, "evals", "out/");
    assert!(!keys.iter().any(|k| k.ends_with("run.json")), "{keys:?}");
    assert!(keys.contains(&"out/scores.parquet".to_owned()), "{keys:?}");
    // The next run into the prefix refuses the leftovers, and `--overwrite` completes it.
    let env = s3_env(&format!("http://127.0.0.1:{}", s3.port));
    let o = qa_run(&env, "s3://evals/out/", &[], dir.path());
    assert_eq!(o.status.code(), Some(2));
    succeeded(qa_run(
        &env,
        "s3://evals/out/",
        &["--overwrite"],
        dir.path(),
    ));
    assert!(get_object(s3.port, "evals", "out/run.json").is_some());
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

/// An `--out` prefix inside the input prefix: the second run leaves the first run's outputs
/// out of its inputs, with a warning, and scores the same rows.
#[test]
fn the_runs_own_outputs_in_the_input_prefix_are_not_its_inputs() {
    let s3 = moto();
    evals_with_qa(s3.port);
    let env = s3_env(&format!("http://127.0.0.1:{}", s3.port));
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["--overwrite"];
        args.extend_from_slice(extra);
        run_task(
            &env,
            "qa.yaml",
            "s3://evals/",
            "s3://evals/out/",
            &args,
            dir.path(),
        )
    };
    succeeded(run(&["--recursive", "--quiet"]));
    let second = run(&["--recursive"]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert_eq!(
        stderr(&second),
        "warning: left out 3 files of this run's own output folder `s3://evals/out/` (scores.parquet, metrics.parquet, confusion.parquet): a run's outputs are not read as its input\n"
    );
    let rows = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.contains("rows scored"))
            .map(|l| l.split(" rows").next().unwrap_or_default().to_owned())
    };
    assert_eq!(rows(&second), Some("300".to_owned()));
}
