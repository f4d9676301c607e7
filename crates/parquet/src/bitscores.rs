//! Column chunks of 0.0/1.0 scores, encoded without parquet's generic column writer.
//!
//! Why: a score column holds two distinct values. Parquet's Arrow writer finds that out by
//! hashing every row into its dictionary interner, the largest encoding cost measured in a
//! run. Here the dictionary is fixed,
//! `[0.0, 1.0]`, so each row's dictionary index is its score, one bit; and Parquet's
//! bit-packed runs of width 1 put values in the same bit order as Arrow's bitmaps (least
//! significant bit first), so a data page is the score bitmap cut into runs.
//!
//! [`BitScores`] collects one row group's column and [`BitScores::close`] writes what
//! parquet-rs writes for the same column, readable by any Parquet reader: a PLAIN
//! dictionary page, then one v1 data page (definition levels as RLE/bit-packed runs when
//! the column is nullable, then the RLE_DICTIONARY indices at bit width 1), both
//! zstd-compressed, with min/max/null-count statistics and an offset index. Values other
//! than exactly 0.0 and 1.0 (−0.0, NaN, 0.5) are refused, so the caller falls back to the
//! generic writer and nothing is changed by the shortcut.

use crate::hybrid::put_bits;
use arrow::array::BooleanBufferBuilder;
use arrow::array::{
    new_null_array, Array, ArrayRef, AsArray, BooleanArray, DictionaryArray, Float64Array,
    Int8Array, StringArray,
};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow::compute::filter;
use arrow::datatypes::{DataType, Float64Type, Int8Type};
use bytes::Bytes;
use parquet::basic::EncodingMask;
use parquet::basic::{Compression, Encoding, PageType, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ColumnChunkMetaData, OffsetIndexBuilder, PageEncodingStats};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;
use std::cell::RefCell;
use std::sync::Arc;

const ONE: u64 = 0x3FF0_0000_0000_0000; // 1.0f64.to_bits()

/// The zstd level of every page; the same as the file's writer properties (`ZstdLevel::default()`).
pub(crate) const ZSTD_LEVEL: i32 = 1;

/// Which two-valued columns [`BitScores`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitKind {
    /// Float64 scores; the dictionary is `[0.0, 1.0]`.
    Scores,
    /// Dictionary-encoded text (`Dictionary(Int8, Utf8)`) with two labels, such as
    /// `completion_validity`; the dictionary is the first batch's two values, which every
    /// later batch must repeat. Written without statistics, like parquet's writer is told
    /// to write label columns.
    Labels,
}

/// One row group's worth of a two-valued column, as bits.
pub struct BitScores {
    descr: ColumnDescPtr,
    kind: BitKind,
    /// The two labels of a [`BitKind::Labels`] column, from its first batch.
    labels: Option<[String; 2]>,
    /// One bit per row: set when the row is not null.
    valid: BooleanBufferBuilder,
    /// One bit per non-null row: set when its value is the second dictionary entry (1.0).
    ones: BooleanBufferBuilder,
    rows: usize,
}

impl BitScores {
    pub fn new(descr: ColumnDescPtr, kind: BitKind) -> BitScores {
        BitScores {
            descr,
            kind,
            labels: None,
            valid: BooleanBufferBuilder::new(0),
            ones: BooleanBufferBuilder::new(0),
            rows: 0,
        }
    }

