//! Columnar input for evalscore: files in, streams of Arrow `RecordBatch`es out.
//!
//! [`Inputs::open`] expands the `--input` paths (Parquet files, JSONL files, directories of
//! Parquet files), reads every footer, and checks that all files share one schema. The work is
//! split into [`Unit`]s (a Parquet row group, or a whole JSONL file); [`Inputs::read_unit`]
//! decodes one unit, reading only the projected columns, and [`scan_ordered`] runs a function
//! over all units on a rayon pool while handing results back in input order, with a bounded
//! number of units in flight so memory does not grow with the input.
//! Damaged Parquet metadata is caught before the decoder runs (module `pages`): the footer's column
//! chunks are checked against the file when it is opened, and every page header of a unit's
//! columns against its chunk before the unit is decoded; the decoder itself runs under a
//! panic guard. Every failure is a [`ReadError`] naming the file, and where known the row and column.
//! [`Inputs::stored_chunk`] hands out a column chunk as it is stored (pages still encoded and
//! compressed, checked the same way), for a writer that copies it instead of decoding it.

mod error;
mod jsonl;
mod pages;
mod remote;
mod scan;

pub use error::ReadError;
pub use jsonl::{jsonl_kind, Compression};
pub use pages::DataPageSpan;
pub use scan::scan_ordered;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use evalscore_storage::{Location, StoreUrl};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ColumnChunkMetaData;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file formats evalscore reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Parquet,
    Jsonl,
}

/// One input file and what its footer (or first pass) says about it.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub path: PathBuf,
    pub format: Format,
    /// JSONL only: how the file is compressed (from its name).
    pub compression: Option<Compression>,
    pub rows: u64,
    /// Rows per row group (for a JSONL file: per chunk of lines, see `jsonl_spans`).
    pub row_groups: Vec<u64>,
    /// SHA-256 of the Parquet footer (metadata and its length), hex; of the whole file for JSONL.
    pub footer_sha256: String,
    schema: SchemaRef,
    /// JSONL only: the byte range of each chunk of lines, one per entry of `row_groups`.
    jsonl_spans: Vec<(u64, u64)>,
    /// Parquet only: the footer as parsed when the file was opened, with strings as
    /// Utf8View, so that each unit's decoder starts from it instead of reading and parsing
    /// the footer again (200 files of one row group each read 200 footers twice before).
    /// `None` when the view schema does not apply; units then read the footer themselves.
    reader_meta: Option<ArrowReaderMetadata>,
    /// An input in object storage (`path` is then its URL): see module `remote`.
    remote: Option<Arc<remote::Remote>>,
}

/// A piece of work: one row group of a Parquet file, or one chunk of lines of a JSONL file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// Index into [`Inputs::files`].
    pub file: usize,
    /// Row group index (for JSONL, the chunk of lines).
    pub row_group: usize,
    /// Row number of the unit's first row within its file (0-based).
    pub first_row: u64,
    pub rows: u64,
}

/// A column chunk of one Parquet row group as the file stores it: its pages, still encoded
/// and compressed, and the footer's description of them ([`Inputs::stored_chunk`]).
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

/// The set of input files of a run.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub files: Vec<InputFile>,
    /// The schema every file shares (the first file's).
    pub schema: SchemaRef,
}

/// Rows per record batch when decoding. Small batches keep every buffer in the allocator's
/// reused pages: at 64k rows, parquet's list reader grows the `choices` item buffer by exact
/// reservations, copying it and faulting in fresh pages for every page it decodes. 8k rows
/// was the fastest and smallest of the sizes measured on the benchmark job (BENCHMARKS.md).
pub const BATCH_SIZE: usize = 8 * 1024;

impl Inputs {
    /// Expands `paths` and opens every file's footer.
    ///
    /// A directory contributes its `*.parquet` files sorted by name. Files ending `.jsonl` or
    /// `.ndjson` are JSON Lines, and so are those names ending `.gz` or `.zst` (decompressed
    /// as they are read); everything else is read as Parquet.
    pub fn open(paths: &[PathBuf]) -> Result<Inputs, ReadError> {
        Inputs::open_with(paths, &[])
    }

