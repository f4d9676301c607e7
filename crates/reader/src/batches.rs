//! Decoding one unit into record batches: the Parquet decoder (after the page headers of
//! the needed column chunks are checked, module `pages`) or the JSONL decoder, projected to
//! the needed columns (the file's, then its Hive partition values, module `hive`), with the
//! unit's row count checked at its end. With union by name, each batch holds the run's
//! columns exactly (module `union`).

use crate::footers::UnitFooter;
use crate::parquet_input::{guarded, view_options};
use crate::units::damaged_unit;
use crate::{
    hive, jsonl, local, pages, prefetch, remote, union, Format, InputFile, Inputs, ReadError, Unit,
    BATCH_SIZE,
};
use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, RecordBatchReader};
use arrow::datatypes::{FieldRef, Schema, SchemaRef};
use arrow::error::ArrowError;
use evalscore_parquet::{
    decompress_unit, CheckedPages, CheckedRowGroup, PageRules, Sparse, StringLists,
};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::{parquet_to_arrow_field_levels, ProjectionMask};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::serialized_reader::SerializedPageReader;
use std::fs::File;
use std::sync::Arc;

impl Inputs {
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
                let roots = prefetch::roots(file, columns);
                let reader = match &file.remote {
                    None => {
                        // One handle for the footer read again, if it was dropped, and the
                        // unit's chunks.
                        let (handle, stamp) =
                            local::open_input(&file.path, &file.path, file.stamp.as_ref())?;
                        let len = stamp.len;
                        let footer =
                            file.local_footer((&handle, len), |m| damaged_unit(file, unit, m))?;
                        let small = match footer.metadata() {
                            Some(m) => local::small_unit(
                                &file.path,
                                (&handle, len),
                                m,
                                unit.row_group,
                                &roots,
                            )?,
                            None => None,
                        };
                        match small {
                            Some(read) => in_memory_unit(file, unit, roots, read, footer)?,
                            None => {
                                let meta = footer
                                    .into_view(&file.schema)
                                    .map_err(|m| damaged_unit(file, unit, &m))?;
                                local_unit(file, unit, roots, meta, handle)?
                            }
                        }
                    }
                    Some(remote) => {
                        let (fetched, meta) = match prefetch::take(remote, unit.row_group, &roots) {
                            Some(ahead) => ahead,
                            None => remote::fetch_unit(file, remote, unit, &roots)?,
                        };
                        in_memory_unit(file, unit, roots, fetched, UnitFooter::View(meta))?
                    }
                };
                Source::Parquet(Box::new(reader))
            }
        };
        // The partition columns asked for: the fields that end the shared schema, with
        // the index of each in the file's values.
        let own = self.schema.fields().len() - file.partitions.len();
        let partitions = self.schema.fields()[own..]
            .iter()
            .enumerate()
            .filter(|(_, f)| columns.contains(f.name()))
            .map(|(i, f)| (f.clone(), i))
            .collect();
        let union = self
            .union_by_name
            .then(|| union::wanted(&self.schema, own, columns));
        Ok(UnitBatches {
            file,
            unit: *unit,
            source,
            union,
            partitions,
            seen: 0,
            ended: false,
        })
    }
}

/// The batches of one unit ([`Inputs::unit_batches`]).
pub struct UnitBatches<'a> {
    file: &'a InputFile,
    unit: Unit,
    source: Source,
    /// With union by name, the run's own columns each batch is made to hold (module `union`).
    union: Option<Vec<FieldRef>>,
    /// The Hive partition columns to add to each batch (module `hive`).
    partitions: Vec<(FieldRef, usize)>,
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
    Parquet(Box<ParquetUnit>),
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
                b.map_err(|e| {
                    // arrow-json names no line: the chunk's lines are decoded again one by
                    // one to find it.
                    match jsonl::failing_line(file, unit.row_group, &reader.schema()) {
                        Some((line, e)) => ReadError::at(path, format!("cannot decode: {e}"))
                            .with_line(line)
                            .with_hint("a column must hold one type in every line (null aside): this line's value is not of the type the other lines give the column"),
                        None => ReadError::at(path, format!("cannot decode: {e}")),
                    }
                })
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
                let b = match &self.union {
                    Some(fields) => union::conform(b, file, fields),
                    None => Ok(b),
                };
                Some(b.and_then(|b| hive::with_partitions(b, file, &self.partitions)))
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

/// The decoder of one unit of a local Parquet file, read through its handle `handle`, from
/// its parsed footer `meta` when there is one.
fn local_unit(
    file: &InputFile,
    unit: &Unit,
    roots: Vec<usize>,
    meta: Option<ArrowReaderMetadata>,
    handle: File,
) -> Result<ParquetUnit, ReadError> {
    // A second handle for the page-header checks; the decoder seeks before every read.
    let check = handle
        .try_clone()
        .map_err(|e| ReadError::at(&file.path, format!("cannot open: {e}")))?;
    let checks = |chunk: &ColumnChunkMetaData| pages::check_chunk(&check, chunk).map(|_| ());
    // The pages of list columns read here (module `string_lists`).
    let again = || check.try_clone().map_err(|e| format!("cannot open: {e}"));
    let at = (meta, unit.row_group);
    parquet_unit(file, unit, roots, (handle, again), at, checks)
}

