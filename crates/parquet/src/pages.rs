//! Checks of a Parquet file's footer and page headers, made before the decoder sees them.
//!
//! The decoder (parquet-rs) reads a page header straight from the file, not bounded by its
//! column chunk, and its Thrift reader skips unknown fields element by element, where a skip
//! past the end of the file silently succeeds. A damaged header can therefore lead it into
//! garbage read as nested lists and maps, whose element counts multiply, each element skipped
//! with an empty `read` at the end of the file: `fuzz/regressions/slow-decode-6kb.parquet`, a
//! 3-row file, took seconds to decode. So:
//!
//! - [`check_footer`] (when a file is opened): every column chunk lies inside the file's data,
//!   its data pages after its dictionary page, and holds as many values as its row group has
//!   rows (at least as many for repeated columns).
//! - [`check_footer_fields`] (when a file is opened): the footer's structs have their
//!   required fields, and every column chunk's own metadata gives the physical type its
//!   schema column has, statistics as wide as that type and level histograms of one entry
//!   per level.
//! - [`check_chunk`] (before a row group is decoded): every page header of a column chunk is
//!   parsed here, strictly and only from the chunk's own bytes. Every field the decoder reads
//!   must have its expected Thrift type, every list must fit in the bytes left, every page must
//!   fit in the chunk, and the data pages together may not hold more values than the footer
//!   gives the chunk. A header that passes is read by the decoder exactly as it is read here.
//!
//! The decoding work is then bounded by the file's size and the footer's row counts.
//!
//! The page headers are read by a strict reader of Thrift's compact protocol (module
//! `thrift`), field by field as parquet-rs reads them (module `header`); the footer's schema
//! is measured for depth the same way before parquet-rs parses it (module `schema_depth`).

mod body;
#[cfg(test)]
pub(crate) mod damaged;
mod decompress;
mod footer_fields;
mod footer_shapes;
mod header;
mod schema_depth;
mod thrift;

pub(crate) use decompress::decompress_chunk;
pub use footer_fields::check_footer_fields;
pub use schema_depth::{check_schema_depth, SchemaFault};

use header::Kind;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use thrift::{Bad, Bytes};

/// Bytes of the leading `PAR1` magic, before the first column chunk.
const MAGIC_LEN: u64 = 4;

/// Where a column chunk is, as parquet-rs computes it (`ColumnChunkMetaData::byte_range`,
/// which panics on negative values instead of returning them).
fn chunk_range(c: &ColumnChunkMetaData) -> (i64, i64) {
    let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
    (start, c.compressed_size())
}

/// Checks every row group's column chunks against the file: each lies between the leading
/// magic and `data_end` (where the footer starts) and holds as many values as its row group
/// has rows. The error names the row group and the column.
pub fn check_footer(meta: &ParquetMetaData, data_end: u64) -> Result<(), String> {
    for (g, rg) in meta.row_groups().iter().enumerate() {
        let rows = rg.num_rows();
        if rows < 0 {
            return Err(format!("row group {g} claims {rows} rows"));
        }
        for c in rg.columns() {
            let col = c.column_path().string();
            let (start, len) = chunk_range(c);
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(s, l)| {
                    (s >= MAGIC_LEN)
                        .then_some(s.checked_add(l)?)
                        .filter(|e| *e <= data_end)
                });
            if inside.is_none() {
                return Err(format!(
                    "row group {g}, column `{col}`: the footer places the column chunk at bytes {start} to {}, outside the file's data (bytes {MAGIC_LEN} to {data_end})",
                    start.saturating_add(len)
                ));
            }
            // The C++ reader starts a chunk at the smaller of the two offsets, parquet-rs at
            // the dictionary page: data pages before it would be read differently.
            if let Some(dictionary) = c.dictionary_page_offset() {
                if c.data_page_offset() < dictionary {
                    return Err(format!(
                        "row group {g}, column `{col}`: the footer places its data pages at byte {}, before its dictionary page at byte {dictionary}",
                        c.data_page_offset()
                    ));
                }
            }
            let values = c.num_values();
            let repeated = c.column_descr().max_rep_level() > 0;
            if values < rows || (!repeated && values > rows) {
                return Err(format!(
                    "row group {g}, column `{col}`: the footer gives the column chunk {values} values for {rows} rows"
                ));
            }
        }
    }
    Ok(())
}

