//! Union by name (`--union-by-name`): inputs whose columns differ read as one table, as
//! DuckDB's `union_by_name=true` reads them.
//!
//! The run's columns are the first file's, in its order, then every column the other files
//! add, in the order the files first show it. A column's type is the one its files' types
//! widen to ([`widen`]): integer widths to the widest (signed when a file's is; a UInt64
//! with a signed integer is Int64, and a value over its range is an error when read),
//! integers with floats to Float64, floats to the widest, string layouts (Utf8, LargeUtf8,
//! Utf8View, dictionaries of them) to Utf8, list layouts to List of the items' widened type,
//! structs of the same fields to the struct of each field's widened type,
//! timestamps of one time zone to the finer unit, and a column of nulls only (a JSON Lines
//! key never given a value) to the other type. Types that do not widen (text and integers,
//! say) are an error naming two files. A column is nullable when a file lacks it, declares
//! it nullable, or holds it in another type.
//!
//! Each batch of a file is then made to hold exactly the requested columns of the run's
//! schema, in its order ([`conform`]): a column the file lacks is all null, a column of
//! another type is cast. Strings stay in the layout the decoder gives them (views for
//! Parquet), as without union.

use crate::{parquet_input, Format, InputFile, ReadError};
use arrow::array::{new_null_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

/// The union by name of the schemas of `files` (see the module's note), or an error naming
/// two files whose types of one column do not widen to one.
pub(crate) fn union_schema(files: &[InputFile]) -> Result<SchemaRef, ReadError> {
    struct Column {
        name: String,
        data_type: DataType,
        nullable: bool,
        /// Files holding the column.
        seen: usize,
    }
    let mut columns: Vec<Column> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, file) in files.iter().enumerate() {
        for f in file.schema.fields() {
            let Some(&at) = index.get(f.name()) else {
                index.insert(f.name().clone(), columns.len());
                columns.push(Column {
                    name: f.name().clone(),
                    data_type: f.data_type().clone(),
                    nullable: f.is_nullable(),
                    seen: 1,
                });
                continue;
            };
            let c = &mut columns[at];
            // Two files of different types: the widened type differs from one of them.
            c.nullable |= f.is_nullable() || c.data_type != *f.data_type();
            c.data_type = widen(&c.data_type, f.data_type())
                .ok_or_else(|| incompatible(files, &c.name, i))?;
            c.seen += 1;
        }
    }
    let fields: Vec<Field> = columns
        .into_iter()
        .map(|c| {
            let nullable = c.nullable || c.seen < files.len();
            Field::new(c.name, c.data_type, nullable)
        })
        .collect();
    Ok(Arc::new(Schema::new_with_metadata(
        fields,
        files[0].schema.metadata().clone(),
    )))
}

/// The type a column of types `a` and `b` is read as, or `None` when they do not widen to
/// one (see the module's note).
pub(crate) fn widen(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(a.clone());
    }
    match (a, b) {
        (Null, t) | (t, Null) => Some(t.clone()),
        _ if is_text(a) && is_text(b) => Some(Utf8),
        (Dictionary(_, v), t) | (t, Dictionary(_, v)) => widen(v, t),
        _ if a.is_integer() && b.is_integer() => Some(wider_int(a, b)),
        _ if (a.is_integer() || a.is_floating()) && (b.is_integer() || b.is_floating()) => {
            let bits = |t: &DataType| t.primitive_width().filter(|_| t.is_floating());
            Some(match bits(a).max(bits(b)) {
                Some(2) if a.is_floating() && b.is_floating() => Float16,
                Some(4) if a.is_floating() && b.is_floating() => Float32,
                _ => Float64,
            })
        }
        // Writers differ in unit (Spark micro-, pandas nanoseconds): the finer one.
        (Timestamp(u, zone), Timestamp(v, other)) if zone == other => {
            Some(Timestamp((*u).max(*v), zone.clone()))
        }
        (
            List(x) | LargeList(x) | ListView(x) | LargeListView(x),
            List(y) | LargeList(y) | ListView(y) | LargeListView(y),
        ) => {
            let item = widen(x.data_type(), y.data_type())?;
            Some(List(Arc::new(Field::new(x.name(), item, true))))
        }
        // Structs of the same fields widen field by field, as top-level columns do (the
        // first's type would cast a wider leaf down: a double read as a float).
        (Struct(x), Struct(y)) => {
            if x.len() != y.len() || x.iter().zip(y.iter()).any(|(f, g)| f.name() != g.name()) {
                return None;
            }
            let fields: Vec<Field> = x
                .iter()
                .zip(y.iter())
                .map(|(f, g)| {
                    let t = widen(f.data_type(), g.data_type())?;
                    Some(Field::new(f.name(), t, f.is_nullable() || g.is_nullable()))
                })
                .collect::<Option<_>>()?;
            Some(Struct(fields.into()))
        }
        // Other nested types (maps) whose leaves differ in layout only: the first's, cast to;
        // leaves of other widths do not widen there.
        _ if logical(a) == logical(b) && widths(a) == widths(b) => Some(a.clone()),
        _ => None,
    }
}

fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_text(v),
        _ => false,
    }
}

/// The integer type holding every value of integer types `a` and `b`: the wider of the two
/// when both are signed or both unsigned; else the narrowest signed type holding both, Int64
/// at most.
fn wider_int(a: &DataType, b: &DataType) -> DataType {
    let signed = |t: &DataType| t.is_signed_integer();
    let bytes = |t: &DataType| t.primitive_width().unwrap_or(8);
    let width = if signed(a) == signed(b) {
        bytes(a).max(bytes(b))
    } else {
        // An unsigned type needs a signed one twice as wide.
        let need = |t: &DataType| if signed(t) { bytes(t) } else { bytes(t) * 2 };
        need(a).max(need(b)).min(8)
    };
    match (signed(a) || signed(b), width) {
        (true, 1) => DataType::Int8,
        (true, 2) => DataType::Int16,
        (true, 4) => DataType::Int32,
        (true, _) => DataType::Int64,
        (false, 1) => DataType::UInt8,
        (false, 2) => DataType::UInt16,
        (false, 4) => DataType::UInt32,
        (false, _) => DataType::UInt64,
    }
}

/// The error of file `at`, whose type of column `name` does not widen with the earlier
/// files': names the first earlier file whose own type does not widen with it.
fn incompatible(files: &[InputFile], name: &str, at: usize) -> ReadError {
    let type_in = |f: &InputFile| {
        f.schema
            .field_with_name(name)
            .ok()
            .map(|f| f.data_type().clone())
    };
    let theirs = type_in(&files[at]).unwrap_or(DataType::Null);
    let earlier = files[..at]
        .iter()
        .filter_map(|f| type_in(f).map(|t| (f, t)))
        .find(|(_, t)| widen(t, &theirs).is_none())
        .or_else(|| files[..at].iter().find_map(|f| type_in(f).map(|t| (f, t))));
    let (first, ours) = earlier.unwrap_or((&files[0], DataType::Null));
    ReadError::new(format!(
        "inputs `{}` and `{}` cannot be read as one table: column `{name}` is {ours} in the first and {theirs} in the second",
        first.path.display(),
        files[at].path.display(),
    ))
    .with_hint("`--union-by-name` widens integer widths, integers to floats, string and list layouts, and timestamp units; other types must match: cast the column in the exports, or run them separately")
}

/// The fields of the run's schema among `columns`, in schema order, for reading a file of a
/// union by name ([`conform`]); `own` is how many of the schema's fields are the files'
/// (the Hive partition columns follow).
pub(crate) fn wanted(schema: &Schema, own: usize, columns: &[String]) -> Vec<FieldRef> {
    schema.fields()[..own]
        .iter()
        .filter(|f| columns.contains(f.name()))
        .cloned()
        .collect()
}

/// `batch` (a file's own requested columns, as decoded) as the run's columns `fields`, in
/// their order: a column the file lacks all null, a column of another type cast to the
/// run's (strings in the layout the file's decoder gives them).
pub(crate) fn conform(
    batch: RecordBatch,
    file: &InputFile,
    fields: &[FieldRef],
) -> Result<RecordBatch, ReadError> {
    let rows = batch.num_rows();
    let as_read = |t: &DataType| match file.format {
        Format::Parquet => parquet_input::view_type(t),
        Format::Jsonl => t.clone(),
    };
    let options = CastOptions {
        safe: false,
        ..CastOptions::default()
    };
    let mut out_fields = Vec::with_capacity(fields.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(fields.len());
    for field in fields {
        let own = file.schema.field_with_name(field.name()).ok();
        let column = match (batch.column_by_name(field.name()), own) {
            (Some(c), Some(own)) if own.data_type() == field.data_type() => Arc::clone(c),
            (Some(c), _) => {
                let to = as_read(field.data_type());
                if *c.data_type() == to {
                    Arc::clone(c)
                } else {
                    cast_with_options(c, &to, &options).map_err(|e| {
                        ReadError::at(
                            &file.path,
                            format!(
                                "column `{}`: cannot read {} as {}: {e}",
                                field.name(),
                                c.data_type(),
                                field.data_type()
                            ),
                        )
                        .with_hint("the inputs' types of the column widen to one that cannot hold this file's value")
                    })?
                }
            }
            (None, _) => new_null_array(&as_read(field.data_type()), rows),
        };
        out_fields.push(Field::new(
            field.name(),
            column.data_type().clone(),
            field.is_nullable(),
        ));
        columns.push(column);
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new_with_metadata(
            out_fields,
            batch.schema().metadata().clone(),
        )),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| {
        ReadError::at(
            &file.path,
            format!("cannot read as the union of the inputs' columns: {e}"),
        )
    })
}

