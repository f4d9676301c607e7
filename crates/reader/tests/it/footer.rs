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

/// A one-column file of INT64 values 100 and 200 written by parquet-rs (with a dictionary
/// page and chunk statistics; nullable, so with a definition level histogram), as bytes.
fn ints() -> Vec<u8> {
    let x: ArrayRef = Arc::new(Int64Array::from(vec![Some(100), Some(200)]));
    let field = arrow::datatypes::Field::new("x", arrow::datatypes::DataType::Int64, true);
    let schema = Arc::new(arrow::datatypes::Schema::new(vec![field]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![x]).unwrap();
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    bytes
}

/// `bytes` with its one occurrence of `from` replaced by `to`, in the footer, whose length
/// (before the closing magic) is adjusted when `to` is longer or shorter.
fn patched(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let found: Vec<usize> = (0..bytes.len())
        .filter(|&i| bytes[i..].starts_with(from))
        .collect();
    assert_eq!(found.len(), 1, "{from:x?}");
    let at = found[0];
    let mut out = [&bytes[..at], to, &bytes[at + from.len()..]].concat();
    let n = out.len();
    let len = u32::from_le_bytes(out[n - 8..n - 4].try_into().unwrap());
    let len = (i64::from(len) + to.len() as i64 - from.len() as i64) as u32;
    out[n - 8..n - 4].copy_from_slice(&len.to_le_bytes());
    out
}

/// Whether the file `bytes` opens: the error with its path as `FILE`.
fn opened(bytes: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.parquet");
    std::fs::write(&path, bytes).unwrap();
    Inputs::open(std::slice::from_ref(&path))
        .map(|_| ())
        .map_err(|e| e.to_string().replace(&path.display().to_string(), "FILE"))
}

/// `dictionary_page_offset` (field 11) sent as an i16: the C++ reader skips it and reads the
/// chunk from its data page on, parquet-rs takes it as the offset.
#[test]
fn a_footer_field_of_another_wire_type_is_an_error() {
    assert_eq!(opened(&ints()), Ok(()));
    let offsets = [0x26, 0x44, 0x26, 0x08, 0x1c];
    assert_eq!(
        opened(&patched(&ints(), &offsets, &[0x26, 0x44, 0x24, 0x08, 0x1c])),
        Err("FILE: damaged footer: field 11 (`dictionary_page_offset`) of a ColumnMetaData has Thrift type 4, not 6".into())
    );
}

/// The data pages placed before the dictionary page: the C++ reader starts there.
#[test]
fn data_pages_before_the_dictionary_page_are_an_error() {
    let offsets = [0x26, 0x44, 0x26, 0x08, 0x1c];
    assert_eq!(
        opened(&patched(&ints(), &offsets, &[0x26, 0x08, 0x26, 0x44, 0x1c])),
        Err("FILE: damaged footer: row group 0, column `x`: the footer places its data pages at byte 4, before its dictionary page at byte 34".into())
    );
}

/// A `min_value` of no bytes for an INT64 column: the C++ reader fails on it.
#[test]
fn statistics_narrower_than_their_type_are_an_error() {
    let min = [0x18, 0x08, 100, 0, 0, 0, 0, 0, 0, 0, 0x11];
    assert_eq!(
        opened(&patched(&ints(), &min, &[0x18, 0x00, 0x11])),
        Err("FILE: damaged footer: row group 0, column `x`: its statistics' min_value holds 0 bytes, where INT64 values take 8".into())
    );
}

/// A definition level histogram of three entries for levels 0 and 1.
#[test]
fn a_level_histogram_of_another_length_is_an_error() {
    let histogram = [0x39, 0x26, 0x00, 0x04];
    assert_eq!(
        opened(&patched(&ints(), &histogram, &[0x39, 0x36, 0x00, 0x04, 0x00])),
        Err("FILE: damaged footer: row group 0, column `x`: its definition level histogram has 3 entries, for 2 levels".into())
    );
}

/// A list<int64> column `l`, written by parquet-rs: its group's converted type LIST (`15
/// 06`) and logical type LIST (`4c 3c 00 00`, member 3 of the union).
fn list() -> Vec<u8> {
    let l: ArrayRef = Arc::new(arrow::array::ListArray::from_iter_primitive::<
        arrow::datatypes::Int64Type,
        _,
        _,
    >(vec![Some(vec![Some(1), Some(2)]), Some(vec![])]));
    let batch = RecordBatch::try_from_iter([("l", l)]).unwrap();
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    bytes
}

/// The list group's logical type made MAP (member 2): parquet-rs reads a list by its
/// converted type, the C++ reader a map by its logical type (and refuses it).
#[test]
fn a_group_whose_annotations_disagree_is_an_error() {
    let logical = [0x15, 0x06, 0x4c, 0x3c, 0x00, 0x00];
    assert_eq!(
        opened(&patched(
            &list(),
            &logical,
            &[0x15, 0x06, 0x4c, 0x2c, 0x00, 0x00]
        )),
        Err(
            "FILE: damaged footer: schema element `l` has logical type MAP and converted type LIST"
                .into()
        )
    );
}

/// The list group's logical type made `UNKNOWN` (member 11): parquet-rs reads the list by
/// its converted type, the C++ reader refuses a group of that logical type.
#[test]
fn a_group_of_a_columns_logical_type_is_an_error() {
    let bytes = list();
    assert_eq!(opened(&bytes), Ok(()));
    let logical = [0x15, 0x06, 0x4c, 0x3c, 0x00, 0x00];
    assert_eq!(
        opened(&patched(&bytes, &logical, &[0x15, 0x06, 0x4c, 0xbc, 0x00, 0x00])),
        Err("FILE: damaged footer: schema element `l` is a group, to which logical type UNKNOWN does not apply".into())
    );
}

/// The list group's logical type made a union whose member is none of those defined (field
/// 9, an empty list, `99 00`): the C++ reader calls it undefined, and refuses it on a group;
/// parquet-rs reads the list by its converted type.
#[test]
fn a_group_of_an_undefined_logical_type_is_an_error() {
    let logical = [0x15, 0x06, 0x4c, 0x3c, 0x00, 0x00];
    assert_eq!(
        opened(&patched(&list(), &logical, &[0x15, 0x06, 0x4c, 0x99, 0x00, 0x00])),
        Err("FILE: damaged footer: schema element `l` is a group of a logical type of no known kind".into())
    );
}

/// Size statistics of the INT64 column `x` that count unencoded byte array bytes (field 1,
/// `16 02`, put before the definition level histogram, `39 26 00 04`, now `29 ...`).
#[test]
fn byte_array_sizes_of_another_type_are_an_error() {
    let sizes = [0x3c, 0x39, 0x26, 0x00, 0x04, 0x00];
    assert_eq!(
        opened(&patched(
            &ints(),
            &sizes,
            &[0x3c, 0x16, 0x02, 0x29, 0x26, 0x00, 0x04, 0x00]
        )),
        Err("FILE: damaged footer: row group 0, column `x`: its size statistics count unencoded byte array bytes, for a column of INT64".into())
    );
}
