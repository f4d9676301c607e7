//! A Parquet input from its footer, and the decoder's setup: strings read as Utf8View, and
//! every call into the decoder on possibly damaged bytes made under a panic guard.

use crate::{pages, Format, InputFile, ReadError};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
pub(crate) use evalscore_parquet::guarded;
use evalscore_parquet::Sparse;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::parquet_to_arrow_schema;
use parquet::file::metadata::{
    KeyValue, ParquetMetaData, ParquetMetaDataOptions, ParquetMetaDataReader,
    ParquetStatisticsPolicy,
};
use parquet::schema::types::SchemaDescPtr;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A file that is not (or not all) Parquet, and why.
pub(crate) fn unreadable(path: &Path, why: &dyn std::fmt::Display) -> ReadError {
    ReadError::at(path, format!("not a readable Parquet file: {why}"))
        .with_hint("the file may be truncated, still being written, or not Parquet at all")
}

/// A Parquet file's end holding its whole footer ([`read_tail`]): the first byte read, the
/// bytes, and the footer's metadata length.
pub(crate) type Tail = (u64, Bytes, u64);

/// A local file that does not end as a Parquet file does ([`read_tail`]), in the words of
/// parquet-rs reading it through `handle`.
pub(crate) fn not_parquet<R: parquet::file::reader::ChunkReader>(
    path: &Path,
    handle: &R,
) -> ReadError {
    match guarded(|| ArrowReaderMetadata::load(handle, ArrowReaderOptions::new())) {
        Err(m) => unreadable(path, &m),
        Ok(Err(e)) => unreadable(path, &e),
        // parquet-rs reads a footer with no room for the leading magic before it.
        Ok(Ok(_)) => unreadable(
            path,
            &"its footer leaves no room for the leading magic `PAR1`",
        ),
    }
}

/// The end of a Parquet file of `len` bytes holding its whole footer, read through `read` (a
/// byte range to its bytes): the last `first` bytes, then the whole footer when it is longer
/// (one more read rather than bytes nobody needs). Gives the first byte read, the bytes and
/// the footer's metadata length; `Ok(Err)` says why the file does not end as Parquet does.
pub(crate) fn read_tail<E>(
    len: u64,
    first: u64,
    mut read: impl FnMut(Range<u64>) -> Result<Bytes, E>,
) -> Result<Result<Tail, String>, E> {
    if len < 12 {
        return Ok(Err(format!(
            "the object has {len} bytes, too few for Parquet"
        )));
    }
    let mut start = len - len.min(first);
    let mut tail = read(start..len)?;
    let end = &tail[tail.len() - 8..];
    if &end[4..] != b"PAR1" {
        return Ok(Err("it does not end with the Parquet magic `PAR1`".into()));
    }
    let meta_len = u64::from(u32::from_le_bytes([end[0], end[1], end[2], end[3]]));
    if meta_len + 12 > len {
        return Ok(Err(format!(
            "its footer claims {meta_len} bytes, more than the file holds"
        )));
    }
    if meta_len + 8 > tail.len() as u64 {
        start = len - meta_len - 8;
        tail = read(start..len)?;
    }
    Ok(Ok((start, tail, meta_len)))
}

/// A Parquet input from its file's end ([`read_tail`]: `tail` from byte `tail_start` of a
/// file of `len` bytes, holding the whole footer of `meta_len` bytes): the schema's depth
/// checked on the footer's bytes, the footer hashed and parsed (its Utf8View form made only
/// when `keep`: a file that drops its footer makes it at each unit). Also gives the parsed
/// footer.
pub(crate) fn open_from_tail(
    path: &Path,
    len: u64,
    (tail_start, tail, meta_len): Tail,
    keep: bool,
) -> Result<(InputFile, Arc<ParquetMetaData>), ReadError> {
    // The footer: the metadata, its length and the magic.
    let footer = &tail[tail.len() - 8 - meta_len as usize..];
    pages::check_schema_depth(&footer[..footer.len() - 8]).map_err(|fault| match fault {
        pages::SchemaFault::TooDeep(m) => ReadError::at(path, format!("unsupported schema: {m}"))
            .with_hint("flatten the deepest columns, or drop those the task does not use"),
        pages::SchemaFault::Damaged(m) => unreadable(path, &format!("damaged footer: {m}")),
    })?;
    let footer_sha256 = format!("{:x}", Sha256::digest(footer));
    let data_end = len - footer.len() as u64;
    let metadata = tail.slice(tail.len() - 8 - meta_len as usize..tail.len() - 8);
    let sparse = Sparse::new(len, vec![(tail_start, tail)]);
    let (file, meta) = open_parquet(path, &sparse, footer_sha256, data_end, keep)?;
    // What parquet-rs does not check of the footer (a chunk's own type, required fields,
    // statistics' widths, level histograms).
    pages::check_footer_fields(&metadata, &meta).map_err(|m| {
        ReadError::at(path, format!("damaged footer: {m}"))
            .with_hint("the file is damaged; re-export it from its source")
    })?;
    Ok((file, meta))
}

