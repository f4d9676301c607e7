//! Helpers shared by the end-to-end tests.
#![allow(clippy::unwrap_used)]
#![allow(dead_code)]

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StructArray};
use arrow::datatypes::Field;
use arrow::datatypes::{Float64Type, Int64Type, UInt64Type};
use assert_cmd::Command;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The files of a complete output folder, in name order.
pub const OUTPUT_FILES: [&str; 5] = [
    "confusion.parquet",
    "metrics.json",
    "metrics.parquet",
    "run.json",
    "scores.parquet",
];

/// One `string_equals` scorer comparing the output with `answer`.
pub const QA_TASK: &str =
    "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.answer }}\"\n";

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/examples")
}

pub fn evalscore() -> Command {
    let mut c = Command::cargo_bin("evalscore").expect("binary");
    c.env_remove("RUST_BACKTRACE");
    c
}

/// `evalscore run TASK --input INPUT --out OUT EXTRA...`, run to its end.
pub fn run_task(task: &Path, input: &Path, out: &Path, extra: &[&str]) -> Output {
    evalscore()
        .arg("run")
        .arg(task)
        .arg("--input")
        .arg(input)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run")
}

/// `evalscore compare BASE NEW --out OUT EXTRA...`, run to its end.
pub fn compare_runs(base: &Path, new: &Path, out: &Path, extra: &[&str]) -> Output {
    evalscore()
        .arg("compare")
        .arg(base)
        .arg(new)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("compare")
}

/// `evalscore report RUN --baseline BASE -o PAGE`, run to its end.
pub fn report_against(run: &Path, baseline: &Path, page: &Path) -> Output {
    evalscore()
        .arg("report")
        .arg(run)
        .arg("--baseline")
        .arg(baseline)
        .arg("-o")
        .arg(page)
        .output()
        .expect("report")
}

/// `o`, after checking that it exited 0 (else the test fails showing its stderr).
pub fn succeeded(o: Output) -> Output {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", lossy(&o.stderr));
    o
}

/// `o`, after checking that it exited `code`.
pub fn failed(o: Output, code: i32) -> Output {
    assert_eq!(o.status.code(), Some(code), "stderr: {}", lossy(&o.stderr));
    o
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("read JSON")).expect("JSON")
}

/// The `path` of every input a run.json lists.
pub fn input_paths(run_json: &serde_json::Value) -> Vec<String> {
    let inputs = run_json["inputs"].as_array().expect("inputs");
    inputs
        .iter()
        .map(|i| i["path"].as_str().expect("path").to_owned())
        .collect()
}

/// Checks that `text` starts with `prefix` (else the test fails showing `text`).
pub fn assert_starts(text: &str, prefix: &str) {
    assert!(text.starts_with(prefix), "{text}");
}

/// Checks that `text` ends with `suffix` (else the test fails showing `text`).
pub fn assert_ends(text: &str, suffix: &str) {
    assert!(text.ends_with(suffix), "{text}");
}

/// Space-separated words, for comparing lists of names.
pub fn words(text: &str) -> Vec<String> {
    text.split(' ').map(str::to_owned).collect()
}

/// A temporary folder holding `files` (name, text).
pub fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

/// A task file `t.yaml` and its input `in.jsonl` in a temporary folder, scored into `out`.
pub struct Job {
    pub dir: tempfile::TempDir,
    pub task: PathBuf,
    pub input: PathBuf,
    pub out: PathBuf,
}

impl Job {
    pub fn new(task: &str, input: &str) -> Job {
        let dir = folder(&[("t.yaml", task), ("in.jsonl", input)]);
        let path = |name: &str| dir.path().join(name);
        let (task, input, out) = (path("t.yaml"), path("in.jsonl"), path("out"));
        Job {
            dir,
            task,
            input,
            out,
        }
    }

    /// `evalscore run` of the task on the input into `out`.
    pub fn run(&self, extra: &[&str]) -> Output {
        run_task(&self.task, &self.input, &self.out, extra)
    }
}

