//! Inputs beyond S3 Parquet: compressed JSONL, http(s):// URLs (also over TLS), and Azure Blob.

use super::*;

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
        let o = run_task(&env, "qa.yaml", url, out.to_str().unwrap(), &[], dir.path());
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
    // Upload the input with evalscore itself: a local run's outputs to `az://`, then read
    // one back as an input.
    succeeded(run_task(
        &env,
        "classification.yaml",
        examples().join("qa.parquet").to_str().unwrap(),
        "az://evals/runs/first",
        &["--run-id", "az-1"],
        dir.path(),
    ));
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
        "classification.yaml",
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
    let task = "qa.yaml";
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