    /// [`Inputs::open`], where a path may also be an object storage URL (`s3://`, `gs://`,
    /// `az://`, `abfss://`, `https://`; a URL ending in `/` is a prefix, read as a directory),
    /// configured from the environment and `storage_options` (`--storage-option KEY=VALUE`).
    pub fn open_with(
        paths: &[PathBuf],
        storage_options: &[(String, String)],
    ) -> Result<Inputs, ReadError> {
        if paths.is_empty() {
            return Err(ReadError::new("no input given")
                .with_hint("pass `--input FILE.parquet` or `--input DIR`"));
        }
        let mut files = Vec::new();
        for p in paths {
            match Location::from_path(p) {
                Location::Remote(url) => {
                    for (object, format) in expand_url(&url, storage_options)? {
                        files.push(open_remote(object, format)?);
                    }
                }
                Location::Local(p) => {
                    for (path, format) in expand(&p)? {
                        files.push(open_file(&path, format)?);
                    }
                }
            }
        }
        let first = &files[0];
        for f in &files[1..] {
            check_same_schema(first, f)?;
        }
        // A column is nullable in the shared schema when it is in any file, so what is built
        // from it (a kept column's output field) holds every file's rows.
        let fields: Vec<Field> = first
            .schema
            .fields()
            .iter()
            .map(|f| {
                let nullable = files.iter().any(|g| {
                    g.schema
                        .field_with_name(f.name())
                        .map_or(true, |g| g.is_nullable())
                });
                f.as_ref().clone().with_nullable(nullable)
            })
            .collect();
        Ok(Inputs {
            schema: Arc::new(Schema::new_with_metadata(
                fields,
                first.schema.metadata().clone(),
            )),
            files,
        })
    }

    /// Total rows over all files.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.rows).sum()
    }

    /// Every unit of work, in input order.
    pub fn units(&self) -> Vec<Unit> {
        let mut units = Vec::new();
        for (file, f) in self.files.iter().enumerate() {
            let mut first_row = 0;
            for (row_group, &rows) in f.row_groups.iter().enumerate() {
                units.push(Unit {
                    file,
                    row_group,
                    first_row,
                    rows,
                });
                first_row += rows;
            }
        }
        units
    }

    /// Decodes one unit, projected to `columns` (names of the shared schema, in schema order),
    /// calling `f` with each batch; the first error, the reader's or `f`'s, ends it.
    pub fn read_unit<E: From<ReadError>>(
        &self,
        unit: &Unit,
        columns: &[String],
        mut f: impl FnMut(RecordBatch) -> Result<(), E>,
    ) -> Result<(), E> {
        for batch in self.unit_batches(unit, columns)? {
            f(batch?)?;
        }
        Ok(())
    }

    /// The batches of one unit, projected to `columns` (names of the shared schema, in schema
    /// order), as parquet's `ParquetRecordBatchReader` yields them. A unit whose rows are not
    /// the count its file promised ends with an error naming the file and the rows.
    pub fn unit_batches<'a>(
        &'a self,
        unit: &Unit,
        columns: &[String],
    ) -> Result<UnitBatches<'a>, ReadError> {
        let file = &self.files[unit.file];
        let source = match file.format {
            Format::Jsonl => {
                let (reader, indices) = jsonl::open_chunk(file, unit.row_group, columns)?;
                Source::Jsonl {
                    reader: Box::new(reader),
                    indices,
                }
            }
            Format::Parquet => {
                let roots: Vec<usize> = columns
                    .iter()
                    .filter_map(|c| file.schema.index_of(c).ok())
                    .collect();
                let reader = match &file.remote {
                    None => {
                        let handle = File::open(&file.path)
                            .map_err(|e| ReadError::at(&file.path, format!("cannot open: {e}")))?;
                        // A second handle for the page-header checks; the decoder seeks before
                        // every read.
                        let check = handle
                            .try_clone()
                            .map_err(|e| ReadError::at(&file.path, format!("cannot open: {e}")))?;
                        parquet_unit(file, unit, roots, handle, |chunk| {
                            pages::check_chunk(&check, chunk).map(|_| ())
                        })?
                    }
                    Some(remote) => remote_unit(file, remote, unit, roots)?,
                };
                Source::Parquet(Box::new(reader))
            }
        };
        Ok(UnitBatches {
            file,
            unit: *unit,
            source,
            seen: 0,
            ended: false,
        })
    }

    /// The stored chunk of top-level column `column` in a Parquet unit, for a writer that
    /// copies the column instead of decoding and re-encoding it. Its page headers are checked
    /// first, as before decoding (module `pages`): a damaged chunk is an error, never copied.
    ///
    /// `None` when there is no such chunk to copy: a JSONL unit, a column that is not a
    /// top-level leaf (structs, lists), a chunk stored in another file or compressed with a
    /// codec not every reader has ([`portable_codec`]), or a file whose footer was not kept
    /// at open.
    pub fn stored_chunk(
        &self,
        unit: &Unit,
        column: &str,
    ) -> Result<Option<StoredChunk>, ReadError> {
        let file = &self.files[unit.file];
        let Some(meta) = file.reader_meta.as_ref().map(|m| m.metadata()) else {
            return Ok(None);
        };
        let Some(rg) = meta.row_groups().get(unit.row_group) else {
            return Ok(None);
        };
        let Some(chunk) = rg.columns().iter().find(|c| {
            let parts = c.column_path().parts();
            parts.len() == 1 && parts[0] == column && c.column_descr().max_rep_level() == 0
        }) else {
            return Ok(None);
        };
        if chunk.file_path().is_some() || !portable_codec(chunk.compression()) {
            return Ok(None);
        }
        let damaged = |m: &dyn std::fmt::Display| {
            damaged_unit(file, unit, &format!("column `{column}`: {m}"))
        };
        // Read once; the page headers are then checked from memory.
        let (start, len) = pages::checked_range(chunk).map_err(|m| damaged(&m))?;
        let buf = read_range(file, start, len, &damaged)?;
        let spans = pages::check_chunk_bytes(&buf, chunk).map_err(|m| damaged(&m))?;
        // The copy's row count is the footer's value count (one per row for a flat column,
        // as `check_footer` made sure at open); the pages must hold exactly that many.
        let values: i64 = spans.iter().map(|p| p.values).sum();
        if values != chunk.num_values() {
            return Err(damaged(&format!(
                "its data pages hold {values} values and the footer gives it {}",
                chunk.num_values()
            )));
        }
        Ok(Some(StoredChunk {
            bytes: buf,
            meta: chunk.clone(),
            pages: spans,
        }))
    }
}

