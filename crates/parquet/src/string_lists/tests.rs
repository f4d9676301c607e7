//! Lists of strings decoded from their pages against parquet-rs's own reading of the same
//! files: every writer setting that changes the pages (dictionary or plain, a dictionary that
//! overflows into plain pages mid-chunk, page versions 1 and 2, small pages, codecs), null
//! and empty lists, null items, long and non-ASCII items, required lists and items. (Read
//! through evalscore-reader's `Inputs`, with other columns and damaged pages, in its tests:
//! `crates/reader/tests/it/string_lists.rs`.)

use super::*;
use crate::testing::{joined, string_lists_batch as batch, theirs, viewed, write};
use arrow::datatypes::Field;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::serialized_reader::SerializedPageReader;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// Rows per batch, as evalscore-reader decodes them.
const BATCH_SIZE: usize = 8 * 1024;

/// The writer settings tried, by name.
fn settings() -> Vec<(&'static str, WriterProperties)> {
    let base = || WriterProperties::builder().set_max_row_group_row_count(Some(7_000));
    vec![
        ("dictionary", base().build()),
        ("plain", base().set_dictionary_enabled(false).build()),
        (
            "v2, zstd",
            base()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_encoding(Encoding::PLAIN)
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .build(),
        ),
        (
            "small pages, dictionary overflowing, snappy",
            base()
                .set_data_page_size_limit(512)
                .set_write_batch_size(64)
                .set_dictionary_page_size_limit(256)
                .set_compression(Compression::SNAPPY)
                .build(),
        ),
        (
            "v2, small pages, plain",
            base()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_encoding(Encoding::PLAIN)
                .set_data_page_size_limit(512)
                .set_write_batch_size(64)
                .set_dictionary_enabled(false)
                .build(),
        ),
    ]
}

/// The same column decoded here, a row group at a time, in `BATCH_SIZE` rows, with a check
/// that the column has the shape decoded here.
fn ours(path: &Path) -> Vec<ArrayRef> {
    let file = Arc::new(File::open(path).unwrap());
    let builder = viewed(path);
    let meta = builder.metadata().clone();
    let schema = meta.file_metadata().schema_descr();
    let field = builder.schema().fields()[1].clone();
    let mut out = Vec::new();
    for rg in meta.row_groups() {
        let chunk = rg.column(1);
        let shape = StringLists::shape(schema, 1, field.data_type(), chunk)
            .expect("the shape decoded here");
        let rows = rg.num_rows() as usize;
        let pages = SerializedPageReader::new(file.clone(), chunk, rows, None).unwrap();
        let mut lists = StringLists::new(Box::new(pages), shape, field.clone());
        let mut left = rows;
        while left > 0 {
            let n = left.min(BATCH_SIZE);
            let l = lists.next_rows(n).unwrap();
            assert_eq!(l.len(), n);
            out.push(Arc::new(l) as ArrayRef);
            left -= n;
        }
        assert_eq!(
            lists.next_rows(1).unwrap().len(),
            0,
            "rows past the row group"
        );
    }
    out
}

#[test]
fn every_writer_setting_reads_as_parquet_rs_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    for (nulls, distinct) in [(true, false), (true, true), (false, false), (false, true)] {
        let batch = batch(nulls, distinct);
        for (name, props) in settings() {
            let path = dir.path().join("lists.parquet");
            write(&path, &batch, props);
            if name.contains("overflowing") && distinct {
                // Dictionary pages first, plain pages after, within one chunk.
                let b = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap());
                let meta = b.unwrap().metadata().clone();
                let used: Vec<Encoding> = meta.row_group(0).column(1).encodings().collect();
                assert!(used.contains(&Encoding::PLAIN), "{used:?}");
                assert!(used.contains(&Encoding::RLE_DICTIONARY), "{used:?}");
            }
            let (ours, theirs) = (ours(&path), theirs(&path, BATCH_SIZE));
            assert_eq!(
                &joined(&ours),
                &joined(&theirs),
                "{name}, nulls {nulls}, distinct {distinct}"
            );
        }
    }
}

/// Pages handed out as given.
struct Given(std::vec::IntoIter<Page>);

impl Iterator for Given {
    type Item = parquet::errors::Result<Page>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(Ok)
    }
}

impl PageReader for Given {
    fn get_next_page(&mut self) -> parquet::errors::Result<Option<Page>> {
        Ok(self.0.next())
    }
    fn peek_next_page(
        &mut self,
    ) -> parquet::errors::Result<Option<parquet::column::page::PageMetadata>> {
        Ok(None)
    }
    fn skip_next_page(&mut self) -> parquet::errors::Result<()> {
        self.0.next();
        Ok(())
    }
}

