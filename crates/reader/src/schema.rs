//! The schema a run's inputs share: every file must have the same columns with the same
//! logical types (unless they are read as the union of their columns, module `union`).

use crate::union::{logical, widen};
use crate::{InputFile, ReadError};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// The schema `files` share (the first file's), or an error naming two files that differ.
/// A column is nullable in the shared schema when it is in any file, and a number column (or
/// list of numbers) takes the widest of the files' widths, so what is built from it (a kept
/// column's output field) holds every file's values: Int32 in one file and Int64 in the next
/// is Int64, not the first file's Int32 with the larger values lost.
pub(crate) fn shared_schema(files: &[InputFile]) -> Result<SchemaRef, ReadError> {
    let first = &files[0];
    for f in &files[1..] {
        check_same_schema(first, f)?;
    }
    let fields: Vec<Field> = first
        .schema
        .fields()
        .iter()
        .map(|f| {
            let nullable = files.iter().any(|g| {
                g.schema
                    .field_with_name(f.name())
                    .map_or(true, |g| g.is_nullable())
            });
            let widest = files[1..]
                .iter()
                .filter_map(|g| g.schema.field_with_name(f.name()).ok())
                .fold(f.data_type().clone(), |t, g| {
                    wider_number(&t, g.data_type())
                });
            f.as_ref()
                .clone()
                .with_data_type(widest)
                .with_nullable(nullable)
        })
        .collect();
    Ok(Arc::new(Schema::new_with_metadata(
        fields,
        first.schema.metadata().clone(),
    )))
}

/// Two files share a schema when they have the same column names in the same order with the
/// same logical types: the string layouts (Utf8, LargeUtf8, Utf8View, dictionaries of them)
/// count as one type, as do List and LargeList of the same item, and integer widths as one.
fn check_same_schema(a: &InputFile, b: &InputFile) -> Result<(), ReadError> {
    const UNION: &str = "all inputs of one run must share one schema; pass `--union-by-name` to read them as one table (a column a file lacks is null there, types widen to one), or run them separately";
    const SEPARATELY: &str = "all inputs of one run must share one schema; run them separately";
    let names = |s: &Schema| {
        s.fields()
            .iter()
            .map(|f| f.name().clone())
            .collect::<Vec<_>>()
    };
    for f in a.schema.fields() {
        match b.schema.field_with_name(f.name()) {
            Err(_) => {
                return Err(ReadError::new(format!(
                    "inputs `{}` and `{}` have different schemas: column `{}` is missing from the second",
                    a.path.display(), b.path.display(), f.name()
                )).with_hint(UNION))
            }
            Ok(g) if !same_type(f, g) => {
                return Err(ReadError::new(format!(
                    "inputs `{}` and `{}` have different schemas: column `{}` is {} in the first and {} in the second",
                    a.path.display(), b.path.display(), f.name(), f.data_type(), g.data_type()
                )).with_hint(if widen(f.data_type(), g.data_type()).is_some() { UNION } else { SEPARATELY }))
            }
            Ok(_) => {}
        }
    }
    if let Some(extra) = names(&b.schema)
        .into_iter()
        .find(|n| a.schema.field_with_name(n).is_err())
    {
        return Err(ReadError::new(format!(
            "inputs `{}` and `{}` have different schemas: column `{extra}` is missing from the first",
            a.path.display(), b.path.display()
        )).with_hint(UNION));
    }
    Ok(())
}

/// `a` widened to hold `b` when both are numbers (or lists of numbers) of one logical type and
/// different widths; else `a` (text and other layouts stay the first file's: the decoder reads
/// them all alike).
fn wider_number(a: &DataType, b: &DataType) -> DataType {
    let number = |t: &DataType| match t {
        DataType::List(f) | DataType::LargeList(f) => f.data_type().is_numeric(),
        t => t.is_numeric(),
    };
    if a != b && number(a) && number(b) && logical(a) == logical(b) {
        widen(a, b).unwrap_or_else(|| a.clone())
    } else {
        a.clone()
    }
}

fn same_type(a: &Field, b: &Field) -> bool {
    logical(a.data_type()) == logical(b.data_type())
}
