//! Damaged pages that parquet-rs decodes as data (a level above its maximum, a run past its
//! section, a list continued by an empty list, a delta prefix longer than the value before
//! it, a dictionary shorter than its header or not PLAIN): refused when the row group is
//! read, naming the file, the row group and the column. Each was read before, as pyarrow
//! does not read it.

use arrow::array::{ArrayRef, Int64Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use evalscore_reader::{Inputs, ReadError};
use parquet::arrow::ArrowWriter;
use parquet::basic::Encoding;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use std::sync::Arc;

/// Column `name` of `values` (nullable) written by parquet-rs in one uncompressed data page
/// v1, without statistics, dictionary-encoded when `dictionary`, else in `encoding`.
fn written(name: &str, values: ArrayRef, dictionary: bool, encoding: Option<Encoding>) -> Vec<u8> {
    written_as(
        name,
        values,
        dictionary,
        encoding,
        WriterVersion::PARQUET_1_0,
    )
}

/// [`written`] in data pages of `version`.
fn written_as(
    name: &str,
    values: ArrayRef,
    dictionary: bool,
    encoding: Option<Encoding>,
    version: WriterVersion,
) -> Vec<u8> {
    let field = Field::new(name, values.data_type().clone(), true);
    let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![values]).unwrap();
    let mut props = WriterProperties::builder()
        .set_writer_version(version)
        .set_compression(parquet::basic::Compression::UNCOMPRESSED)
        .set_dictionary_enabled(dictionary)
        .set_statistics_enabled(EnabledStatistics::None);
    if let Some(e) = encoding {
        props = props.set_encoding(e);
    }
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props.build())).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    bytes
}

/// `bytes` with the one occurrence of `from` replaced by `to` (of the same length).
fn patched(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    let found: Vec<usize> = (0..bytes.len())
        .filter(|&i| bytes[i..].starts_with(from))
        .collect();
    assert_eq!(found.len(), 1, "{from:x?}");
    bytes[found[0]..found[0] + to.len()].copy_from_slice(to);
    bytes
}

/// What reading every column of the file `bytes` gives: its rows, or the error with the
/// file's path as `FILE`.
fn read(bytes: &[u8]) -> Result<usize, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.parquet");
    std::fs::write(&path, bytes).unwrap();
    let name = |e: ReadError| e.to_string().replace(&path.display().to_string(), "FILE");
    let inputs = Inputs::open(std::slice::from_ref(&path)).map_err(name)?;
    let columns: Vec<String> = inputs
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let mut rows = 0;
    for unit in inputs.units() {
        inputs
            .read_unit(&unit, &columns, |b: RecordBatch| {
                rows += b.num_rows();
                Ok::<_, ReadError>(())
            })
            .map_err(name)?;
    }
    Ok(rows)
}

/// Three int64 values, none null: one RLE run of three definition levels of 1
/// (`06 01`, after the section's 4-byte length).
fn ints() -> Vec<u8> {
    let x: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
    written("x", x, false, None)
}

#[test]
fn a_definition_level_above_the_maximum_is_an_error() {
    let levels = [2, 0, 0, 0, 0x06, 0x01];
    assert_eq!(read(&ints()), Ok(3));
    assert_eq!(
        read(&patched(ints(), &levels, &[2, 0, 0, 0, 0x06, 0x02])),
        Err("FILE: cannot decode row group 0 (rows 1 to 3): column `x`: a data page's definition levels have a run of the value 2, wider than their 1 bits".into())
    );
}

/// `1, null, 3`: definition levels 1, 0, 1 in one bit-packed group of one byte (`03 05`);
/// a run header claiming two groups runs past the levels' section.
#[test]
fn a_run_of_levels_past_their_section_is_an_error() {
    let x: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
    let bytes = written("x", x, false, None);
    assert_eq!(read(&bytes), Ok(3));
    let levels = [2, 0, 0, 0, 0x03, 0x05];
    assert_eq!(
        read(&patched(bytes, &levels, &[2, 0, 0, 0, 0x05, 0x05])),
        Err("FILE: cannot decode row group 0 (rows 1 to 3): column `x`: a data page's definition levels have a bit-packed run of 2 bytes with 1 left".into())
    );
}

/// Four dictionary indices 0, 1, 0, 2: bit width 2, one bit-packed group (`03 84 00`).
fn strings() -> Vec<u8> {
    let s: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "a", "c"]));
    written("s", s, true, None)
}

