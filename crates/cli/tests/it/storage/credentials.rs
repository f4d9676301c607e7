//! `--storage-option` over the environment, secrets never shown, and S3 credentials refused.

use super::*;

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
    let o = succeeded(qa_run(&env, "s3://evals/out/", &opts, dir.path()));
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
        let o = run_task(&env, "qa.yaml", input, out, &[], dir.path());
        let err = failure(&o, head, CREDENTIALS_HINT);
        assert!(err.contains("403 Forbidden"), "{err}");
        assert!(!dir.path().join("local-out").exists());
    }
}