    /// Appends `column` and returns true, or returns false and appends nothing when it is
    /// not two-valued: a non-null score that is not exactly 0.0 or 1.0, labels other than
    /// the first batch's two, or a null in a required column.
    pub fn append(&mut self, column: &ArrayRef) -> bool {
        // `ok`: which rows hold one of the two values; `None` when all do by construction.
        let (ok, is_one, nulls) = match self.kind {
            // A pass mask is two-valued by construction: its bits are the ones.
            BitKind::Scores if column.data_type() == &DataType::Boolean => {
                let mask = column.as_boolean();
                (None, mask.values().clone(), mask.nulls())
            }
            BitKind::Scores => {
                let Some(values) = column.as_primitive_opt::<Float64Type>() else {
                    return false;
                };
                let (ok, is_one) = two_valued(values.values(), |x| {
                    let b = x.to_bits();
                    (b == 0, b == ONE)
                });
                (Some(ok), is_one, values.nulls())
            }
            BitKind::Labels => {
                let Some(dict) = column.as_dictionary_opt::<Int8Type>() else {
                    return false;
                };
                let Some(values) = dict.values().as_string_opt::<i32>() else {
                    return false;
                };
                if values.len() != 2 || values.null_count() > 0 {
                    return false;
                }
                let pair = [values.value(0).to_owned(), values.value(1).to_owned()];
                match &self.labels {
                    Some(seen) if *seen != pair => return false,
                    Some(_) => {}
                    None => self.labels = Some(pair),
                }
                let (ok, is_one) = two_keys(dict.keys().values());
                (Some(ok), is_one, dict.keys().nulls())
            }
        };
        let len = is_one.len();
        match nulls.filter(|n| n.null_count() > 0) {
            None => {
                if ok.is_some_and(|ok| ok.count_set_bits() != len) {
                    return false;
                }
                self.valid.append_n(len, true);
                self.ones.append_buffer(&is_one);
            }
            Some(nulls) => {
                if self.descr.max_def_level() == 0
                    || ok.is_some_and(|ok| (&ok | &!nulls.inner()).count_set_bits() != len)
                {
                    return false;
                }
                let kept = BooleanArray::new(is_one, None);
                let Ok(kept) = filter(&kept, &BooleanArray::new(nulls.inner().clone(), None))
                else {
                    return false;
                };
                self.valid.append_buffer(nulls.inner());
                self.ones.append_buffer(kept.as_boolean().values());
            }
        }
        self.rows += len;
        true
    }

    /// The rows appended so far as an array of the column's type, for handing over to the
    /// generic writer.
    pub fn to_array(&self) -> ArrayRef {
        let valid = self.valid.finish_cloned();
        let ones = self.ones.finish_cloned();
        let mut next = ones.iter();
        let bits: Vec<u8> = valid
            .iter()
            .map(|ok| u8::from(ok && next.next().unwrap_or(false)))
            .collect();
        let nulls = Some(NullBuffer::new(valid));
        match (self.kind, &self.labels) {
            (BitKind::Labels, Some([a, b])) => {
                let keys = Int8Array::new(bits.iter().map(|&b| b as i8).collect(), nulls);
                let values = Arc::new(StringArray::from(vec![a.as_str(), b.as_str()]));
                match DictionaryArray::<Int8Type>::try_new(keys, values) {
                    Ok(d) => Arc::new(d),
                    // Keys are 0 or 1 over two values: not reached.
                    Err(_) => new_null_array(&self.data_type(), self.rows),
                }
            }
            (BitKind::Labels, None) => new_null_array(&self.data_type(), self.rows),
            (BitKind::Scores, _) => Arc::new(Float64Array::new(
                bits.iter().map(|&b| f64::from(b)).collect(),
                nulls,
            )),
        }
    }

    fn data_type(&self) -> DataType {
        match self.kind {
            BitKind::Scores => DataType::Float64,
            BitKind::Labels => {
                DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
            }
        }
    }