#[test]
fn a_run_of_indices_past_the_page_is_an_error() {
    assert_eq!(read(&strings()), Ok(4));
    assert_eq!(
        read(&patched(
            strings(),
            &[0x02, 0x03, 0x84, 0x00],
            &[0x02, 0x05]
        )),
        Err("FILE: cannot decode row group 0 (rows 1 to 4): column `s`: a data page's dictionary indices have a bit-packed run of 4 bytes with 2 left".into())
    );
}

/// The dictionary page header of [`strings`]: num_values 3 (`15 06`), encoding PLAIN
/// (`15 00`).
const DICTIONARY_HEADER: [u8; 5] = [0x4c, 0x15, 0x06, 0x15, 0x00];

/// A struct of one string member, `a`, `b`, `a`: a dictionary of two entries (`15 04` in its
/// header) said to hold three. (Read as a top-level string column, parquet-rs refuses it.)
#[test]
fn a_dictionary_shorter_than_its_header_is_an_error() {
    let v: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "a"]));
    let st: ArrayRef = Arc::new(StructArray::from(vec![(
        Arc::new(Field::new("v", DataType::Utf8, false)),
        v,
    )]));
    let bytes = written("st", st, true, None);
    assert_eq!(read(&bytes), Ok(3));
    assert_eq!(
        read(&patched(
            bytes,
            &[0x4c, 0x15, 0x04, 0x15, 0x00],
            &[0x4c, 0x15, 0x06]
        )),
        Err("FILE: cannot decode row group 0 (rows 1 to 3): column `st.v`: a dictionary page holds 2 of the 3 entries its header gives".into())
    );
}

#[test]
fn a_dictionary_page_not_plain_is_an_error() {
    assert_eq!(
        read(&patched(
            strings(),
            &DICTIONARY_HEADER,
            &[0x4c, 0x15, 0x06, 0x15, 0x10]
        )),
        Err("FILE: cannot decode row group 0 (rows 1 to 4): column `s`: a dictionary page is RLE_DICTIONARY, where only PLAIN is allowed".into())
    );
}

/// `[[1, 2], [], [3]]` as list<int64>, left to parquet-rs: definition levels 3, 3, 1, 3 in
/// one bit-packed group (`03 df 00`); the second, which continues the first list, made 1 (an
/// empty list).
#[test]
fn a_list_continued_by_an_empty_list_is_an_error() {
    let l: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
        Some(vec![Some(1), Some(2)]),
        Some(vec![]),
        Some(vec![Some(3)]),
    ]));
    let bytes = written("l", l, false, None);
    assert_eq!(read(&bytes), Ok(3));
    let defs = [3, 0, 0, 0, 0x03, 0xdf, 0x00];
    assert_eq!(
        read(&patched(bytes, &defs, &[3, 0, 0, 0, 0x03, 0xd7, 0x00])),
        Err("FILE: cannot decode row group 0 (rows 1 to 3): column `l.list.item`: a data page's levels continue a list with an entry of definition level 1 (entry 1: repetition level 1, where 2 is the least)".into())
    );
}

/// `ab`, `ac` in DELTA_BYTE_ARRAY: prefix lengths 0 and 1 (a delta stream whose first value
/// is `00`), suffixes `ab` and `c`.
#[test]
fn a_prefix_longer_than_the_value_before_it_is_an_error() {
    let s: ArrayRef = Arc::new(StringArray::from(vec!["ab", "ac"]));
    let bytes = written("s", s, false, Some(Encoding::DELTA_BYTE_ARRAY));
    assert_eq!(read(&bytes), Ok(2));
    let prefixes = [0x80, 0x01, 0x04, 0x02, 0x00, 0x02];
    assert_eq!(
        read(&patched(bytes, &prefixes, &[0x80, 0x01, 0x04, 0x02, 0x0a])),
        Err("FILE: cannot decode row group 0 (rows 1 to 2): column `s`: a data page's value 0 takes a prefix of 5 bytes from a value of 0".into())
    );
}

/// Int64 values 100, 200, 100 in a dictionary; the data page's encoding (RLE_DICTIONARY,
/// `15 10` after its value count) made BYTE_STREAM_SPLIT: its 3 bytes of indices are no
/// whole number of 8-byte values.
#[test]
fn split_values_that_are_not_whole_values_are_an_error() {
    let x: ArrayRef = Arc::new(Int64Array::from(vec![100, 200, 100]));
    let bytes = written("x", x, true, None);
    let header = [0x2c, 0x15, 0x06, 0x15, 0x10];
    assert_eq!(
        read(&patched(bytes, &header, &[0x2c, 0x15, 0x06, 0x15, 0x12])),
        Err("FILE: cannot decode row group 0 (rows 1 to 3): column `x`: a data page's BYTE_STREAM_SPLIT values take 3 bytes, no whole number of 8-byte INT64 values".into())
    );
}