/// Where a data page of a column chunk is: what an offset index records of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPageSpan {
    /// File offset of the page header.
    pub offset: u64,
    /// Bytes of the header and the page's (compressed) data.
    pub size: u64,
    /// Values in the page, nulls included (for a flat column, its rows).
    pub values: i64,
}

/// Where column chunk `c` is in its file (offset, length), or why the footer's numbers
/// cannot be.
pub fn checked_range(c: &ColumnChunkMetaData) -> Result<(u64, u64), String> {
    let (start, len) = chunk_range(c);
    match (u64::try_from(start), u64::try_from(len)) {
        (Ok(start), Ok(len)) => Ok((start, len)),
        _ => Err(format!(
            "the footer places the column chunk at a negative offset or size ({start}, {len})"
        )),
    }
}

/// Parses every page header of column chunk `c` from `file` (see the module docs) and returns
/// where its data pages are. The error says what is wrong and at which byte of the file.
pub fn check_chunk(file: &File, c: &ColumnChunkMetaData) -> Result<Vec<DataPageSpan>, String> {
    let (start, _) = checked_range(c)?;
    let mut reader = BufReader::new(file);
    reader
        .seek(SeekFrom::Start(start))
        .map_err(|e| format!("cannot read the column chunk: {e}"))?;
    check_pages(reader, c)
}

/// [`check_chunk`] over the chunk's bytes already read into memory (all of them, from the
/// chunk's first page on).
pub fn check_chunk_bytes(
    bytes: &[u8],
    c: &ColumnChunkMetaData,
) -> Result<Vec<DataPageSpan>, String> {
    check_pages(std::io::Cursor::new(bytes), c)
}

/// The page-header walk of [`check_chunk`], from `reader` placed at the chunk's start.
fn check_pages<R: Read + Seek>(
    reader: R,
    c: &ColumnChunkMetaData,
) -> Result<Vec<DataPageSpan>, String> {
    let (start, len) = checked_range(c)?;
    let mut h = Bytes {
        reader,
        pos: start,
        end: start.saturating_add(len),
    };
    let mut values = PageValues::new(c);
    let mut spans = Vec::new();
    let codec = c.compression();
    while h.pos < h.end {
        let at = h.pos;
        let page = h.page_header().map_err(|b| header_error(b, at, h.end))?;
        if let Some(span) = values.check(&page, at, h.pos, h.end)? {
            spans.push(span);
        }
        let past = |b| match b {
            Bad::Io(e) => io_error(e),
            _ => format!("the page at byte {at} runs past the end of the column chunk"),
        };
        // `check` made sure the page fits in the chunk.
        let needed = body::bytes_needed(&page, codec) as u64;
        let head = h.bytes(needed).map_err(past)?;
        body::check_body(&page, &head, codec).map_err(|m| damaged_page(at, &m))?;
        h.skip(page.compressed as u64 - needed).map_err(past)?;
    }
    Ok(spans)
}

/// What is wrong with the bytes of the page whose header starts at byte `at`.
fn damaged_page(at: u64, m: &str) -> String {
    format!("damaged page at byte {at}: {m}")
}

fn io_error(e: std::io::Error) -> String {
    format!("cannot read the column chunk: {e}")
}

/// One page of a column chunk as stored ([`chunk_pages`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPage {
    /// Where the page's bytes (after its header) lie in the chunk.
    pub body: std::ops::Range<usize>,
    /// Bytes of the page once decompressed (its header's `uncompressed_page_size`).
    pub uncompressed: usize,
    /// Leading bytes of the body that are never compressed (a data page v2's levels).
    pub levels: usize,
    /// Whether the chunk's codec applies to the body after `levels`.
    pub codec_applies: bool,
}