/// Whether every Parquet reader decodes `codec`: the copy keeps the input's compression, so
/// a chunk compressed otherwise (brotli, LZ4, LZO) is decoded and written again (zstd) instead;
/// Spark's parquet-mr, for one, has no brotli codec by default, and readers disagree on the
/// two LZ4 framings.
pub fn portable_codec(codec: parquet::basic::Compression) -> bool {
    use parquet::basic::Compression as C;
    matches!(codec, C::UNCOMPRESSED | C::SNAPPY | C::GZIP(_) | C::ZSTD(_))
}

/// The batches of one unit ([`Inputs::unit_batches`]).
pub struct UnitBatches<'a> {
    file: &'a InputFile,
    unit: Unit,
    source: Source,
    seen: u64,
    ended: bool,
}

impl std::fmt::Debug for UnitBatches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnitBatches")
            .field("file", &self.file.path)
            .field("unit", &self.unit)
            .field("seen", &self.seen)
            .finish_non_exhaustive()
    }
}

enum Source {
    Parquet(Box<parquet::arrow::arrow_reader::ParquetRecordBatchReader>),
    Jsonl {
        reader: Box<jsonl::ChunkReader>,
        indices: Vec<usize>,
    },
}

impl Iterator for UnitBatches<'_> {
    type Item = Result<RecordBatch, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        let (file, unit) = (self.file, &self.unit);
        let next = match &mut self.source {
            // Only the decoder runs under `guarded`; the caller's work on a batch must not,
            // or its bugs would be reported as a damaged file.
            Source::Parquet(reader) => match guarded(|| reader.next()) {
                Err(m) => Some(Err(damaged_unit(file, unit, &m))),
                Ok(None) => None,
                Ok(Some(b)) => Some(b.map_err(|e| damaged_unit(file, unit, &e))),
            },
            Source::Jsonl { reader, indices } => reader.next().map(|b| {
                let path = &file.path;
                b.map_err(|e| ReadError::at(path, format!("cannot decode: {e}")))
                    .and_then(|b| {
                        b.project(indices).map_err(|e| {
                            ReadError::at(path, format!("cannot project columns: {e}"))
                        })
                    })
            }),
        };
        match next {
            Some(Ok(b)) => {
                self.seen += b.num_rows() as u64;
                Some(Ok(b))
            }
            Some(Err(e)) => {
                self.ended = true;
                Some(Err(e))
            }
            None => {
                self.ended = true;
                (self.seen != unit.rows).then(|| Err(self.short_count()))
            }
        }
    }
}

impl UnitBatches<'_> {
    /// The unit ended with another row count than its file promised.
    fn short_count(&self) -> ReadError {
        let (file, unit, seen) = (self.file, &self.unit, self.seen);
        match file.format {
            Format::Parquet => damaged_unit(
                file,
                unit,
                &format!(
                    "the footer promises {} rows and the pages hold {seen}",
                    unit.rows
                ),
            ),
            Format::Jsonl => {
                let (start, end) = file
                    .jsonl_spans
                    .get(unit.row_group)
                    .copied()
                    .unwrap_or_default();
                ReadError::at(
                    &file.path,
                    format!(
                        "bytes {start} to {end} hold {seen} rows, not the {} found when the file was opened",
                        unit.rows
                    ),
                )
                .with_hint("the file changed during the run; run again")
            }
        }
    }
}

