//! S3 reads: only the footer and the needed column chunks fetched; dropped connections retried.

use super::*;
use arrow::array::{Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A Parquet file of `rows` rows whose `padding` column, which the task does not read, is
/// most of its bytes. Uncompressed, so the chunk sizes are the data's.
fn padded_parquet(rows: usize) -> Vec<u8> {
    let mut seed = 7u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let word = |n: u64, len: usize| -> String {
        (0..len)
            .map(|i| (b'a' + ((n >> (i * 4)) % 26) as u8) as char)
            .collect()
    };
    let ids: Vec<i64> = (0..rows as i64).collect();
    let outputs: Vec<String> = (0..rows).map(|_| word(next(), 12)).collect();
    let answers: Vec<String> = outputs
        .iter()
        .map(|o| {
            if next() % 3 == 0 {
                word(next(), 12)
            } else {
                o.clone()
            }
        })
        .collect();
    let padding: Vec<String> = (0..rows)
        .map(|_| (0..8).map(|_| word(next(), 16)).collect())
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("output", DataType::Utf8, true),
        Field::new("padding", DataType::Utf8, true),
        Field::new("answer", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(outputs)),
            Arc::new(StringArray::from(padding)),
            Arc::new(StringArray::from(answers)),
        ],
    )
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(rows / 2))
        .build();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    buf
}

const EXACT_TASK: &str = r#"
definition:
  scorers:
    - type: string_equals
      key: exact
      ground_truth: "{{ sample.answer }}"
      metrics:
        - {type: mean, field: is_correct}
"#;

/// moto with `padded_parquet(rows)` at s3://evals/padded.parquet, and a folder holding the
/// same file and `EXACT_TASK` as task.yaml.
fn padded_setup(rows: usize) -> (Server, tempfile::TempDir, Vec<u8>) {
    let s3 = moto();
    create_bucket(s3.port, "evals");
    let data = padded_parquet(rows);
    put_object(s3.port, "evals", "padded.parquet", &data);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task.yaml"), EXACT_TASK).unwrap();
    std::fs::write(dir.path().join("padded.parquet"), &data).unwrap();
    (s3, dir, data)
}

#[test]
fn reads_fetch_the_footer_and_the_needed_column_chunks_only() {
    let (s3, dir, data) = padded_setup(60_000);

    // What the task needs: `output` and `answer`, and `id` (kept in scores.parquet).
    let meta = parquet::file::serialized_reader::SerializedFileReader::new(
        std::fs::File::open(dir.path().join("padded.parquet")).unwrap(),
    )
    .unwrap();
    use parquet::file::reader::FileReader;
    let md = meta.metadata();
    let mut needed = 0u64;
    let mut all = 0u64;
    for rg in md.row_groups() {
        for c in rg.columns() {
            let (_, len) = c.byte_range();
            all += len;
            if c.column_path().string() != "padding" {
                needed += len;
            }
        }
    }
    assert_eq!(md.num_row_groups(), 2);
    let footer = {
        let n = data.len();
        u64::from(u32::from_le_bytes(data[n - 8..n - 4].try_into().unwrap())) + 8
    };
    let expected = needed + footer;
    assert!(
        all > 3 * needed,
        "padding should dominate: {all} vs {needed}"
    );

    let proxy = proxy(s3.port);
    succeeded(padded_run(&proxy, "out", dir.path()));
    let sent = proxy.sent.load(Ordering::SeqCst);
    eprintln!(
        "sent {sent} bytes for {expected} needed ({:.2}%), of a {}-byte file",
        100.0 * sent as f64 / expected as f64,
        data.len()
    );
    assert!(
        sent >= expected && (sent as f64) <= expected as f64 * 1.10,
        "the server sent {sent} bytes; the footer and the needed chunks are {expected} (the whole file {})",
        data.len()
    );
    // Same figures as from local disk.
    padded_local_run(dir.path());
    assert_same_metrics(&dir.path().join("out"), &dir.path().join("local"));
    // One GET per needed chunk (3 columns × 2 row groups), the footer's, and a HEAD.
    let requests = proxy.requests.lock().unwrap().clone();
    let gets = requests.iter().filter(|r| r.starts_with("GET ")).count();
    let heads = requests.iter().filter(|r| r.starts_with("HEAD ")).count();
    assert_eq!((gets, heads), (7, 1), "{requests:?}");
}

/// The padded file read from local disk into `local`.
fn padded_local_run(cwd: &Path) {
    succeeded(run_task(
        &[],
        "task.yaml",
        "padded.parquet",
        "local",
        &[],
        cwd,
    ));
}

/// Checks that the runs into `a` and `b` wrote the same metrics.
fn assert_same_metrics(a: &Path, b: &Path) {
    let lines = |out: &Path| metric_lines(&read_parquet(&out.join("metrics.parquet")));
    assert_eq!(lines(a), lines(b));
}

/// The padded file read through `proxy` into `out`.
fn padded_run(proxy: &Proxy, out: &str, cwd: &Path) -> std::process::Output {
    let env = s3_env(&proxy.endpoint());
    run_task(
        &env,
        "task.yaml",
        "s3://evals/padded.parquet",
        out,
        &[],
        cwd,
    )
}

#[test]
fn a_dropped_connection_is_retried_then_reported() {
    let (s3, dir, _) = padded_setup(20_000);
    padded_local_run(dir.path());

    // The first three connections are cut 20,000 bytes into their replies: retried.
    let proxy = proxy(s3.port);
    proxy.rules.lock().unwrap().drop = Some((3, 20_000));
    succeeded(padded_run(&proxy, "out", dir.path()));
    assert_eq!(proxy.rules.lock().unwrap().drop, Some((0, 20_000)));
    assert_same_metrics(&dir.path().join("out"), &dir.path().join("local"));

    // Every connection cut: a clear error after the retries, and no output.
    proxy.rules.lock().unwrap().drop = Some((10_000, 20_000));
    let started = Instant::now();
    let o = padded_run(&proxy, "out2", dir.path());
    failure(
        &o,
        "error: s3://evals/padded.parquet: cannot read: ",
        NETWORK_HINT,
    );
    assert!(started.elapsed() < Duration::from_secs(120));
    // The failure came while scoring, after the output folder was made: it holds nothing.
    assert!(files_in(&dir.path().join("out2")).is_empty());
}
