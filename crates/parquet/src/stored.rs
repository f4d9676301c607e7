//! A column chunk handed out as stored, for a writer that copies it instead of decoding it:
//! its pages still encoded and compressed, checked first.

use crate::pages::{check_chunk_bytes, DataPageSpan};
use bytes::Bytes;
use parquet::file::metadata::ColumnChunkMetaData;

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