/// A damaged row group: the file, the row group and its rows (counted from 1 within the file,
/// as in every other message), and what is wrong.
fn damaged_unit(file: &InputFile, unit: &Unit, e: &dyn std::fmt::Display) -> ReadError {
    let rows = if unit.rows == 0 {
        "no rows".to_owned()
    } else {
        format!(
            "rows {} to {}",
            unit.first_row + 1,
            unit.first_row + unit.rows
        )
    };
    ReadError::at(
        &file.path,
        format!("cannot decode row group {} ({rows}): {e}", unit.row_group),
    )
    .with_hint("the file is damaged; re-export it from its source")
}

/// The decoder of one Parquet unit over `handle` (a local file, or a remote file's fetched
/// ranges), projected to the top-level columns `roots`. `check` first walks every page
/// header of each needed column chunk (see `pages`): a damaged one fails here, at once,
/// instead of sending the decoder astray.
fn parquet_unit<R: parquet::file::reader::ChunkReader + 'static>(
    file: &InputFile,
    unit: &Unit,
    roots: Vec<usize>,
    handle: R,
    check: impl Fn(&ColumnChunkMetaData) -> Result<(), String>,
) -> Result<parquet::arrow::arrow_reader::ParquetRecordBatchReader, ReadError> {
    let damaged = |e: &dyn std::fmt::Display| damaged_unit(file, unit, e);
    let ctx = |e: parquet::errors::ParquetError| damaged(&e);
    let builder = guarded(|| match &file.reader_meta {
        Some(meta) => Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(
            handle,
            meta.clone(),
        )),
        None => ParquetRecordBatchReaderBuilder::try_new_with_options(
            handle,
            view_options(&file.schema),
        ),
    })
    .map_err(|m| damaged(&m))?
    .map_err(ctx)?;
    let schema = builder.parquet_schema();
    if let Some(rg) = builder.metadata().row_groups().get(unit.row_group) {
        for (leaf, chunk) in rg.columns().iter().enumerate() {
            if leaf < schema.num_columns() && roots.contains(&schema.get_column_root_idx(leaf)) {
                check(chunk).map_err(|m| {
                    damaged(&format!("column `{}`: {m}", chunk.column_path().string()))
                })?;
            }
        }
    }
    guarded(|| {
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        builder
            .with_projection(mask)
            .with_row_groups(vec![unit.row_group])
            .with_batch_size(BATCH_SIZE)
            .build()
    })
    .map_err(|m| damaged(&m))?
    .map_err(ctx)
}

/// The decoder of one unit of a remote Parquet file: the needed column chunks of the row
/// group are fetched (one ranged GET each, concurrently), then decoded from memory.
fn remote_unit(
    file: &InputFile,
    remote: &remote::Remote,
    unit: &Unit,
    roots: Vec<usize>,
) -> Result<parquet::arrow::arrow_reader::ParquetRecordBatchReader, ReadError> {
    let damaged = |e: &dyn std::fmt::Display| damaged_unit(file, unit, e);
    let mut ranges = Vec::new();
    if let Some(meta) = &remote.meta {
        let schema = meta.file_metadata().schema_descr();
        if let Some(rg) = meta.row_groups().get(unit.row_group) {
            for (leaf, chunk) in rg.columns().iter().enumerate() {
                if leaf < schema.num_columns() && roots.contains(&schema.get_column_root_idx(leaf))
                {
                    let (start, len) = pages::checked_range(chunk).map_err(|m| damaged(&m))?;
                    ranges.push(start..start.saturating_add(len));
                }
            }
        }
    }
    let fetched = remote
        .object
        .get_ranges(&ranges)
        .map_err(remote::read_error)?;
    let mut pieces: Vec<(u64, Bytes)> = ranges.iter().map(|r| r.start).zip(fetched).collect();
    pieces.push((remote.tail_start, remote.tail.clone()));
    let sparse = remote::Sparse::new(remote.object.size(), pieces.clone());
    parquet_unit(file, unit, roots, sparse, |chunk| {
        let (start, _) = pages::checked_range(chunk)?;
        match pieces.iter().find(|p| p.0 == start) {
            Some((_, b)) => pages::check_chunk_bytes(b, chunk).map(|_| ()),
            None => Err(format!("bytes from {start} were not fetched")),
        }
    })
}

