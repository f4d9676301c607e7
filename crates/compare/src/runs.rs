//! Reading a run folder's `scores.parquet` through evalscore's checked reader (the footer,
//! the schema's depth and every page header are checked before the decoder runs, as for
//! `run`'s inputs): the key of every row, the numeric score columns, and the group and
//! cluster columns when asked for. Rows stream into the partitions of a comparison
//! ([`Run::scan`]), so memory does not grow with the rows.

use crate::error::CompareError;
use crate::spill::{Record, SpillDir, Store, NONE};
use arrow::array::{Array, ArrayRef, Float64Array};
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use evalscore_error::Error;
use evalscore_reader::Inputs;
use serde_json::Value;
use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};

/// Checks that `dir` is a folder holding `file`, and returns the file's path.
pub fn run_file(dir: &Path, file: &str, what: &str) -> Result<PathBuf, Error> {
    if !dir.is_dir() {
        return Err(CompareError::NoRunFolder {
            what: what.to_owned(),
            dir: evalscore_outdir::shown_path(dir),
        }
        .into());
    }
    let path = dir.join(file);
    if !path.is_file() {
        return Err(CompareError::NoRunFile {
            what: what.to_owned(),
            dir: dir.to_path_buf(),
            file: file.to_owned(),
        }
        .into());
    }
    Ok(path)
}

/// Whether a column of this type can be compared as a score.
fn numeric(t: &DataType) -> bool {
    t.is_numeric() || matches!(t, DataType::Boolean)
}

/// One run's `scores.parquet`, opened (footer and schema checked), not yet read.
#[derive(Debug)]
pub(crate) struct Run {
    pub path: PathBuf,
    pub inputs: Inputs,
    pub key: Vec<String>,
    /// Per key column: whether it holds integers (its keys are JSON numbers).
    pub key_int: Vec<bool>,
    /// The numeric `<scorer>__<field>` columns, in file order.
    pub scores: Vec<String>,
    pub group: Option<String>,
    pub cluster: Option<String>,
    /// Every column read, in schema order.
    read: Vec<String>,
}

/// Opens `dir/scores.parquet` and checks that it has the `key` columns.
pub(crate) fn open(
    dir: &Path,
    what: &str,
    key: &[String],
    group_by: Option<&str>,
    cluster: Option<&str>,
) -> Result<Run, Error> {
    let path = run_file(dir, "scores.parquet", what)?;
    let inputs = Inputs::open(std::slice::from_ref(&path))?;
    let schema = inputs.schema.clone();
    let mut key_int = Vec::with_capacity(key.len());
    for k in key {
        match schema.field_with_name(k) {
            Ok(f) => key_int.push(f.data_type().is_integer()),
            Err(_) => {
                return Err(CompareError::NoKeyColumn {
                    path,
                    key: k.clone(),
                }
                .into())
            }
        }
    }
    let has = |n: Option<&str>| {
        n.filter(|n| schema.field_with_name(n).is_ok())
            .map(str::to_owned)
    };
    let special = |n: &str| key.iter().any(|k| k == n) || Some(n) == group_by || Some(n) == cluster;
    let mut read = Vec::new();
    let mut scores = Vec::new();
    for f in schema.fields() {
        let name = f.name().as_str();
        if special(name) {
            read.push(name.to_owned());
        } else if name.contains("__") && numeric(f.data_type()) {
            read.push(name.to_owned());
            scores.push(name.to_owned());
        }
    }
    Ok(Run {
        group: has(group_by),
        cluster: has(cluster),
        path,
        inputs,
        key: key.to_vec(),
        key_int,
        scores,
        read,
    })
}

/// The text values of the group and cluster columns of both runs, as ids.
#[derive(Debug, Default)]
pub(crate) struct Dict {
    index: crate::typed_rows::FastMap<String, u32>,
    pub values: Vec<String>,
}

