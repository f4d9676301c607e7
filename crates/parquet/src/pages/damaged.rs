//! Damaged pages built in the tests: a one-column file whose pages hold exactly the bytes a
//! test gives, under the header sizes it gives, written through parquet's own page writer.

#![allow(clippy::unwrap_used)]

use super::*;
use parquet::basic::{Compression, Encoding};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::SchemaDescriptor;
use std::io::Write;
use std::sync::Arc;

/// A data page as stored: its bytes, the uncompressed size its header gives, its values, and
/// whether it is a data page v2 (with no levels, its values compressed).
pub(crate) struct Stored {
    pub bytes: Vec<u8>,
    pub uncompressed: usize,
    pub values: u32,
    pub v2: bool,
}

/// `n` required INT64 values `100, 200, ...`, PLAIN: a page's uncompressed bytes.
pub(crate) fn plain_ints(n: usize) -> Vec<u8> {
    (1..=n as i64)
        .flat_map(|i| (i * 100).to_le_bytes())
        .collect()
}

/// A file of one required INT64 column `x` in one row group, holding `pages` as given, its
/// chunk marked `codec`; with the chunk's footer metadata.
pub(crate) fn int64_file(
    codec: Compression,
    pages: Vec<Stored>,
) -> (std::fs::File, ColumnChunkMetaData) {
    let schema = Arc::new(parse_message_type("message m { required int64 x; }").unwrap());
    let descr = SchemaDescriptor::new(schema.clone()).column(0);
    let mut sink = TrackedWrite::new(Vec::new());
    let mut writer = SerializedPageWriter::new(&mut sink);
    let (mut first, mut stored, mut raw, mut rows) = (None, 0, 0, 0);
    for p in pages {
        let buf = bytes::Bytes::from(p.bytes);
        let page = if p.v2 {
            Page::DataPageV2 {
                buf,
                num_values: p.values,
                encoding: Encoding::PLAIN,
                num_nulls: 0,
                num_rows: p.values,
                def_levels_byte_len: 0,
                rep_levels_byte_len: 0,
                is_compressed: true,
                statistics: None,
            }
        } else {
            Page::DataPage {
                buf,
                num_values: p.values,
                encoding: Encoding::PLAIN,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            }
        };
        let spec = writer
            .write_page(CompressedPage::new(page, p.uncompressed))
            .unwrap();
        first.get_or_insert(spec.offset);
        stored += spec.compressed_size;
        raw += spec.uncompressed_size;
        rows += i64::from(p.values);
    }
    writer.close().unwrap();
    let bytes = bytes::Bytes::from(sink.into_inner().unwrap());
    let metadata = ColumnChunkMetaData::builder(descr)
        .set_compression(codec)
        .set_total_compressed_size(stored as i64)
        .set_total_uncompressed_size(raw as i64)
        .set_num_values(rows)
        .set_data_page_offset(first.unwrap() as i64)
        .build()
        .unwrap();
    let close = ColumnCloseResult {
        bytes_written: bytes.len() as u64,
        rows_written: rows as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: None,
    };
    let mut file = tempfile::tempfile().unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(file.try_clone().unwrap(), schema, props).unwrap();
    let mut rg = w.next_row_group().unwrap();
    rg.append_column(&bytes, close).unwrap();
    rg.close().unwrap();
    w.close().unwrap();
    file.flush().unwrap();
    let reader = SerializedFileReader::new(file.try_clone().unwrap()).unwrap();
    let chunk = reader.metadata().row_group(0).column(0).clone();
    (file, chunk)
}

/// What parquet-rs itself reads from column `x` of `file`.
pub(crate) fn parquet_rs_reads(file: &std::fs::File) -> Result<Vec<i64>, String> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file.try_clone().unwrap())
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        let x = batch.column(0).as_any();
        let x = x.downcast_ref::<arrow::array::Int64Array>().unwrap();
        out.extend(x.values().iter().copied());
    }
    Ok(out)
}
