//! Faults: a run killed with SIGKILL at random points, a full disk, a panic in a worker.
//! In every case the output folder holds either nothing new or the five finished files.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use crate::common::*;
use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

/// splitmix64: a fixed-seed PRNG, so the kill delays are the same on every run of the test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `rows` rows of (id, answer, output) in row groups of `group` rows. Ids are random hex so
/// that scores.parquet does not compress to nothing.
fn write_input(path: &Path, rows: usize, group: usize) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("answer", DataType::Utf8, true),
        Field::new("output", DataType::Utf8, true),
    ]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        Arc::clone(&schema),
        Some(props),
    )
    .unwrap();
    let mut rng = Rng(7);
    let mut start = 0;
    while start < rows {
        let n = group.min(rows - start);
        let ids: Vec<String> = (0..n).map(|_| format!("{:016x}", rng.next())).collect();
        let answers: Vec<String> = (0..n).map(|i| format!("{}", (start + i) % 5)).collect();
        let outputs: Vec<String> = (0..n).map(|_| format!("{}", rng.next() % 5)).collect();
        let b = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(StringArray::from(ids)) as ArrayRef,
                Arc::new(StringArray::from(answers)),
                Arc::new(StringArray::from(outputs)),
            ],
        )
        .unwrap();
        w.write(&b).unwrap();
        start += n;
    }
    w.close().unwrap();
}

/// A task that renders a template per row, so scoring takes a while.
const TASK: &str = "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n      metrics:\n        - {type: mean, field: is_correct}\n    - type: string_equals\n      key: rendered\n      ground_truth: \"answer {{ sample.answer | trim }}\"\n      value: \"answer {{ solver_output.output }}\"\n      metrics:\n        - {type: multiclass-classification, field_gt: ground_truth, field_pred: value}\n";

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("evalscore")
}

fn parquet_rows(path: &Path) -> i64 {
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    r.metadata().file_metadata().num_rows()
}

/// The final files present in `out`, and whether every other entry is one of the run's
/// hidden temporary files.
fn final_files(out: &Path, pid: u32) -> Vec<String> {
    let mut finals = Vec::new();
    for name in files_in(out) {
        if evalscore_outputs().contains(&name.as_str()) {
            finals.push(name);
        } else {
            // The staging folder `.evalscore-PID-RANDOM.tmp` (16 hex digits), or the lock.
            let temp = name
                .strip_prefix(&format!(".evalscore-{pid}-"))
                .and_then(|r| r.strip_suffix(".tmp"))
                .is_some_and(|r| r.len() == 16 && r.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(
                temp || name == ".evalscore.lock",
                "unexpected file {name} in {}",
                out.display()
            );
        }
    }
    finals
}

/// The output files in the order they are renamed into place (`run.json` last).
fn evalscore_outputs() -> [&'static str; 5] {
    [
        "scores.parquet",
        "metrics.parquet",
        "confusion.parquet",
        "metrics.json",
        "run.json",
    ]
}

/// A finished run's files: all five present and nothing else, scores.parquet holds run.json's
/// rows_scored.
fn assert_finished(out: &Path, rows: usize) {
    assert_complete(out, &files_in(out), rows);
}

/// `files` (of `out`) are the five outputs, scores.parquet holds run.json's rows_scored.
fn assert_complete(out: &Path, files: &[String], rows: usize) {
    let mut expected: Vec<&str> = evalscore_outputs().to_vec();
    expected.sort_unstable();
    assert_eq!(files, expected);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["rows_scored"], rows);
    assert_eq!(parquet_rows(&out.join("scores.parquet")), rows as i64);
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("metrics.json")).unwrap()).unwrap();
    assert_eq!(metrics["rows"], rows);
    assert!(parquet_rows(&out.join("metrics.parquet")) > 0);
    parquet_rows(&out.join("confusion.parquet"));
}

