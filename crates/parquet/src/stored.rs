//! A column chunk handed out as stored, for a writer that copies it instead of decoding it:
//! its pages still encoded and compressed, checked first.

use crate::pages::{check_chunk_bytes, DataPageSpan};
use crate::Sparse;
use bytes::Bytes;
use parquet::basic::{ConvertedType, Encoding, LogicalType, Type as Physical};
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::serialized_reader::SerializedPageReader;
use parquet::schema::types::ColumnDescriptor;
use std::sync::Arc;

/// A column chunk of one Parquet row group as the file stores it: its pages, still encoded
/// and compressed, and the footer's description of them (what evalscore-reader's `Inputs::stored_chunk` hands
/// out).
#[derive(Debug, Clone)]
pub struct StoredChunk {
    /// From the chunk's first page (its dictionary page, if any) to its end.
    pub bytes: Bytes,
    /// The footer's metadata of the chunk. Its page offsets count from the start of the
    /// input file, so `bytes` starts at `dictionary_page_offset` (else `data_page_offset`).
    pub meta: ColumnChunkMetaData,
    /// The data pages, in order, with file offsets: what the copy's offset index records.
    /// Their values add up to the chunk's.
    pub pages: Vec<DataPageSpan>,
}

/// The data pages of the stored chunk `bytes` (from its first page on) described by `meta`,
/// checked as before decoding ([`crate::pages`]), and holding together exactly the values the
/// footer gives the chunk (a flat column's rows, which the copy's row count is).
pub fn checked_pages(
    bytes: &[u8],
    meta: &ColumnChunkMetaData,
) -> Result<Vec<DataPageSpan>, String> {
    let spans = check_chunk_bytes(bytes, meta)?;
    let values: i64 = spans.iter().map(|p| p.values).sum();
    if values != meta.num_values() {
        return Err(format!(
            "its data pages hold {values} values and the footer gives it {}",
            meta.num_values()
        ));
    }
    Ok(spans)
}

/// Whether every Parquet reader decodes `codec`: the copy keeps the input's compression, so
/// a chunk compressed otherwise (brotli, LZ4, LZO) is decoded and written again (zstd) instead;
/// Spark's parquet-mr, for one, has no brotli codec by default, and readers disagree on the
/// two LZ4 framings.
pub fn portable_codec(codec: parquet::basic::Compression) -> bool {
    use parquet::basic::Compression as C;
    matches!(codec, C::UNCOMPRESSED | C::SNAPPY | C::GZIP(_) | C::ZSTD(_))
}

/// Whether the stored chunk `bytes` (from its first page on) described by `meta` reads as
/// every Parquet reader reads it, before it is copied: each page decompresses to its header's
/// size (through parquet-rs's own page reader, as the decoder would), its levels and
/// dictionary indices and entries are sound ([`crate::check_page`]), and a string column's values
/// are UTF-8. `Ok(false)` when its values cannot be checked without decoding them
/// (delta-encoded strings, legacy bit-packed levels): the caller decodes the column instead,
/// and the decoder reports what is wrong. The error says what is wrong with the chunk.
pub fn proven_sound(bytes: &Bytes, meta: &ColumnChunkMetaData) -> Result<bool, String> {
    let (start, _) = crate::pages::checked_range(meta)?;
    let file = Sparse::new(start + bytes.len() as u64, vec![(start, bytes.clone())]);
    let rows = usize::try_from(meta.num_values()).unwrap_or(0);
    crate::guarded(|| {
        let mut pages = SerializedPageReader::new(Arc::new(file), meta, rows, None)
            .map_err(|e| e.to_string())?;
        let text = is_text(meta.column_descr());
        let optional = meta.column_descr().max_def_level() > 0;
        let unread = |e: parquet::errors::ParquetError| format!("a page does not read: {e}");
        // A copied chunk is a flat column's (`copy_stored` takes no other).
        let rules = crate::PageRules::unpaired(meta.column_descr());
        while let Some(page) = pages.get_next_page().map_err(unread)? {
            crate::check_page(&page, &rules)?;
            if !text {
                continue;
            }
            let values = match &page {
                Page::DictionaryPage { buf, .. } => buf.clone(),
                Page::DataPage {
                    buf,
                    def_level_encoding,
                    ..
                } if optional => {
                    if *def_level_encoding != Encoding::RLE || buf.len() < 4 {
                        return Ok(false);
                    }
                    let len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
                    buf.slice((4 + len).min(buf.len())..)
                }
                Page::DataPage { buf, .. } => buf.clone(),
                Page::DataPageV2 {
                    buf,
                    def_levels_byte_len,
                    rep_levels_byte_len,
                    ..
                } => {
                    let levels = (*def_levels_byte_len as usize)
                        .saturating_add(*rep_levels_byte_len as usize);
                    buf.slice(levels.min(buf.len())..)
                }
            };
            match page.encoding() {
                Encoding::PLAIN => utf8_values(&values)?,
                Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {}
                _ => return Ok(false),
            }
        }
        Ok(true)
    })?
}

/// Whether a reader reads column `c` as text, and so must find its values UTF-8.
pub(crate) fn is_text(c: &ColumnDescriptor) -> bool {
    c.physical_type() == Physical::BYTE_ARRAY
        && (matches!(
            c.logical_type_ref(),
            Some(LogicalType::String | LogicalType::Enum | LogicalType::Json)
        ) || matches!(
            c.converted_type(),
            ConvertedType::UTF8 | ConvertedType::ENUM | ConvertedType::JSON
        ))
}

