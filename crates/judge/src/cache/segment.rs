//! One segment of a shared cache: an immutable Parquet file of replies, written once and
//! never changed, read by byte ranges.
//!
//! Columns `key` (fixed 32 bytes), `content`, `prompt_tokens`, `completion_tokens`. Rows come
//! in runs sorted by key (a run is one upload's replies, or several small ones merged by
//! `compact`), cut into row groups of at most [`GROUP_ROWS`] rows that never straddle two
//! runs. Each row group's key column carries min/max statistics and a split-block bloom
//! filter (Parquet's own, sized for [`GROUP_ROWS`] keys at [`BLOOM_FPP`]), all filters at the
//! end of the file beside the footer, so one read of the file's tail is its whole index:
//! about [`INDEX_BYTES_PER_ROW`] bytes per reply. A key is looked for only in the row groups
//! whose range holds it and whose filter admits it; a run's replies stay together, so a
//! nightly run that needs what one earlier run stored reads that run's row groups and the
//! others' indexes, not the whole cache.
//!
//! Everything here works on bytes already fetched; the requests are module `remote`'s.

use crate::{CachedReply, Key};
use arrow::array::{Array, FixedSizeBinaryArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::bloom_filter::Sbbf;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::{BloomFilterPosition, EnabledStatistics, WriterProperties};
use parquet::file::reader::{ChunkReader, Length};
use parquet::schema::types::ColumnPath;
use std::ops::Range;
use std::sync::Arc;

/// Rows per row group at most: the unit a lookup fetches.
pub const GROUP_ROWS: usize = 1024;

/// The bloom filters' false-positive rate per key and row group, as asked of parquet's
/// writer (its split-block filters admit 2.4e-5 to 3.2e-5 of absent keys at this setting,
/// measured over 1,000,000 keys). A key missing from the cache is checked against one row
/// group per run of every segment it looks at, so over a cache of a hundred runs a run of
/// 10,000 new requests fetches about thirty row groups for nothing.
pub const BLOOM_FPP: f64 = 1e-5;

/// What the index (footer and bloom filters) of a segment costs per reply, about: a 4 KiB
/// filter and a row group's footer entry per [`GROUP_ROWS`] replies.
pub const INDEX_BYTES_PER_ROW: usize = 5;

/// How much of a segment of `size` bytes to read first, hoping for its whole index: an
/// eighth (the index is a tenth of a segment of the shortest replies, less of longer ones),
/// at least 8 KiB, at most 8 MiB. A short guess costs one more request.
pub fn tail_guess(size: u64) -> u64 {
    (size / 8).clamp(8 << 10, 8 << 20).min(size)
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::FixedSizeBinary(32), false),
        Field::new("content", DataType::Utf8, false),
        Field::new("prompt_tokens", DataType::Int64, false),
        Field::new("completion_tokens", DataType::Int64, false),
    ]))
}

fn properties() -> WriterProperties {
    let key = ColumnPath::from("key");
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_offset_index_disabled(true)
        .set_column_dictionary_enabled(key.clone(), false)
        .set_column_bloom_filter_enabled(key.clone(), true)
        .set_column_bloom_filter_max_ndv(key.clone(), GROUP_ROWS as u64)
        .set_column_bloom_filter_fpp(key, BLOOM_FPP)
        .set_bloom_filter_position(BloomFilterPosition::End)
        .build()
}

fn batch(rows: &[(Key, CachedReply)]) -> Result<RecordBatch, ParquetError> {
    let keys = FixedSizeBinaryArray::try_from_iter(rows.iter().map(|(k, _)| k.0))
        .map_err(|e| ParquetError::General(e.to_string()))?;
    let content: StringArray = rows.iter().map(|(_, r)| Some(r.content.as_str())).collect();
    let tokens = |f: fn(&CachedReply) -> u64| -> Int64Array {
        rows.iter()
            .map(|(_, r)| Some(i64::try_from(f(r)).unwrap_or(i64::MAX)))
            .collect()
    };
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(keys),
            Arc::new(content),
            Arc::new(tokens(|r| r.prompt_tokens)),
            Arc::new(tokens(|r| r.completion_tokens)),
        ],
    )
    .map_err(|e| ParquetError::General(e.to_string()))
}

/// Writes segments: runs of replies, each sorted by key (the first of two equal keys kept)
/// and cut into row groups that stay within it.
pub struct SegmentWriter {
    writer: ArrowWriter<Vec<u8>>,
    rows: u64,
}