    /// Writes the column chunk: its bytes (starting at offset 0) and what the row group
    /// writer needs to splice them in (`SerializedRowGroupWriter::append_column`).
    pub fn close(mut self) -> Result<(Bytes, ColumnCloseResult)> {
        let rows = self.rows;
        let valid = self.valid.finish();
        let ones = self.ones.finish();
        let non_null = ones.len();
        let nulls = rows - non_null;
        let n_ones = ones.count_set_bits();

        let mut page = Vec::with_capacity(non_null / 8 + rows / 8 + 64);
        if self.descr.max_def_level() > 0 {
            let mut levels = Vec::with_capacity(rows / 8 + 16);
            put_bits(&mut levels, &valid, nulls == 0, true);
            page.extend_from_slice(&u32::try_from(levels.len()).map_err(too_big)?.to_le_bytes());
            page.extend_from_slice(&levels);
        }
        page.push(1); // bit width of the dictionary indices
        put_bits(
            &mut page,
            &ones,
            n_ones == 0 || n_ones == non_null,
            n_ones > 0,
        );

        let mut dictionary = Vec::with_capacity(16);
        match (self.kind, &self.labels) {
            (BitKind::Scores, _) => {
                dictionary.extend_from_slice(&0.0f64.to_le_bytes());
                dictionary.extend_from_slice(&1.0f64.to_le_bytes());
            }
            (BitKind::Labels, labels) => {
                // PLAIN byte arrays: a 4-byte little-endian length, then the bytes.
                let [a, b] = labels.clone().unwrap_or_default();
                for label in [a, b] {
                    let len = u32::try_from(label.len()).map_err(too_big)?;
                    dictionary.extend_from_slice(&len.to_le_bytes());
                    dictionary.extend_from_slice(label.as_bytes());
                }
            }
        }

        let rows_u32 = u32::try_from(rows).map_err(too_big)?;
        let mut sink = TrackedWrite::new(Vec::new());
        let mut pages = SerializedPageWriter::new(&mut sink);
        let dict_spec = pages.write_page(CompressedPage::new(
            Page::DictionaryPage {
                buf: compress(&dictionary)?,
                num_values: 2,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            },
            dictionary.len(),
        ))?;
        let data_spec = pages.write_page(CompressedPage::new(
            Page::DataPage {
                buf: compress(&page)?,
                num_values: rows_u32,
                encoding: Encoding::RLE_DICTIONARY,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            },
            page.len(),
        ))?;
        pages.close()?;
        let bytes = Bytes::from(sink.into_inner()?);

        let n_zeros = non_null - n_ones;
        let min = (non_null > 0).then_some(if n_zeros > 0 { 0.0 } else { 1.0 });
        let max = (non_null > 0).then_some(if n_ones > 0 { 1.0 } else { 0.0 });
        let statistics = (self.kind == BitKind::Scores).then(|| {
            Statistics::Double(
                ValueStatistics::new(min, max, None, Some(nulls as u64), false)
                    .with_backwards_compatible_min_max(true),
            )
        });
        let encodings = [Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY];
        let mut metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(ZSTD_LEVEL).map_err(|e| ParquetError::General(e.to_string()))?,
            ))
            .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
            .set_page_encoding_stats(vec![
                PageEncodingStats {
                    page_type: PageType::DICTIONARY_PAGE,
                    encoding: Encoding::PLAIN,
                    count: 1,
                },
                PageEncodingStats {
                    page_type: PageType::DATA_PAGE,
                    encoding: Encoding::RLE_DICTIONARY,
                    count: 1,
                },
            ])
            .set_total_compressed_size(
                (dict_spec.compressed_size + data_spec.compressed_size) as i64,
            )
            .set_total_uncompressed_size(
                (dict_spec.uncompressed_size + data_spec.uncompressed_size) as i64,
            )
            .set_num_values(rows as i64)
            .set_data_page_offset(data_spec.offset as i64)
            .set_dictionary_page_offset(Some(dict_spec.offset as i64));
        if let Some(statistics) = statistics {
            metadata = metadata.set_statistics(statistics);
        }
        let metadata = metadata.build()?;
        let mut offsets = OffsetIndexBuilder::new();
        offsets.append_row_count(rows as i64);
        offsets.append_offset_and_size(data_spec.offset as i64, data_spec.compressed_size as i32);
        Ok((
            bytes,
            ColumnCloseResult {
                bytes_written: dict_spec.bytes_written + data_spec.bytes_written,
                rows_written: rows as u64,
                metadata,
                bloom_filter: None,
                column_index: None,
                offset_index: Some(offsets.build()),
            },
        ))
    }
}

/// One pass over `values`, 64 at a time, with `class` telling whether a value is the first
/// or the second of the two: which values are one of them, and which are the second.
fn two_valued<T>(
    values: &[T],
    class: impl Fn(&T) -> (bool, bool),
) -> (BooleanBuffer, BooleanBuffer) {
    let words = values.len().div_ceil(64);
    let (mut ok, mut ones) = (Vec::with_capacity(words), Vec::with_capacity(words));
    for chunk in values.chunks(64) {
        let (mut one, mut zero) = (0u64, 0u64);
        for (j, x) in chunk.iter().enumerate() {
            let (is_zero, is_one) = class(x);
            one |= u64::from(is_one) << j;
            zero |= u64::from(is_zero) << j;
        }
        ok.push(one | zero);
        ones.push(one);
    }
    let bits = |w: Vec<u64>| BooleanBuffer::new(Buffer::from_vec(w), 0, values.len());
    (bits(ok), bits(ones))
}

