//! Decoding one unit into record batches: the Parquet decoder (after the page headers of
//! the needed column chunks are checked, module `pages`) or the JSONL decoder, projected to
//! the needed columns (the file's, then its Hive partition values, module `hive`), with the
//! unit's row count checked at its end. With union by name, each batch holds the run's
//! columns exactly (module `union`).

use crate::parquet_input::{guarded, view_options};
use crate::units::damaged_unit;
use crate::{
    hive, jsonl, pages, remote, union, Format, InputFile, Inputs, ReadError, Unit, BATCH_SIZE,
};
use arrow::array::{RecordBatch, RecordBatchReader};
use arrow::datatypes::FieldRef;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ColumnChunkMetaData;
use std::fs::File;

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
                        let meta = file.reader_meta(|m| damaged_unit(file, unit, m))?;
                        parquet_unit(file, unit, roots, handle, meta, |chunk| {
                            pages::check_chunk(&check, chunk).map(|_| ())
                        })?
                    }
                    Some(remote) => remote::remote_unit(file, remote, unit, roots)?,
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

/// The decoder of one Parquet unit over `handle` (a local file, or a remote file's fetched
/// ranges), projected to the top-level columns `roots`, starting from the parsed footer
/// `meta` when there is one (else it reads the footer through `handle`). `check` first walks every page
/// header of each needed column chunk (see `pages`): a damaged one fails here, at once,
/// instead of sending the decoder astray.
pub(crate) fn parquet_unit<R: parquet::file::reader::ChunkReader + 'static>(
    file: &InputFile,
    unit: &Unit,
    roots: Vec<usize>,
    handle: R,
    meta: Option<ArrowReaderMetadata>,
    check: impl Fn(&ColumnChunkMetaData) -> Result<(), String>,
) -> Result<parquet::arrow::arrow_reader::ParquetRecordBatchReader, ReadError> {
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