impl SegmentWriter {
    pub fn new() -> Result<SegmentWriter, ParquetError> {
        Ok(SegmentWriter {
            writer: ArrowWriter::try_new(Vec::new(), schema(), Some(properties()))?,
            rows: 0,
        })
    }

    /// Appends `run` as one sorted run: its row groups hold nothing of another run.
    pub fn run(&mut self, mut run: Vec<(Key, CachedReply)>) -> Result<(), ParquetError> {
        run.sort_by_key(|r| r.0);
        run.dedup_by(|b, a| a.0 == b.0);
        for part in run.chunks(GROUP_ROWS) {
            self.writer.write(&batch(part)?)?;
        }
        self.writer.flush()?;
        self.rows += run.len() as u64;
        Ok(())
    }

    /// Replies written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The file's bytes.
    pub fn finish(self) -> Result<Vec<u8>, ParquetError> {
        self.writer.into_inner()
    }
}

/// A segment with `rows` as one run.
pub fn encode(rows: Vec<(Key, CachedReply)>) -> Result<Vec<u8>, ParquetError> {
    let mut w = SegmentWriter::new()?;
    w.run(rows)?;
    w.finish()
}

/// Bytes fetched from a file of `size` bytes, starting at `start`: a [`ChunkReader`] that
/// serves the offsets it holds and refuses the others.
struct Fetched {
    size: u64,
    start: u64,
    bytes: Bytes,
}

impl Length for Fetched {
    fn len(&self) -> u64 {
        self.size
    }
}

impl ChunkReader for Fetched {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> Result<Self::T, ParquetError> {
        let end = self.start + self.bytes.len() as u64;
        self.get_bytes(start, end.saturating_sub(start) as usize)
            .map(bytes::Buf::reader)
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, ParquetError> {
        let from = start.checked_sub(self.start);
        let to = from.and_then(|f| f.checked_add(length as u64));
        match (from, to) {
            (Some(f), Some(t)) if t <= self.bytes.len() as u64 => {
                Ok(self.bytes.slice(f as usize..t as usize))
            }
            _ => Err(ParquetError::General(format!(
                "bytes {start} to {} are not in the fetched range",
                start.saturating_add(length as u64)
            ))),
        }
    }
}

/// One row group of a segment as its index sees it.
#[derive(Debug)]
pub struct Group {
    pub min: [u8; 32],
    pub max: [u8; 32],
    /// The file's bytes holding the group's column chunks.
    pub range: Range<u64>,
    pub rows: u64,
    bloom: Option<Sbbf>,
}

impl Group {
    /// Whether `key` may be in this group: in its range, and admitted by its filter.
    pub fn may_hold(&self, key: &Key) -> bool {
        self.min <= key.0
            && key.0 <= self.max
            && self.bloom.as_ref().is_none_or(|b| b.check(&key.0[..]))
    }
}

/// A segment's footer and filters.
#[derive(Debug)]
pub struct Index {
    pub meta: Arc<ParquetMetaData>,
    pub groups: Vec<Group>,
}

/// What to do with a segment's tail.
pub enum Tail {
    /// The index, read from the tail given.
    Index(Index),
    /// The tail must start at this offset (more bytes are needed).
    From(u64),
}

fn bad(message: impl Into<String>) -> ParquetError {
    ParquetError::General(message.into())
}

/// The index of a segment of `size` bytes from its bytes from `start` to the end.
pub fn index(size: u64, start: u64, tail: Bytes) -> Result<Tail, ParquetError> {
    let fetched = Fetched {
        size,
        start,
        bytes: tail,
    };
    let mut reader = ParquetMetaDataReader::new();
    match reader.try_parse_sized(&fetched.bytes, size) {
        Ok(()) => {}
        Err(ParquetError::NeedMoreData(n)) => return Ok(Tail::From(size.saturating_sub(n as u64))),
        Err(e) => return Err(e),
    }
    let meta = Arc::new(reader.finish()?);
    let expected = schema();
    let arrow = parquet::arrow::parquet_to_arrow_schema(
        meta.file_metadata().schema_descr(),
        meta.file_metadata().key_value_metadata(),
    )?;
    if arrow.fields().len() != expected.fields().len()
        || arrow
            .fields()
            .iter()
            .zip(expected.fields())
            .any(|(a, b)| a.name() != b.name() || a.data_type() != b.data_type())
    {
        return Err(bad("not a judge cache segment (other columns)"));
    }
    // Where the filters start: they must be in the tail too.
    let first_bloom = meta
        .row_groups()
        .iter()
        .filter_map(|g| g.column(0).bloom_filter_offset())
        .min()
        .map(|o| u64::try_from(o).map_err(|_| bad("a bloom filter offset is negative")))
        .transpose()?;
    if let Some(b) = first_bloom.filter(|&b| b < start) {
        return Ok(Tail::From(b));
    }
    let mut groups = Vec::with_capacity(meta.num_row_groups());
    for g in meta.row_groups() {
        let key = g.column(0);
        let stats = key
            .statistics()
            .ok_or_else(|| bad("a row group has no key statistics"))?;
        let bound = |b: Option<&[u8]>| -> Result<[u8; 32], ParquetError> {
            b.and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| bad("a row group's key range is not 32 bytes"))
        };
        let bloom = match (key.bloom_filter_offset(), key.bloom_filter_length()) {
            (Some(off), Some(len)) => {
                let (off, len) = (
                    u64::try_from(off).map_err(|_| bad("a bloom filter offset is negative"))?,
                    usize::try_from(len).map_err(|_| bad("a bloom filter length is negative"))?,
                );
                Some(Sbbf::from_bytes(&fetched.get_bytes(off, len)?)?)
            }
            _ => None,
        };
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for c in g.columns() {
            let (s, n) = c.byte_range();
            lo = lo.min(s);
            hi = hi.max(
                s.checked_add(n)
                    .ok_or_else(|| bad("a column chunk overflows"))?,
            );
        }
        if lo > hi || hi > size {
            return Err(bad("a row group lies outside the file"));
        }
        groups.push(Group {
            min: bound(stats.min_bytes_opt())?,
            max: bound(stats.max_bytes_opt())?,
            range: lo..hi,
            rows: u64::try_from(g.num_rows()).map_err(|_| bad("a row group has negative rows"))?,
            bloom,
        });
    }
    Ok(Tail::Index(Index { meta, groups }))
}

