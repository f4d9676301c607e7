//! The rows a report lets a reader look at: per scorer, the first rows it failed; and with a
//! baseline, the rows that flipped, base and new side by side. What a row shows is what the
//! run's `scores.parquet` holds: its kept columns (`--keep`: keep the ground truth and the
//! output to see them) and the scorer's fields (a judge's `reasoning` among them).
//!
//! Bounded whatever the runs' size: [`ROWS_SHOWN`] rows per scorer and per flip direction,
//! each text cut at [`CELL_CHARS`] characters; the scan of a run stops as soon as every
//! sample is full, and the flipped rows are looked up by the keys compare.json lists.

use crate::error::CompareError;
use crate::runs::run_file;
use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use evalscore_error::Error;
use evalscore_reader::Inputs;
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Rows shown per scorer (failing rows) and per score column and direction (flipped rows).
pub const ROWS_SHOWN: usize = 20;
/// Characters of a text shown at most; the rest is cut, and the cell says how much.
pub const CELL_CHARS: usize = 2_000;
/// Texts longer than this (or of several lines) are folded: a `<details>` whose summary is
/// their start.
pub const FOLD_CHARS: usize = 120;

/// One value as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The text, cut at [`CELL_CHARS`] characters; `None` for null.
    pub text: Option<String>,
    /// The start shown while folded, when the text is folded.
    pub head: Option<String>,
    /// Characters cut from the end.
    pub cut: usize,
}

impl Cell {
    fn new(text: Option<String>) -> Cell {
        let Some(text) = text else {
            return Cell {
                text: None,
                head: None,
                cut: 0,
            };
        };
        let chars = text.chars().count();
        let (text, cut) = match text.char_indices().nth(CELL_CHARS) {
            Some((at, _)) => (text[..at].to_owned(), chars - CELL_CHARS),
            None => (text, 0),
        };
        let head = (chars > FOLD_CHARS || text.contains('\n')).then(|| {
            let first = text.lines().next().unwrap_or_default();
            first.chars().take(FOLD_CHARS).collect::<String>() + "…"
        });
        Cell {
            text: Some(text),
            head,
            cut,
        }
    }
}

/// The first rows a scorer failed (`<scorer>__is_correct` = 0).
#[derive(Debug, Serialize)]
pub struct FailingRows {
    pub scorer: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// The rows whose score in `column` flipped, base and new side by side.
#[derive(Debug, Serialize)]
pub struct FlippedRows {
    pub column: String,
    /// `pass → fail` or `fail → pass`.
    pub direction: &'static str,
    pub rows: Vec<FlippedRow>,
}

/// One flipped row: its key, then per shown column (name, base, new).
#[derive(Debug, Serialize)]
pub struct FlippedRow {
    pub key: String,
    pub fields: Vec<(String, Cell, Cell)>,
}

/// A run's `scores.parquet`, opened, and its columns: kept ones (no `__`) and score fields.
struct Scores {
    path: PathBuf,
    inputs: Inputs,
    names: Vec<String>,
}

impl Scores {
    fn open(dir: &Path, what: &str) -> Result<Scores, Error> {
        let path = run_file(dir, "scores.parquet", what)?;
        let inputs = Inputs::open(std::slice::from_ref(&path))?;
        let names = inputs
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        Ok(Scores {
            path,
            inputs,
            names,
        })
    }

    fn kept(&self) -> impl Iterator<Item = &String> {
        self.names.iter().filter(|n| !n.contains("__"))
    }

    /// The columns shown for scorer `key`: the kept ones, then its fields but `skip`.
    fn shown(&self, key: &str, skip: &str) -> Vec<String> {
        let prefix = format!("{key}__");
        self.kept()
            .chain(
                self.names
                    .iter()
                    .filter(|n| n.starts_with(&prefix) && n.as_str() != skip),
            )
            .cloned()
            .collect()
    }