/// `len` bytes of `file` from `start` (a column chunk to copy), read from disk or fetched.
fn read_range(
    file: &InputFile,
    start: u64,
    len: u64,
    damaged: &dyn Fn(&dyn std::fmt::Display) -> ReadError,
) -> Result<Bytes, ReadError> {
    if let Some(remote) = &file.remote {
        if start.saturating_add(len) > remote.object.size() {
            return Err(damaged(&format!(
                "the file ends before byte {}",
                start.saturating_add(len)
            )));
        }
        return remote
            .object
            .get_range(start..start + len)
            .map_err(remote::read_error);
    }
    let mut handle = File::open(&file.path)
        .map_err(|e| ReadError::at(&file.path, format!("cannot open: {e}")))?;
    // Into spare capacity: no zeroing pass over a buffer about to be overwritten.
    let mut buf = Vec::with_capacity(len as usize);
    handle
        .seek(SeekFrom::Start(start))
        .and_then(|_| handle.take(len).read_to_end(&mut buf))
        .map_err(|e| damaged(&format!("cannot read it: {e}")))?;
    if buf.len() as u64 != len {
        return Err(damaged(&format!(
            "the file ends {} bytes into it, before its {len} bytes",
            buf.len()
        )));
    }
    Ok(Bytes::from(buf))
}

/// The objects a URL names: one object, or (a URL ending in `/`) every `*.parquet` directly
/// under the prefix, sorted by key, as a local directory's files are.
fn expand_url(
    url: &StoreUrl,
    options: &[(String, String)],
) -> Result<Vec<(evalscore_storage::Object, Format)>, ReadError> {
    let loc = url.connect(options).map_err(remote::read_error)?;
    if loc.is_prefix() {
        let found = loc.list(".parquet").map_err(remote::read_error)?;
        if found.is_empty() {
            return Err(ReadError::at(
                Path::new(url.as_str()),
                "prefix holds no Parquet files (*.parquet)",
            )
            .with_hint("point `--input` at Parquet objects or a prefix of them (ending in `/`)"));
        }
        return Ok(found.into_iter().map(|o| (o, Format::Parquet)).collect());
    }
    let object = loc.object().map_err(remote::read_error)?;
    let format = match jsonl_kind(Path::new(url.as_str())) {
        Some(_) => Format::Jsonl,
        None => Format::Parquet,
    };
    Ok(vec![(object, format)])
}

/// Opens a remote input (module `remote`): a Parquet file's footer from its fetched tail, a
/// JSON Lines file from a staged local copy.
fn open_remote(object: evalscore_storage::Object, format: Format) -> Result<InputFile, ReadError> {
    let path = PathBuf::from(object.url());
    match format {
        Format::Jsonl => {
            let mut staged = tempfile::Builder::new()
                .prefix(".evalscore-input-")
                .tempfile()
                .map_err(|e| {
                    ReadError::at(&path, format!("cannot stage the download: {e}"))
                        .with_hint("check the temporary folder (TMPDIR)")
                })?;
            {
                let mut w = std::io::BufWriter::with_capacity(1 << 20, staged.as_file_mut());
                object.download(&mut w).map_err(remote::read_error)?;
                w.flush()
                    .map_err(|e| ReadError::at(&path, format!("cannot stage the download: {e}")))?;
            }
            let staged = staged.into_temp_path();
            let mut file = jsonl::open(&staged, &path, jsonl_kind(&path).flatten())?;
            file.remote = Some(Arc::new(remote::Remote {
                object,
                tail_start: 0,
                tail: Bytes::new(),
                meta: None,
                staged: Some(staged),
            }));
            Ok(file)
        }
        Format::Parquet => {
            let unreadable = |e: &dyn std::fmt::Display| {
                ReadError::at(&path, format!("not a readable Parquet file: {e}")).with_hint(
                    "the file may be truncated, still being written, or not Parquet at all",
                )
            };
            let (tail_start, tail, meta_len) =
                remote::fetch_tail(&object)?.map_err(|m| unreadable(&m))?;
            let footer = &tail[tail.len() - 8 - meta_len as usize..];
            pages::check_schema_depth(&footer[..footer.len() - 8]).map_err(|m| {
                ReadError::at(&path, format!("unsupported schema: {m}"))
                    .with_hint("flatten the deepest columns, or drop those the task does not use")
            })?;
            let footer_sha256 = format!("{:x}", Sha256::digest(footer));
            let data_end = object.size() - footer.len() as u64;
            let sparse = remote::Sparse::new(object.size(), vec![(tail_start, tail.clone())]);
            let mut file = open_parquet(&path, &sparse, footer_sha256, data_end)?;
            let meta = file.reader_meta.as_ref().map(|m| Arc::clone(m.metadata()));
            let meta = match meta {
                Some(m) => m,
                None => Arc::clone(
                    guarded(|| ArrowReaderMetadata::load(&sparse, ArrowReaderOptions::new()))
                        .map_err(|m| unreadable(&m))?
                        .map_err(|e| unreadable(&e))?
                        .metadata(),
                ),
            };
            file.remote = Some(Arc::new(remote::Remote {
                object,
                tail_start,
                tail,
                meta: Some(meta),
                staged: None,
            }));
            Ok(file)
        }
    }
}

