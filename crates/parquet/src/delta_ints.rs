//! Column chunks of Int64 columns kept from the input (ids), DELTA_BINARY_PACKED without
//! parquet's generic column writer.
//!
//! Why: when a kept column cannot be copied as stored (the units of many small files share
//! a row group of scores), parquet's writer encodes it value by value, with bit-level writes
//! per value and statistics per value: the largest cost of writing scores.parquet from
//! 10,000 small files (BENCHMARKS.md, "Many files"). Ids are mostly ascending by one, so
//! whole blocks of deltas take no bits at all; here a block's deltas, their minimum and
//! their bit width are found in one pass over plain integers.
//!
//! [`DeltaInts`] takes one row group's column, encoding and compressing each page as it
//! fills, and [`DeltaInts::close`] writes the chunk as parquet-rs would, readable by any
//! Parquet reader: v1 data pages of at most
//! [`PAGE_ROWS`] rows (parquet-rs's default row limit per page), each with its definition
//! levels when the column is nullable (RLE/bit-packed runs) and the non-null values
//! DELTA_BINARY_PACKED (blocks of 128 values in 4 miniblocks, as parquet-rs writes them),
//! zstd-compressed; min/max/null-count statistics, a column index with the pages'
//! min/max and their order, and an offset index.

use crate::bitscores::{compress, ZSTD_LEVEL};
use crate::hybrid::put_bits;
use crate::varint::{put_varint, zigzag};
use arrow::array::{Array, ArrayRef, AsArray, BooleanBufferBuilder};
use arrow::datatypes::Int64Type;
use bytes::Bytes;
use parquet::basic::{BoundaryOrder, Compression, Encoding, EncodingMask, PageType, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{
    ColumnChunkMetaData, ColumnIndexBuilder, OffsetIndexBuilder, PageEncodingStats,
};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// Rows per data page at most: parquet-rs's default (`DEFAULT_DATA_PAGE_ROW_COUNT_LIMIT`).
pub(crate) const PAGE_ROWS: usize = 20_000;

/// Values per block and per miniblock, as parquet-rs's encoder writes them.
const BLOCK: usize = 128;
const MINIBLOCK: usize = 32;

/// One row group's worth of an Int64 column, encoded a page at a time: only the open page's
/// values are held, the others as compressed pages.
pub struct DeltaInts {
    descr: ColumnDescPtr,
    /// The open page's non-null values.
    values: Vec<i64>,
    /// The open page's rows: one bit each, set when it is not null (nullable columns only).
    valid: BooleanBufferBuilder,
    page_rows: usize,
    /// The pages written, each with its row count (its `num_values`).
    pages: Vec<CompressedPage>,
    index: ColumnIndexBuilder,
    /// Whether the pages' min/max so far rise (fall), and the last page's.
    order: (bool, bool),
    last: Option<(i64, i64)>,
    min_max: Option<(i64, i64)>,
    nulls: usize,
}

impl DeltaInts {
    pub fn new(descr: ColumnDescPtr) -> DeltaInts {
        DeltaInts {
            descr,
            values: Vec::new(),
            valid: BooleanBufferBuilder::new(0),
            page_rows: 0,
            pages: Vec::new(),
            index: ColumnIndexBuilder::new(parquet::basic::Type::INT64),
            order: (true, true),
            last: None,
            min_max: None,
            nulls: 0,
        }
    }

    /// Appends `column`, an Int64 array; an error when it is not one, or holds a null where
    /// the column is required.
    pub fn append(&mut self, column: &ArrayRef) -> Result<()> {
        let Some(ints) = column.as_primitive_opt::<Int64Type>() else {
            return Err(ParquetError::General(format!(
                "internal error: {} values for Int64 column `{}`",
                column.data_type(),
                self.descr.name()
            )));
        };
        let nulls = ints.nulls().filter(|n| n.null_count() > 0);
        let nullable = self.descr.max_def_level() > 0;
        if nulls.is_some() && !nullable {
            return Err(ParquetError::General(format!(
                "column `{}` is required but holds nulls",
                self.descr.name()
            )));
        }
        let mut at = 0;
        while at < ints.len() {
            let take = (PAGE_ROWS - self.page_rows).min(ints.len() - at);
            let values = &ints.values()[at..at + take];
            match nulls.map(|n| n.inner().slice(at, take)) {
                Some(valid) => {
                    self.values.extend(valid.set_indices().map(|i| values[i]));
                    self.valid.append_buffer(&valid);
                }
                None => {
                    self.values.extend_from_slice(values);
                    if nullable {
                        self.valid.append_n(take, true);
                    }
                }
            }
            self.page_rows += take;
            at += take;
            if self.page_rows == PAGE_ROWS {
                self.flush_page()?;
            }
        }
        Ok(())
    }

    /// Encodes and compresses the open page, and notes its statistics.
    fn flush_page(&mut self) -> Result<()> {
        let rows = std::mem::take(&mut self.page_rows);
        let values = std::mem::take(&mut self.values);
        let nulls = rows - values.len();
        let mut page = Vec::with_capacity(values.len() / 4 + 64);
        if self.descr.max_def_level() > 0 {
            let valid = self.valid.finish();
            let mut levels = Vec::with_capacity(rows / 8 + 16);
            put_bits(&mut levels, &valid, nulls == 0 || nulls == rows, nulls == 0);
            page.extend_from_slice(&u32::try_from(levels.len()).map_err(too_big)?.to_le_bytes());
            page.extend_from_slice(&levels);
        }
        put_deltas(&mut page, &values);
        let lo_hi = values.iter().fold(None, |m: Option<(i64, i64)>, &v| {
            Some(m.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
        });
        match lo_hi {
            Some((lo, hi)) => {
                if let Some((last_lo, last_hi)) = self.last {
                    self.order.0 &= last_lo <= lo && last_hi <= hi;
                    self.order.1 &= lo <= last_lo && hi <= last_hi;
                }
                self.last = Some((lo, hi));
                self.min_max = Some(
                    self.min_max
                        .map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))),
                );
                let (lo, hi) = (lo.to_le_bytes().to_vec(), hi.to_le_bytes().to_vec());
                self.index.append(false, lo, hi, nulls as i64);
            }
            None => self
                .index
                .append(true, Vec::new(), Vec::new(), nulls as i64),
        }
        self.pages.push(CompressedPage::new(
            Page::DataPage {
                buf: compress(&page)?,
                num_values: u32::try_from(rows).map_err(too_big)?,
                encoding: Encoding::DELTA_BINARY_PACKED,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            },
            page.len(),
        ));
        self.nulls += nulls;
        // The values' buffer serves the next page.
        self.values = values;
        self.values.clear();
        Ok(())
    }

    /// Writes the column chunk: its bytes (starting at offset 0) and what the row group
    /// writer needs to splice them in (`SerializedRowGroupWriter::append_column`).
    pub fn close(mut self) -> Result<(Bytes, ColumnCloseResult)> {
        if self.page_rows > 0 {
            self.flush_page()?;
        }
        let mut sink = TrackedWrite::new(Vec::new());
        let mut writer = SerializedPageWriter::new(&mut sink);
        let mut offsets = OffsetIndexBuilder::new();
        let (mut written, mut raw, mut stored, mut first) = (0u64, 0usize, 0usize, None);
        let n_pages = self.pages.len();
        let rows: usize = self.pages.iter().map(|p| p.num_values() as usize).sum();
        for page in self.pages {
            offsets.append_row_count(i64::from(page.num_values()));
            let spec = writer.write_page(page)?;
            first.get_or_insert(spec.offset);
            offsets.append_offset_and_size(spec.offset as i64, spec.compressed_size as i32);
            written += spec.bytes_written;
            raw += spec.uncompressed_size;
            stored += spec.compressed_size;
        }
        writer.close()?;
        let bytes = Bytes::from(sink.into_inner()?);
        self.index.set_boundary_order(match self.order {
            (true, _) => BoundaryOrder::ASCENDING,
            (false, true) => BoundaryOrder::DESCENDING,
            (false, false) => BoundaryOrder::UNORDERED,
        });
        let (min, max) = (self.min_max.map(|m| m.0), self.min_max.map(|m| m.1));
        let statistics = Statistics::Int64(
            ValueStatistics::new(min, max, None, Some(self.nulls as u64), false)
                .with_backwards_compatible_min_max(true),
        );
        let encodings = [Encoding::RLE, Encoding::DELTA_BINARY_PACKED];
        let metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(ZSTD_LEVEL).map_err(|e| ParquetError::General(e.to_string()))?,
            ))
            .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
            .set_page_encoding_stats(vec![PageEncodingStats {
                page_type: PageType::DATA_PAGE,
                encoding: Encoding::DELTA_BINARY_PACKED,
                count: n_pages as i32,
            }])
            .set_total_compressed_size(stored as i64)
            .set_total_uncompressed_size(raw as i64)
            .set_num_values(rows as i64)
            .set_data_page_offset(first.unwrap_or(0) as i64)
            .set_statistics(statistics)
            .build()?;
        Ok((
            bytes,
            ColumnCloseResult {
                bytes_written: written,
                rows_written: rows as u64,
                metadata,
                bloom_filter: None,
                column_index: Some(self.index.build()?),
                offset_index: Some(offsets.build()),
            },
        ))
    }
}