    /// Runs `visit` over every batch (all columns) until it says it has enough.
    fn scan(
        &self,
        mut visit: impl FnMut(&RecordBatch) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        for unit in self.inputs.units() {
            for batch in self.inputs.unit_batches(&unit, &self.names)? {
                if visit(&batch?)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn decode(&self, e: arrow::error::ArrowError) -> Error {
        CompareError::Decode {
            path: self.path.clone(),
            source: e,
        }
        .into()
    }
}

/// The text of row `i` of every column of `names` in `batch`.
fn row_cells(
    batch: &RecordBatch,
    names: &[String],
    i: usize,
) -> Result<Vec<Cell>, arrow::error::ArrowError> {
    let options = FormatOptions::default();
    names
        .iter()
        .map(|n| match batch.column_by_name(n) {
            Some(a) if a.is_valid(i) => {
                let f = ArrayFormatter::try_new(a.as_ref(), &options)?;
                Ok(Cell::new(Some(f.value(i).to_string())))
            }
            _ => Ok(Cell::new(None)),
        })
        .collect()
}

/// Per scorer with an `is_correct` field, the first [`ROWS_SHOWN`] rows where it is 0, in
/// the run's row order.
pub fn failing_rows(dir: &Path) -> Result<Vec<FailingRows>, Error> {
    let run = Scores::open(dir, "report's")?;
    let mut samples: Vec<(String, FailingRows)> = run
        .names
        .iter()
        .filter_map(|n| {
            let key = n.strip_suffix("__is_correct")?;
            Some((
                n.clone(),
                FailingRows {
                    scorer: key.to_owned(),
                    columns: run.shown(key, n),
                    rows: Vec::new(),
                },
            ))
        })
        .collect();
    if samples.is_empty() {
        return Ok(Vec::new());
    }
    run.scan(|batch| {
        for (column, sample) in &mut samples {
            if sample.rows.len() >= ROWS_SHOWN {
                continue;
            }
            let Some(a) = batch.column_by_name(column) else {
                continue;
            };
            let scores = arrow::compute::cast(a, &DataType::Float64).map_err(|e| run.decode(e))?;
            let scores = scores.as_primitive::<Float64Type>();
            for i in 0..batch.num_rows() {
                if scores.is_valid(i) && scores.value(i) == 0.0 {
                    let cells = row_cells(batch, &sample.columns, i).map_err(|e| run.decode(e))?;
                    sample.rows.push(cells);
                    if sample.rows.len() >= ROWS_SHOWN {
                        break;
                    }
                }
            }
        }
        Ok(samples.iter().all(|(_, s)| s.rows.len() >= ROWS_SHOWN))
    })?;
    Ok(samples.into_iter().map(|(_, s)| s).collect())
}

/// Row `i`'s key as compare.json writes it ([`crate::runs::key_json`]): a number for an
/// integer key column, else text; an array for a composite key. As JSON text; `None` when a
/// key column is null.
fn key_text(columns: &[(&dyn Array, ArrayFormatter<'_>)], i: usize) -> Option<String> {
    let mut parts = Vec::with_capacity(columns.len());
    for (a, f) in columns {
        if !a.is_valid(i) {
            return None;
        }
        let text = f.value(i).to_string();
        parts.push(if a.data_type().is_integer() {
            text.parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::String(text))
        } else {
            Value::String(text)
        });
    }
    Some(if parts.len() == 1 {
        parts.pop().unwrap_or(Value::Null).to_string()
    } else {
        Value::Array(parts).to_string()
    })
}

/// The cells of every column of the rows of `run` whose key is in `wanted`.
fn rows_by_key(
    run: &Scores,
    key: &[String],
    wanted: &HashSet<String>,
) -> Result<HashMap<String, Vec<Cell>>, Error> {
    let mut found: HashMap<String, Vec<Cell>> = HashMap::new();
    if wanted.is_empty() {
        return Ok(found);
    }
    let options = FormatOptions::default();
    run.scan(|batch| {
        let mut columns = Vec::with_capacity(key.len());
        for k in key {
            let Some(a) = batch.column_by_name(k) else {
                return Ok(true);
            };
            let f = ArrayFormatter::try_new(a.as_ref(), &options).map_err(|e| run.decode(e))?;
            columns.push((a.as_ref(), f));
        }
        for i in 0..batch.num_rows() {
            let Some(k) = key_text(&columns, i) else {
                continue;
            };
            if wanted.contains(&k) && !found.contains_key(&k) {
                let cells = row_cells(batch, &run.names, i).map_err(|e| run.decode(e))?;
                found.insert(k, cells);
            }
        }
        Ok(found.len() == wanted.len())
    })?;
    Ok(found)
}

/// The flipped rows of each score column of `flips` ((column, pass → fail keys, fail → pass
/// keys), the keys as compare.json lists them), base and new side by side: per row, the
/// kept columns but the key, then the fields of the column's scorer.
pub fn flipped_rows(
    base: &Path,
    new: &Path,
    key: &[String],
    flips: &[(String, Vec<Value>, Vec<Value>)],
) -> Result<Vec<FlippedRows>, Error> {
    let (b, n) = (
        Scores::open(base, "baseline")?,
        Scores::open(new, "report's")?,
    );
    let wanted: HashSet<String> = flips
        .iter()
        .flat_map(|(_, down, up)| {
            down.iter()
                .take(ROWS_SHOWN)
                .chain(up.iter().take(ROWS_SHOWN))
        })
        .map(Value::to_string)
        .collect();
    let (base_rows, new_rows) = (
        rows_by_key(&b, key, &wanted)?,
        rows_by_key(&n, key, &wanted)?,
    );
    let cell = |run: &Scores, rows: &HashMap<String, Vec<Cell>>, k: &str, col: &str| {
        let at = run.names.iter().position(|c| c == col);
        rows.get(k)
            .zip(at)
            .map_or_else(|| Cell::new(None), |(r, at)| r[at].clone())
    };
    let mut out = Vec::new();
    for (column, down, up) in flips {
        let scorer = column.split_once("__").map_or(column.as_str(), |(s, _)| s);
        let shown: Vec<String> = n
            .shown(scorer, "")
            .into_iter()
            .filter(|c| !key.contains(c))
            .collect();
        for (direction, keys) in [("pass → fail", down), ("fail → pass", up)] {
            let rows: Vec<FlippedRow> = keys
                .iter()
                .take(ROWS_SHOWN)
                .map(|k| {
                    let text = k.to_string();
                    FlippedRow {
                        key: match k {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        },
                        fields: shown
                            .iter()
                            .map(|c| {
                                (
                                    c.clone(),
                                    cell(&b, &base_rows, &text, c),
                                    cell(&n, &new_rows, &text, c),
                                )
                            })
                            .collect(),
                    }
                })
                .collect();
            if !rows.is_empty() {
                out.push(FlippedRows {
                    column: column.clone(),
                    direction,
                    rows,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_and_folded() {
        assert_eq!(Cell::new(None).text, None);
        let short = Cell::new(Some("Paris".to_owned()));
        assert_eq!(
            (short.text.as_deref(), short.head, short.cut),
            (Some("Paris"), None, 0)
        );
        let lines = Cell::new(Some("first line\nsecond".to_owned()));
        assert_eq!(lines.head.as_deref(), Some("first line…"));
        let long = Cell::new(Some("é".repeat(CELL_CHARS + 5)));
        assert_eq!(
            long.text.as_ref().map(|t| t.chars().count()),
            Some(CELL_CHARS)
        );
        assert_eq!(long.cut, 5);
        assert_eq!(long.head, Some("é".repeat(FOLD_CHARS) + "…"));
    }
}
