//! Lists of strings (decoded by evalscore-parquet's `StringLists`) read through [`Inputs`]:
//! spliced among the other columns, left to parquet-rs in other encodings, from a pyarrow
//! file, and damaged pages reported as errors naming the file.

use arrow::array::{Array, ListArray, RecordBatch, RecordBatchReader};
use evalscore_parquet::testing::{
    joined, string_lists_batch as batch, their_batches, theirs, viewed, write,
};
use evalscore_parquet::StringLists;
use evalscore_reader::{Inputs, ReadError, BATCH_SIZE};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::{WriterProperties, WriterVersion};
use std::fs::File;
use std::path::Path;

/// Small pages, a dictionary that overflows into plain pages, snappy.
fn small_pages() -> WriterProperties {
    WriterProperties::builder()
        .set_max_row_group_row_count(Some(7_000))
        .set_data_page_size_limit(512)
        .set_write_batch_size(64)
        .set_dictionary_page_size_limit(256)
        .set_compression(Compression::SNAPPY)
        .build()
}

/// Through [`Inputs`]: the list column alone, and beside another column, gives the batches
/// parquet-rs gives, with the schema parquet-rs gives the same projection.
#[test]
fn inputs_splice_the_lists_among_the_other_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lists.parquet");
    write(&path, &batch(true, true), small_pages());
    let inputs = Inputs::open(std::slice::from_ref(&path)).unwrap();
    let theirs = theirs(&path, BATCH_SIZE);
    for columns in [vec!["id", "choices"], vec!["choices"]] {
        let roots: Vec<usize> = columns
            .iter()
            .map(|c| usize::from(c == &"choices"))
            .collect();
        let builder = viewed(&path);
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let want = builder.with_projection(mask).build().unwrap().schema();
        let columns: Vec<String> = columns.into_iter().map(String::from).collect();
        let mut got = Vec::new();
        for unit in inputs.units() {
            inputs
                .read_unit(&unit, &columns, |b: RecordBatch| {
                    assert_eq!(b.schema(), want);
                    got.push(b.column(columns.len() - 1).clone());
                    Ok::<_, ReadError>(())
                })
                .unwrap();
        }
        assert_eq!(&joined(&got), &joined(&theirs));
    }
}

/// A column in an encoding not decoded here (delta strings, page version 2's default) is
/// left to parquet-rs, and reads the same.
#[test]
fn other_encodings_are_left_to_parquet_rs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("delta.parquet");
    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_dictionary_enabled(false)
        .build();
    write(&path, &batch(true, true), props);
    let builder = viewed(&path);
    let meta = builder.metadata();
    let chunk = meta.row_group(0).column(1);
    assert!(chunk.encodings().any(|e| e == Encoding::DELTA_BYTE_ARRAY));
    let t = builder.schema().field(1).data_type();
    assert_eq!(
        StringLists::shape(meta.file_metadata().schema_descr(), 1, t, chunk),
        None
    );
    let inputs = Inputs::open(std::slice::from_ref(&path)).unwrap();
    let mut got = Vec::new();
    for unit in inputs.units() {
        inputs
            .read_unit(&unit, &["choices".to_owned()], |b: RecordBatch| {
                got.push(b.column(0).clone());
                Ok::<_, ReadError>(())
            })
            .unwrap();
    }
    assert_eq!(&joined(&got), &joined(&theirs(&path, BATCH_SIZE)));
}

/// A file written by pyarrow (`list<element: string>`, a struct after it) reads, every
/// column of it, as parquet-rs reads it, with the list decoded here.
#[test]
fn a_file_written_by_pyarrow_reads_as_parquet_rs_reads_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds/parquet_input/types_zstd.parquet");
    let builder = viewed(&path);
    let meta = builder.metadata();
    let t = builder.schema().field(2).data_type();
    let chunk = meta.row_group(0).column(2);
    assert!(StringLists::shape(meta.file_metadata().schema_descr(), 2, t, chunk).is_some());
    let inputs = Inputs::open(std::slice::from_ref(&path)).unwrap();
    let columns: Vec<String> = ["n", "x", "choices", "meta", "b"]
        .map(String::from)
        .to_vec();
    let mut ours = Vec::new();
    for unit in inputs.units() {
        inputs
            .read_unit(&unit, &columns, |b: RecordBatch| {
                ours.push(b);
                Ok::<_, ReadError>(())
            })
            .unwrap();
    }
    assert_eq!(ours, their_batches(&path, BATCH_SIZE));
    let choices = ours[0]
        .column(2)
        .as_any()
        .downcast_ref::<ListArray>()
        .unwrap();
    assert_eq!(
        (
            choices.value_length(0),
            choices.value_length(1),
            choices.is_null(2)
        ),
        (2, 0, true)
    );
}

/// Damaged pages are errors naming the column, never a panic: every byte of the chunk's
/// pages flipped in turn (page headers are checked before this decoder runs, so only
/// values and levels are flipped here, through an uncompressed plain file).
#[test]
fn damaged_levels_and_values_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lists.parquet");
    let small = batch(true, false).slice(0, 300);
    write(
        &path,
        &small,
        WriterProperties::builder()
            .set_dictionary_enabled(false)
            .build(),
    );
    let clean = std::fs::read(&path).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
    let chunk = builder.metadata().row_group(0).column(1).clone();
    let (start, len) = chunk.byte_range();
    let (mut errors, mut clean_reads) = (0, 0);
    for at in (start + 20)..(start + len).min(start + 400) {
        let mut bytes = clean.clone();
        bytes[at as usize] ^= 0x5A;
        let damaged = dir.path().join("damaged.parquet");
        std::fs::write(&damaged, &bytes).unwrap();
        let inputs = Inputs::open(&[damaged]).unwrap();
        let unit = inputs.units()[0];
        match inputs.read_unit(&unit, &["choices".to_owned()], |_| Ok::<_, ReadError>(())) {
            Ok(()) => clean_reads += 1,
            Err(e) => {
                errors += 1;
                let text = e.to_string();
                assert!(text.contains("damaged.parquet"), "{text}");
                // A panic in the decoders is caught, and reported with these words.
                assert!(!text.contains("the Parquet decoder failed"), "{text}");
            }
        }
    }
    assert!(errors > 0, "no flipped byte was noticed");
    assert!(
        clean_reads > 0,
        "every flipped byte failed, even inside strings' bytes"
    );
}
