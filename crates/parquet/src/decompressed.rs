//! A unit in memory with its zstd column chunks decompressed first (`pages::decompress_chunk`),
//! so that the decoder makes no codec for them: the rewritten chunks are placed past the
//! file's end in the same [`Sparse`], and a footer of the one row group points at them,
//! marked uncompressed.
//!
//! Only for units whose needed chunks are already in memory (small local units, fetched
//! remote ones) and hold at most [`SMALL_CHUNKS`] bytes, and only up to [`DECOMPRESSED_UNIT`]
//! bytes decompressed. A codec's setup weighs against a small chunk's decoding, not a large
//! one's; and a large unit decompressed at once is decoded from memory where parquet-rs,
//! decompressing a page at a time, decodes each page from the cache: the benchmark job over
//! row groups of 100,000 rows ran slower that way (BENCHMARKS.md, "Many files"). A larger
//! unit is decoded as parquet-rs decodes it.

use crate::guard::guarded;
use crate::pages;
use crate::sparse::Sparse;
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::basic::Compression;
use parquet::file::metadata::{FileMetaData, ParquetMetaData};
use parquet::file::reader::Length;
use std::sync::Arc;

/// At most this many bytes of a unit's chunks are held decompressed at once.
pub const DECOMPRESSED_UNIT: u64 = 4 << 20;

/// Units whose needed zstd chunks hold more bytes than this are left to parquet-rs.
pub const SMALL_CHUNKS: u64 = 256 << 10;