/// The pages of the column chunk `chunk` (its bytes, from its first page on), their headers
/// read by the strict reader the checks use; `Err` says what is wrong, at a chunk offset.
pub fn chunk_pages(chunk: &[u8]) -> impl Iterator<Item = Result<StoredPage, String>> + '_ {
    let end = chunk.len() as u64;
    let mut h = Bytes {
        reader: std::io::Cursor::new(chunk),
        pos: 0,
        end,
    };
    std::iter::from_fn(move || {
        if h.pos >= end {
            return None;
        }
        let at = h.pos;
        let page = (|| {
            let page = h.page_header().map_err(|b| header_error(b, at, end))?;
            let start = h.pos;
            let len =
                u64::try_from(page.compressed).map_err(|_| "a negative page size".to_owned())?;
            if len > end - start {
                let left = end - start;
                return Err(format!("the page at byte {at} claims {len} bytes, but only {left} are left in the column chunk"));
            }
            h.skip(len).map_err(|b| header_error(b, at, end))?;
            Ok(StoredPage {
                body: start as usize..h.pos as usize,
                uncompressed: usize::try_from(page.uncompressed).unwrap_or_default(),
                levels: usize::try_from(page.levels).unwrap_or_default(),
                codec_applies: page.codec_applies,
            })
        })();
        if page.is_err() {
            // Nothing after a page that does not read.
            h.pos = end;
        }
        Some(page)
    })
}

/// What is wrong with the page header at byte `at` of a chunk ending at byte `end`.
fn header_error(b: Bad, at: u64, end: u64) -> String {
    match b {
        Bad::Overrun => format!(
            "the page header at byte {at} runs past the end of the column chunk at byte {end}"
        ),
        Bad::Malformed(m) => format!("the page header at byte {at} is malformed: {m}"),
        Bad::Io(e) => io_error(e),
    }
}

/// The checks of each page of a column chunk against the chunk and the footer: the page fits
/// in what is left of the chunk, and the data pages together hold no more values than the
/// footer gives the chunk.
struct PageValues {
    chunk_values: i64,
    values: i64,
}

impl PageValues {
    fn new(c: &ColumnChunkMetaData) -> PageValues {
        PageValues {
            chunk_values: c.num_values(),
            values: 0,
        }
    }

    /// Checks `page`, whose header starts at byte `at` and ends at byte `body` of a chunk
    /// ending at byte `end`; gives where it is when it is a data page.
    fn check(
        &mut self,
        page: &header::Page,
        at: u64,
        body: u64,
        end: u64,
    ) -> Result<Option<DataPageSpan>, String> {
        let left = end - body;
        if page.compressed < 0 || page.uncompressed < 0 {
            return Err(format!(
                "the page at byte {at} claims a negative size ({} bytes compressed, {} uncompressed)",
                page.compressed, page.uncompressed
            ));
        }
        if page.compressed as u64 > left {
            return Err(format!(
                "the page at byte {at} claims {} bytes, but only {left} are left in the column chunk",
                page.compressed
            ));
        }
        match page.kind {
            Kind::Data { values: n } => {
                self.values = self.values.saturating_add(i64::from(n));
                if self.values > self.chunk_values {
                    return Err(format!(
                        "the data pages up to byte {at} hold {} values, more than the {} the footer gives the column chunk",
                        self.values, self.chunk_values
                    ));
                }
                Ok(Some(DataPageSpan {
                    offset: at,
                    size: (body - at).saturating_add(page.compressed as u64),
                    values: i64::from(n),
                }))
            }
            Kind::Dictionary { entries } => {
                // Every dictionary entry takes at least one bit (bit-packed booleans).
                if i64::from(entries) > i64::from(page.uncompressed).saturating_mul(8) {
                    return Err(format!(
                        "the dictionary page at byte {at} claims {entries} entries in {} bytes",
                        page.uncompressed
                    ));
                }
                Ok(None)
            }
            Kind::Index => Ok(None),
        }
    }
}