/// Strings are decoded as Utf8View: views into the decoded pages instead of a copy of every
/// string into one buffer.
fn view_options(schema: &SchemaRef) -> ArrowReaderOptions {
    ArrowReaderOptions::new().with_schema(view_schema(schema))
}

/// `schema` with top-level Utf8 and LargeUtf8 columns read as Utf8View.
fn view_schema(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Utf8 | DataType::LargeUtf8 => {
                f.as_ref().clone().with_data_type(DataType::Utf8View)
            }
            // List items too (MCQA choices): views into the decoded dictionary page instead
            // of a copy of every item.
            DataType::List(item)
                if matches!(item.data_type(), DataType::Utf8 | DataType::LargeUtf8) =>
            {
                let item = item.as_ref().clone().with_data_type(DataType::Utf8View);
                f.as_ref()
                    .clone()
                    .with_data_type(DataType::List(Arc::new(item)))
            }
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

fn expand(p: &Path) -> Result<Vec<(PathBuf, Format)>, ReadError> {
    let meta = std::fs::metadata(p).map_err(|e| {
        ReadError::at(p, format!("cannot read input: {e}")).with_hint("check the `--input` path")
    })?;
    if meta.is_dir() {
        let mut found: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| ReadError::at(p, format!("cannot list directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|q| {
                q.is_file()
                    && q.extension()
                        .is_some_and(|x| x.eq_ignore_ascii_case("parquet"))
            })
            .collect();
        found.sort();
        if found.is_empty() {
            return Err(
                ReadError::at(p, "directory holds no Parquet files (*.parquet)")
                    .with_hint("point `--input` at Parquet files or a directory of them"),
            );
        }
        return Ok(found.into_iter().map(|f| (f, Format::Parquet)).collect());
    }
    if !meta.is_file() {
        return Err(ReadError::at(
            p,
            format!("not a regular file or a directory (a {})", file_kind(&meta)),
        )
        .with_hint("inputs are read whole and more than once: copy a stream to a file first"));
    }
    let format = match jsonl_kind(p) {
        Some(_) => Format::Jsonl,
        None => Format::Parquet,
    };
    Ok(vec![(p.to_path_buf(), format)])
}

/// What kind of special file `meta` describes, for messages.
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_char_device() {
            return "character device";
        }
        if t.is_block_device() {
            return "block device";
        }
    }
    if meta.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

fn open_file(path: &Path, format: Format) -> Result<InputFile, ReadError> {
    match format {
        Format::Jsonl => jsonl::open(path, path, jsonl_kind(path).flatten()),
        Format::Parquet => {
            let handle =
                File::open(path).map_err(|e| ReadError::at(path, format!("cannot open: {e}")))?;
            check_schema_depth(path)?;
            let (footer_sha256, data_end) = footer(path)?;
            open_parquet(path, &handle, footer_sha256, data_end)
        }
    }
}

/// A Parquet input from its footer, read through `handle`; `data_end` is where the footer
/// starts (the column chunks end before it).
fn open_parquet<R: parquet::file::reader::ChunkReader>(
    path: &Path,
    handle: &R,
    footer_sha256: String,
    data_end: u64,
) -> Result<InputFile, ReadError> {
    let unreadable = |e: &dyn std::fmt::Display| {
        ReadError::at(path, format!("not a readable Parquet file: {e}"))
            .with_hint("the file may be truncated, still being written, or not Parquet at all")
    };
    let loaded = guarded(|| ArrowReaderMetadata::load(handle, ArrowReaderOptions::new()))
        .map_err(|m| unreadable(&m))?
        .map_err(|e| unreadable(&e))?;
    let meta = loaded.metadata();
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
    let schema = Arc::clone(loaded.schema());
    let reader_meta =
        guarded(|| ArrowReaderMetadata::try_new(Arc::clone(meta), view_options(&schema)).ok())
            .ok()
            .flatten();
    Ok(InputFile {
        path: path.to_path_buf(),
        format: Format::Parquet,
        compression: None,
        rows,
        row_groups,
        footer_sha256,
        schema,
        jsonl_spans: Vec::new(),
        reader_meta,
        remote: None,
    })
}