/// The decoder of a unit whose needed chunks are in memory: a remote file's fetched chunks
/// (module `remote`), or a small local unit's, read at once (`local::small_unit`).
fn in_memory_unit(
    file: &InputFile,
    unit: &Unit,
    roots: Vec<usize>,
    read: Sparse,
    footer: UnitFooter,
) -> Result<ParquetUnit, ReadError> {
    // The zstd chunks decompressed first (module `decompressed`), into a footer of this row
    // group alone.
    let file_len = read.len();
    let rewritten = footer.metadata().and_then(|m| {
        let schema = footer.view_schema(&file.schema);
        decompress_unit(&read, m, &schema, unit.row_group, &roots)
    });
    let (read, at) = match rewritten {
        Some((read, meta)) => (read, (Some(meta), 0)),
        None => {
            let meta = footer
                .into_view(&file.schema)
                .map_err(|m| damaged_unit(file, unit, &m))?;
            (read, (meta, unit.row_group))
        }
    };
    let again = || Ok(read.clone());
    parquet_unit(file, unit, roots, (read.clone(), again), at, |chunk| {
        let (start, len) = pages::checked_range(chunk)?;
        if start >= file_len {
            // Placed past the file's end: rewritten, its pages checked as they were read.
            return Ok(());
        }
        let bytes = read.piece(start, len).map_err(|e| e.to_string())?;
        pages::check_chunk_bytes(&bytes, chunk).map(|_| ())
    })
}

/// The decoder of one Parquet unit over `handle` (a local file, or a remote file's fetched
/// ranges; with a function that opens it again for each list column read by
/// `string_lists`), projected to the top-level columns `roots`, starting from the parsed
/// footer `meta` when there is one (else it reads the footer through `handle`). `check` first
/// walks every page header of each needed column chunk (see `pages`): a damaged one fails
/// here, at once, instead of sending the decoder astray. The unit's row group is row group
/// `index` of `meta` (which may hold that row group alone).
pub(crate) fn parquet_unit<R: ChunkReader + 'static>(
    file: &InputFile,
    unit: &Unit,
    roots: Vec<usize>,
    (handle, again): (R, impl Fn() -> Result<R, String>),
    (meta, index): (Option<ArrowReaderMetadata>, usize),
    check: impl Fn(&ColumnChunkMetaData) -> Result<(), String>,
) -> Result<ParquetUnit, ReadError> {
    let damaged = |e: &dyn std::fmt::Display| damaged_unit(file, unit, e);
    let ctx = |e: parquet::errors::ParquetError| damaged(&e);
    let builder = guarded(|| match meta {
        Some(meta) => Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(
            handle, meta,
        )),
        None => ParquetRecordBatchReaderBuilder::try_new_with_options(
            handle,
            view_options(&file.schema),
        ),
    })
    .map_err(|m| damaged(&m))?
    .map_err(ctx)?;
    let schema = builder.parquet_schema();
    let row_group = builder.metadata().row_groups().get(index);
    if let Some(rg) = row_group {
        for (leaf, chunk) in rg.columns().iter().enumerate() {
            if leaf < schema.num_columns() && roots.contains(&schema.get_column_root_idx(leaf)) {
                check(chunk).map_err(|m| {
                    damaged(&format!("column `{}`: {m}", chunk.column_path().string()))
                })?;
            }
        }
    }
    // Lists of strings are read from their pages here; the other columns by parquet-rs.
    let (mut lists, mut rest) = (Vec::new(), Vec::new());
    for root in roots {
        let leaves: Vec<usize> = (0..schema.num_columns())
            .filter(|&l| schema.get_column_root_idx(l) == root)
            .collect();
        let chunk = match (leaves.as_slice(), row_group) {
            ([leaf], Some(rg)) => rg.columns().get(*leaf),
            _ => None,
        };
        let field = builder.schema().fields().get(root);
        let shape = chunk
            .zip(field)
            .and_then(|(c, f)| StringLists::shape(schema, root, f.data_type(), c));
        match (shape, chunk, field) {
            (Some(shape), Some(chunk), Some(field)) => {
                let handle = again().map_err(|m| ReadError::at(&file.path, m))?;
                let rows = usize::try_from(unit.rows).unwrap_or(usize::MAX);
                let pages =
                    guarded(|| SerializedPageReader::new(Arc::new(handle), chunk, rows, None))
                        .map_err(|m| damaged(&m))?
                        .map_err(ctx)?;
                // The list decoder checks how the levels pair up itself.
                let rules = PageRules::unpaired(chunk.column_descr());
                let pages = CheckedPages::new(Box::new(pages), rules);
                lists.push((
                    root,
                    StringLists::new(Box::new(pages), shape, field.clone()),
                ));
            }
            _ => rest.push(root),
        }
    }
    let full = builder.schema().clone();
    let reader = if rest.is_empty() && !lists.is_empty() {
        None
    } else {
        // Through its own page readers, so that every data page is checked once decompressed
        // (`evalscore_parquet::CheckedRowGroup`).
        let handle = again().map_err(|m| ReadError::at(&file.path, m))?;
        let reader = guarded(|| {
            let schema = builder.parquet_schema();
            let mask = ProjectionMask::roots(schema, rest.iter().copied());
            let fields = builder.schema().fields();
            let levels = parquet_to_arrow_field_levels(schema, mask, Some(fields))?;
            let group = CheckedRowGroup::new(handle, Arc::clone(builder.metadata()), index);
            ParquetRecordBatchReader::try_new_with_row_groups(&levels, &group, BATCH_SIZE, None)
        })
        .map_err(|m| damaged(&m))?
        .map_err(ctx)?;
        Some(reader)
    };
    Ok(ParquetUnit::new(reader, rest, lists, &full, unit.rows))
}