/// Two rows of a required list of required strings, `[AAAA, BBBB]` and `[CCCC]`, in one
/// data page v2 whose definition levels are said to take `def` bytes (2 is right), with a
/// fourth value after the three.
fn lists_of_v2_page(def: u32) -> Result<ListArray, String> {
    let mut buf = vec![3, 0b010, 6, 1]; // repetition levels 0 1 0, definition levels 1 1 1
    for v in ["AAAA", "BBBB", "CCCC", "DDDD"] {
        buf.extend_from_slice(&4u32.to_le_bytes());
        buf.extend_from_slice(v.as_bytes());
    }
    let page = Page::DataPageV2 {
        buf: Bytes::from(buf),
        num_values: 3,
        encoding: Encoding::PLAIN,
        num_nulls: 0,
        num_rows: 2,
        def_levels_byte_len: def,
        rep_levels_byte_len: 2,
        is_compressed: false,
        statistics: None,
    };
    let item = Arc::new(Field::new("item", DataType::Utf8View, false));
    let shape = Shape {
        present: 0,
        null_items: false,
        item: item.clone(),
    };
    let field = Arc::new(Field::new("choices", DataType::List(item), false));
    let mut lists = StringLists::new(Box::new(Given(vec![page].into_iter())), shape, field);
    lists.next_rows(2)
}

/// Levels said to be 8 bytes longer than they are would read the values 8 bytes on
/// (`[BBBB, CCCC], [DDDD]`): an error instead.
#[test]
fn levels_longer_than_their_entries_are_an_error() {
    let lists = lists_of_v2_page(2).unwrap();
    let items = lists.values().as_any().downcast_ref::<StringViewArray>();
    let items: Vec<&str> = items.unwrap().iter().flatten().collect();
    assert_eq!(items, ["AAAA", "BBBB", "CCCC"]);
    assert_eq!(
        lists_of_v2_page(10).unwrap_err(),
        "a page's levels run on past its level entries"
    );
}

/// A required list of required strings whose one data page claims `entries` level entries,
/// all held in three RLE runs (a row start, then `entries - 1` items continuing its list, every
/// one index 0 of a one-entry dictionary): a few dozen bytes for any number of items.
fn lists_claiming(entries: u32) -> Result<ListArray, String> {
    let mut rep = Vec::new();
    crate::varint::put_varint(&mut rep, 1 << 1);
    rep.push(0);
    crate::varint::put_varint(&mut rep, u64::from(entries - 1) << 1);
    rep.push(1);
    let mut def = Vec::new();
    crate::varint::put_varint(&mut def, u64::from(entries) << 1);
    def.push(1);
    let mut buf = [rep.clone(), def.clone()].concat();
    buf.push(1); // index bit width
    crate::varint::put_varint(&mut buf, u64::from(entries) << 1);
    buf.push(0);
    let dictionary = Page::DictionaryPage {
        buf: Bytes::from([&1u32.to_le_bytes()[..], b"A"].concat()),
        num_values: 1,
        encoding: Encoding::PLAIN,
        is_sorted: false,
    };
    let data = Page::DataPageV2 {
        buf: Bytes::from(buf),
        num_values: entries,
        encoding: Encoding::RLE_DICTIONARY,
        num_nulls: 0,
        num_rows: 1,
        def_levels_byte_len: def.len() as u32,
        rep_levels_byte_len: rep.len() as u32,
        is_compressed: false,
        statistics: None,
    };
    let item = Arc::new(Field::new("item", DataType::Utf8View, false));
    let shape = Shape {
        present: 0,
        null_items: false,
        item: item.clone(),
    };
    let field = Arc::new(Field::new("choices", DataType::List(item), false));
    let pages = Given(vec![dictionary, data].into_iter());
    StringLists::new(Box::new(pages), shape, field).next_rows(BATCH_SIZE)
}

/// 2^31-1 items claimed in a few bytes: refused once a batch holds more items than the bound,
/// instead of growing the item vectors until allocation fails.
#[test]
fn items_claimed_by_runs_are_bounded() {
    let lists = lists_claiming(5).unwrap();
    assert_eq!(lists.len(), 1);
    assert_eq!(lists.value_length(0), 5);
    assert_eq!(
        lists_claiming(i32::MAX as u32).unwrap_err(),
        "more than 67108864 list items in 8192 rows, the most read at once"
    );
}
