//! A partition filter over a record batch's own columns. Scoring in memory (the library's
//! `Scorer::score`, and through it Python's `Task.score`, Spark and Ray) has no files to
//! prune, but the rows of a partitioned table carry their partition values as columns (Spark
//! and Ray add them when they read a Hive tree), so a task's `filter:` keeps the rows whose
//! values match, with the language and null rules of pruning.
//!
//! A column is compared as pruning compares the partition column it stands for: integers
//! (signed, or unsigned of at most 32 bits) as Int64, Date32 and Date64 as dates, text of any
//! layout (Utf8, LargeUtf8, Utf8View, or a dictionary of one of them) as Utf8. Other types are
//! refused when the filter is bound. Rows are evaluated once per run of equal values (a
//! partition's rows arrive together), not once per row.

use super::{BoundFilter, Expr, Leaf, PartitionFilter};
use crate::ReadError;
use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::buffer::BooleanBuffer;
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use std::sync::Arc;

/// A [`PartitionFilter`] bound to the columns of a batch schema.
#[derive(Debug, Clone)]
pub struct RowFilter {
    bound: BoundFilter,
    origin: String,
    /// The columns the filter names, in the order the bound expression indexes them, with
    /// the type each is compared as.
    columns: Vec<(String, DataType)>,
}

impl PartitionFilter {
    /// The columns the expression names, each once, in the order they first appear.
    pub fn columns(&self) -> Vec<&str> {
        self.names().into_iter().map(|n| n.text.as_str()).collect()
    }

    /// The columns the expression names, each once (where it first appears).
    fn names(&self) -> Vec<&super::Name> {
        let mut out = Vec::new();
        names(&self.expr, &mut out);
        out
    }

    /// The filter bound to `schema`'s columns, to keep rows rather than files: a column that
    /// is not in the schema, or not of a type it can compare, is an error naming it.
    pub fn for_rows(&self, schema: &Schema) -> Result<RowFilter, ReadError> {
        let mut fields: Vec<FieldRef> = Vec::new();
        for n in self.names() {
            let name = n.text.as_str();
            let Ok(field) = schema.field_with_name(name) else {
                let all: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                return Err(self.unknown(n, &all, "column"));
            };
            let Some(ty) = compared_as(field.data_type()) else {
                return Err(ReadError::new(format!(
                    "{}: column `{name}` is {}; a filter compares integer, date and text columns",
                    self.origin,
                    field.data_type()
                ))
                .with_hint("cast the column to one of those types before scoring"));
            };
            fields.push(Arc::new(Field::new(name, ty, true)));
        }
        Ok(RowFilter {
            bound: self.bind_as(&fields, "column")?,
            origin: self.origin.clone(),
            columns: fields
                .iter()
                .map(|f| (f.name().clone(), f.data_type().clone()))
                .collect(),
        })
    }
}

impl RowFilter {
    /// The columns the filter reads.
    pub fn columns(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|(n, _)| n.as_str())
    }

    /// The rows of `batch` the filter keeps (the whole expression true).
    pub fn mask(&self, batch: &RecordBatch) -> Result<BooleanBuffer, ReadError> {
        let arrays = self
            .columns
            .iter()
            .map(|(name, ty)| {
                let column = batch.column_by_name(name).ok_or_else(|| {
                    ReadError::new(format!("{}: the batch has no column `{name}`", self.origin))
                })?;
                cast(column, ty).map_err(|e| {
                    ReadError::new(format!(
                        "{}: column `{name}` ({}) cannot be compared as {ty}: {e}",
                        self.origin,
                        column.data_type()
                    ))
                })
            })
            .collect::<Result<Vec<ArrayRef>, _>>()?;
        let rows = batch.num_rows();
        let runs = arrow::compute::partition(&arrays)
            .map_err(|e| ReadError::new(format!("{}: {e}", self.origin)))?;
        let mut keep = arrow::array::BooleanBufferBuilder::new(rows);
        for run in runs.ranges() {
            keep.append_n(run.len(), self.bound.matches(&arrays, run.start));
        }
        Ok(keep.finish())
    }
}

