//! A run's staged Parquet files as table data files: their Arrow schema and row count from the
//! footer, and metrics.parquet and confusion.parquet rewritten for the tables (small files):
//! without `run_id`, which the table holds as a partition value, and with their UInt64 counts
//! as Int64, Delta's `long`, which every reader reads back as the same type.

use crate::DeltaError;
use arrow::array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// A staged file's Arrow schema and row count.
pub(crate) struct Footer {
    pub schema: SchemaRef,
    pub rows: i64,
}

fn parquet_error(path: &Path, e: impl std::fmt::Display) -> DeltaError {
    DeltaError::Parquet(path.to_path_buf(), e.to_string())
}

/// Reads `path`'s footer only.
pub(crate) fn footer(path: &Path) -> Result<Footer, DeltaError> {
    let f = File::open(path).map_err(|e| DeltaError::io(path, "open", e))?;
    let b = ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| parquet_error(path, e))?;
    Ok(Footer {
        schema: Arc::clone(b.schema()),
        rows: b.metadata().file_metadata().num_rows(),
    })
}

/// Writes `from` to `to` without the columns in `drop`, UInt64 columns as Int64.
pub(crate) fn rewrite(from: &Path, to: &Path, drop: &[&str]) -> Result<Footer, DeltaError> {
    let f = File::open(from).map_err(|e| DeltaError::io(from, "open", e))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(f)
        .and_then(|b| b.build())
        .map_err(|e| parquet_error(from, e))?;
    let source = reader.schema();
    let keep: Vec<usize> = (0..source.fields().len())
        .filter(|&i| !drop.contains(&source.field(i).name().as_str()))
        .collect();
    let fields: Vec<Field> = keep
        .iter()
        .map(|&i| {
            let f = source.field(i);
            match f.data_type() {
                DataType::UInt64 => f.clone().with_data_type(DataType::Int64),
                _ => f.clone(),
            }
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let out = File::create_new(to).map_err(|e| DeltaError::io(to, "create", e))?;
    let mut w = ArrowWriter::try_new(out, Arc::clone(&schema), Some(props()))
        .map_err(|e| parquet_error(to, e))?;
    let mut rows = 0i64;
    for batch in reader {
        let batch = batch.map_err(|e| parquet_error(from, e))?;
        let columns: Vec<ArrayRef> = keep
            .iter()
            .zip(schema.fields())
            .map(|(&i, f)| cast(batch.column(i), f.data_type()))
            .collect::<Result<_, _>>()
            .map_err(|e| parquet_error(from, e))?;
        let batch =
            RecordBatch::try_new(Arc::clone(&schema), columns).map_err(|e| parquet_error(to, e))?;
        rows += batch.num_rows() as i64;
        w.write(&batch).map_err(|e| parquet_error(to, e))?;
    }
    w.close().map_err(|e| parquet_error(to, e))?;
    Ok(Footer { schema, rows })
}

/// The tables' files are written as a run's outputs are: zstd, `created_by` evalscore.
fn props() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_created_by(format!("evalscore {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Writes `batch` as the Parquet file `to`.
pub(crate) fn write(batch: &RecordBatch, to: &Path) -> Result<(), DeltaError> {
    let out = File::create_new(to).map_err(|e| DeltaError::io(to, "create", e))?;
    let mut w = ArrowWriter::try_new(out, batch.schema(), Some(props()))
        .map_err(|e| parquet_error(to, e))?;
    w.write(batch).map_err(|e| parquet_error(to, e))?;
    w.close().map_err(|e| parquet_error(to, e))?;
    Ok(())
}

/// A partition value as a folder name's part: ASCII letters, digits, `.`, `_` and `-` kept,
/// anything else `_`. Folder names are for people; readers take the values from the log.
pub(crate) fn folder_value(v: &str) -> String {
    v.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