/// Writes a Parquet file of the columns `columns(deep)`, where `deep` is an int64 column
/// (1, 2) inside `levels` nested structs. Written on a thread with a large stack: the writer
/// recurses once per level. Without the embedded Arrow schema, as other writers make it
/// (arrow-rs's own flatbuffer reader refuses that schema beyond about 30 levels).
pub fn write_deep_parquet(
    path: &Path,
    levels: usize,
    columns: fn(ArrayRef) -> Vec<(&'static str, ArrayRef)>,
) {
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut deep: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
            for _ in 0..levels {
                let field = Arc::new(Field::new("a", deep.data_type().clone(), true));
                deep = Arc::new(StructArray::from(vec![(field, deep)]));
            }
            let batch = RecordBatch::try_from_iter(columns(deep)).expect("batch");
            let f = File::create(&path).expect("create");
            let options = parquet::arrow::arrow_writer::ArrowWriterOptions::new()
                .with_skip_arrow_metadata(true);
            let mut w =
                parquet::arrow::ArrowWriter::try_new_with_options(f, batch.schema(), options)
                    .expect("writer");
            w.write(&batch).expect("write");
            w.close().expect("close");
        })
        .expect("thread")
        .join()
        .expect("join");
}

/// A temporary folder to run `evalscore run` in, for the tests of bad input: runs there keep
/// the paths in messages short.
pub struct Case {
    pub dir: tempfile::TempDir,
    /// Options every run gets after `--out`.
    extra: &'static [&'static str],
}

#[allow(clippy::new_without_default)]
impl Case {
    pub fn new() -> Self {
        Self::with(&[])
    }

    /// Runs with `--quiet`.
    pub fn quiet() -> Self {
        Self::with(&["--quiet"])
    }

    fn with(extra: &'static [&'static str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        Case { dir, extra }
    }

    /// The case with `t.yaml` holding `task`.
    pub fn task(self, task: &str) -> Self {
        self.write("t.yaml", task);
        self
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `name` (making its folder), holding `text`.
    /// Writes a Parquet file of `columns` at `name` (folders made as needed).
    pub fn write_parquet(&self, name: &str, columns: Vec<(&str, ArrayRef)>) {
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let p = self.path(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(p).unwrap(),
            batch.schema(),
            None,
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        p
    }

    /// `evalscore run ARGS --out OUT` in the folder: (exit code, stdout, stderr). A run still
    /// going after 60 s is killed (exit code `None`), so a hang fails the test instead of
    /// stalling it.
    pub fn run_out(&self, args: &[&str], out: &str) -> (Option<i32>, String, String) {
        let o = evalscore()
            .current_dir(self.dir.path())
            .arg("run")
            .args(args)
            .args(["--out", out])
            .args(self.extra)
            .timeout(Duration::from_secs(60))
            .output()
            .expect("run");
        (o.status.code(), stdout(&o), stderr(&o))
    }

    pub fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        self.run_out(args, "out")
    }

    /// Runs, expects exit 2 with an `error:` message and no new file in `out`; returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        self.fails_out(args, "out")
    }

    pub fn fails_out(&self, args: &[&str], out_name: &str) -> String {
        let out = self.path(out_name);
        let before = files_in(&out);
        let (code, stdout, err) = self.run_out(args, out_name);
        assert_eq!(code, Some(2), "stdout: {stdout}\nstderr: {err}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{err}"
        );
        assert_eq!(files_in(&out), before, "no new files in the output folder");
        err
    }

    pub fn succeeds(&self, args: &[&str]) -> String {
        let (code, stdout, err) = self.run(args);
        assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {err}");
        stdout
    }
}

/// JSON Lines text of `n` rows, row `i` made by `row(i)`.
pub fn jsonl(n: usize, row: impl Fn(usize) -> String) -> String {
    (0..n).map(|i| row(i) + "\n").collect()
}

/// The `evalscore` binary as a `std::process::Command`, which can also be spawned.
pub fn evalscore_process() -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("evalscore"));
    c.env_remove("RUST_BACKTRACE");
    c
}

/// `evalscore run task.yaml --input rows.jsonl --out OUT` in `dir`.
pub fn run_in(dir: &Path, out: &str) -> std::process::Command {
    let mut c = evalscore_process();
    c.args(["run", "task.yaml", "--input", "rows.jsonl", "--out", out])
        .current_dir(dir);
    c
}

