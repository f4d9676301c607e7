//! scores.parquet: row groups encoded and compressed on the workers, appended in order.

use crate::outdir::{io_error, parquet_error};
use crate::{EngineError, Error};
use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Field, SchemaRef};
use bytes::Bytes;
use evalscore_parquet::{BitKind, BitScores, DeltaInts, StoredChunk};
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowSchemaConverter;
use parquet::basic::Encoding;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{ColumnChunkMetaData, OffsetIndexBuilder};
use parquet::file::properties::EnabledStatistics;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::types::{ColumnDescPtr, ColumnDescriptor, ColumnPath};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{mpsc, Arc};

use super::props_builder;

/// Casts that fail on a value the target cannot hold instead of making it null (a kept
/// column's, here and where it is read).
pub(crate) const STRICT: arrow::compute::CastOptions<'static> = arrow::compute::CastOptions {
    safe: false,
    format_options: arrow::util::display::FormatOptions::new(),
};

/// The most rows an encoder puts in one row group of scores.parquet (ArrowWriter's default).
/// Row groups otherwise follow the work items (see `work_items` in lib.rs).
pub const MAX_ROW_GROUP_ROWS: usize = 1024 * 1024;

/// scores.parquet (its temporary file; `path` is the final name, for messages). Row groups are
/// encoded and compressed by the workers ([`ScoreEncoder`]) and only appended here, so the
/// single thread that writes the file does no encoding.
pub(crate) struct ScoresWriter {
    writer: SerializedFileWriter<BufWriter<File>>,
    pub(super) shared: Encoders,
    rows: u64,
    /// Writes the appended row groups to disk while the scan goes on.
    writeback: Option<Writeback>,
}