/// `true, null, false, true` in a data page v2: RLE booleans behind their length (`02 00 00
/// 00 03 05`), after the page's definition levels; the header's repetition level length is
/// `15 00` after the definition levels' `15 04`.
fn booleans_v2() -> Vec<u8> {
    let b: ArrayRef = Arc::new(arrow::array::BooleanArray::from(vec![
        Some(true),
        None,
        Some(false),
        Some(true),
    ]));
    written_as("b", b, false, None, WriterVersion::PARQUET_2_0)
}

#[test]
fn a_run_of_booleans_past_the_page_is_an_error() {
    assert_eq!(read(&booleans_v2()), Ok(4));
    let values = [2, 0, 0, 0, 0x03, 0x05];
    assert_eq!(
        read(&patched(booleans_v2(), &values, &[2, 0, 0, 0, 0x05, 0x05])),
        Err("FILE: cannot decode row group 0 (rows 1 to 4): column `b`: a data page's RLE booleans have a bit-packed run of 2 bytes with 1 left".into())
    );
}

/// One byte of repetition levels for a column without them: readers skip it and read the
/// definition levels one byte late.
#[test]
fn v2_repetition_levels_of_a_flat_column_are_an_error() {
    let lengths = [0x15, 0x04, 0x15, 0x00, 0x12];
    assert_eq!(
        read(&patched(
            booleans_v2(),
            &lengths,
            &[0x15, 0x04, 0x15, 0x02, 0x12]
        )),
        Err("FILE: cannot decode row group 0 (rows 1 to 4): column `b`: a data page's header gives 1 byte of repetition levels, in a column without them".into())
    );
}

/// `1, null, 3` in BYTE_STREAM_SPLIT, its definition levels (RLE, `15 06` in the page
/// header after the encoding's `15 12`) said to be legacy BIT_PACKED: read so, they take
/// one byte, and the values after them 21, no whole number of values.
#[test]
fn levels_in_another_encoding_than_theirs_are_an_error() {
    let x: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
    let bytes = written("x", x, false, Some(Encoding::BYTE_STREAM_SPLIT));
    assert_eq!(read(&bytes), Ok(3));
    let header = [0x15, 0x12, 0x15, 0x06, 0x15, 0x06];
    assert_eq!(
        read(&patched(
            bytes,
            &header,
            &[0x15, 0x12, 0x15, 0x08, 0x15, 0x06]
        )),
        Err("FILE: cannot decode row group 0 (rows 1 to 3): column `x`: a data page's BYTE_STREAM_SPLIT values take 21 bytes, no whole number of 8-byte INT64 values".into())
    );
}

/// `é`, `x` in DELTA_LENGTH_BYTE_ARRAY: lengths 2 and 1 (a delta stream whose first value
/// is `04`, zigzag 2, and whose least delta is `01`, -1), made 1 and 2: `\xc3` and `\xa9x`,
/// neither UTF-8, though their bytes together are. parquet-rs checks only the bytes
/// together.
#[test]
fn delta_encoded_text_that_is_not_utf8_is_an_error() {
    let s: ArrayRef = Arc::new(StringArray::from(vec!["é", "x"]));
    let bytes = written("s", s, false, Some(Encoding::DELTA_LENGTH_BYTE_ARRAY));
    assert_eq!(read(&bytes), Ok(2));
    let lengths = [0x80, 0x01, 0x04, 0x02, 0x04, 0x01];
    assert_eq!(
        read(&patched(bytes, &lengths, &[0x80, 0x01, 0x04, 0x02, 0x02, 0x02])),
        Err("FILE: cannot decode row group 0 (rows 1 to 2): column `s`: a data page's value 0 is not UTF-8 (invalid byte at 0)".into())
    );
}

/// The booleans made one run of three of the value 2 (`06 02`): parquet-rs read it as true,
/// pyarrow (its lowest bit) as false.
#[test]
fn a_run_of_booleans_wider_than_a_bit_is_an_error() {
    let values = [2, 0, 0, 0, 0x03, 0x05];
    assert_eq!(
        read(&patched(booleans_v2(), &values, &[2, 0, 0, 0, 0x06, 0x02])),
        Err("FILE: cannot decode row group 0 (rows 1 to 4): column `b`: a data page's RLE booleans have a run of the value 2, wider than their 1 bits".into())
    );
}