/// Runs the Parquet decoder on damaged bytes without letting a panic in it escape: a panic
/// becomes `Err` with its message, reported as a damaged file rather than an internal error.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown failure".to_owned());
        format!("the Parquet decoder failed: {what}")
    })
}

/// Refuses a schema nested deeper than [`pages::MAX_SCHEMA_DEPTH`], read from the footer's
/// bytes before parquet-rs builds (recursively) its schema tree. A footer that does not look
/// like one is left to the decoder, which says what is wrong.
fn check_schema_depth(path: &Path) -> Result<(), ReadError> {
    let io = |e: std::io::Error| ReadError::at(path, format!("cannot read footer: {e}"));
    let mut f = File::open(path).map_err(io)?;
    let len = f.seek(SeekFrom::End(0)).map_err(io)?;
    if len < 12 {
        return Ok(());
    }
    let mut tail = [0u8; 8];
    f.seek(SeekFrom::Start(len - 8)).map_err(io)?;
    f.read_exact(&mut tail).map_err(io)?;
    let meta_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if &tail[4..] != b"PAR1" || meta_len + 12 > len {
        return Ok(());
    }
    f.seek(SeekFrom::Start(len - 8 - meta_len)).map_err(io)?;
    let mut buf = Vec::with_capacity(meta_len as usize);
    f.take(meta_len).read_to_end(&mut buf).map_err(io)?;
    pages::check_schema_depth(&buf).map_err(|m| {
        ReadError::at(path, format!("unsupported schema: {m}"))
            .with_hint("flatten the deepest columns, or drop those the task does not use")
    })
}

/// SHA-256 of a Parquet file's footer (the metadata, its 4-byte length and the magic), and
/// the offset where the footer starts, which ends the column chunks' data.
fn footer(path: &Path) -> Result<(String, u64), ReadError> {
    let io = |e: std::io::Error| ReadError::at(path, format!("cannot read footer: {e}"));
    let mut f = File::open(path).map_err(io)?;
    let len = f.seek(SeekFrom::End(0)).map_err(io)?;
    let mut tail = [0u8; 8];
    f.seek(SeekFrom::Start(len.saturating_sub(8))).map_err(io)?;
    f.read_exact(&mut tail).map_err(io)?;
    let meta_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    let start = len.saturating_sub(8 + meta_len);
    f.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut buf = Vec::with_capacity((len - start) as usize);
    f.take(len - start).read_to_end(&mut buf).map_err(io)?;
    Ok((format!("{:x}", Sha256::digest(&buf)), start))
}

/// Two files share a schema when they have the same column names in the same order with the
/// same logical types: the string layouts (Utf8, LargeUtf8, Utf8View, dictionaries of them)
/// count as one type, as do List and LargeList of the same item, and integer widths as one.
fn check_same_schema(a: &InputFile, b: &InputFile) -> Result<(), ReadError> {
    let names = |s: &Schema| {
        s.fields()
            .iter()
            .map(|f| f.name().clone())
            .collect::<Vec<_>>()
    };
    for f in a.schema.fields() {
        match b.schema.field_with_name(f.name()) {
            Err(_) => {
                return Err(ReadError::new(format!(
                    "inputs `{}` and `{}` have different schemas: column `{}` is missing from the second",
                    a.path.display(), b.path.display(), f.name()
                )).with_hint("all inputs of one run must share one schema; run them separately"))
            }
            Ok(g) if !same_type(f, g) => {
                return Err(ReadError::new(format!(
                    "inputs `{}` and `{}` have different schemas: column `{}` is {} in the first and {} in the second",
                    a.path.display(), b.path.display(), f.name(), f.data_type(), g.data_type()
                )).with_hint("all inputs of one run must share one schema; run them separately"))
            }
            Ok(_) => {}
        }
    }
    if let Some(extra) = names(&b.schema)
        .into_iter()
        .find(|n| a.schema.field_with_name(n).is_err())
    {
        return Err(ReadError::new(format!(
            "inputs `{}` and `{}` have different schemas: column `{extra}` is missing from the first",
            a.path.display(), b.path.display()
        )).with_hint("all inputs of one run must share one schema; run them separately"));
    }
    Ok(())
}

fn same_type(a: &Field, b: &Field) -> bool {
    logical(a.data_type()) == logical(b.data_type())
}

