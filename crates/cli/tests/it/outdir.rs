//! A hostile or busy output folder: symlinks at final names are refused or replaced, never
//! followed; one run at a time per folder.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::path::Path;
use std::process::Output;

fn run(out: &Path, extra: &[&str]) -> Output {
    evalscore()
        .arg("run")
        .arg(examples().join("qa.yaml"))
        .arg("--input")
        .arg(examples().join("qa.parquet"))
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn symlinks_at_final_names_are_refused_and_replaced_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, out.join("scores.parquet")).unwrap();
    // A dangling symlink counts as present too.
    std::os::unix::fs::symlink(dir.path().join("nowhere"), out.join("run.json")).unwrap();

    let o = run(&out, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: the output folder `{}` already holds scores.parquet, run.json\nhint: pass `--overwrite` to replace them, or choose another `--out` folder\n",
            out.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!dir.path().join("nowhere").exists());
    assert_eq!(files_in(&out), ["run.json", "scores.parquet"]);

    let o = run(&out, &["--overwrite"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!dir.path().join("nowhere").exists());
    for name in ["scores.parquet", "run.json"] {
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.file_type().is_file(), "{name} is a regular file now");
    }
    assert_eq!(read_parquet(&out.join("scores.parquet")).num_rows(), 300);
    assert_eq!(
        files_in(&out),
        [
            "confusion.parquet",
            "metrics.json",
            "metrics.parquet",
            "run.json",
            "scores.parquet"
        ]
    );
}

#[test]
fn a_second_run_into_a_busy_folder_fails_at_once_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // This test process plays the running evalscore: it holds the folder's lock.
    let lock = std::fs::File::create(out.join(".evalscore.lock")).unwrap();
    lock.try_lock().unwrap();
    std::fs::write(out.join(".evalscore.lock"), "4242").unwrap();
    let o = run(&out, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: the output folder `{}` is in use by evalscore process 4242\nhint: wait for it to finish, or choose another `--out` folder\n",
            out.display()
        )
    );
    assert_eq!(files_in(&out), [".evalscore.lock"]);
    drop(lock);
    // Released: the next run goes through and leaves no lock file behind.
    let o = run(&out, &["--overwrite"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!files_in(&out).contains(&".evalscore.lock".to_owned()));
}

fn stderr_of(args: &[&str]) -> (Option<i32>, String) {
    let o = evalscore().args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A FIFO would block and `/dev/zero` never end: inputs and task files must be regular files
/// (or a directory of inputs), refused at once otherwise.
#[cfg(unix)]
#[test]
fn special_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let task = examples().join("qa.yaml");
    let task = task.to_str().unwrap();
    let qa = examples().join("qa.parquet");
    let qa = qa.to_str().unwrap();
    let fifo = dir.path().join("in.jsonl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.to_str().unwrap();
    let started = std::time::Instant::now();
    assert_eq!(
        stderr_of(&["run", task, "--input", fifo, "--out", out]),
        (
            Some(2),
            format!("error: {fifo}: not a regular file or a directory (a FIFO)\nhint: inputs are read whole and more than once: copy a stream to a file first\n")
        )
    );
    assert_eq!(
        stderr_of(&["run", task, "--input", "/dev/zero", "--out", out]),
        (
            Some(2),
            "error: /dev/zero: not a regular file or a directory (a character device)\nhint: inputs are read whole and more than once: copy a stream to a file first\n".to_owned()
        )
    );
    assert_eq!(
        stderr_of(&["run", "/dev/zero", "--input", qa, "--out", out]),
        (
            Some(2),
            "error: task file `/dev/zero` is not a regular file (a character device)\nhint: point TASK.yaml at a task file\n".to_owned()
        )
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(!Path::new(out).exists());
}

#[test]
fn threads_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for n in ["0", "1025", "4611686018427387904"] {
        let (code, err) = stderr_of(&[
            "run",
            examples().join("qa.yaml").to_str().unwrap(),
            "--input",
            examples().join("qa.parquet").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            n,
        ]);
        assert_eq!(code, Some(2));
        assert!(
            err.starts_with(&format!(
                "error: invalid value '{n}' for '--threads <N>': {n} is not in 1..=1024"
            )),
            "{err}"
        );
    }
    assert!(!out.exists());
}

/// Names that collide once made warehouse-safe are an error naming both; so are two input
/// columns of one name.
#[test]
fn colliding_and_duplicate_column_names_are_errors() {
    use arrow::array::{ArrayRef, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"a.b\": \"x\", \"a b\": \"y\", \"answer\": \"yes\", \"output\": \"yes\"}\n",
    )
    .unwrap();
    let task = dir.path().join("t.yaml");
    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, group_by: [\"a.b\", \"a b\"]}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "run",
            task.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let a = args(&[]);
    let (code, err) = stderr_of(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!("error: task file `{}`, line 6, column 11: group-by columns `a.b` and `a b` would both be named `a_b` in metrics.parquet\nhint: group by one of them, or rename a column so that their names differ in letters, digits or _\n", task.display())
    );
    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n",
    )
    .unwrap();
    let a = args(&["--keep", "a.b,a b"]);
    let (code, err) = stderr_of(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with(
            "error: kept columns `a.b` and `a b` would both be named `a_b` in scores.parquet\n"
        ),
        "{err}"
    );

    // A Parquet file with two columns named `answer`.
    let pq = dir.path().join("dup.parquet");
    let schema = Arc::new(Schema::new(vec![
        Field::new("answer", DataType::Utf8, true),
        Field::new("answer", DataType::Utf8, true),
        Field::new("output", DataType::Utf8, true),
    ]));
    let col: ArrayRef = Arc::new(StringArray::from(vec!["yes"]));
    let batch =
        RecordBatch::try_new(Arc::clone(&schema), vec![col.clone(), col.clone(), col]).unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&pq).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let (code, err) = stderr_of(&[
        "run",
        task.to_str().unwrap(),
        "--input",
        pq.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!("error: the input (`{}`) has two columns named `answer`\nhint: rename one of them in the export\n", pq.display())
    );
    assert!(!out.exists());
}

/// SIGINT, SIGTERM and SIGHUP stop a run between batches: one `error:` line, exit
/// 128 + the signal, and nothing left in the folder (no output, no temporary, no lock).
#[cfg(unix)]
#[test]
fn signals_stop_the_run_and_clean_up() {
    let dir = tempfile::tempdir().unwrap();
    // 20,000 rows, each rendering a loop of 1,500 steps: seconds of work.
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!(
            "{{\"id\": {i}, \"answer\": \"yes\", \"output\": \"yes\"}}\n"
        ));
    }
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, text).unwrap();
    let task = dir.path().join("t.yaml");
    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{% for i in range(1500) %}{% endfor %}yes\"\n",
    )
    .unwrap();
    for (sig, code, name) in [
        ("-INT", 130, "SIGINT"),
        ("-TERM", 143, "SIGTERM"),
        ("-HUP", 129, "SIGHUP"),
    ] {
        let out = dir.path().join(format!("out{code}"));
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("evalscore"))
            .args([
                "run",
                task.to_str().unwrap(),
                "--input",
                input.to_str().unwrap(),
            ])
            .arg("--out")
            .arg(&out)
            .args(["--threads", "2"])
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the run has its temporary files, then signal it.
        let started = std::time::Instant::now();
        while !files_in(&out).iter().any(|f| f.ends_with(".tmp")) {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "no temporary files"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let pid = child.id().to_string();
        assert!(std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{name}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!("error: interrupted by {name}; no output was written\n")
        );
        assert!(o.stdout.is_empty());
        assert_eq!(files_in(&out), Vec::<String>::new(), "{name}");
    }
}

