//! Fixtures of the list<string> tests, shared by this crate's unit tests and
//! evalscore-reader's integration tests (feature `testing`): a seeded batch of lists of
//! strings, its file, and parquet-rs's own reading of it, the reference the decoder is held to.
#![allow(clippy::unwrap_used, missing_docs)]

use arrow::array::{
    Array, ArrayRef, Int64Array, ListArray, ListBuilder, RecordBatch, StringBuilder,
};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// Rows of [`string_lists_batch`].
pub const ROWS: usize = 20_000;

/// `id` and `choices` ([`ROWS`] rows): with `nulls`, 10% null lists and 3% null items; 5%
/// empty lists; one to six items from a pool with long and non-ASCII entries, and with
/// `distinct`, an item of its own in every fourth row (so that a dictionary overflows).
pub fn string_lists_batch(nulls: bool, distinct: bool) -> RecordBatch {
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
    // Seeded, so the files are the same every run.
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

/// Writes `batch` to `path` with `props`.
pub fn write(path: &Path, batch: &RecordBatch, props: WriterProperties) {
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// parquet-rs's reader of `path` as evalscore-reader sets it up: strings, and list items, as
/// views.
pub fn viewed(path: &Path) -> ParquetRecordBatchReaderBuilder<File> {
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

/// parquet-rs's reading of every column of every row group, in batches of `batch_size`.
pub fn their_batches(path: &Path, batch_size: usize) -> Vec<RecordBatch> {
    viewed(path)
        .with_batch_size(batch_size)
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// parquet-rs's reading of the `choices` column (the second) of every row group, in batches.
pub fn theirs(path: &Path, batch_size: usize) -> Vec<ArrayRef> {
    their_batches(path, batch_size)
        .iter()
        .map(|b| b.column(1).clone())
        .collect()
}

/// Batches as one array: parquet-rs's batches run across row groups, the decoder's do not.
pub fn joined(batches: &[ArrayRef]) -> ArrayRef {
    let parts: Vec<&dyn Array> = batches.iter().map(|a| a.as_ref()).collect();
    arrow::compute::concat(&parts).unwrap()
}
