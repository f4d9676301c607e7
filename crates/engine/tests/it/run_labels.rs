//! Run labels: written once per file (not copied into every row while writing), read back as
//! every row's `labels` value, and bounded in count and size.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, AsArray, RecordBatch};
use evalscore_engine::{run, RunIdentity, RunOptions, MAX_LABELS, MAX_LABELS_BYTES};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/examples")
}

fn table(path: &Path) -> RecordBatch {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = builder.schema().clone();
    let parts: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    arrow::compute::concat_batches(&schema, &parts).unwrap()
}

/// `batch` as the engine wrote its tables before: one plain Utf8 value per row.
fn written_plainly(batch: &RecordBatch) -> Vec<u8> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_created_by(format!("evalscore {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    out
}

/// 15 labels of 4,000 bytes: every row of metrics.parquet and confusion.parquet reads back
/// the whole object, and the files are byte for byte what writing one copy per row gave.
#[test]
fn large_labels_read_back_on_every_row_and_the_files_are_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let labels: Vec<(String, String)> = (0..15)
        .map(|i| {
            (
                format!("k{i:02}"),
                char::from(b'a' + i).to_string().repeat(4000),
            )
        })
        .collect();
    let summary = run(&RunOptions {
        task: examples().join("classification.yaml"),
        inputs: vec![examples().join("qa.parquet")],
        out_dir: dir.path().join("out"),
        threads: 1,
        labels: labels.clone(),
        ..RunOptions::default()
    })
    .unwrap();
    let json = summary.run.labels_json().unwrap();
    assert!(json.len() > 60_000 && json.len() <= MAX_LABELS_BYTES);
    for (file, rows) in [
        ("metrics.parquet", summary.metrics.len()),
        ("confusion.parquet", summary.confusion.len()),
    ] {
        let path = dir.path().join("out").join(file);
        let back = table(&path);
        assert!(rows > 0, "{file}");
        assert_eq!(back.num_rows(), rows, "{file}");
        let column = back.column_by_name("labels").unwrap();
        assert_eq!(column.data_type(), &arrow::datatypes::DataType::Utf8);
        let values = column.as_string::<i32>();
        assert_eq!(values.null_count(), 0);
        assert!(values.iter().all(|v| v == Some(json.as_str())), "{file}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            written_plainly(&back),
            "{file}"
        );
    }
}

/// Without labels the column is null on every row, and the files are unchanged too.
#[test]
fn no_labels_are_nulls() {
    let dir = tempfile::tempdir().unwrap();
    run(&RunOptions {
        task: examples().join("classification.yaml"),
        inputs: vec![examples().join("qa.parquet")],
        out_dir: dir.path().join("out"),
        threads: 1,
        ..RunOptions::default()
    })
    .unwrap();
    for file in ["metrics.parquet", "confusion.parquet"] {
        let path = dir.path().join("out").join(file);
        let back = table(&path);
        let labels = back.column_by_name("labels").unwrap();
        assert_eq!(labels.null_count(), back.num_rows());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            written_plainly(&back),
            "{file}"
        );
    }
}

#[test]
fn labels_are_bounded_in_count_and_size() {
    let many: Vec<(String, String)> = (0..=MAX_LABELS)
        .map(|i| (format!("k{i}"), "v".to_owned()))
        .collect();
    assert_eq!(
        RunIdentity::new(None, &many).unwrap_err().message,
        "65 `--label`s are given; at most 64 are allowed"
    );
    assert!(RunIdentity::new(None, &many[..MAX_LABELS]).is_ok());
    let big = vec![
        ("small".to_owned(), "x".to_owned()),
        ("notes".to_owned(), "y".repeat(70_000)),
    ];
    let err = RunIdentity::new(None, &big).unwrap_err();
    assert_eq!(
        err.message,
        "the labels take 70024 bytes as JSON; at most 65536 are allowed (the longest: `--label notes=...`, a value of 70000 bytes)"
    );
    // The labels must fit, escaped as JSON: 40,000 newlines take 80,000 bytes.
    let escaped = vec![("text".to_owned(), "\n".repeat(40_000))];
    assert!(RunIdentity::new(None, &escaped)
        .unwrap_err()
        .message
        .starts_with("the labels take 80011 bytes as JSON"));
}
