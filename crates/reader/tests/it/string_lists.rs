//! Lists of strings (decoded by evalscore-parquet's `StringLists`) read through [`Inputs`]:
//! spliced among the other columns, left to parquet-rs in other encodings, from a pyarrow
//! file, and damaged pages reported as errors naming the file.

use arrow::array::{
    Array, ArrayRef, Int64Array, ListArray, ListBuilder, RecordBatch, RecordBatchReader,
    StringBuilder,
};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_parquet::StringLists;
use evalscore_reader::{Inputs, ReadError, BATCH_SIZE};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::{WriterProperties, WriterVersion};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// `id` and `choices` (`ROWS` rows): with `nulls`, 10% null lists and 3% null items; 15% empty
/// lists; one to six items from a pool with long and non-ASCII entries, and with `distinct`,
/// an item of its own in every fourth row.
fn batch(nulls: bool, distinct: bool) -> RecordBatch {
    let pool = [
        "A",
        "B",
        "C",
        "D",
        "É",
        "日本",
        "a choice longer than twelve bytes",
        "",
    ];
    let mut rng = fastrand::Rng::with_seed(7);
    let mut lists = ListBuilder::new(StringBuilder::new());
    for row in 0..ROWS {
        match rng.u32(..100) {
            r if nulls && r < 10 => lists.append_null(),
            r if r < 15 => lists.append(true),
            _ => {
                for _ in 0..=rng.u32(..6) {
                    if nulls && rng.u32(..100) < 3 {
                        lists.values().append_null();
                    } else if distinct && row % 4 == 0 {
                        lists.values().append_value(format!("choice of row {row}"));
                    } else {
                        lists.values().append_value(pool[rng.usize(..8)]);
                    }
                }
                lists.append(true);
            }
        }
    }
    let lists = lists.finish();
    let item = Field::new("item", DataType::Utf8, nulls);
    let lists = ListArray::new(
        Arc::new(item.clone()),
        lists.offsets().clone(),
        lists.values().clone(),
        lists.nulls().cloned(),
    );
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("choices", DataType::List(Arc::new(item)), nulls),
    ]);
    let ids = Int64Array::from_iter_values(0..ROWS as i64);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(ids), Arc::new(lists)]).unwrap()
}

const ROWS: usize = 20_000;

fn write(path: &Path, batch: &RecordBatch, props: WriterProperties) {
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

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

/// parquet-rs's reader of `path` as evalscore-reader sets it up: strings, and list items, as
/// views.
fn viewed(path: &Path) -> ParquetRecordBatchReaderBuilder<File> {
    let plain = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let view = |t: &DataType| match t {
        DataType::Utf8 => DataType::Utf8View,
        DataType::List(item) if item.data_type() == &DataType::Utf8 => {
            let item = item.as_ref().clone().with_data_type(DataType::Utf8View);
            DataType::List(Arc::new(item))
        }
        t => t.clone(),
    };
    let fields: Vec<Field> = plain
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_data_type(view(f.data_type())))
        .collect();
    let options = ArrowReaderOptions::new().with_schema(Arc::new(Schema::new(fields)));
    ParquetRecordBatchReaderBuilder::try_new_with_options(File::open(path).unwrap(), options)
        .unwrap()
}

/// parquet-rs's reading of every column of every row group, in batches.
fn their_batches(path: &Path) -> Vec<RecordBatch> {
    viewed(path)
        .with_batch_size(BATCH_SIZE)
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// parquet-rs's reading of the `choices` column of every row group, in batches.
fn theirs(path: &Path) -> Vec<ArrayRef> {
    their_batches(path)
        .iter()
        .map(|b| b.column(1).clone())
        .collect()
}

fn joined(batches: &[ArrayRef]) -> ArrayRef {
    let parts: Vec<&dyn Array> = batches.iter().map(|a| a.as_ref()).collect();
    arrow::compute::concat(&parts).unwrap()
}

/// Through [`Inputs`]: the list column alone, and beside another column, gives the batches
/// parquet-rs gives, with the schema parquet-rs gives the same projection.
#[test]
fn inputs_splice_the_lists_among_the_other_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lists.parquet");
    write(&path, &batch(true, true), small_pages());
    let inputs = Inputs::open(std::slice::from_ref(&path)).unwrap();
    let theirs = theirs(&path);
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
    assert_eq!(&joined(&got), &joined(&theirs(&path)));
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
    assert_eq!(ours, their_batches(&path));
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