/// The field ids of each page header of a column chunk's bytes `chunk` (at file offset
/// `start`), for tests of rewritten headers.
#[cfg(test)]
pub(crate) fn header_fields(chunk: &[u8], start: u64) -> Vec<Vec<i16>> {
    let mut h = Bytes {
        reader: std::io::Cursor::new(chunk),
        pos: start,
        end: start + chunk.len() as u64,
    };
    let mut pages = Vec::new();
    while h.pos < h.end {
        let Ok(page) = h.page_header() else { break };
        pages.push(page.fields.iter().map(|f| f.id).collect());
        if h.skip(page.compressed as u64).is_err() {
            break;
        }
    }
    pages
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use parquet::file::metadata::{FileMetaData, RowGroupMetaData};
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::SchemaDescriptor;
    use std::io::Write;
    use std::sync::Arc;

    fn schema() -> Arc<SchemaDescriptor> {
        let t = parse_message_type("message m { required binary id (UTF8); }").unwrap();
        Arc::new(SchemaDescriptor::new(Arc::new(t)))
    }

    fn chunk(start: i64, len: i64, values: i64) -> ColumnChunkMetaData {
        ColumnChunkMetaData::builder(schema().column(0))
            .set_data_page_offset(start)
            .set_total_compressed_size(len)
            .set_num_values(values)
            .build()
            .unwrap()
    }

    /// A page header in the compact protocol: a data page of `values` values and `size`
    /// bytes (both sizes), with `extra` bytes spliced in after the sizes.
    fn header(values: u8, size: u8, extra: &[u8]) -> Vec<u8> {
        let mut h = vec![0x15, 0x00, 0x15, size * 2, 0x15, size * 2];
        h.extend_from_slice(extra);
        // Field 5 (DataPageHeader) after field 3, or after field 9 when `extra` is a field 9.
        h.push(if extra.is_empty() { 0x2c } else { 0x0c });
        if !extra.is_empty() {
            h.push(0x0a); // full field id 5 (zigzag)
        }
        h.extend_from_slice(&[
            0x15,
            values * 2,
            0x15,
            0x00,
            0x15,
            0x06,
            0x15,
            0x06,
            0x00,
            0x00,
        ]);
        h
    }

    /// Writes `PAR1` + `pages` to a file and checks them as one chunk of `values` values.
    fn check(pages: &[u8], len: Option<i64>, values: i64) -> Result<(), String> {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"PAR1").unwrap();
        f.write_all(pages).unwrap();
        f.write_all(&[0; 8]).unwrap();
        let len = len.unwrap_or(pages.len() as i64);
        check_chunk(&f, &chunk(4, len, values)).map(|_| ())
    }

    #[test]
    fn a_sound_chunk_passes() {
        let mut pages = header(3, 4, &[]);
        pages.extend_from_slice(&[1, 2, 3, 4]);
        let again = pages.clone();
        pages.extend_from_slice(&again);
        assert_eq!(check(&pages, None, 6), Ok(()));
    }

    #[test]
    fn a_header_past_the_chunk_is_caught() {
        let pages = header(3, 4, &[]);
        assert_eq!(
            check(&pages, Some(10), 3),
            Err(
                "the page header at byte 4 runs past the end of the column chunk at byte 14".into()
            )
        );
    }

    #[test]
    fn a_huge_list_in_an_unknown_field_is_caught_before_it_is_skipped() {
        // Field 9 (unknown): a list of 2,000,000,000 i32, which parquet-rs would skip one
        // element at a time.
        let pages = header(3, 4, &[0x69, 0xf5, 0x80, 0xa8, 0xd6, 0xb9, 0x07]);
        let err = check(&pages, None, 3).unwrap_err();
        assert!(
            err.starts_with(
                "the page header at byte 4 is malformed: a collection of 2000000000 elements with "
            ),
            "{err}"
        );
        // A list of booleans, which parquet-rs would skip as if it took no bytes.
        let pages = header(3, 4, &[0x69, 0x31, 1, 1, 1]);
        assert_eq!(
            check(&pages, None, 3),
            Err("the page header at byte 4 is malformed: a collection of element type 1".into())
        );
    }

    #[test]
    fn a_field_of_the_wrong_type_is_caught() {
        // Field 2 (uncompressed_page_size) as a binary instead of an i32.
        let pages = [0x15, 0x00, 0x18, 0x01, 0x41, 0x00];
        assert_eq!(
            check(&pages, None, 3),
            Err("the page header at byte 4 is malformed: field 2 of the page header has Thrift type 8, not 5".into())
        );
    }

    #[test]
    fn a_chunks_pages_are_walked_and_a_page_past_its_end_is_the_last() {
        let mut chunk = header(3, 4, &[]);
        let first = chunk.len();
        chunk.extend_from_slice(&[1, 2, 3, 4]);
        let second = chunk.len();
        chunk.extend(header(3, 40, &[]));
        chunk.extend_from_slice(&[5, 6]);
        let pages: Vec<Result<StoredPage, String>> = chunk_pages(&chunk).collect();
        assert_eq!(
            pages,
            [
                Ok(StoredPage {
                    body: first..first + 4,
                    uncompressed: 4,
                    levels: 0,
                    codec_applies: true,
                }),
                Err(format!(
                    "the page at byte {second} claims 40 bytes, but only 2 are left in the column chunk"
                )),
            ]
        );
    }

    #[test]
    fn a_page_larger_than_the_chunk_is_caught() {
        let mut pages = header(3, 40, &[]);
        pages.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(
            check(&pages, None, 3),
            Err(
                "the page at byte 4 claims 40 bytes, but only 4 are left in the column chunk"
                    .into()
            )
        );
    }

    #[test]
    fn more_values_than_the_footer_gives_are_caught() {
        let mut pages = header(5, 4, &[]);
        pages.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(
            check(&pages, None, 3),
            Err("the data pages up to byte 4 hold 5 values, more than the 3 the footer gives the column chunk".into())
        );
    }

    fn metadata(rows: i64, c: ColumnChunkMetaData) -> ParquetMetaData {
        let rg = RowGroupMetaData::builder(schema())
            .set_num_rows(rows)
            .set_column_metadata(vec![c])
            .build()
            .unwrap();
        ParquetMetaData::new(
            FileMetaData::new(2, rows, None, None, schema(), None),
            vec![rg],
        )
    }

    #[test]
    fn the_footer_is_checked_against_the_file_and_the_row_count() {
        assert_eq!(check_footer(&metadata(3, chunk(4, 48, 3)), 100), Ok(()));
        assert_eq!(
            check_footer(&metadata(3, chunk(4, 480, 3)), 100),
            Err("row group 0, column `id`: the footer places the column chunk at bytes 4 to 484, outside the file's data (bytes 4 to 100)".into())
        );
        assert_eq!(
            check_footer(&metadata(3, chunk(-1, 10, 3)), 100),
            Err("row group 0, column `id`: the footer places the column chunk at bytes -1 to 9, outside the file's data (bytes 4 to 100)".into())
        );
        assert_eq!(
            check_footer(&metadata(3, chunk(4, 48, 3_000_000)), 100),
            Err("row group 0, column `id`: the footer gives the column chunk 3000000 values for 3 rows".into())
        );
        assert_eq!(
            check_footer(&metadata(-3, chunk(4, 48, 3)), 100),
            Err("row group 0 claims -3 rows".into())
        );
        let with_dictionary = |dictionary: i64, data: i64| {
            let c = chunk(data, 48, 3)
                .into_builder()
                .set_dictionary_page_offset(Some(dictionary))
                .build()
                .unwrap();
            check_footer(&metadata(3, c), 100)
        };
        assert_eq!(with_dictionary(4, 20), Ok(()));
        assert_eq!(
            with_dictionary(20, 4),
            Err("row group 0, column `id`: the footer places its data pages at byte 4, before its dictionary page at byte 20".into())
        );
    }
}