/// The stdout summary stays readable and linear: long labels cut, at most 200 metric rows,
/// no matrix of more than 20 classes; the files keep everything.
#[test]
fn the_summary_is_cut_to_a_readable_size() {
    let dir = tempfile::tempdir().unwrap();
    let long = "a".repeat(100_000);
    let mut text = String::new();
    for i in 0..300 {
        let output = if i == 0 {
            long.clone()
        } else {
            format!("label{i}")
        };
        text.push_str(&format!(
            "{{\"id\": {i}, \"answer\": \"class{}\", \"output\": \"{output}\"}}\n",
            i % 30
        ));
    }
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, text).unwrap();
    let task = dir.path().join("t.yaml");
    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: frequency, field: value}\n        - {type: multiclass-classification, field_gt: ground_truth, field_pred: value}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = evalscore()
        .args([
            "run",
            task.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8(o.stdout).unwrap();
    let cut = format!("{}…", "a".repeat(60));
    assert!(stdout.contains(&cut), "the long label is cut");
    assert!(!stdout.contains(&"a".repeat(61)));
    let metrics = read_parquet(&out.join("metrics.parquet"));
    let shown = 200;
    assert!(
        stdout.contains(&format!(
            "... {} more rows in metrics.parquet and metrics.json\n",
            metrics.num_rows() - shown
        )),
        "{stdout}"
    );
    assert!(stdout.contains("\nconfusion matrix of string_equals / multiclass-classification\n330 classes: too many to print; see confusion.parquet\n"), "{stdout}");
    // The files keep the whole label.
    assert!(strings(&metrics, "label")
        .iter()
        .flatten()
        .any(|l| *l == long));
    assert!(stdout.len() < 40_000, "{} bytes", stdout.len());
}

/// A frequency over more distinct values than its limit stops with an error naming the
/// file, the scorer and the metric, and no output.
#[test]
fn metric_limits_are_errors_naming_file_scorer_and_metric() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..100_001 {
        text.push_str(&format!("{{\"answer\": \"a\", \"output\": \"v{i}\"}}\n"));
    }
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, text).unwrap();
    let task = dir.path().join("t.yaml");
    std::fs::write(
        &task,
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: frequency, field: value}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, err) = stderr_of(&[
        "run",
        task.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!("error: {}: scorer `string_equals`: metric `frequency`: the field has more than 100000 distinct values, the limit of a frequency metric\nhint: metric states are bounded (docs/errors-and-limits.md, Limits): fold a field with fewer distinct values, or group by fewer columns\n", input.display())
    );
    assert_eq!(files_in(&out), Vec::<String>::new());
}