/// [`two_valued`] of dictionary keys that should be 0 or 1, eight keys to a 64-bit word: a
/// word whose bytes are all 0 or 1 (no bit but the lowest set in any byte) packs its eight
/// lowest bits with one multiplication; any other word is looked at key by key.
fn two_keys(keys: &[i8]) -> (BooleanBuffer, BooleanBuffer) {
    const HIGH: u64 = 0xFEFE_FEFE_FEFE_FEFE;
    // Byte i's lowest bit lands on bit 56 + i, and no other product reaches bits 56 to 63.
    const PACK: u64 = 0x0102_0408_1020_4080;
    let words = keys.len().div_ceil(64);
    let (mut ok, mut ones) = (Vec::with_capacity(words), Vec::with_capacity(words));
    let one_by_one = |keys: &[i8], at: usize, ok: &mut u64, one: &mut u64| {
        for (i, &k) in keys.iter().enumerate() {
            *ok |= u64::from(k == 0 || k == 1) << (at + i);
            *one |= u64::from(k == 1) << (at + i);
        }
    };
    for chunk in keys.chunks(64) {
        let (mut o, mut k) = (0u64, 0u64);
        let mut eights = chunk.chunks_exact(8);
        for (b, e) in (&mut eights).enumerate() {
            let w = u64::from_le_bytes(std::array::from_fn(|i| e[i] as u8));
            if w & HIGH == 0 {
                o |= 0xFF << (8 * b);
                k |= (w.wrapping_mul(PACK) >> 56) << (8 * b);
            } else {
                one_by_one(e, 8 * b, &mut o, &mut k);
            }
        }
        let rest = eights.remainder();
        one_by_one(rest, chunk.len() - rest.len(), &mut o, &mut k);
        ok.push(o);
        ones.push(k);
    }
    let bits = |w: Vec<u64>| BooleanBuffer::new(Buffer::from_vec(w), 0, keys.len());
    (bits(ok), bits(ones))
}

fn too_big(_: std::num::TryFromIntError) -> ParquetError {
    ParquetError::General("a score row group is larger than 4 GiB".into())
}

thread_local! {
    /// This thread's zstd compressor: a context costs more to create than a score page costs
    /// to compress. Measured over 200 small files: `ZSTD_createCCtx` took 2.6% of the run
    /// with a context per page, 1.7% with one per thread (the rest is parquet's own writer,
    /// one context per kept column per unit).
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { RefCell::new(None) };
}

pub(crate) fn compress(raw: &[u8]) -> Result<Bytes> {
    let external = |e: std::io::Error| ParquetError::External(Box::new(e));
    COMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        let compressor = match &mut *cell {
            Some(c) => c,
            empty => empty.insert(zstd::bulk::Compressor::new(ZSTD_LEVEL).map_err(external)?),
        };
        compressor.compress(raw).map(Bytes::from).map_err(external)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time path gives what the key-by-key one does, for keys of every length
    /// up to 200 that are all 0 and 1, or that hold other values (-1, 2, 127, -128) here
    /// and there, at every position of a word.
    #[test]
    fn two_keys_agrees_with_the_key_by_key_pass() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let odd = [-1i8, 2, 127, -128, 3];
        for len in 0..200usize {
            for bad_rate in [0, 3, 40] {
                let keys: Vec<i8> = (0..len)
                    .map(|_| match next(100) {
                        r if r < bad_rate => odd[next(odd.len() as u64) as usize],
                        r => (r % 2) as i8,
                    })
                    .collect();
                let want = two_valued(&keys, |&k| (k == 0, k == 1));
                assert_eq!(two_keys(&keys), want, "{keys:?}");
            }
        }
    }
}