/// A Parquet input from its footer, read through `handle`, and the parsed footer; `data_end`
/// is where the footer starts (the column chunks end before it). The input keeps the
/// footer's Utf8View form when `keep`.
pub(crate) fn open_parquet<R: parquet::file::reader::ChunkReader>(
    path: &Path,
    handle: &R,
    footer_sha256: String,
    data_end: u64,
    keep: bool,
) -> Result<(InputFile, Arc<ParquetMetaData>), ReadError> {
    let (meta, schema) = if keep {
        let loaded = guarded(|| ArrowReaderMetadata::load(handle, ArrowReaderOptions::new()))
            .map_err(|m| unreadable(path, &m))?
            .map_err(|e| unreadable(path, &e))?;
        (Arc::clone(loaded.metadata()), Arc::clone(loaded.schema()))
    } else {
        // A footer not kept serves only the schema and the checks below: its statistics are
        // skipped (a unit that reads the footer again parses what it needs), and its Arrow
        // schema is the last file's when their Parquet schemas are equal.
        let meta = guarded(|| without_statistics().parse_and_finish(handle))
            .map_err(|m| unreadable(path, &m))?
            .map_err(|e| unreadable(path, &e))?;
        let schema = arrow_schema(&meta).map_err(|m| unreadable(path, &m))?;
        (Arc::new(meta), schema)
    };
    let meta = &meta;
    pages::check_footer(meta, data_end).map_err(|m| {
        ReadError::at(path, format!("damaged footer: {m}"))
            .with_hint("the file is damaged; re-export it from its source")
    })?;
    let row_groups: Vec<u64> = meta
        .row_groups()
        .iter()
        .map(|rg| rg.num_rows().max(0) as u64)
        .collect();
    let rows = row_groups.iter().sum();
    if let Some(name) = repeated_name(schema.fields(), "") {
        // The engine's words for the same fault in a batch, kept for files too.
        return Err(ReadError::new(format!(
            "the input (`{}`) has two columns named `{name}`",
            path.display()
        ))
        .with_hint("rename one of them in the export"));
    }
    let reader_meta = keep
        .then(|| {
            guarded(|| ArrowReaderMetadata::try_new(Arc::clone(meta), view_options(&schema)).ok())
                .ok()
                .flatten()
        })
        .flatten();
    let file = InputFile {
        path: path.to_path_buf(),
        format: Format::Parquet,
        compression: None,
        rows,
        row_groups,
        footer_sha256,
        schema,
        jsonl_spans: Vec::new(),
        reader_meta,
        dropped: None,
        remote: None,
        partitions: Vec::new(),
        stamp: None,
    };
    Ok((file, Arc::clone(meta)))
}

impl InputFile {
    /// Forgets the parsed footer: each unit reads and parses it again (module `opening`).
    pub(crate) fn drop_footer(&mut self) {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        self.reader_meta = None;
        self.dropped = Some(NEXT.fetch_add(1, Ordering::Relaxed));
    }
}

/// A remote Parquet file's fetched tail (at least the whole footer) and its parsed footer.
#[derive(Clone)]
pub(crate) struct Footer {
    /// Where `tail` starts in the file.
    pub tail_start: u64,
    pub tail: bytes::Bytes,
    pub meta: std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
}

/// A footer read again: a remote file's tail with it, and the parsed footer.
pub(crate) type Reread = (Option<Footer>, ArrowReaderMetadata);

/// A footer reader that skips the columns' statistics: for footers read only for the
/// schema, the row counts and decoding.
pub(crate) fn without_statistics() -> ParquetMetaDataReader {
    let options = ParquetMetaDataOptions::new()
        .with_column_stats_policy(ParquetStatisticsPolicy::SkipAll)
        .with_size_stats_policy(ParquetStatisticsPolicy::SkipAll);
    ParquetMetaDataReader::new().with_metadata_options(Some(options))
}

thread_local! {
    /// The footer this thread last read again, under its file's [`InputFile::dropped`]
    /// number: one worker decodes a unit, which reads the footer twice (for its stored
    /// chunks and for its batches), and a file's units one after another.
    static LAST_REREAD: RefCell<Option<(u64, Reread)>> = const { RefCell::new(None) };
}

