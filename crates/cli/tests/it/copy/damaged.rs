//! Damaged chunks of kept columns: refused before they are copied, never written into
//! scores.parquet for a reader to refuse.

use super::*;

/// A kept string column `key` (plain, uncompressed) whose value `key-0007` has a byte made
/// 0xff in the file: the run fails naming the file and the column, and writes no scores.
#[test]
fn invalid_utf8_in_a_kept_string_column_is_an_error() {
    let (dir, input) = workdir();
    let keys: Vec<String> = (0..20).map(|i| format!("key-{i:04}")).collect();
    let batch = qa_batch(0, Arc::new(StringArray::from(keys)), false);
    let schema = Schema::new(vec![
        Field::new("key", DataType::Utf8, false),
        batch.schema().field(1).clone(),
        batch.schema().field(2).clone(),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), batch.columns().to_vec()).unwrap();
    let props = props(100, 100)
        .set_dictionary_enabled(false)
        .set_compression(Compression::UNCOMPRESSED)
        .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None);
    write_parquet(&input, &[batch], props.build());
    let mut bytes = std::fs::read(&input).unwrap();
    let at = bytes.windows(8).position(|w| w == b"key-0007").unwrap();
    bytes[at] = 0xff;
    std::fs::write(&input, &bytes).unwrap();

    let task = dir.path().join("task.yaml");
    std::fs::write(&task, QA_TASK).unwrap();
    let out = dir.path().join("out");
    let o = run_task(&task, &input, &out, &["--quiet", "--keep", "key"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains(&format!("{}", input.display()))
            && stderr.contains("column `key`: value 7 of a page is not UTF-8 (invalid byte at 0)"),
        "stderr: {stderr}"
    );
    assert!(!out.join("scores.parquet").exists());
}