/// The type a batch column of type `ty` is compared as, if it can be.
fn compared_as(ty: &DataType) -> Option<DataType> {
    use DataType::*;
    match ty {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 => Some(Int64),
        Date32 | Date64 => Some(Date32),
        Utf8 | LargeUtf8 | Utf8View => Some(Utf8),
        Dictionary(_, v) if matches!(v.as_ref(), Utf8 | LargeUtf8 | Utf8View) => Some(Utf8),
        _ => None,
    }
}

fn names<'a, V>(e: &'a Expr<super::Name, V>, out: &mut Vec<&'a super::Name>) {
    match e {
        Expr::Leaf(Leaf::Cmp(n, ..) | Leaf::In(n, ..) | Leaf::IsNull(n, ..)) => {
            if !out.iter().any(|m| m.text == n.text) {
                out.push(n);
            }
        }
        Expr::Not(a) => names(a, out),
        Expr::And(a, b) | Expr::Or(a, b) => {
            names(a, out);
            names(b, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Date32Array, DictionaryArray, Float64Array, Int32Array, StringViewArray};
    use arrow::datatypes::Int8Type;

    fn batch() -> RecordBatch {
        let model: DictionaryArray<Int8Type> =
            vec![Some("m1"), Some("m1"), Some("m2"), None, Some("m1")]
                .into_iter()
                .collect();
        RecordBatch::try_from_iter([
            ("model", Arc::new(model) as ArrayRef),
            (
                "day",
                Arc::new(Int32Array::from(vec![
                    Some(3),
                    Some(9),
                    Some(3),
                    Some(3),
                    None,
                ])),
            ),
            (
                "date",
                Arc::new(Date32Array::from(
                    [
                        "2026-11-01",
                        "2026-11-02",
                        "2026-11-01",
                        "2026-11-01",
                        "2026-11-08",
                    ]
                    .map(|d| crate::hive::date(d).unwrap())
                    .to_vec(),
                )),
            ),
            (
                "note",
                Arc::new(StringViewArray::from(vec!["a", "b", "c", "d", "e"])),
            ),
            ("score", Arc::new(Float64Array::from(vec![1.0; 5]))),
        ])
        .unwrap()
    }

    fn kept(text: &str) -> Vec<usize> {
        let b = batch();
        let f = PartitionFilter::parse("`filter`", text).unwrap();
        f.for_rows(&b.schema())
            .unwrap()
            .mask(&b)
            .unwrap()
            .set_indices()
            .collect()
    }

    fn refused(text: &str) -> String {
        let f = PartitionFilter::parse("`filter`", text).unwrap();
        let e = f.for_rows(&batch().schema()).unwrap_err();
        format!("{e} / hint: {}", e.hint.clone().unwrap_or_default())
    }

    #[test]
    fn rows_match_as_files_do() {
        assert_eq!(kept("model = 'm1'"), [0, 1, 4]);
        // A null value matches `is null` only: not `!=`, not `not (=)`.
        assert_eq!(kept("model != 'm1'"), [2]);
        assert_eq!(kept("not (model = 'm1')"), [2]);
        assert_eq!(kept("model is null"), [3]);
        assert_eq!(kept("day < 10 and model = 'm1'"), [0, 1]);
        assert_eq!(kept("day = '3' or note = 'e'"), [0, 2, 3, 4]);
        assert_eq!(kept("date >= '2026-11-02'"), [1, 4]);
        assert_eq!(kept("model in ('m2', 'm9')"), [2]);
        assert_eq!(kept("model = 'm7'"), Vec::<usize>::new());
    }

    #[test]
    fn unknown_columns_and_types_are_refused_with_their_names() {
        assert_eq!(
            refused("modle = 'm1'"),
            "`filter`: unknown column `modle` at column 1; columns: model, day, date, note, score / hint: did you mean `model`?"
        );
        assert_eq!(
            refused("model = 'm1' and score > 1"),
            "`filter`: column `score` is Float64; a filter compares integer, date and text columns / hint: cast the column to one of those types before scoring"
        );
        // Columns before the missing one that are compared after a cast (`day` is Int32)
        // do not change the message.
        assert_eq!(
            refused("day = 3 and modle = 'm1'"),
            "`filter`: unknown column `modle` at column 13; columns: model, day, date, note, score / hint: did you mean `model`?"
        );
        assert_eq!(
            refused("day = 'x'"),
            "`filter`: column `day` is an integer (Int64): `'x'` at column 7 is not one / hint: compare it with an integer such as `7`"
        );
    }
}