fn too_big(_: std::num::TryFromIntError) -> ParquetError {
    ParquetError::General("an id page is larger than 4 GiB".into())
}

/// Writes `values` DELTA_BINARY_PACKED: the header (block size, miniblocks per block, value
/// count, first value), then per block of 128 deltas its least delta and 4 miniblocks of 32
/// deltas less that least, bit-packed at the width their largest needs (a width byte each;
/// a miniblock with no value left has width 0 and no bytes; the last one with values is
/// padded with zeros to 32).
fn put_deltas(out: &mut Vec<u8>, values: &[i64]) {
    put_varint(out, BLOCK as u64);
    put_varint(out, (BLOCK / MINIBLOCK) as u64);
    put_varint(out, values.len() as u64);
    let Some((&first, rest)) = values.split_first() else {
        put_varint(out, 0);
        return;
    };
    put_varint(out, zigzag(first));
    let mut prev = first;
    let mut deltas = [0i64; BLOCK];
    for block in rest.chunks(BLOCK) {
        let n = block.len();
        // Each delta from the value before it, without a chain through `prev`.
        deltas[0] = block[0].wrapping_sub(prev);
        for (d, pair) in deltas[1..n].iter_mut().zip(block.windows(2)) {
            *d = pair[1].wrapping_sub(pair[0]);
        }
        prev = block[n - 1];
        let least = deltas[..n].iter().fold(i64::MAX, |a, &d| a.min(d));
        put_varint(out, zigzag(least));
        let widths = out.len();
        out.extend_from_slice(&[0; BLOCK / MINIBLOCK]);
        for (m, mini) in deltas[..n].chunks(MINIBLOCK).enumerate() {
            let mut packed = [0u64; MINIBLOCK];
            for (p, &d) in packed.iter_mut().zip(mini) {
                *p = d.wrapping_sub(least) as u64;
            }
            let width = 64 - packed.iter().fold(0, |a, &p| a | p).leading_zeros();
            out[widths + m] = width as u8;
            pack(out, &packed, width);
        }
    }
}

