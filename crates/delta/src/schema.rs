//! A table's schema from a run's files: the Parquet file's Arrow schema as Delta types (the
//! kernel's mapping), every column nullable, then the partition columns; and the merge of
//! that with the table's schema: new columns are added at the end (older rows read them as
//! null), a column whose type differs is an error naming both types.

use crate::DeltaError;
use arrow::datatypes::Schema as ArrowSchema;
use deltalake_core::kernel::engine::arrow_conversion::TryIntoKernel;
use deltalake_core::kernel::{
    ArrayType, DataType, MapType, PrimitiveType, StructField, StructType,
};

/// The partition columns of the data tables, in order.
pub const DATA_PARTITIONS: [&str; 2] = ["run_id", "task"];

/// `schema`'s columns as Delta fields, every one nullable, then `partitions` as strings (which
/// the files must not hold: their values are in the log).
pub(crate) fn delta_fields(
    schema: &ArrowSchema,
    partitions: &[&str],
    at: (&str, &str),
) -> Result<Vec<StructField>, DeltaError> {
    let mut out = Vec::with_capacity(schema.fields().len() + partitions.len());
    for f in schema.fields() {
        let unsupported = |why: String| DeltaError::Unsupported {
            root: at.0.to_owned(),
            table: at.1.to_owned(),
            column: f.name().clone(),
            why,
        };
        if partitions.contains(&f.name().as_str()) {
            return Err(unsupported(format!(
                "it has the name of a partition column of the table ({}); rename it",
                partitions.join(", ")
            )));
        }
        let t: DataType = f.data_type().try_into_kernel().map_err(|e| {
            unsupported(format!(
                "its type {} has no Delta type ({e})",
                f.data_type()
            ))
        })?;
        if let Some(p) = needs_feature(&t) {
            return Err(unsupported(format!(
                "its type {} is Delta's {p}, which needs a table feature (reader 3 / writer 7) that older readers refuse; cast it (a timestamp to UTC) before scoring",
                f.data_type()
            )));
        }
        out.push(StructField::new(f.name().clone(), nullable(t), true));
    }
    out.extend(
        partitions
            .iter()
            .map(|p| StructField::new(*p, DataType::STRING, true)),
    );
    Ok(out)
}

/// The first type in `t` that a reader 1 / writer 2 table cannot hold.
fn needs_feature(t: &DataType) -> Option<&'static str> {
    match t {
        DataType::Primitive(PrimitiveType::TimestampNtz) => Some("timestamp_ntz"),
        DataType::Primitive(PrimitiveType::Void) => Some("void (a column of nulls only)"),
        DataType::Primitive(_) => None,
        DataType::Array(a) => needs_feature(a.element_type()),
        DataType::Map(m) => needs_feature(m.key_type()).or_else(|| needs_feature(m.value_type())),
        DataType::Struct(s) => s.fields().find_map(|f| needs_feature(f.data_type())),
        _ => Some("variant"),
    }
}

/// `t` with every nested field and element nullable: runs of one task differ in what their
/// files mark required, and the table takes them all.
fn nullable(t: DataType) -> DataType {
    match t {
        DataType::Array(a) => DataType::Array(Box::new(ArrayType::new(
            nullable(a.element_type().clone()),
            true,
        ))),
        DataType::Map(m) => DataType::Map(Box::new(MapType::new(
            nullable(m.key_type().clone()),
            nullable(m.value_type().clone()),
            true,
        ))),
        DataType::Struct(s) => {
            let fields: Vec<StructField> = s
                .fields()
                .map(|f| StructField::new(f.name().clone(), nullable(f.data_type().clone()), true))
                .collect();
            match StructType::try_new(fields) {
                Ok(st) => DataType::Struct(Box::new(st)),
                Err(_) => DataType::Struct(s),
            }
        }
        other => other,
    }
}

/// The table's schema after adding `run`: `None` when `table` already has every column of
/// `run` with the same type; else the merged fields (the table's, then the new ones).
pub(crate) fn merge(
    table: &StructType,
    run: &[StructField],
    at: (&str, &str),
) -> Result<Option<Vec<StructField>>, DeltaError> {
    let mut merged: Vec<StructField> = table.fields().cloned().collect();
    let mut grew = false;
    for f in run {
        match table.field(f.name()) {
            Some(old) if old.data_type() == f.data_type() => {}
            Some(old) => {
                return Err(DeltaError::TypeChanged {
                    root: at.0.to_owned(),
                    table: at.1.to_owned(),
                    column: f.name().clone(),
                    table_type: old.data_type().to_string(),
                    run_type: f.data_type().to_string(),
                })
            }
            None => {
                merged.push(f.clone());
                grew = true;
            }
        }
    }
    Ok(grew.then_some(merged))
}