/// Checks that every PLAIN byte array in `buf` (a 4-byte length, then its bytes) is UTF-8.
fn utf8_values(buf: &[u8]) -> Result<(), String> {
    let mut at = 0;
    let mut n = 0usize;
    while at < buf.len() {
        let len = buf
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or("a value's length runs past the end of its page")?;
        let value = buf
            .get(at + 4..at + 4 + len)
            .ok_or("a value runs past the end of its page")?;
        if let Err(e) = std::str::from_utf8(value) {
            return Err(format!(
                "value {n} of a page is not UTF-8 (invalid byte at {})",
                e.valid_up_to()
            ));
        }
        at += 4 + len;
        n += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pages::damaged::{int64_file, plain_ints, Stored};
    use arrow::array::{ArrayRef, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use std::io::{Read, Seek, SeekFrom};

    /// The stored bytes of chunk `c` of `file`.
    fn chunk_bytes(mut file: &std::fs::File, c: &ColumnChunkMetaData) -> Bytes {
        let (start, len) = crate::pages::checked_range(c).unwrap();
        let mut buf = vec![0; len as usize];
        file.seek(SeekFrom::Start(start)).unwrap();
        file.read_exact(&mut buf).unwrap();
        Bytes::from(buf)
    }

    /// A zstd page whose frame gives the header's size but is cut short: it passes the page
    /// checks made without decompressing, and must not be copied.
    #[test]
    fn a_zstd_page_that_does_not_decompress_is_not_copied() {
        let frame = zstd::encode_all(&plain_ints(2)[..], 3).unwrap();
        let page = |bytes: Vec<u8>| Stored {
            bytes,
            uncompressed: 16,
            values: 2,
            v2: false,
        };
        let codec = Compression::ZSTD(Default::default());
        let (file, meta) = int64_file(codec, vec![page(frame.clone())]);
        let bytes = chunk_bytes(&file, &meta);
        assert_eq!(proven_sound(&bytes, &meta), Ok(true));
        let (file, meta) = int64_file(codec, vec![page(frame[..frame.len() - 3].to_vec())]);
        let bytes = chunk_bytes(&file, &meta);
        assert!(checked_pages(&bytes, &meta).is_ok());
        assert_eq!(
            proven_sound(&bytes, &meta),
            Err("a page does not read: External: Src size is incorrect".into())
        );
    }

    /// A plain, uncompressed string column `s` (`abc`, `déf`), its second value's first byte
    /// made `byte` in the file: the chunk and its bytes.
    fn strings(byte: u8, dictionary: bool) -> (Bytes, ColumnChunkMetaData) {
        let s: ArrayRef = Arc::new(StringArray::from(vec!["abc", "déf"]));
        let batch = RecordBatch::try_from_iter([("s", s)]).unwrap();
        let props = WriterProperties::builder()
            .set_dictionary_enabled(dictionary)
            .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
            .build();
        let mut file = tempfile::tempfile().unwrap();
        let mut w =
            ArrowWriter::try_new(file.try_clone().unwrap(), batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let meta = SerializedFileReader::new(file.try_clone().unwrap())
            .unwrap()
            .metadata()
            .row_group(0)
            .column(0)
            .clone();
        let mut bytes = chunk_bytes(&file, &meta).to_vec();
        let at = bytes
            .windows(4)
            .position(|w| w == "déf".as_bytes())
            .unwrap();
        bytes[at] = byte;
        file.seek(SeekFrom::Start(0)).unwrap();
        (Bytes::from(bytes), meta)
    }

    #[test]
    fn invalid_utf8_in_a_string_column_is_not_copied() {
        for dictionary in [false, true] {
            let (bytes, meta) = strings(b'd', dictionary);
            assert_eq!(proven_sound(&bytes, &meta), Ok(true));
            let (bytes, meta) = strings(0xff, dictionary);
            assert_eq!(
                proven_sound(&bytes, &meta),
                Err("value 1 of a page is not UTF-8 (invalid byte at 0)".into()),
                "dictionary {dictionary}"
            );
        }
    }

    /// The check's cost on one large chunk of each kind (zstd, the writer's defaults): run
    /// with `cargo test --release -p evalscore-parquet -- --ignored --nocapture check_cost`.
    #[test]
    #[ignore]
    fn check_cost() {
        use arrow::array::Int64Array;
        const ROWS: usize = 4_000_000;
        let keys: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..ROWS).map(|i| format!("item-{:09}", (i * 7919) % ROWS)),
        ));
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (0..ROWS as i64).map(|i| i * 3),
        ));
        let batch = RecordBatch::try_from_iter([("key", keys), ("id", ids)]).unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(Default::default()))
            .set_max_row_group_row_count(Some(ROWS))
            .build();
        let mut file = tempfile::tempfile().unwrap();
        let mut w =
            ArrowWriter::try_new(file.try_clone().unwrap(), batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        let reader = SerializedFileReader::new(file.try_clone().unwrap()).unwrap();
        for c in reader.metadata().row_group(0).columns() {
            let bytes = chunk_bytes(&file, c);
            let started = std::time::Instant::now();
            assert_eq!(proven_sound(&bytes, c), Ok(true));
            let took = started.elapsed().as_secs_f64();
            println!(
                "{}: {} rows, {} bytes stored, {:.1} ms, {:.0} rows/s",
                c.column_path(),
                c.num_values(),
                bytes.len(),
                took * 1e3,
                c.num_values() as f64 / took
            );
        }
    }
}
