//! A hostile or busy output folder: symlinks at final names are refused or replaced, never
//! followed; one run at a time per folder.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use evalscore_test_support::wait;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn run(out: &Path, extra: &[&str]) -> Output {
    run_task(
        &examples().join("qa.yaml"),
        &examples().join("qa.parquet"),
        out,
        extra,
    )
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

    assert_eq!(
        stderr(&failed(run(&out, &[]), 2)),
        format!(
            "error: the output folder `{}` already holds scores.parquet, run.json\nhint: pass `--overwrite` to replace them, or choose another `--out` folder\n",
            out.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!dir.path().join("nowhere").exists());
    assert_eq!(files_in(&out), ["run.json", "scores.parquet"]);

    succeeded(run(&out, &["--overwrite"]));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!dir.path().join("nowhere").exists());
    for name in ["scores.parquet", "run.json"] {
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.file_type().is_file(), "{name} is a regular file now");
    }
    assert_eq!(read_parquet(&out.join("scores.parquet")).num_rows(), 300);
    assert_eq!(files_in(&out), OUTPUT_FILES);
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
    assert_eq!(
        stderr(&failed(run(&out, &[]), 2)),
        format!(
            "error: the output folder `{}` is in use by evalscore process 4242\nhint: wait for it to finish, or choose another `--out` folder\n",
            out.display()
        )
    );
    assert_eq!(files_in(&out), [".evalscore.lock"]);
    drop(lock);
    // Released: the next run goes through and leaves no lock file behind.
    succeeded(run(&out, &["--overwrite"]));
    assert!(!files_in(&out).contains(&".evalscore.lock".to_owned()));
}

fn stderr_of(args: &[&str]) -> (Option<i32>, String) {
    code_and_stderr(&evalscore().args(args).output().unwrap())
}

fn code_and_stderr(o: &Output) -> (Option<i32>, String) {
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
    evalscore_test_support::special_files::mkfifo(&fifo);
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
    let job = Job::new(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct, group_by: [\"a.b\", \"a b\"]}\n",
        "{\"a.b\": \"x\", \"a b\": \"y\", \"answer\": \"yes\", \"output\": \"yes\"}\n",
    );
    let (dir, task, out) = (job.dir.path(), &job.task, &job.out);
    let (code, err) = code_and_stderr(&job.run(&[]));
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!("error: task file `{}`, line 6, column 11: group-by columns `a.b` and `a b` would both be named `a_b` in metrics.parquet\nhint: group by one of them, or rename a column so that their names differ in letters, digits or _\n", task.display())
    );
    std::fs::write(task, QA_TASK).unwrap();
    let (code, err) = code_and_stderr(&job.run(&["--keep", "a.b,a b"]));
    assert_eq!(code, Some(2));
    assert_starts(
        &err,
        "error: kept columns `a.b` and `a b` would both be named `a_b` in scores.parquet\n",
    );

    // A Parquet file with two columns named `answer`.
    let pq = dir.join("dup.parquet");
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
    let (code, err) = code_and_stderr(&run_task(task, &pq, out, &[]));
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
    // 20,000 rows, each rendering a loop of 1,500 steps: seconds of work.
    let rows = jsonl(20_000, |i| {
        format!("{{\"id\": {i}, \"answer\": \"yes\", \"output\": \"yes\"}}")
    });
    let job = Job::new(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{% for i in range(1500) %}{% endfor %}yes\"\n",
        &rows,
    );
    let (dir, task, input) = (&job.dir, &job.task, &job.input);
    for (sig, code, name) in [
        ("-INT", 130, "SIGINT"),
        ("-TERM", 143, "SIGTERM"),
        ("-HUP", 129, "SIGHUP"),
    ] {
        let out = dir.path().join(format!("out{code}"));
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("evalscore"))
            .arg("run")
            .arg(task)
            .arg("--input")
            .arg(input)
            .arg("--out")
            .arg(&out)
            .args(["--threads", "2"])
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the run has its temporary files, then signal it.
        let has_temporaries = || files_in(&out).iter().any(|f| f.ends_with(".tmp"));
        wait::until(
            Duration::from_secs(30),
            "no temporary files",
            has_temporaries,
        );
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
    let long = "a".repeat(100_000);
    let job = Job::new(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: frequency, field: value}\n        - {type: multiclass-classification, field_gt: ground_truth, field_pred: value}\n",
        &jsonl(300, |i| {
            let output = if i == 0 {
                long.clone()
            } else {
                format!("label{i}")
            };
            format!(
                "{{\"id\": {i}, \"answer\": \"class{}\", \"output\": \"{output}\"}}",
                i % 30
            )
        }),
    );
    let stdout = stdout(&succeeded(job.run(&[])));
    let cut = format!("{}…", "a".repeat(60));
    assert!(stdout.contains(&cut), "the long label is cut");
    assert!(!stdout.contains(&"a".repeat(61)));
    let metrics = read_parquet(&job.out.join("metrics.parquet"));
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
    let job = Job::new(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: frequency, field: value}\n",
        &jsonl(100_001, |i| {
            format!("{{\"answer\": \"a\", \"output\": \"v{i}\"}}")
        }),
    );
    let (code, err) = code_and_stderr(&job.run(&[]));
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!("error: {}: scorer `string_equals`: metric `frequency`: the field has more than 100000 distinct values, the limit of a frequency metric\nhint: metric states are bounded (docs/errors-and-limits.md, Limits): fold a field with fewer distinct values, or group by fewer columns\n", job.input.display())
    );
    assert_eq!(files_in(&job.out), Vec::<String>::new());
}
