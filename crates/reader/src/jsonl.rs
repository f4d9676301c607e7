//! JSON Lines input: one pass to validate every line (UTF-8, JSON) and infer the schema,
//! then streaming decode with arrow-json.

use crate::{Format, InputFile, ReadError};
use arrow::array::RecordBatch;
use arrow::json::reader::{infer_json_schema_from_iterator, ReaderBuilder};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

const JSONL_BATCH: usize = 8 * 1024;

pub(crate) fn open(path: &Path) -> Result<InputFile, ReadError> {
    let handle = File::open(path).map_err(|e| ReadError::at(path, format!("cannot open: {e}")))?;
    let mut reader = BufReader::new(handle);
    let mut hasher = Sha256::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut rows = 0u64;
    let mut values = Vec::new();
    let mut schema = None;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| ReadError::at(path, format!("cannot read: {e}")))?;
        if n == 0 {
            break;
        }
        number += 1;
        hasher.update(&line);
        let text = std::str::from_utf8(&line).map_err(|e| {
            ReadError::at(
                path,
                format!("invalid UTF-8 at byte {} of the line", e.valid_up_to() + 1),
            )
            .with_line(number)
            .with_hint("JSON Lines files must be UTF-8; re-export the file as UTF-8")
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            ReadError::at(path, format!("not valid JSON: {e}"))
                .with_line(number)
                .with_hint("every line of a JSON Lines file must be one JSON object")
        })?;
        if !value.is_object() {
            return Err(ReadError::at(path, "line is not a JSON object")
                .with_line(number)
                .with_hint("every line of a JSON Lines file must be one JSON object"));
        }
        rows += 1;
        values.push(value);
        // Infer the schema in chunks so the first pass holds a bounded number of lines.
        if values.len() == JSONL_BATCH {
            schema = Some(merge_schema(schema, std::mem::take(&mut values), path)?);
        }
    }
    let schema = merge_schema(schema, values, path)?;
    Ok(InputFile {
        path: path.to_path_buf(),
        format: Format::Jsonl,
        rows,
        row_groups: vec![rows],
        footer_sha256: crate::hex(&hasher.finalize()),
        schema: Arc::new(schema),
    })
}

fn merge_schema(
    prev: Option<arrow::datatypes::Schema>,
    values: Vec<serde_json::Value>,
    path: &Path,
) -> Result<arrow::datatypes::Schema, ReadError> {
    let inferred = infer_json_schema_from_iterator(values.into_iter().map(Ok))
        .map_err(|e| ReadError::at(path, format!("cannot infer a schema: {e}")))?;
    match prev {
        None => Ok(inferred),
        Some(p) => arrow::datatypes::Schema::try_merge([p, inferred])
            .map_err(|e| ReadError::at(path, format!("lines disagree on a column's type: {e}"))),
    }
}

pub(crate) fn read(
    file: &InputFile,
    columns: &[String],
    f: &mut dyn FnMut(RecordBatch) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    let path = &file.path;
    let handle = File::open(path).map_err(|e| ReadError::at(path, format!("cannot open: {e}")))?;
    let reader = ReaderBuilder::new(Arc::clone(&file.schema))
        .with_batch_size(JSONL_BATCH)
        .build(BufReader::new(handle))
        .map_err(|e| ReadError::at(path, format!("cannot decode: {e}")))?;
    let indices: Vec<usize> = columns
        .iter()
        .filter_map(|c| file.schema.index_of(c).ok())
        .collect();
    for batch in reader {
        let batch = batch.map_err(|e| ReadError::at(path, format!("cannot decode: {e}")))?;
        let batch = batch
            .project(&indices)
            .map_err(|e| ReadError::at(path, format!("cannot project columns: {e}")))?;
        f(batch)?;
    }
    Ok(())
}