impl Dict {
    pub fn id(&mut self, v: &str) -> u32 {
        if let Some(id) = self.index.get(v) {
            return *id;
        }
        let id = self.values.len() as u32;
        self.index.insert(v.to_owned(), id);
        self.values.push(v.to_owned());
        id
    }
}

/// How rows are spread over partitions: by a hash of their key, the same for both runs.
#[derive(Debug)]
pub(crate) struct Layout {
    pub partitions: usize,
    hasher: std::collections::hash_map::RandomState,
    pub spill: SpillDir,
}

/// At most this many partitions (each is a file open while a run is read).
const MAX_PARTITIONS: usize = 256;

impl Layout {
    /// Partitions of about `partition_rows` rows for runs of up to `rows` rows; a single
    /// one, kept in memory, when they fit.
    pub fn new(rows: u64, partition_rows: u64) -> Result<Layout, CompareError> {
        let partitions = rows
            .div_ceil(partition_rows.max(1))
            .clamp(1, MAX_PARTITIONS as u64) as usize;
        Ok(Layout {
            partitions,
            hasher: Default::default(),
            spill: SpillDir::new(partitions > 1)?,
        })
    }

    fn partition(&self, key: &[u8]) -> usize {
        if self.partitions == 1 {
            return 0;
        }
        (self.hasher.hash_one(key) % self.partitions as u64) as usize
    }
}

/// A run read into partitions. Each partition holds its rows in file order, one record
/// each: row number (`u64`), group id, cluster id (`u32`, [`NONE`] when null or absent), the
/// score columns' values (`f64`, NaN when null or NaN), the key (length-prefixed bytes).
#[derive(Debug)]
pub(crate) struct Scanned {
    pub rows: u64,
    pub parts: Vec<Store>,
    /// The partition of each row (kept for the base run, whose order the comparison follows).
    pub part_of: Vec<u8>,
    /// Per score column, its first value that is +inf or -inf (row, value).
    pub first_infinite: Vec<Option<(u64, f64)>>,
}

impl Run {
    pub fn rows(&self) -> u64 {
        self.inputs.rows()
    }

