//! Footers that parquet-rs parses but that describe their column chunks wrongly: refused when
//! the file is opened, naming the file and the column.

use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use evalscore_reader::Inputs;
use parquet::arrow::ArrowWriter;
use std::sync::Arc;

/// A column chunk of INT64 values whose schema column says DOUBLE would be read as doubles
/// (100 as 5e-322): the file is refused at open.
#[test]
fn a_schema_type_other_than_the_chunks_is_an_error() {
    let x: ArrayRef = Arc::new(Int64Array::from(vec![100, 200]));
    let batch = RecordBatch::try_from_iter([("x", x)]).unwrap();
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    // The schema element of `x` (before the row groups in the footer): type INT64 (field 1,
    // zigzag 4), REQUIRED, name "x"; made DOUBLE.
    let element = [0x15, 0x04, 0x25, 0x00, 0x18, 0x01, b'x'];
    let at = bytes.windows(7).position(|w| w == element).unwrap();
    bytes[at + 1] = 0x0a;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retyped.parquet");
    std::fs::write(&path, &bytes).unwrap();
    let err = Inputs::open(std::slice::from_ref(&path)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: damaged footer: column `x` is DOUBLE in the schema and INT64 in its column chunk",
            path.display()
        )
    );
}