/// [`run_in`] with the judge cache `c.sqlite` of `dir`, which must succeed; its run.json.
pub fn run_cached(dir: &Path, out: &str) -> serde_json::Value {
    succeeded(
        run_in(dir, out)
            .args(["--cache", "c.sqlite"])
            .output()
            .unwrap(),
    );
    read_json(&dir.join(out).join("run.json"))
}

/// `evalscore judge export task.yaml --input rows.jsonl --out OUT` in `dir`.
pub fn export_in(dir: &Path, out: &str) -> std::process::Command {
    let mut c = evalscore_process();
    c.args([
        "judge",
        "export",
        "task.yaml",
        "--input",
        "rows.jsonl",
        "--out",
        out,
    ])
    .current_dir(dir);
    c
}

/// Waits for `child`, signalled just now, to end within `bound` (a behaviour bound, far
/// above what stopping takes); its output.
pub fn output_within(child: std::process::Child, bound: Duration, what: &str) -> Output {
    let signalled = Instant::now();
    let o = child.wait_with_output().expect("wait");
    let took = signalled.elapsed();
    assert!(took < bound, "{what}: {took:?}");
    o
}

/// Sends signal `sig` (`-INT`, `-TERM`...) to process `pid`.
pub fn kill(sig: &str, pid: u32) {
    let status = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

pub fn read_parquet(path: &Path) -> RecordBatch {
    let f = File::open(path).expect("open");
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .expect("parquet")
        .build()
        .expect("reader");
    let batches: Vec<RecordBatch> = r.map(|b| b.expect("batch")).collect();
    let schema = batches[0].schema();
    arrow::compute::concat_batches(&schema, &batches).expect("concat")
}

pub fn strings(b: &RecordBatch, col: &str) -> Vec<Option<String>> {
    let c = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    let c = arrow::compute::cast(c, &arrow::datatypes::DataType::Utf8).expect("cast");
    c.as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_owned))
        .collect()
}

pub fn floats(b: &RecordBatch, col: &str) -> Vec<Option<f64>> {
    let c = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    c.as_primitive::<Float64Type>().iter().collect()
}

pub fn ints(b: &RecordBatch, col: &str) -> Vec<i64> {
    let c = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    c.as_primitive::<Int64Type>().values().to_vec()
}

pub fn uints(b: &RecordBatch, col: &str) -> Vec<u64> {
    let c = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    c.as_primitive::<UInt64Type>().values().to_vec()
}

pub fn column_names(b: &RecordBatch) -> Vec<String> {
    b.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

/// One metrics.parquet row as text, for exact comparison.
pub fn metric_lines(b: &RecordBatch) -> Vec<String> {
    let cols = words("scorer scorer_type metric metric_type field stat label");
    let text: Vec<Vec<Option<String>>> = cols.iter().map(|c| strings(b, c)).collect();
    let values = floats(b, "value");
    let n = uints(b, "n");
    (0..b.num_rows())
        .map(|i| {
            let mut parts: Vec<String> = text
                .iter()
                .map(|c| c[i].clone().unwrap_or_else(|| "∅".into()))
                .collect();
            parts.push(values[i].map_or_else(|| "null".into(), |v| format!("{v}")));
            parts.push(n[i].to_string());
            parts.join("|")
        })
        .collect()
}

/// A column's values as text, whatever its type, nulls as `∅`, joined by ` | `.
pub fn column_text(b: &RecordBatch, col: &str) -> String {
    let a = b
        .column_by_name(col)
        .unwrap_or_else(|| panic!("no column {col}"));
    let options = arrow::util::display::FormatOptions::default().with_null("∅");
    let f = arrow::util::display::ArrayFormatter::try_new(a.as_ref(), &options).expect("format");
    let values: Vec<String> = (0..a.len()).map(|i| f.value(i).to_string()).collect();
    values.join(" | ")
}

pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub fn null_count(b: &RecordBatch, col: &str) -> usize {
    b.column_by_name(col).map_or(0, |c| c.null_count())
}