/// The replies of row group `group` of a segment, from the bytes of its range.
pub fn decode_group(
    index: &Index,
    size: u64,
    group: usize,
    bytes: Bytes,
) -> Result<Vec<(Key, CachedReply)>, ParquetError> {
    let range = index
        .groups
        .get(group)
        .ok_or_else(|| bad("no such row group"))?
        .range
        .clone();
    let fetched = Fetched {
        size,
        start: range.start,
        bytes,
    };
    let meta = ArrowReaderMetadata::try_new(Arc::clone(&index.meta), ArrowReaderOptions::new())?;
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(fetched, meta)
        .with_row_groups(vec![group])
        .with_batch_size(GROUP_ROWS)
        .build()?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| bad(e.to_string()))?;
        let col = |i: usize| batch.column(i);
        let keys = col(0).as_any().downcast_ref::<FixedSizeBinaryArray>();
        let content = col(1).as_any().downcast_ref::<StringArray>();
        let prompt = col(2).as_any().downcast_ref::<Int64Array>();
        let completion = col(3).as_any().downcast_ref::<Int64Array>();
        let (Some(keys), Some(content), Some(prompt), Some(completion)) =
            (keys, content, prompt, completion)
        else {
            return Err(bad("not a judge cache segment (other columns)"));
        };
        if [
            keys.null_count(),
            content.null_count(),
            prompt.null_count(),
            completion.null_count(),
        ]
        .iter()
        .any(|&n| n > 0)
        {
            return Err(bad("a reply has a null column"));
        }
        for i in 0..batch.num_rows() {
            let key =
                <[u8; 32]>::try_from(keys.value(i)).map_err(|_| bad("a key is not 32 bytes"))?;
            out.push((
                Key(key),
                CachedReply {
                    content: content.value(i).to_owned(),
                    prompt_tokens: prompt.value(i).max(0) as u64,
                    completion_tokens: completion.value(i).max(0) as u64,
                },
            ));
        }
    }
    Ok(out)
}

/// Every reply of a segment held whole in `bytes` (for `compact`).
pub fn decode_all(bytes: Bytes) -> Result<(Index, Vec<(Key, CachedReply)>), ParquetError> {
    let size = bytes.len() as u64;
    let Tail::Index(index) = index(size, 0, bytes.clone())? else {
        return Err(bad("the file is shorter than its footer says"));
    };
    let mut all = Vec::new();
    for g in 0..index.groups.len() {
        let r = index.groups[g].range.clone();
        all.extend(decode_group(
            &index,
            size,
            g,
            bytes.slice(r.start as usize..r.end as usize),
        )?);
    }
    Ok((index, all))
}

#[cfg(test)]
#[path = "segment_tests.rs"]
mod tests;
