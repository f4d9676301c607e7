//! Arrow data between the engine and pyarrow: arrays handed to Python functions, and score
//! batches with dictionary columns as their value type. Also the Python API's options that
//! map onto the engine's (`hive_partitioning=`, `format=`, `cache=` and `offline=`).

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Schema, SchemaRef};
use evalscore_engine::{
    Error, ErrorKind, HivePartitioning, JudgeCache, JudgeOptions, OutputFormat,
};
use pyo3::prelude::*;
use pyo3_arrow::PyArray;
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) fn to_py<'py>(py: Python<'py>, a: &ArrayRef) -> PyResult<Bound<'py, PyAny>> {
    let array = PyArray::from_array_ref(Arc::clone(a));
    // `to_pyarrow` borrows the wrapper for the token's lifetime; the pyarrow array it makes
    // owns its data, so it outlives the wrapper.
    let out = array.to_pyarrow(py)?.unbind();
    Ok(out.into_bound(py))
}

/// `schema` with dictionary columns as their value type: scores.parquet's columns as a reader
/// of the file sees them (the engine encodes `completion_validity` as a dictionary).
pub(crate) fn plain_schema(schema: &SchemaRef) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Dictionary(_, v) => {
                    Arc::new(f.as_ref().clone().with_data_type(v.as_ref().clone()))
                }
                _ => Arc::clone(f),
            })
            .collect::<Vec<_>>(),
    ))
}

/// A score batch in [`plain_schema`].
pub(crate) fn plain(batch: RecordBatch) -> Result<RecordBatch, Error> {
    let schema = plain_schema(&batch.schema());
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| cast(c, f.data_type()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::new(format!("internal error: {e}")).kind(ErrorKind::Internal))?;
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| Error::new(format!("internal error: {e}")).kind(ErrorKind::Internal))
}

/// `hive_partitioning=` of the Python API: `None` reads the keys when every file has the same
/// ones, `True` requires them, `False` reads none (`--hive-partitioning`, `--no-...`).
pub(crate) fn hive_partitioning(v: Option<bool>) -> HivePartitioning {
    match v {
        None => HivePartitioning::Auto,
        Some(true) => HivePartitioning::On,
        Some(false) => HivePartitioning::Off,
    }
}

/// `format=` of the Python API: `"folder"` (five files) or `"delta"` (Delta tables), as
/// `--format`.
pub(crate) fn output_format(v: &str) -> PyResult<OutputFormat> {
    match v {
        "folder" => Ok(OutputFormat::Folder),
        "delta" => Ok(OutputFormat::Delta),
        other => Err(crate::errors::py_err(
            Error::new(format!("format: `{other}` is not `folder` or `delta`"))
                .kind(ErrorKind::Other),
        )),
    }
}

/// `cache=` of the Python API, as the CLI's `--cache PATH` and `--no-cache`: `None` is the
/// default cache file, `False` no cache, a path (a `str` or `os.PathLike`) that file.
pub(crate) fn judge_cache(value: Option<&Bound<'_, PyAny>>) -> PyResult<JudgeCache> {
    let refused = |what: String| {
        crate::errors::py_err(
            Error::new(format!(
                "cache: {what}; give a path, None (the default cache) or False (no cache)"
            ))
            .kind(ErrorKind::Other),
        )
    };
    let Some(v) = value.filter(|v| !v.is_none()) else {
        return Ok(JudgeCache::Default);
    };
    match v.extract::<bool>() {
        Ok(false) => return Ok(JudgeCache::Off),
        Ok(true) => return Err(refused("`True` names no cache".to_owned())),
        Err(_) => {}
    }
    let path: PathBuf = v.extract().map_err(|_| {
        let kind = v
            .get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string());
        refused(format!("a `{kind}` is not a path"))
    })?;
    // A URL or a folder is a shared cache (credentials from the environment), as `--cache`.
    Ok(match path.to_str() {
        Some(text) => JudgeCache::parse(text, Vec::new()),
        None => JudgeCache::Path(path),
    })
}

/// `cache=` and `offline=` (`--offline`) of the Python API.
pub(crate) fn judge_options(
    cache: Option<&Bound<'_, PyAny>>,
    offline: bool,
) -> PyResult<JudgeOptions> {
    Ok(JudgeOptions {
        cache: judge_cache(cache)?,
        offline,
    })
}