    /// Reads every row into `layout`'s partitions. A null key is an error naming the first
    /// key column that has one, and its first null row.
    pub fn scan(
        &self,
        layout: &Layout,
        dict: &mut Dict,
        keep_part_of: bool,
        tag: &str,
    ) -> Result<Scanned, Error> {
        let mut parts = (0..layout.partitions)
            .map(|p| layout.spill.store(&format!("{tag}-{p}")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut part_of = Vec::new();
        let mut first_infinite = vec![None; self.scores.len()];
        let mut first_null: Vec<Option<u64>> = vec![None; self.key.len()];
        let decode = |source| CompareError::Decode {
            path: self.path.clone(),
            source,
        };
        let options = FormatOptions::default();
        let mut row: u64 = 0;
        let mut key = Vec::new();
        let mut part = String::new();
        let mut rec = Record::default();
        for unit in self.inputs.units() {
            for batch in self.inputs.unit_batches(&unit, &self.read)? {
                let batch = batch?;
                let column = |name: &str| {
                    batch
                        .column_by_name(name)
                        .ok_or_else(|| CompareError::Internal(format!("column `{name}` not read")))
                };
                let keys = self
                    .key
                    .iter()
                    .map(|k| {
                        let a = column(k)?;
                        let f = ArrayFormatter::try_new(a.as_ref(), &options).map_err(decode)?;
                        Ok((a, f))
                    })
                    .collect::<Result<Vec<_>, CompareError>>()?;
                let text = |name: &Option<String>| -> Result<_, CompareError> {
                    match name {
                        None => Ok(None),
                        Some(n) => {
                            let a = column(n)?;
                            let f =
                                ArrayFormatter::try_new(a.as_ref(), &options).map_err(decode)?;
                            Ok(Some((a, f)))
                        }
                    }
                };
                let group = text(&self.group)?;
                let cluster = text(&self.cluster)?;
                let mut values = Vec::with_capacity(self.scores.len());
                for name in &self.scores {
                    let cast = arrow::compute::cast(column(name)?.as_ref(), &DataType::Float64)
                        .map_err(decode)?;
                    let Some(f) = cast.as_any().downcast_ref::<Float64Array>().cloned() else {
                        return Err(CompareError::Internal(format!(
                            "column `{name}` did not cast to Float64"
                        ))
                        .into());
                    };
                    values.push(f);
                }
                for i in 0..batch.num_rows() {
                    key.clear();
                    let mut null = false;
                    for (k, (a, f)) in keys.iter().enumerate() {
                        if !a.is_valid(i) {
                            first_null[k].get_or_insert(row);
                            null = true;
                            continue;
                        }
                        part.clear();
                        let _ = write!(part, "{}", f.value(i));
                        // Length-prefixed parts, so ("a,b", "c") and ("a", "b,c") differ.
                        key.extend_from_slice(part.len().to_string().as_bytes());
                        key.push(b':');
                        key.extend_from_slice(part.as_bytes());
                    }
                    if null {
                        // Reported once the whole file was read (a damaged page first).
                        row += 1;
                        continue;
                    }
                    let g = id_at(group.as_ref(), i, &mut part, dict);
                    let c = id_at(cluster.as_ref(), i, &mut part, dict);
                    rec.clear();
                    rec.u64(row);
                    rec.u32(g);
                    rec.u32(c);
                    for (col, v) in values.iter().enumerate() {
                        let x = if v.is_valid(i) { v.value(i) } else { f64::NAN };
                        if x.is_infinite() {
                            first_infinite[col].get_or_insert((row, x));
                        }
                        rec.f64(x);
                    }
                    rec.bytes(&key);
                    let p = layout.partition(&key);
                    parts[p].write(&rec.0)?;
                    if keep_part_of && layout.partitions > 1 {
                        part_of.push(p as u8);
                    }
                    row += 1;
                }
            }
        }
        if let Some((k, r)) = first_null
            .iter()
            .enumerate()
            .find_map(|(k, r)| r.map(|r| (k, r)))
        {
            return Err(CompareError::NullKey {
                path: self.path.clone(),
                row: r + 1,
                key: self.key[k].clone(),
            }
            .into());
        }
        for p in &mut parts {
            p.finish()?;
        }
        Ok(Scanned {
            rows: row,
            parts,
            part_of,
            first_infinite,
        })
    }
}

/// The dictionary id of row `i`'s text in a group or cluster column; [`NONE`] when null or
/// when the run has no such column.
fn id_at(
    column: Option<&(&ArrayRef, ArrayFormatter<'_>)>,
    i: usize,
    part: &mut String,
    dict: &mut Dict,
) -> u32 {
    match column {
        Some((a, f)) if a.is_valid(i) => {
            part.clear();
            let _ = write!(part, "{}", f.value(i));
            dict.id(part)
        }
        _ => NONE,
    }
}

/// A key as compare.json writes it: a number for an integer key column, else text; an
/// array of those for a composite key.
pub(crate) fn key_json(key: &[u8], key_int: &[bool]) -> Value {
    let mut parts = Vec::with_capacity(key_int.len());
    let mut rest = key;
    for is_int in key_int {
        let Some(colon) = rest.iter().position(|b| *b == b':') else {
            break;
        };
        let len: usize = std::str::from_utf8(&rest[..colon])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let end = (colon + 1 + len).min(rest.len());
        let v = String::from_utf8_lossy(&rest[colon + 1..end]).into_owned();
        rest = &rest[end..];
        parts.push(if *is_int {
            v.parse::<i64>()
                .map(Value::from)
                .or_else(|_| v.parse::<u64>().map(Value::from))
                .unwrap_or(Value::String(v))
        } else {
            Value::String(v)
        });
    }
    if parts.len() == 1 {
        parts.pop().unwrap_or(Value::Null)
    } else {
        Value::Array(parts)
    }
}
