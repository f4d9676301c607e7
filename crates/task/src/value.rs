//! Arrow cells as minijinja values, for templates that are rendered row by row.

use arrow::array::{
    Array, AsArray, BooleanArray, FixedSizeListArray, LargeListArray, ListArray, MapArray,
    StructArray,
};
use arrow::datatypes::{
    DataType, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow::util::display::array_value_to_string;
use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::Value;
use std::sync::Arc;

/// The value of `array[row]` for a template: text as a string, numbers and booleans as
/// themselves, lists as sequences, structs and maps as maps, null as none. Other types
/// (dates, decimals, ...) become their Arrow display text.
pub fn cell_to_value(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::from(());
    }
    match array.data_type() {
        DataType::Utf8 => Value::from(array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => Value::from(array.as_string::<i64>().value(row)),
        DataType::Utf8View => Value::from(array.as_string_view().value(row)),
        DataType::Boolean => Value::from(
            array
                .as_any()
                .downcast_ref::<BooleanArray>()
                .is_some_and(|a| a.value(row)),
        ),
        DataType::Int8 => Value::from(array.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => Value::from(array.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => Value::from(array.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => Value::from(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Value::from(array.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => Value::from(array.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => Value::from(array.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => Value::from(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float16 => Value::from(f64::from(array.as_primitive::<Float16Type>().value(row))),
        DataType::Float32 => Value::from(f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => Value::from(array.as_primitive::<Float64Type>().value(row)),
        DataType::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            let key = dict.normalized_keys()[row];
            cell_to_value(dict.values().as_ref(), key)
        }
        DataType::List(_) => {
            let a = array.as_any().downcast_ref::<ListArray>();
            a.map_or_else(|| Value::from(()), |a| seq(a.value(row).as_ref()))
        }
        DataType::LargeList(_) => {
            let a = array.as_any().downcast_ref::<LargeListArray>();
            a.map_or_else(|| Value::from(()), |a| seq(a.value(row).as_ref()))
        }
        DataType::FixedSizeList(_, _) => {
            let a = array.as_any().downcast_ref::<FixedSizeListArray>();
            a.map_or_else(|| Value::from(()), |a| seq(a.value(row).as_ref()))
        }
        DataType::Struct(fields) => {
            let Some(s) = array.as_any().downcast_ref::<StructArray>() else {
                return Value::from(());
            };
            Value::from_object(CellMap(
                fields
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| {
                        (
                            Value::from(f.name().as_str()),
                            cell_to_value(c.as_ref(), row),
                        )
                    })
                    .collect(),
            ))
        }
        DataType::Map(_, _) => {
            let Some(m) = array.as_any().downcast_ref::<MapArray>() else {
                return Value::from(());
            };
            let entries = m.value(row);
            let keys = entries.column(0);
            let vals = entries.column(1);
            Value::from_object(CellMap(
                (0..entries.len())
                    .map(|i| {
                        (
                            cell_to_value(keys.as_ref(), i),
                            cell_to_value(vals.as_ref(), i),
                        )
                    })
                    .collect(),
            ))
        }
        _ => Value::from(array_value_to_string(array, row).unwrap_or_default()),
    }
}

fn seq(values: &dyn Array) -> Value {
    Value::from(
        (0..values.len())
            .map(|i| cell_to_value(values, i))
            .collect::<Vec<_>>(),
    )
}

/// A struct or map cell: a minijinja map whose keys keep the field (or entry) order, so
/// `{{ sample.s }}` and `tojson` show fields as the schema lists them, and attribute and
/// item access (`s.key`, `s['key']`, `map(attribute='key')`) find them. A key that is
/// not there is undefined, which the strict environment turns into an error.
#[derive(Debug)]
struct CellMap(Vec<(Value, Value)>);

impl Object for CellMap {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.0.iter().map(|(k, _)| k.clone()).collect())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.0.len())
    }
}

/// Converts a YAML literal list into strings (used by `choices: [A, B]`).
pub fn literal_list(v: &serde_json::Value) -> Option<Vec<String>> {
    match v {
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| match i {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                serde_json::Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}
