//! Remote inputs against a real S3 server (moto).

use arrow::array::{Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_reader::{Inputs, ReadError};
use evalscore_test_support::stores::*;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use std::path::PathBuf;
use std::sync::Arc;

/// A Parquet file of one string column, every value `value`, stored plainly (no
/// compression, dictionary or statistics): files of two values of one length differ only in
/// their data bytes, and both decode.
pub fn parquet_of(value: &str) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "answer",
        DataType::Utf8,
        false,
    )]));
    let column = StringArray::from(vec![value; 100]);
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(column)]).unwrap();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// The options of the S3 server on `port`, with the tests' credentials.
pub fn s3_options(port: u16) -> Vec<(String, String)> {
    [
        ("aws_endpoint", format!("http://127.0.0.1:{port}")),
        ("aws_allow_http", "true".into()),
        ("aws_access_key_id", "testing".into()),
        ("aws_secret_access_key", "s3-secret-never-printed".into()),
        ("aws_region", "us-east-1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The `answer` values of every unit of `inputs`, or the first error.
pub fn answers(inputs: &Inputs) -> Result<Vec<String>, ReadError> {
    let mut got = Vec::new();
    for unit in inputs.units() {
        inputs.read_unit(&unit, &["answer".to_owned()], |b| {
            // As text whatever the string type the reader hands out (a view, say).
            let a = arrow::compute::cast(b.column(0), &DataType::Utf8).unwrap();
            let a = a.as_any().downcast_ref::<StringArray>().unwrap();
            got.extend((0..a.len()).map(|i| a.value(i).to_owned()));
            Ok::<(), ReadError>(())
        })?;
    }
    Ok(got)
}

/// A remote Parquet file replaced after its footer was read and before its column chunks
/// are, by a file of the same size and footer whose values differ: the read is an error
/// naming the URL, never the new file's values decoded under the old footer. The file is
/// larger than a small object (1.25 MB), so it is not read whole and its chunk is fetched
/// apart from its tail; a small file is read whole when opened, as the version opened.
#[test]
fn a_parquet_file_replaced_after_its_footer_is_read_is_an_error() {
    let server = moto();
    create_bucket(server.port, "evals");
    let (paris, rome) = ("Paris".repeat(2_500), "Rome!".repeat(2_500));
    let (old, new) = (parquet_of(&paris), parquet_of(&rome));
    assert_eq!(old.len(), new.len());
    put_object(server.port, "evals", "qa.parquet", &old);
    let options = s3_options(server.port);
    let url = "s3://evals/qa.parquet";
    let open = || Inputs::open_with(&[PathBuf::from(url)], &options).unwrap();
    let inputs = open();
    // Replaced between the footer (read when opened) and the chunks (read below).
    put_object(server.port, "evals", "qa.parquet", &new);
    let e = answers(&inputs).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{url}: the object was replaced while it was being read (its ETag changed since it was opened)")
    );
    // Opened again, the new file reads as usual.
    assert_eq!(answers(&open()).unwrap(), vec![rome; 100]);
    // A small file, replaced after it was opened: it was read whole when opened.
    put_object(server.port, "evals", "qa.parquet", &parquet_of("Paris"));
    let inputs = open();
    put_object(server.port, "evals", "qa.parquet", &parquet_of("Rome!"));
    assert_eq!(answers(&inputs).unwrap(), vec!["Paris"; 100]);
}