/// Appends the 32 `values` at `width` bits each, least significant bit first: `4 * width`
/// bytes.
fn pack(out: &mut Vec<u8>, values: &[u64; MINIBLOCK], width: u32) {
    if width == 0 {
        return;
    }
    let (mut acc, mut bits) = (0u128, 0u32);
    for &v in values {
        acc |= u128::from(v) << bits;
        bits += width;
        if bits >= 64 {
            out.extend_from_slice(&(acc as u64).to_le_bytes());
            acc >>= 64;
            bits -= 64;
        }
    }
    // 32 values of `width` bits end on a 32-bit boundary.
    out.extend_from_slice(&(acc as u64).to_le_bytes()[..(bits / 8) as usize]);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::Int64Array;
    use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
    use parquet::file::metadata::PageIndexPolicy;
    use parquet::file::page_index::column_index::ColumnIndexMetaData;
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::SchemaDescriptor;
    use std::sync::Arc;

    /// `values` written by [`DeltaInts`] in batches of `batch` rows into a one-column file
    /// (`required` or `optional`), read back by parquet-rs with its page index: the values,
    /// the chunk's statistics and the column index.
    fn round_trip(
        values: &[Option<i64>],
        required: bool,
        batch: usize,
    ) -> (Vec<Option<i64>>, Statistics, ColumnIndexMetaData, usize) {
        let repetition = if required { "required" } else { "optional" };
        let schema = format!("message m {{ {repetition} int64 id; }}");
        let schema = Arc::new(parse_message_type(&schema).unwrap());
        let descr = SchemaDescriptor::new(Arc::clone(&schema)).column(0);
        let mut ints = DeltaInts::new(descr);
        for part in values.chunks(batch.max(1)) {
            let array: ArrayRef = Arc::new(Int64Array::from(part.to_vec()));
            ints.append(&array).unwrap();
        }
        let (bytes, close) = ints.close().unwrap();
        let mut out = Vec::new();
        let props = Arc::new(WriterProperties::builder().build());
        let mut w = SerializedFileWriter::new(&mut out, schema, props).unwrap();
        let mut rg = w.next_row_group().unwrap();
        rg.append_column(&bytes, close).unwrap();
        rg.close().unwrap();
        w.close().unwrap();
        let options = ArrowReaderOptions::new()
            .with_column_index_policy(PageIndexPolicy::Required)
            .with_offset_index_policy(PageIndexPolicy::Required);
        let reader =
            ParquetRecordBatchReaderBuilder::try_new_with_options(Bytes::from(out), options)
                .unwrap();
        let meta = reader.metadata().clone();
        let read: Vec<Option<i64>> = reader
            .build()
            .unwrap()
            .flat_map(|b| {
                let b = b.unwrap();
                let c = b.column(0).as_primitive::<Int64Type>().clone();
                c.iter().collect::<Vec<_>>()
            })
            .collect();
        let chunk = meta.row_group(0).column(0);
        let pages = meta.offset_index().unwrap()[0][0].page_locations().len();
        let index = meta.column_index().unwrap()[0][0].clone();
        (read, chunk.statistics().unwrap().clone(), index, pages)
    }

    /// Values that exercise every width: ascending ids, runs of equal values, extremes
    /// whose deltas wrap, and a random walk; lengths around the block, miniblock and page
    /// sizes; with nulls (whole pages of them too) when optional. Each reads back as
    /// written, with the chunk's min/max/null count and each page's in the column index.
    #[test]
    fn ids_read_back_as_written_with_their_statistics() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let lengths = [
            1, 2, 31, 32, 33, 127, 128, 129, 130, 1_000, 20_000, 20_001, 45_123,
        ];
        for (case, &len) in lengths.iter().enumerate() {
            let kinds: [Box<dyn Fn(usize, u64) -> i64>; 4] = [
                Box::new(|i, _| 1_000 + i as i64),
                Box::new(|i, _| (i / 50) as i64 * 7),
                Box::new(|i, r| [i64::MIN, i64::MAX, 0, -1][(i + r as usize) % 4]),
                Box::new(|_, r| (r % 2_000_001) as i64 - 1_000_000),
            ];
            for (k, kind) in kinds.iter().enumerate() {
                for required in [true, false] {
                    let values: Vec<Option<i64>> = (0..len)
                        .map(|i| {
                            let r = next();
                            let null = !required
                                && (r % 5 == 0 || ((20_000..40_000).contains(&i) && k == 1));
                            (!null).then(|| kind(i, r))
                        })
                        .collect();
                    let what = format!("length {len}, kind {k}, required {required}");
                    let batch = [1_000, 7, 8_192][case % 3];
                    let (read, stats, index, pages) = round_trip(&values, required, batch);
                    assert_eq!(read, values, "{what}");
                    assert_eq!(pages, len.div_ceil(PAGE_ROWS), "{what}");
                    let present: Vec<i64> = values.iter().flatten().copied().collect();
                    let nulls = (len - present.len()) as u64;
                    let Statistics::Int64(s) = stats else {
                        panic!("{what}: {stats:?}")
                    };
                    assert_eq!(s.min_opt(), present.iter().min(), "{what}");
                    assert_eq!(s.max_opt(), present.iter().max(), "{what}");
                    assert_eq!(s.null_count_opt(), Some(nulls), "{what}");
                    let ColumnIndexMetaData::INT64(index) = index else {
                        panic!("{what}: {index:?}")
                    };
                    for (p, page) in values.chunks(PAGE_ROWS).enumerate() {
                        let present: Vec<i64> = page.iter().flatten().copied().collect();
                        assert_eq!(index.min_value(p), present.iter().min(), "{what} page {p}");
                        assert_eq!(index.max_value(p), present.iter().max(), "{what} page {p}");
                        let page_nulls = (page.len() - present.len()) as i64;
                        assert_eq!(index.null_count(p), Some(page_nulls), "{what} page {p}");
                    }
                }
            }
        }
    }

    /// The pages' order: rising ids are ascending, falling ones descending, others
    /// unordered; a null in a required column is refused.
    #[test]
    fn page_order_and_required_columns() {
        let up: Vec<Option<i64>> = (0..50_000).map(Some).collect();
        let down: Vec<Option<i64>> = (0..50_000).rev().map(Some).collect();
        let mut mixed = up.clone();
        mixed.swap(0, 49_999);
        for (values, want) in [
            (up, BoundaryOrder::ASCENDING),
            (down, BoundaryOrder::DESCENDING),
            (mixed, BoundaryOrder::UNORDERED),
        ] {
            let (_, _, index, _) = round_trip(&values, true, 4_096);
            assert_eq!(index.get_boundary_order(), Some(want));
        }
        let schema = Arc::new(parse_message_type("message m { required int64 id; }").unwrap());
        let mut ints = DeltaInts::new(SchemaDescriptor::new(schema).column(0));
        let array: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None]));
        assert_eq!(
            ints.append(&array).unwrap_err().to_string(),
            "Parquet error: column `id` is required but holds nulls"
        );
    }
}