/// This thread's last footer read again, if it is the file numbered `id`'s.
pub(crate) fn reread_hit(id: u64) -> Option<Reread> {
    LAST_REREAD.with(|last| match &*last.borrow() {
        Some((at, r)) if *at == id => Some(r.clone()),
        _ => None,
    })
}

/// The footer of the file numbered `id`: this thread's last one read again if it is that
/// file's, else `read()`, then kept as the last one.
pub(crate) fn reread(
    id: u64,
    read: impl FnOnce() -> Result<Result<Reread, String>, ReadError>,
) -> Result<Result<Reread, String>, ReadError> {
    if let Some(hit) = reread_hit(id) {
        return Ok(Ok(hit));
    }
    let read = read()?;
    if let Ok(r) = &read {
        LAST_REREAD.with(|last| *last.borrow_mut() = Some((id, r.clone())));
    }
    Ok(read)
}

/// The Parquet schema and key-value metadata of a footer, and its Arrow schema.
type MadeSchema = (SchemaDescPtr, Option<Vec<KeyValue>>, SchemaRef);

thread_local! {
    /// The schema this thread last made from a footer: the files of a run mostly share one.
    static LAST_SCHEMA: RefCell<Option<MadeSchema>> = const { RefCell::new(None) };
}

/// The Arrow schema of the file whose parsed footer is `meta`, as parquet-rs reads it (the
/// embedded Arrow schema, if any, taken into account): this thread's last one when the
/// Parquet schema and key-value metadata are equal to its file's, else made.
fn arrow_schema(meta: &ParquetMetaData) -> Result<SchemaRef, String> {
    let file = meta.file_metadata();
    let (descr, kv) = (file.schema_descr_ptr(), file.key_value_metadata());
    let hit = LAST_SCHEMA.with(|last| match &*last.borrow() {
        Some((d, k, schema)) if k.as_ref() == kv && (Arc::ptr_eq(d, &descr) || **d == *descr) => {
            Some(Arc::clone(schema))
        }
        _ => None,
    });
    if let Some(schema) = hit {
        return Ok(schema);
    }
    let schema = guarded(|| parquet_to_arrow_schema(&descr, kv))?.map_err(|e| e.to_string())?;
    let schema = Arc::new(schema);
    LAST_SCHEMA.with(|last| *last.borrow_mut() = Some((descr, kv.cloned(), Arc::clone(&schema))));
    Ok(schema)
}

/// The footer read through `handle` and parsed with strings as Utf8View (`schema` is the
/// file's, as found at open).
pub(crate) fn load_view<R: parquet::file::reader::ChunkReader>(
    handle: &R,
    schema: &SchemaRef,
) -> Result<ArrowReaderMetadata, String> {
    guarded(|| ArrowReaderMetadata::load(handle, view_options(schema)))?.map_err(|e| e.to_string())
}

/// The first name two fields of one level use (`a`, or `meta.tag` inside struct `meta`):
/// parquet-rs keeps both, and reading by name would silently take the first.
fn repeated_name(fields: &arrow::datatypes::Fields, prefix: &str) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    for f in fields {
        if !seen.insert(f.name().as_str()) {
            return Some(format!("{prefix}{}", f.name()));
        }
    }
    fields.iter().find_map(|f| match f.data_type() {
        DataType::Struct(children) => repeated_name(children, &format!("{prefix}{}.", f.name())),
        _ => None,
    })
}

/// Strings are decoded as Utf8View: views into the decoded pages instead of a copy of every
/// string into one buffer.
pub(crate) fn view_options(schema: &SchemaRef) -> ArrowReaderOptions {
    ArrowReaderOptions::new().with_schema(view_schema(schema))
}

/// `schema` with top-level Utf8 and LargeUtf8 columns read as Utf8View.
pub(crate) fn view_schema(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_data_type(view_type(f.data_type())))
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The type the decoder gives a top-level column stored as `t`: Utf8 and LargeUtf8 as
/// Utf8View, and so the items of a List of them.
pub(crate) fn view_type(t: &DataType) -> DataType {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 => DataType::Utf8View,
        // List items too (MCQA choices): views into the decoded dictionary page instead
        // of a copy of every item.
        DataType::List(item)
            if matches!(item.data_type(), DataType::Utf8 | DataType::LargeUtf8) =>
        {
            let item = item.as_ref().clone().with_data_type(DataType::Utf8View);
            DataType::List(Arc::new(item))
        }
        t => t.clone(),
    }
}