/// One Parquet unit's batches: parquet-rs's for most columns, with the lists of strings
/// decoded by `string_lists` put in their places.
pub(crate) struct ParquetUnit {
    reader: Option<ParquetRecordBatchReader>,
    /// Where each list column goes among the batch's columns.
    lists: Vec<(usize, StringLists)>,
    schema: SchemaRef,
    /// Rows not yet given, when no column is read by parquet-rs.
    left: u64,
}

impl ParquetUnit {
    /// `reader` gives the columns `rest`, `lists` the others; `full` is the file's schema as
    /// parquet-rs reads it.
    fn new(
        reader: Option<ParquetRecordBatchReader>,
        rest: Vec<usize>,
        lists: Vec<(usize, StringLists)>,
        full: &SchemaRef,
        rows: u64,
    ) -> Self {
        let mut roots: Vec<usize> = rest
            .iter()
            .chain(lists.iter().map(|(r, _)| r))
            .copied()
            .collect();
        roots.sort_unstable();
        let place = |root: usize| roots.iter().position(|&r| r == root).unwrap_or_default();
        let lists = lists
            .into_iter()
            .map(|(root, l)| (place(root), l))
            .collect();
        // As parquet-rs gives a projection: the file's fields, without its metadata.
        let fields: Vec<FieldRef> = roots
            .iter()
            .filter_map(|&r| full.fields().get(r).cloned())
            .collect();
        let schema = Arc::new(Schema::new(fields));
        Self {
            reader,
            lists,
            schema,
            left: rows,
        }
    }

    /// The batch's columns: `columns` (parquet-rs's) with the lists' next `rows` rows put in.
    fn with_lists(&mut self, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch, String> {
        let mut columns = columns;
        for (place, lists) in &mut self.lists {
            let l = lists.next_rows(rows).map_err(|m| in_column(lists, &m))?;
            if l.len() != rows {
                let got = l.len();
                return Err(in_column(
                    lists,
                    &format!("{got} rows where {rows} were expected"),
                ));
            }
            columns.insert(*place, Arc::new(l));
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)
            .map_err(|e| e.to_string())
    }

    /// At the end: a list column with rows left over is an error.
    fn ended(&mut self) -> Option<Result<RecordBatch, String>> {
        for (_, lists) in &mut self.lists {
            match lists.next_rows(1) {
                Ok(l) if l.is_empty() => {}
                Ok(_) => return Some(Err(in_column(lists, "more rows than the row group"))),
                Err(m) => return Some(Err(in_column(lists, &m))),
            }
        }
        None
    }
}

/// A decode error of parquet-rs's, which reaches here wrapped twice (`Parquet argument
/// error: Parquet error: ...`, though no argument is at fault): its message alone.
fn decode_error(e: ArrowError) -> String {
    match e {
        ArrowError::ParquetError(m) => m.strip_prefix("Parquet error: ").unwrap_or(&m).to_owned(),
        e => e.to_string(),
    }
}

fn in_column(lists: &StringLists, m: &str) -> String {
    format!("column `{}`: {m}", lists.field().name())
}

impl Iterator for ParquetUnit {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let theirs = match &mut self.reader {
            Some(r) => match r.next() {
                None => return self.ended(),
                Some(Ok(b)) => Some(b),
                Some(Err(e)) => return Some(Err(decode_error(e))),
            },
            None => None,
        };
        if self.lists.is_empty() {
            return theirs.map(Ok);
        }
        let (columns, rows) = match theirs {
            Some(b) => {
                let rows = b.num_rows();
                (b.columns().to_vec(), rows)
            }
            None => {
                let rows = self.left.min(BATCH_SIZE as u64) as usize;
                if rows == 0 {
                    return self.ended();
                }
                (Vec::new(), rows)
            }
        };
        self.left = self.left.saturating_sub(rows as u64);
        Some(self.with_lists(columns, rows))
    }
}