fn logical(t: &DataType) -> String {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "text".into(),
        DataType::Dictionary(_, v) => logical(v),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => "int".into(),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => "uint".into(),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => "float".into(),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => {
            format!("list<{}>", logical(f.data_type()))
        }
        DataType::Struct(fields) => format!(
            "struct<{}>",
            fields
                .iter()
                .map(|f| format!("{}:{}", f.name(), logical(f.data_type())))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, ListBuilder, StringArray, StringBuilder};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    /// Two row groups (3 and 5 rows) of a required Int64 `id`, a string `output` and a list
    /// of strings `choices`; `id` is written in pages of at most 2 rows.
    fn two_row_groups(path: &Path) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("output", DataType::Utf8, true),
            Field::new(
                "choices",
                DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true))),
                true,
            ),
        ]));
        let props = WriterProperties::builder()
            .set_write_batch_size(2)
            .set_data_page_row_count_limit(2)
            .build();
        let f = File::create(path).unwrap();
        let mut w = ArrowWriter::try_new(f, Arc::clone(&schema), Some(props)).unwrap();
        for ids in [vec![10i64, 11, 12], vec![20, 21, 22, 23, 24]] {
            let outputs: Vec<String> = ids.iter().map(|i| format!("out {i}")).collect();
            let mut choices = ListBuilder::new(StringBuilder::new());
            for i in &ids {
                choices.values().append_value(format!("a{i}"));
                choices.values().append_value(format!("b{i}"));
                choices.append(true);
            }
            let batch = RecordBatch::try_new(
                Arc::clone(&schema),
                vec![
                    Arc::new(Int64Array::from(ids)) as ArrayRef,
                    Arc::new(StringArray::from(outputs)) as ArrayRef,
                    Arc::new(choices.finish()) as ArrayRef,
                ],
            )
            .unwrap();
            w.write(&batch).unwrap();
            w.flush().unwrap();
        }
        w.close().unwrap();
    }

    #[test]
    fn stored_chunk_is_the_column_chunk_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.parquet");
        two_row_groups(&path);
        let inputs = Inputs::open(std::slice::from_ref(&path)).unwrap();
        let units = inputs.units();
        assert_eq!(
            units,
            [
                Unit {
                    file: 0,
                    row_group: 0,
                    first_row: 0,
                    rows: 3
                },
                Unit {
                    file: 0,
                    row_group: 1,
                    first_row: 3,
                    rows: 5
                },
            ]
        );

        // The footer, read independently of `Inputs`.
        let footer = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
            .unwrap()
            .metadata()
            .clone();
        let rg = footer.row_group(1);
        assert_eq!(rg.num_rows(), 5);
        let id = rg.column(0);
        assert_eq!(id.column_path().string(), "id");

        let chunk = inputs.stored_chunk(&units[1], "id").unwrap().unwrap();
        assert_eq!(chunk.bytes.len() as i64, id.compressed_size());
        assert_eq!(chunk.meta.compressed_size(), id.compressed_size());
        assert_eq!(chunk.meta.num_values(), 5);
        assert_eq!(chunk.meta.data_page_offset(), id.data_page_offset());
        assert_eq!(
            chunk.meta.dictionary_page_offset(),
            id.dictionary_page_offset()
        );
        // The bytes are the file's, from the chunk's first page to its end.
        let (start, len) = id.byte_range();
        let file = std::fs::read(&path).unwrap();
        assert_eq!(
            chunk.bytes.as_ref(),
            &file[start as usize..(start + len) as usize]
        );
        // Data pages of at most 2 rows: 2 + 2 + 1, the first at the data page offset,
        // each following the one before.
        let values: Vec<i64> = chunk.pages.iter().map(|p| p.values).collect();
        assert_eq!(values, [2, 2, 1]);
        assert_eq!(values.iter().sum::<i64>(), rg.num_rows());
        assert_eq!(chunk.pages[0].offset as i64, id.data_page_offset());
        for w in chunk.pages.windows(2) {
            assert_eq!(w[0].offset + w[0].size, w[1].offset);
        }
        let last = chunk.pages.last().unwrap();
        assert_eq!(last.offset + last.size, start + len);

        // The first row group's chunk is its own.
        let first = inputs.stored_chunk(&units[0], "id").unwrap().unwrap();
        assert_eq!(first.meta.num_values(), 3);
        assert_eq!(
            first.bytes.len() as i64,
            footer.row_group(0).column(0).compressed_size()
        );
        assert_eq!(
            first.pages.iter().map(|p| p.values).collect::<Vec<_>>(),
            [2, 1]
        );

        // A flat string column is a chunk too; a list column and a missing one are not.
        assert!(inputs.stored_chunk(&units[1], "output").unwrap().is_some());
        assert!(inputs.stored_chunk(&units[1], "choices").unwrap().is_none());
        assert!(inputs.stored_chunk(&units[1], "missing").unwrap().is_none());
    }
}
