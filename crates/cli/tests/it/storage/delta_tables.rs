//! `run --format delta` into an S3 prefix on moto: appends from two processes at once both
//! commit (the log entries are written create-only), and `compare` reads the runs back.

use super::*;

#[test]
fn two_processes_append_to_s3_tables_at_once_and_compare_reads_them_back() {
    let s3 = moto();
    let endpoint = format!("http://127.0.0.1:{}", s3.port);
    evals_with_qa(s3.port);
    let env = s3_env(&endpoint);
    let dir = tempfile::tempdir().unwrap();
    let root = "s3://evals/lake";
    for round in 0..2 {
        let spawn = |id: String| {
            let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("evalscore"));
            c.env("AWS_EC2_METADATA_DISABLED", "true");
            for (k, v) in &env {
                c.env(k, v);
            }
            c.current_dir(dir.path())
                .arg("run")
                .arg(examples().join("qa.yaml"))
                .args([
                    "--input",
                    "s3://evals/qa.parquet",
                    "--out",
                    root,
                    "--format",
                    "delta",
                ])
                .args(["--quiet", "--run-id", &id, "--label", "model=m1"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(format!("a{round}")), spawn(format!("b{round}")));
        for child in [a, b] {
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(!String::from_utf8_lossy(&o.stderr).contains(SECRET));
        }
    }
    // Each table: a create and three appends, in one log.
    for table in ["scores", "metrics", "confusion", "runs"] {
        let log: Vec<String> = list_keys(s3.port, "evals", &format!("lake/{table}/_delta_log/"))
            .into_iter()
            .filter(|k| k.ends_with(".json"))
            .collect();
        assert_eq!(log.len(), 4, "{table}: {log:?}");
        let data = list_keys(s3.port, "evals", &format!("lake/{table}/run_id="));
        assert_eq!(data.len(), 4, "{table}: {data:?}");
    }
    let o = succeeded(run_with(
        &env,
        &[
            "compare", root, "--base", "a0", "--new", "b1", "--out", "cmp",
        ],
        dir.path(),
    ));
    assert!(
        stdout(&o).contains("300 rows in base, 300 in new; 0 only in base, 0 only in new"),
        "{}",
        stdout(&o)
    );
    // A rerun of a listed run id is refused.
    let o = run_task(
        &env,
        "qa.yaml",
        "s3://evals/qa.parquet",
        root,
        &["--format", "delta", "--run-id", "a0"],
        dir.path(),
    );
    failure(
        &o,
        "error: `s3://evals/lake`: run `a0` is already in the `runs` table\n",
        "pass `--overwrite` to replace that run's rows, or give another `--run-id`",
    );
}