#[test]
fn sigkill_at_random_points_never_leaves_partial_outputs() {
    const ROWS: usize = 300_000;
    const KILLS: usize = 24;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.parquet");
    write_input(&input, ROWS, 20_000);
    std::fs::write(dir.path().join("t.yaml"), TASK).unwrap();
    let start = |out: &Path| {
        Command::new(bin())
            .current_dir(dir.path())
            .args([
                "run",
                "t.yaml",
                "--input",
                "big.parquet",
                "--quiet",
                "--out",
            ])
            .arg(out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };

    // One undisturbed run sets the time scale.
    let t = Instant::now();
    let full = dir.path().join("full");
    let status = start(&full).wait().unwrap();
    let took = t.elapsed();
    assert!(status.success());
    assert_finished(&full, ROWS);

    let mut rng = Rng(20240601);
    let (mut killed, mut finished, mut committing) = (0, 0, 0);
    let mut last_killed_out = None;
    for i in 0..KILLS {
        let out = dir.path().join(format!("out{i}"));
        // Delays cover start-up, scoring, writing the metrics and the renames, and a little
        // past the end so that some runs finish.
        let delay = took.mul_f64(1.15 * rng.unit());
        let mut child = start(&out);
        let pid = child.id();
        std::thread::sleep(delay);
        let done_before_kill = child.try_wait().unwrap();
        let _ = child.kill();
        let status = child.wait().unwrap();
        if let Some(s) = done_before_kill.filter(|_| status.code().is_some()) {
            assert!(s.success(), "run {i} failed on its own: {s:?}");
            finished += 1;
            assert_finished(&out, ROWS);
            continue;
        }
        if status.code() == Some(0) {
            // Finished between try_wait and kill.
            finished += 1;
            assert_finished(&out, ROWS);
            continue;
        }
        killed += 1;
        let finals = final_files(&out, pid);
        if finals.iter().any(|f| f == "run.json") {
            // Killed after the last rename: the run had finished. Its staging folder and lock
            // may remain (the next command into the folder removes them).
            assert_complete(&out, &finals, ROWS);
        } else if !finals.is_empty() {
            // Killed between two renames of the commit: only a prefix of the rename order may be
            // present, each file complete; run.json is absent, so the run does not count.
            committing += 1;
            let order = evalscore_outputs();
            let mut present: Vec<&str> = order
                .iter()
                .copied()
                .filter(|f| finals.iter().any(|g| g == f))
                .collect();
            present.sort_by_key(|f| order.iter().position(|o| o == f));
            assert_eq!(present, order[..present.len()].to_vec(), "run {i}");
            assert_eq!(parquet_rows(&out.join("scores.parquet")), ROWS as i64);
        }
        last_killed_out = Some(out);
    }
    eprintln!(
        "{KILLS} runs with delays up to {:?}: {killed} killed, {finished} finished, {committing} killed during the renames",
        took.mul_f64(1.15)
    );
    assert!(killed >= KILLS / 2, "most runs should be killed mid-way");

    // A later run into a folder a killed run left temporaries in removes them.
    if let Some(out) = last_killed_out {
        let status = Command::new(bin())
            .current_dir(dir.path())
            .args([
                "run",
                "t.yaml",
                "--input",
                "big.parquet",
                "--quiet",
                "--overwrite",
                "--out",
            ])
            .arg(&out)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        assert_finished(&out, ROWS);
    }
}

#[test]
fn full_disk_exits_2_says_so_and_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    write_input(&dir.path().join("in.parquet"), 50_000, 10_000);
    std::fs::write(dir.path().join("t.yaml"), TASK).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // SIGXFSZ is ignored so that writing past the limit fails with EFBIG instead of killing
    // the process; the limit (in 512- or 1024-byte blocks) is far below scores.parquet's size.
    let o = Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 64; exec \"$0\" run t.yaml --input in.parquet --out out --quiet")
        .arg(bin())
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty());
    assert!(
        err.starts_with("error: cannot write `out/scores.parquet`\n  Caused by: "),
        "{err}"
    );
    assert!(err.contains("File too large (os error 27)"), "{err}");
    assert!(
        err.ends_with("hint: the disk is full (or a file size limit was reached); free space or choose another `--out` folder. No output was written\n"),
        "{err}"
    );
    assert_eq!(files_in(&out), Vec::<String>::new());
}

#[test]
fn a_panic_in_a_worker_is_an_internal_error_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    write_input(&dir.path().join("in.parquet"), 1000, 100);
    std::fs::write(dir.path().join("t.yaml"), TASK).unwrap();
    let o = evalscore()
        .current_dir(dir.path())
        .env("EVALSCORE_TEST_PANIC", "worker")
        .args([
            "run",
            "t.yaml",
            "--input",
            "in.parquet",
            "--out",
            "out",
            "--threads",
            "2",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(
            "error: internal error: injected worker panic (EVALSCORE_TEST_PANIC) at crates/engine/src/lib.rs:"
        ),
        "{err}"
    );
    assert!(
        err.ends_with("\nhint: this is a bug in evalscore; please report it with the command line and the task file. No output was written\n"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    assert_eq!(files_in(&dir.path().join("out")), Vec::<String>::new());
}