/// The leaf types of a nested type but for their string and list layouts: two types whose
/// `logical` form and `widths` match read each other's values without loss.
fn widths(t: &DataType) -> String {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "text".into(),
        DataType::Dictionary(_, v) => widths(v),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => format!("list<{}>", widths(f.data_type())),
        DataType::Struct(fields) => fields
            .iter()
            .map(|f| format!("{}:{}", f.name(), widths(f.data_type())))
            .collect::<Vec<_>>()
            .join(","),
        DataType::Map(f, _) => format!("map<{}>", widths(f.data_type())),
        other => other.to_string(),
    }
}

pub(crate) fn logical(t: &DataType) -> String {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "text".into(),
        DataType::Dictionary(_, v) => logical(v),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => "int".into(),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => "uint".into(),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => "float".into(),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => {
            format!("list<{}>", logical(f.data_type()))
        }
        DataType::Struct(fields) => format!(
            "struct<{}>",
            fields
                .iter()
                .map(|f| format!("{}:{}", f.name(), logical(f.data_type())))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::TimeUnit;
    use DataType::*;

    #[test]
    fn types_widen_as_documented() {
        let strukt = |fields: &[(&str, DataType)]| {
            Struct(
                fields
                    .iter()
                    .map(|(n, t)| Field::new(*n, t.clone(), true))
                    .collect::<Vec<_>>()
                    .into(),
            )
        };
        let list = |t: DataType| List(Arc::new(Field::new("item", t, true)));
        let large = |t: DataType| LargeList(Arc::new(Field::new("element", t, false)));
        let dict = Dictionary(Box::new(Int32), Box::new(Utf8));
        let cases = [
            (Int8, Int32, Some(Int32)),
            (Int64, Int16, Some(Int64)),
            (UInt8, UInt32, Some(UInt32)),
            (UInt8, Int8, Some(Int16)),
            (Int16, UInt16, Some(Int32)),
            (UInt32, Int8, Some(Int64)),
            (UInt64, Int32, Some(Int64)),
            (Int32, Float32, Some(Float64)),
            (Float32, Float32, Some(Float32)),
            (Float16, Float32, Some(Float32)),
            (Float32, Float64, Some(Float64)),
            (UInt64, Float64, Some(Float64)),
            (Utf8, LargeUtf8, Some(Utf8)),
            (Utf8View, dict.clone(), Some(Utf8)),
            (dict.clone(), dict.clone(), Some(dict.clone())),
            (Null, Int64, Some(Int64)),
            (Utf8, Null, Some(Utf8)),
            (list(Int32), large(Int64), Some(list(Int64))),
            (
                large(Utf8),
                list(Utf8View),
                Some(List(Arc::new(Field::new("element", Utf8, true)))),
            ),
            (Utf8, Int64, None),
            (Boolean, Int32, None),
            (list(Utf8), Utf8, None),
            (list(Utf8), list(Int64), None),
            (Date32, Utf8, None),
            (
                Timestamp(TimeUnit::Microsecond, None),
                Timestamp(TimeUnit::Nanosecond, None),
                Some(Timestamp(TimeUnit::Nanosecond, None)),
            ),
            (
                Timestamp(TimeUnit::Second, Some("UTC".into())),
                Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                Some(Timestamp(TimeUnit::Millisecond, Some("UTC".into()))),
            ),
            (
                Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                Timestamp(TimeUnit::Microsecond, None),
                None,
            ),
            // Struct leaves widen as columns do, whichever file comes first.
            (
                strukt(&[("score", Float32), ("id", Int32)]),
                strukt(&[("score", Float64), ("id", Int64)]),
                Some(strukt(&[("score", Float64), ("id", Int64)])),
            ),
            (
                strukt(&[("a", Utf8View)]),
                strukt(&[("a", LargeUtf8)]),
                Some(strukt(&[("a", Utf8)])),
            ),
            (strukt(&[("a", Utf8)]), strukt(&[("a", Int64)]), None),
            (strukt(&[("a", Int64)]), strukt(&[("b", Int64)]), None),
        ];
        for (a, b, want) in cases {
            assert_eq!(widen(&a, &b), want, "{a} with {b}");
            assert_eq!(widen(&b, &a).is_some(), want.is_some(), "{b} with {a}");
        }
    }

    /// A struct's float leaf beside a double one is read as a double: its values keep their
    /// digits (0.1f32 is 0.10000000149011612 as a double, never the double 0.1 cast down).
    #[test]
    fn struct_leaves_are_cast_up_not_down() {
        use arrow::array::{Array, AsArray, Float64Array, StructArray};
        let doubles = StructArray::from(vec![(
            Arc::new(Field::new("score", Float64, true)),
            Arc::new(Float64Array::from(vec![0.1, 1e300])) as ArrayRef,
        )]);
        let floats = Struct(vec![Field::new("score", Float32, true)].into());
        let to = widen(&floats, doubles.data_type()).unwrap();
        let read = arrow::compute::cast(&doubles, &to).unwrap();
        let score = read
            .as_struct()
            .column(0)
            .as_primitive::<arrow::datatypes::Float64Type>()
            .clone();
        assert_eq!(score.values().to_vec(), vec![0.1, 1e300]);
    }
}