/// A thread that makes the file's bytes so far durable (`sync_data` on a second handle of
/// it) whenever the writer has appended a work item's row groups, so that the fsync that
/// commits the file finds little left to write. Without it, a suite committing a
/// `scores.parquet` per task at its end waited on the disk for all of their bytes at once,
/// with the cores idle; writing them back during the scan overlaps the disk with the
/// scoring. Requests that come while it syncs are served by one more sync.
struct Writeback {
    ask: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writeback {
    /// `None` when the handle cannot be duplicated or the thread not started: the commit's
    /// fsync then does all the writing, as it would anyway.
    fn start(file: &File) -> Option<Writeback> {
        let handle = file.try_clone().ok()?;
        let (ask, asked) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("evalscore-writeback".to_owned())
            .spawn(move || {
                while asked.recv().is_ok() {
                    while asked.try_recv().is_ok() {}
                    // A failure here is the commit's fsync's to report.
                    let _ = handle.sync_data();
                }
            })
            .ok()?;
        Some(Writeback {
            ask: Some(ask),
            thread: Some(thread),
        })
    }

    fn ask(&self) {
        if let Some(ask) = &self.ask {
            let _ = ask.send(());
        }
    }
}

impl Drop for Writeback {
    fn drop(&mut self) {
        drop(self.ask.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl ScoresWriter {
    /// A writer of scores.parquet into `file` (`path` names it in messages).
    pub fn new(file: File, path: PathBuf, schema: SchemaRef) -> Result<ScoresWriter, Error> {
        let writeback = Writeback::start(&file);
        // Score columns hold a few distinct floats: dictionary encoding turns them into
        // bit-packed indices, faster and smaller to compress than 8-byte plain values.
        // Integer columns kept from the input (ids, mostly unique and ascending) use
        // DELTA_BINARY_PACKED instead of a dictionary attempt: faster, and far smaller
        // (BENCHMARKS.md).
        let mut builder = props_builder();
        for f in schema.fields() {
            if f.data_type().is_integer() {
                let col = ColumnPath::from(f.name().as_str());
                builder = builder
                    .set_column_dictionary_enabled(col.clone(), false)
                    .set_column_encoding(col, Encoding::DELTA_BINARY_PACKED);
            }
            // Label columns (completion_validity) hold two or three values: min/max
            // statistics would compare every row's string for nothing a reader can use.
            if matches!(f.data_type(), DataType::Dictionary(_, _)) {
                builder = builder.set_column_statistics_enabled(
                    ColumnPath::from(f.name().as_str()),
                    EnabledStatistics::None,
                );
            }
        }
        let props = Arc::new(builder.build());
        let parquet_schema = ArrowSchemaConverter::new()
            .with_coerce_types(props.coerce_types())
            .convert(&schema)
            .map_err(|e| parquet_error(&path, e))?;
        // No embedded Arrow schema (the file writer adds none): readers see dictionary-encoded
        // label columns (completion_validity) as the plain strings they are.
        let writer = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            parquet_schema.root_schema_ptr(),
            props,
        )
        .map_err(|e| parquet_error(&path, e))?;
        let factory = Arc::new(ArrowRowGroupWriterFactory::new(
            &writer,
            Arc::clone(&schema),
        ));
        // Float64 columns (the scores) and two-label dictionary columns go through
        // [`BitScores`] while they are two-valued. The schema is flat (one leaf per field);
        // were it not, every column keeps the generic writer.
        let descr = writer.schema_descr();
        let leaves = descr.columns();
        let flat = leaves.len() == schema.fields().len();
        // Per field, its leaves: a struct field has one per struct member, and the factory
        // makes one generic writer per leaf.
        let mut field_ranges = vec![0..0; schema.fields().len()];
        for leaf in 0..leaves.len() {
            if let Some(r) = field_ranges.get_mut(descr.get_column_root_idx(leaf)) {
                *r = if r.start == r.end {
                    leaf..leaf + 1
                } else {
                    r.start..leaf + 1
                };
            }
        }
        let field_leaves: Option<Arc<[ColumnDescPtr]>> = flat.then(|| leaves.into());
        // Int64 columns (kept ids) go through [`DeltaInts`] likewise.
        let own_columns = schema
            .fields()
            .iter()
            .zip(leaves)
            .map(|(f, leaf)| {
                let kind = match f.data_type() {
                    DataType::Float64 => Own::Bits(BitKind::Scores),
                    DataType::Dictionary(k, v)
                        if **k == DataType::Int8 && **v == DataType::Utf8 =>
                    {
                        Own::Bits(BitKind::Labels)
                    }
                    DataType::Int64 => Own::Ints,
                    _ => return None,
                };
                flat.then(|| (leaf.clone(), kind))
            })
            .collect();
        Ok(ScoresWriter {
            writer,
            shared: Encoders {
                factory,
                schema,
                path,
                max_rows: MAX_ROW_GROUP_ROWS,
                own_columns,
                leaves: field_leaves,
                field_ranges: field_ranges.into(),
                run_id: None,
            },
            rows: 0,
            writeback,
        })
    }

    /// What the workers need to encode units for this file.
    pub fn encoders(&self) -> Encoders {
        self.shared.clone()
    }

    /// Appends a work item's encoded row groups, in order.
    pub fn append(&mut self, groups: Vec<EncodedRowGroup>) -> Result<(), Error> {
        for g in groups {
            let mut rg = self
                .writer
                .next_row_group()
                .map_err(|e| parquet_error(&self.shared.path, e))?;
            for chunk in g.chunks {
                chunk
                    .append_to(&mut rg)
                    .map_err(|e| parquet_error(&self.shared.path, e))?;
            }
            rg.close()
                .map_err(|e| parquet_error(&self.shared.path, e))?;
            self.rows += g.rows as u64;
        }
        if let Some(w) = &self.writeback {
            self.writer
                .flush()
                .map_err(|e| io_error("write", &self.shared.path, e))?;
            w.ask();
        }
        Ok(())
    }

    /// Closes the file and returns the rows written.
    pub fn finish(mut self) -> Result<u64, Error> {
        drop(self.writeback.take());
        let path = self.shared.path;
        let buf = self
            .writer
            .into_inner()
            .map_err(|e| parquet_error(&path, e))?;
        let file = buf
            .into_inner()
            .map_err(|e| io_error("write", &path, e.into_error()))?;
        file.sync_all().map_err(|e| io_error("write", &path, e))?;
        Ok(self.rows)
    }
}

/// Makes a [`ScoreEncoder`] per work item; shared by the workers.
#[derive(Clone)]
pub(crate) struct Encoders {
    factory: Arc<ArrowRowGroupWriterFactory>,
    schema: SchemaRef,
    path: PathBuf,
    /// Rows per row group at most: [`MAX_ROW_GROUP_ROWS`] (smaller in tests).
    pub(super) max_rows: usize,
    /// Per field: the Parquet column of a Float64 or two-label dictionary field, written by
    /// [`BitScores`] while it is two-valued, or of an Int64 field, written by [`DeltaInts`].
    own_columns: Arc<[Option<(ColumnDescPtr, Own)>]>,
    /// Per field, its Parquet column, when the schema is flat (one leaf per field): what a
    /// stored input chunk must match to be copied ([`ScoreEncoder::copy_stored`]).
    leaves: Option<Arc<[ColumnDescPtr]>>,
    /// Per field, the range of its Parquet leaves (one for a flat field, one per member of a
    /// struct), whose generic writers it takes.
    field_ranges: Arc<[Range<usize>]>,
    /// `--run-columns`: the run id (a one-value Utf8 array), the last field's value on every
    /// row; [`ScoreEncoder::write`] adds the column.
    pub(super) run_id: Option<ArrayRef>,
}

impl Encoders {
    /// An encoder for one work item's score batches, to run on a worker thread.
    pub fn encoder(&self) -> ScoreEncoder {
        ScoreEncoder {
            copies: vec![None; self.schema.fields().len()],
            shared: self.clone(),
            open: None,
            done: Vec::new(),
        }
    }
}

/// One row group of scores.parquet, encoded and compressed, waiting for its turn.
#[derive(Debug)]
pub(crate) struct EncodedRowGroup {
    chunks: Vec<EncodedChunk>,
    rows: usize,
}

/// One encoded column chunk: from parquet's Arrow writer, or its bytes and metadata as
/// [`BitScores`] wrote them or as they were stored in the input ([`ScoreEncoder::copy_stored`]).
#[derive(Debug)]
enum EncodedChunk {
    Arrow(ArrowColumnChunk),
    Raw(Bytes, ColumnCloseResult),
}

impl EncodedChunk {
    fn append_to<W: Write + Send>(
        self,
        rg: &mut SerializedRowGroupWriter<'_, W>,
    ) -> parquet::errors::Result<()> {
        match self {
            EncodedChunk::Arrow(chunk) => chunk.append_to_row_group(rg),
            EncodedChunk::Raw(bytes, close) => rg.append_column(&bytes, close),
        }
    }
}

/// Which of this module's own writers a column goes to while it can.
#[derive(Debug, Clone, Copy)]
enum Own {
    Bits(BitKind),
    Ints,
}

/// A field of the open row group: the generic writers of its leaves, and while the column's
/// values are all 0/1, the [`BitScores`] that holds them instead (for an Int64 column,
/// [`DeltaInts`]).
struct ColumnSink {
    /// Made when the column first needs them ([`OpenGroup::writers`]), one per leaf.
    generic: Option<Vec<ArrowColumnWriter>>,
    bits: Option<BitScores>,
    ints: Option<DeltaInts>,
}

impl ColumnSink {
    fn write(
        &mut self,
        field: &Field,
        column: &ArrayRef,
        writer: impl FnOnce() -> parquet::errors::Result<Vec<ArrowColumnWriter>>,
    ) -> parquet::errors::Result<()> {
        if let Some(bits) = &mut self.bits {
            if bits.append(column) {
                return Ok(());
            }
            // Not two-valued after all: hand the rows so far to the generic writer.
            let so_far = bits.to_array();
            self.bits = None;
            self.generic = Some(writer()?);
            self.write_generic(field, &so_far)?;
        } else if let Some(ints) = &mut self.ints {
            // As the generic writer does, a column of another type is cast to the field's.
            if column.data_type() == field.data_type() {
                return ints.append(column);
            }
            return ints.append(&arrow::compute::cast_with_options(
                column,
                field.data_type(),
                &STRICT,
            )?);
        } else if self.generic.is_none() {
            self.generic = Some(writer()?);
        }
        self.write_generic(field, column)
    }

    fn write_generic(&mut self, field: &Field, column: &ArrayRef) -> parquet::errors::Result<()> {
        let Some(generic) = &mut self.generic else {
            return Err(parquet::errors::ParquetError::General(
                "internal error: a column has no writer".to_owned(),
            ));
        };
        // Pass masks (Boolean) stand for Float64 scores.
        let cast_column;
        let column = if column.data_type() == field.data_type() {
            column
        } else {
            cast_column = arrow::compute::cast_with_options(column, field.data_type(), &STRICT)?;
            &cast_column
        };
        let leaves = compute_leaves(field, column)?;
        if leaves.len() != generic.len() {
            return Err(parquet::errors::ParquetError::General(format!(
                "internal error: column `{}` has {} leaves and {} writers",
                field.name(),
                leaves.len(),
                generic.len()
            )));
        }
        for (leaf, writer) in leaves.iter().zip(generic) {
            writer.write(leaf)?;
        }
        Ok(())
    }

    /// The field's chunks, one per leaf.
    fn close(self) -> parquet::errors::Result<Vec<EncodedChunk>> {
        match (self.bits, self.ints, self.generic) {
            (Some(bits), _, _) => {
                let (bytes, close) = bits.close()?;
                Ok(vec![EncodedChunk::Raw(bytes, close)])
            }
            (None, Some(ints), _) => {
                let (bytes, close) = ints.close()?;
                Ok(vec![EncodedChunk::Raw(bytes, close)])
            }
            (None, None, Some(generic)) => generic
                .into_iter()
                .map(|w| w.close().map(EncodedChunk::Arrow))
                .collect(),
            (None, None, None) => Err(parquet::errors::ParquetError::General(
                "internal error: a column of the row group was never written".to_owned(),
            )),
        }
    }
}

/// The row group an encoder is filling.
struct OpenGroup {
    sinks: Vec<ColumnSink>,
    rows: usize,
    /// parquet's generic column writers, made only when a column first needs one (a kept
    /// column that is not copied, a score column that is not two-valued), then taken one by
    /// one. The factory makes them all at once, each with its own zstd context, and a group
    /// of copied ids and 0/1 scores uses none: making them anyway was 3% of the CPU time of
    /// 200 small files.
    spare: Option<Vec<Option<ArrowColumnWriter>>>,
}

impl OpenGroup {
    /// The generic writers of the leaves `leaves` (one field's), made with the rest on first
    /// need; taken once.
    fn writers(
        spare: &mut Option<Vec<Option<ArrowColumnWriter>>>,
        factory: &ArrowRowGroupWriterFactory,
        leaves: Range<usize>,
    ) -> parquet::errors::Result<Vec<ArrowColumnWriter>> {
        let made = match spare {
            Some(made) => made,
            None => spare.insert(
                factory
                    .create_column_writers(0)?
                    .into_iter()
                    .map(Some)
                    .collect(),
            ),
        };
        leaves
            .map(|j| {
                made.get_mut(j).and_then(Option::take).ok_or_else(|| {
                    parquet::errors::ParquetError::General(format!(
                        "internal error: no column writer {j} for the row group"
                    ))
                })
            })
            .collect()
    }
}

/// Encodes score batches into row groups of at most [`MAX_ROW_GROUP_ROWS`] rows on the
/// calling (worker) thread. Holds compressed pages only.
pub(crate) struct ScoreEncoder {
    pub(super) shared: Encoders,
    open: Option<OpenGroup>,
    done: Vec<EncodedRowGroup>,
    /// Per field: a stored input chunk that is the field's whole column in the next row
    /// group, with its row count ([`ScoreEncoder::copy_stored`]).
    copies: Vec<Option<(Bytes, ColumnCloseResult)>>,
}

impl ScoreEncoder {
    /// Takes field `field`'s column from an input chunk as it is stored, instead of encoding
    /// it: `write` then gets no column for that field. The chunk is one whole input row
    /// group, so it makes a row group of its own: the open group is closed first, and the
    /// new one closes when it holds as many rows as the chunk (`close_group` checks that no
    /// other count reaches it).
    ///
    /// `Ok(false)` (nothing taken) when the chunk cannot be spliced in as it is: the schema
    /// is nested, or the stored column's type, repetition or levels differ from the
    /// field's, or it has more rows than one row group of scores.
    pub fn copy_stored(&mut self, field: usize, chunk: StoredChunk) -> Result<bool, Error> {
        let Some(leaf) = self.shared.leaves.as_ref().and_then(|l| l.get(field)) else {
            return Ok(false);
        };
        let rows = chunk.meta.num_values();
        if self.copies.get(field).is_none_or(Option::is_some)
            || !same_stored_type(chunk.meta.column_descr(), leaf)
            || rows <= 0
            || rows as usize > self.shared.max_rows
        {
            return Ok(false);
        }
        let close = stored_close(&chunk, Arc::clone(leaf))
            .map_err(|e| parquet_error(&self.shared.path, e))?;
        if self.copies.iter().all(Option::is_none) {
            self.close_group()?;
        }
        self.copies[field] = Some((chunk.bytes, close));
        Ok(true)
    }

    /// Rows the open (or next) row group holds at most: a copied chunk's rows, else the
    /// row-group limit.
    fn group_limit(&self) -> usize {
        self.copies
            .iter()
            .flatten()
            .map(|(_, close)| close.rows_written as usize)
            .next()
            .unwrap_or(self.shared.max_rows)
    }

    /// Encodes one batch of score columns (in the schema's order, `rows` long each, with no
    /// column for a field taken by [`ScoreEncoder::copy_stored`]); a Float64 score column may
    /// come as a pass mask (Boolean, true = 1.0).
    pub fn write(&mut self, columns: &[ArrayRef], rows: usize) -> Result<(), Error> {
        let with_run_id;
        let columns = match &self.shared.run_id {
            None => columns,
            Some(id) => {
                let keys = arrow::array::Int32Array::from(vec![0; rows]);
                let run_id = arrow::array::DictionaryArray::try_new(keys, Arc::clone(id))
                    .map_err(|e| internal(&e.to_string()))?;
                with_run_id = [columns, &[Arc::new(run_id) as ArrayRef]].concat();
                &with_run_id
            }
        };
        let copied = self.copies.iter().filter(|c| c.is_some()).count();
        if columns.len() + copied != self.shared.schema.fields().len() {
            return Err(internal("score schema and score columns differ"));
        }
        let mut offset = 0;
        while offset < rows {
            let limit = self.group_limit();
            let open = self.open.get_or_insert_with(|| OpenGroup {
                sinks: self
                    .shared
                    .own_columns
                    .iter()
                    .map(|own| match own.clone() {
                        Some((d, Own::Bits(kind))) => ColumnSink {
                            generic: None,
                            bits: Some(BitScores::new(d, kind)),
                            ints: None,
                        },
                        Some((d, Own::Ints)) => ColumnSink {
                            generic: None,
                            bits: None,
                            ints: Some(DeltaInts::new(d)),
                        },
                        None => ColumnSink {
                            generic: None,
                            bits: None,
                            ints: None,
                        },
                    })
                    .collect(),
                rows: 0,
                spare: None,
            });
            let take = (rows - offset).min(limit - open.rows);
            let written = self
                .shared
                .schema
                .fields()
                .iter()
                .zip(open.sinks.iter_mut())
                .enumerate()
                .zip(&self.copies)
                .filter(|(_, copy)| copy.is_none())
                .map(|(field_sink, _)| field_sink);
            for ((j, (field, sink)), column) in written.zip(columns) {
                let part = if take == column.len() {
                    Arc::clone(column)
                } else {
                    column.slice(offset, take)
                };
                let spare = &mut open.spare;
                let leaves = self.shared.field_ranges.get(j).cloned().unwrap_or(0..0);
                sink.write(field, &part, || {
                    OpenGroup::writers(spare, &self.shared.factory, leaves)
                })
                .map_err(|e| parquet_error(&self.shared.path, e))?;
            }
            open.rows += take;
            offset += take;
            if open.rows == limit {
                self.close_group()?;
            }
        }
        Ok(())
    }

    /// Closes the open row group, if any: the next rows start a new one.
    fn close_group(&mut self) -> Result<(), Error> {
        if let Some(OpenGroup { sinks, rows, .. }) = self.open.take() {
            let mut chunks = Vec::with_capacity(sinks.len());
            for (sink, copy) in sinks.into_iter().zip(self.copies.iter_mut()) {
                match copy.take() {
                    None => chunks.extend(
                        sink.close()
                            .map_err(|e| parquet_error(&self.shared.path, e))?,
                    ),
                    // The copied chunk stands for the whole row group (its sink was given no
                    // rows); a group of other rows would leave the column short or long.
                    // Taken once: a later batch then fails `write`'s column count.
                    Some((bytes, close)) if close.rows_written == rows as u64 => {
                        chunks.push(EncodedChunk::Raw(bytes, close));
                    }
                    Some(_) => {
                        return Err(internal("a copied column and its row group differ in rows"))
                    }
                }
            }
            self.done.push(EncodedRowGroup { chunks, rows });
        }
        Ok(())
    }

    /// The work item's row groups; none for an item without rows.
    pub fn finish(mut self) -> Result<Vec<EncodedRowGroup>, Error> {
        self.close_group()?;
        Ok(self.done)
    }
}

/// Whether a stored input column can stand as it is for an output column: the same physical
/// and logical type, repetition and levels. (Its name may differ: the output's is made
/// warehouse-safe; the chunk's metadata is rebuilt with the output's column.)
fn same_stored_type(stored: &ColumnDescriptor, out: &ColumnDescriptor) -> bool {
    let repetition = |d: &ColumnDescriptor| d.self_type().get_basic_info().repetition();
    stored.physical_type() == out.physical_type()
        && stored.logical_type_ref() == out.logical_type_ref()
        && stored.converted_type() == out.converted_type()
        && stored.type_length() == out.type_length()
        && stored.type_precision() == out.type_precision()
        && stored.type_scale() == out.type_scale()
        && stored.max_def_level() == out.max_def_level()
        && stored.max_rep_level() == out.max_rep_level()
        && repetition(stored) == repetition(out)
}

/// The close result of a copied chunk: its footer metadata, rebuilt for output column `out`,
/// and an offset index of its data pages (every column of scores.parquet has one), with page
/// offsets counted from the start of the copied bytes (where `append_column` reads them);
/// the row group writer moves them to their place in the output file. No column index or
/// bloom filter is carried over.
fn stored_close(
    chunk: &StoredChunk,
    out: ColumnDescPtr,
) -> parquet::errors::Result<ColumnCloseResult> {
    let meta = &chunk.meta;
    let start = meta
        .dictionary_page_offset()
        .unwrap_or_else(|| meta.data_page_offset());
    let mut b = ColumnChunkMetaData::builder(out)
        .set_compression_codec(meta.compression_codec())
        .set_encodings_mask(*meta.encodings_mask())
        .set_total_compressed_size(meta.compressed_size())
        .set_total_uncompressed_size(meta.uncompressed_size())
        .set_num_values(meta.num_values())
        .set_data_page_offset(meta.data_page_offset() - start)
        .set_dictionary_page_offset(meta.dictionary_page_offset().map(|o| o - start))
        .set_unencoded_byte_array_data_bytes(meta.unencoded_byte_array_data_bytes())
        .set_repetition_level_histogram(meta.repetition_level_histogram().cloned())
        .set_definition_level_histogram(meta.definition_level_histogram().cloned());
    if let Some(statistics) = meta.statistics() {
        b = b.set_statistics(statistics.clone());
    }
    if let Some(stats) = meta.page_encoding_stats() {
        b = b.set_page_encoding_stats(stats.clone());
    }
    let mut offsets = OffsetIndexBuilder::new();
    for p in &chunk.pages {
        offsets.append_row_count(p.values);
        offsets.append_offset_and_size(p.offset as i64 - start, p.size as i32);
    }
    Ok(ColumnCloseResult {
        bytes_written: chunk.bytes.len() as u64,
        rows_written: meta.num_values() as u64,
        metadata: b.build()?,
        bloom_filter: None,
        column_index: None,
        offset_index: Some(offsets.build()),
    })
}

/// A check that should never fail (of kind Other, as these have always been reported).
fn internal(message: &str) -> Error {
    EngineError::Internal {
        message: message.to_owned(),
        kind: crate::ErrorKind::Other,
    }
    .into()
}
