//! Reading a run folder's `scores.parquet`: the key of every row, the numeric score
//! columns, and the group and cluster columns when asked for.

use arrow::array::{Array, ArrayRef, Float64Array};
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use evalscore_engine::{Error, ErrorKind};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One run's rows as the comparison needs them.
#[derive(Debug)]
pub struct RunScores {
    /// The `scores.parquet` read.
    pub path: PathBuf,
    /// Each row's key, as text (composite keys joined unambiguously).
    pub keys: Vec<String>,
    /// Each row's key as JSON: a number for integer key columns, else text; an array for
    /// composite keys.
    pub key_json: Vec<Value>,
    /// Numeric score columns (`<scorer>__<field>`), in file order, as Float64; null and NaN
    /// values are `None`.
    pub columns: Vec<(String, Vec<Option<f64>>)>,
    /// The `--group-by` column's values as text, when this file has it.
    pub group: Option<Vec<Option<String>>>,
    /// The `--cluster` column's values as text, when this file has it.
    pub cluster: Option<Vec<Option<String>>>,
}

impl RunScores {
    /// The row of every key.
    pub fn index(&self) -> HashMap<&str, usize> {
        self.keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect()
    }
}

/// Checks that `dir` is a folder holding `file`, and returns the file's path.
pub fn run_file(dir: &Path, file: &str, what: &str) -> Result<PathBuf, Error> {
    if !dir.is_dir() {
        return Err(Error::new(format!(
            "the {what} run folder `{}` does not exist",
            dir.display()
        ))
        .kind(ErrorKind::Input)
        .hint("pass the `--out` folder of an `evalscore run`"));
    }
    let path = dir.join(file);
    if !path.is_file() {
        return Err(Error::new(format!(
            "the {what} run folder `{}` has no {file}",
            dir.display()
        ))
        .kind(ErrorKind::Input)
        .hint("pass the `--out` folder of a finished `evalscore run`"));
    }
    Ok(path)
}

fn read_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(format!("cannot read `{}`", path.display()))
        .kind(ErrorKind::Input)
        .caused_by(e.to_string())
}

/// Whether a column of this type can be compared as a score.
fn numeric(t: &DataType) -> bool {
    t.is_numeric() || matches!(t, DataType::Boolean)
}

/// Reads `dir/scores.parquet`: the `key` columns (required, non-null, unique), every
/// numeric `<scorer>__<field>` column that is not a key, group or cluster column, and the
/// group and cluster columns if present.
pub fn read_scores(
    dir: &Path,
    what: &str,
    key: &[String],
    group_by: Option<&str>,
    cluster: Option<&str>,
) -> Result<RunScores, Error> {
    let path = run_file(dir, "scores.parquet", what)?;
    let file = std::fs::File::open(&path).map_err(|e| read_error(&path, e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| read_error(&path, e))?;
    let schema = builder.schema().clone();
    for k in key {
        if schema.field_with_name(k).is_err() {
            return Err(
                Error::new(format!("`{}` has no key column `{k}`", path.display()))
                    .kind(ErrorKind::Input)
                    .hint("pass `--key` with columns both runs kept (`evalscore run --keep`)"),
            );
        }
    }
    let special = |n: &str| key.iter().any(|k| k == n) || Some(n) == group_by || Some(n) == cluster;
    let mut wanted: Vec<usize> = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        let name = f.name().as_str();
        if special(name) || (name.contains("__") && numeric(f.data_type())) {
            wanted.push(i);
        }
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted.iter().copied());
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| read_error(&path, e))?;
    let mut batches = Vec::new();
    for b in reader {
        batches.push(b.map_err(|e| read_error(&path, e))?);
    }
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let column = |name: &str| -> Result<Vec<ArrayRef>, Error> {
        batches
            .iter()
            .map(|b| {
                b.column_by_name(name).cloned().ok_or_else(|| {
                    Error::new(format!("internal error: column `{name}` not read"))
                        .kind(ErrorKind::Internal)
                })
            })
            .collect()
    };
    let text = |name: &str| -> Result<Vec<Option<String>>, Error> {
        let mut out = Vec::with_capacity(rows);
        for a in column(name)? {
            let fmt = ArrayFormatter::try_new(a.as_ref(), &FormatOptions::default())
                .map_err(|e| read_error(&path, e))?;
            for i in 0..a.len() {
                out.push(a.is_valid(i).then(|| fmt.value(i).to_string()));
            }
        }
        Ok(out)
    };

    // Keys.
    let mut keys = vec![String::new(); rows];
    let mut key_json: Vec<Vec<Value>> = vec![Vec::with_capacity(key.len()); rows];
    for k in key {
        let is_int = schema
            .field_with_name(k)
            .is_ok_and(|f| f.data_type().is_integer());
        for (row, v) in text(k)?.into_iter().enumerate() {
            let Some(v) = v else {
                return Err(Error::new(format!(
                    "`{}` row {}: the key column `{k}` is null",
                    path.display(),
                    row + 1
                ))
                .kind(ErrorKind::Input)
                .hint("every row needs a key; pass `--key` with columns that identify each row"));
            };
            // Length-prefixed parts, so ("a,b", "c") and ("a", "b,c") differ.
            keys[row].push_str(&format!("{}:{v}", v.len()));
            let json = if is_int {
                v.parse::<i64>()
                    .map(Value::from)
                    .or_else(|_| v.parse::<u64>().map(Value::from))
                    .unwrap_or(Value::String(v))
            } else {
                Value::String(v)
            };
            key_json[row].push(json);
        }
    }
    let key_json: Vec<Value> = key_json
        .into_iter()
        .map(|mut parts| {
            if parts.len() == 1 {
                parts.pop().unwrap_or(Value::Null)
            } else {
                Value::Array(parts)
            }
        })
        .collect();
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(rows);
    for (row, k) in keys.iter().enumerate() {
        if let Some(first) = seen.insert(k.as_str(), row) {
            return Err(Error::new(format!(
                "`{}`: the key `{}` is not unique: {} appears in rows {} and {}",
                path.display(),
                key.join(","),
                key_json[row],
                first + 1,
                row + 1
            ))
            .kind(ErrorKind::Input)
            .hint("pass `--key` with columns that identify each row, e.g. `--key id,sample`"));
        }
    }
    drop(seen);

    // Score columns, in file order.
    let mut columns = Vec::new();
    for i in &wanted {
        let f = schema.field(*i);
        let name = f.name().as_str();
        if special(name) {
            continue;
        }
        let mut values = Vec::with_capacity(rows);
        for a in column(name)? {
            let cast = arrow::compute::cast(a.as_ref(), &DataType::Float64)
                .map_err(|e| read_error(&path, e))?;
            let Some(f64s) = cast.as_any().downcast_ref::<Float64Array>() else {
                return Err(read_error(&path, format!("column `{name}` is not numeric")));
            };
            values.extend(f64s.iter().map(|v| v.filter(|x| !x.is_nan())));
        }
        columns.push((name.to_owned(), values));
    }
    let group = match group_by {
        Some(g) if schema.field_with_name(g).is_ok() => Some(text(g)?),
        _ => None,
    };
    let cluster = match cluster {
        Some(c) if schema.field_with_name(c).is_ok() => Some(text(c)?),
        _ => None,
    };
    Ok(RunScores {
        path,
        keys,
        key_json,
        columns,
        group,
        cluster,
    })
}