/// Unit `row_group` of footer `md`, read into `read`, with the zstd chunks of the columns
/// `roots` decompressed: the bytes to decode and a footer holding only that row group (so it
/// is row group 0 there), its columns typed as `schema` gives (the decoder's). `None` when
/// no chunk was rewritten (none is zstd, one does not read as `pages::decompress_chunk`
/// requires, or they need more than [`DECOMPRESSED_UNIT`]); the unit is then decoded as it
/// is.
pub fn decompress_unit(
    read: &Sparse,
    md: &ParquetMetaData,
    schema: &SchemaRef,
    row_group: usize,
    roots: &[usize],
) -> Option<(Sparse, ArrowReaderMetadata)> {
    // A page index would still point into the file's own pages.
    if md.offset_index().is_some() || md.column_index().is_some() {
        return None;
    }
    let leaves = md.file_metadata().schema_descr();
    let wanted = |leaf: usize, c: &parquet::file::metadata::ColumnChunkMetaData| {
        leaf < leaves.num_columns()
            && roots.contains(&leaves.get_column_root_idx(leaf))
            && matches!(c.compression(), Compression::ZSTD(_))
    };
    let stored: i64 = md
        .row_groups()
        .get(row_group)?
        .columns()
        .iter()
        .enumerate()
        .filter(|(leaf, c)| wanted(*leaf, c))
        .map(|(_, c)| c.compressed_size().max(0))
        .sum();
    if stored as u64 > SMALL_CHUNKS {
        return None;
    }
    let mut rg = md.row_groups().get(row_group)?.clone();
    let mut room = DECOMPRESSED_UNIT;
    let mut at = read.len();
    let mut pieces = Vec::new();
    for (leaf, c) in rg.columns_mut().iter_mut().enumerate() {
        let rewritten = wanted(leaf, c)
            .then(|| {
                let (start, len) = pages::checked_range(c).ok()?;
                let bytes = read.piece(start, len).ok()?;
                pages::decompress_chunk(&bytes, c, &mut room)
            })
            .flatten();
        let Some(d) = rewritten else {
            continue;
        };
        let (start, len) = (i64::try_from(at).ok()?, i64::try_from(d.bytes.len()).ok()?);
        *c = c
            .clone()
            .into_builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_page_offset(c.dictionary_page_offset().map(|_| start))
            .set_data_page_offset(start.checked_add(i64::try_from(d.first_data).ok()?)?)
            .set_index_page_offset(None)
            .set_total_compressed_size(len)
            .build()
            .ok()?;
        pieces.push((at, bytes::Bytes::from(d.bytes)));
        at = at.checked_add(len as u64)?;
    }
    if pieces.is_empty() {
        return None;
    }
    let f = md.file_metadata();
    let file = FileMetaData::new(
        f.version(),
        rg.num_rows(),
        f.created_by().map(str::to_owned),
        f.key_value_metadata().cloned(),
        f.schema_descr_ptr(),
        f.column_orders().cloned(),
    );
    let options = ArrowReaderOptions::new().with_schema(schema.clone());
    let md = Arc::new(ParquetMetaData::new(file, vec![rg]));
    // As every parse of a footer: a panic in parquet-rs is not ours to pass on.
    let meta = guarded(|| ArrowReaderMetadata::try_new(md, options))
        .ok()?
        .ok()?;
    Some((read.with(at, pieces), meta))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::{
        ArrayRef, Int64Array, ListBuilder, RecordBatch, StringArray, StringBuilder,
    };
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::{WriterProperties, WriterVersion};

    /// A file of 3,000 rows in pages of 500 (a text with nulls and repeats, an id, a list of
    /// texts), zstd, with data pages of `version`, in memory.
    fn file(version: WriterVersion, dictionary: bool) -> bytes::Bytes {
        let rows = 3_000;
        let ids = Int64Array::from_iter_values(0..rows);
        let text: StringArray = (0..rows)
            .map(|i| (i % 7 != 0).then(|| format!("answer {}", i % 41)))
            .collect();
        let mut lists = ListBuilder::new(StringBuilder::new());
        for i in 0..rows {
            for j in 0..(i % 4) {
                lists.values().append_value(format!("{}", (i + j) % 5));
            }
            lists.append(i % 11 != 0);
        }
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(ids) as ArrayRef),
            ("text", Arc::new(text)),
            ("choices", Arc::new(lists.finish())),
        ])
        .unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(Default::default()))
            .set_writer_version(version)
            .set_dictionary_enabled(dictionary)
            .set_data_page_row_count_limit(500)
            .set_write_batch_size(100)
            .build();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        out.into()
    }

    /// Every batch of `meta`'s row group `row_group` over `read`, joined.
    fn decode(read: Sparse, meta: ArrowReaderMetadata, row_group: usize) -> RecordBatch {
        let schema = meta.schema().clone();
        let batches: Vec<RecordBatch> =
            ParquetRecordBatchReaderBuilder::new_with_metadata(read, meta)
                .with_row_groups(vec![row_group])
                .build()
                .unwrap()
                .map(|b| b.unwrap())
                .collect();
        arrow::compute::concat_batches(&schema, &batches).unwrap()
    }

    #[test]
    fn zstd_chunks_decompressed_decode_as_they_were() {
        for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            for dictionary in [true, false] {
                let bytes = file(version, dictionary);
                let read = Sparse::new(bytes.len() as u64, vec![(0, bytes.clone())]);
                let meta = ArrowReaderMetadata::load(&bytes, Default::default()).unwrap();
                let (ours, theirs) =
                    decompress_unit(&read, meta.metadata(), meta.schema(), 0, &[0, 2]).unwrap();
                // The columns asked for are rewritten, the other left compressed.
                let columns = theirs.metadata().row_group(0).columns();
                let codecs: Vec<Compression> = columns.iter().map(|c| c.compression()).collect();
                assert_eq!(
                    codecs,
                    [
                        Compression::UNCOMPRESSED,
                        Compression::ZSTD(Default::default()),
                        Compression::UNCOMPRESSED
                    ],
                    "{version:?}"
                );
                let want = decode(read, meta, 0);
                assert_eq!(decode(ours, theirs, 0), want, "{version:?}, {dictionary}");
            }
        }
    }

    #[test]
    fn a_unit_of_large_chunks_is_left_as_it_is() {
        // Random ids do not compress: 8 bytes a row stored.
        let rows = (SMALL_CHUNKS / 8) as usize + 1_000;
        let mut rng = fastrand::Rng::with_seed(5);
        let ids = Int64Array::from_iter_values((0..rows).map(|_| rng.i64(..)));
        let batch = RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef)]).unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(Default::default()))
            .set_dictionary_enabled(false)
            .build();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let bytes = bytes::Bytes::from(out);
        let read = Sparse::new(bytes.len() as u64, vec![(0, bytes.clone())]);
        let meta = ArrowReaderMetadata::load(&bytes, Default::default()).unwrap();
        assert!(meta.metadata().row_group(0).column(0).compressed_size() as u64 > SMALL_CHUNKS);
        assert!(decompress_unit(&read, meta.metadata(), meta.schema(), 0, &[0]).is_none());
    }

    /// Files written by pyarrow (`scripts/golden/zstd_pages.py`): data pages v1 and v2, with
    /// and without page checksums and dictionaries. Rewritten, every chunk decodes to the
    /// file's values, and no header keeps a checksum.
    #[test]
    fn pyarrow_pages_decompressed_decode_as_they_were() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/golden/zstd_pages");
        for (name, crc) in [("v1_crc", true), ("v2_crc", true), ("v2_plain", false)] {
            let bytes =
                bytes::Bytes::from(std::fs::read(dir.join(format!("{name}.parquet"))).unwrap());
            let read = Sparse::new(bytes.len() as u64, vec![(0, bytes.clone())]);
            let meta = ArrowReaderMetadata::load(&bytes, Default::default()).unwrap();
            let (ours, theirs) =
                decompress_unit(&read, meta.metadata(), meta.schema(), 0, &[0, 1, 2]).unwrap();
            for (before, after) in meta
                .metadata()
                .row_group(0)
                .columns()
                .iter()
                .zip(theirs.metadata().row_group(0).columns())
            {
                let fields = |c: &parquet::file::metadata::ColumnChunkMetaData, r: &Sparse| {
                    let (start, len) = pages::checked_range(c).unwrap();
                    pages::header_fields(&r.piece(start, len).unwrap(), start)
                };
                let (old, new) = (fields(before, &read), fields(after, &ours));
                assert!(old.len() > 1, "{name}: {old:?}");
                assert_eq!(old.len(), new.len(), "{name}");
                assert_eq!(old.iter().all(|f| f.contains(&4)), crc, "{name}: {old:?}");
                assert!(new.iter().all(|f| !f.contains(&4)), "{name}: {new:?}");
                assert_eq!(after.compression(), Compression::UNCOMPRESSED);
            }
            assert_eq!(decode(ours, theirs, 0), decode(read, meta, 0), "{name}");
        }
    }
}
