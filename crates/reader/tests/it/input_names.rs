//! Columns are read by name: a file with two columns of one name is refused, naming the file
//! (Parquet) or the line (JSON Lines); a JSON Lines value of another type than its column's
//! names its line.
#![allow(clippy::unwrap_used)]

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use evalscore_reader::Inputs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn write_parquet(path: &Path, batch: &RecordBatch) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

fn open_error(path: &Path) -> String {
    Inputs::open(&[path.to_path_buf()]).unwrap_err().to_string()
}

#[test]
fn a_parquet_file_with_two_columns_of_one_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twice.parquet");
    let schema = Schema::new(vec![
        Field::new("a", DataType::Utf8, true),
        Field::new("b", DataType::Int64, true),
        Field::new("a", DataType::Int64, true),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(Int64Array::from(vec![2])),
        ],
    )
    .unwrap();
    write_parquet(&path, &batch);
    let err = Inputs::open(std::slice::from_ref(&path)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("the input (`{}`) has two columns named `a`", path.display())
    );
    assert_eq!(
        err.hint.as_deref(),
        Some("rename one of them in the export")
    );
}

#[test]
fn a_struct_with_two_fields_of_one_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested.parquet");
    let fields = Fields::from(vec![
        Field::new("tag", DataType::Utf8, true),
        Field::new("tag", DataType::Utf8, true),
    ]);
    let meta = StructArray::new(
        fields.clone(),
        vec![
            Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
            Arc::new(StringArray::from(vec!["y"])),
        ],
        None,
    );
    let schema = Schema::new(vec![Field::new("meta", DataType::Struct(fields), true)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(meta)]).unwrap();
    write_parquet(&path, &batch);
    assert_eq!(
        open_error(&path),
        format!(
            "the input (`{}`) has two columns named `meta.tag`",
            path.display()
        )
    );
}

fn jsonl(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_jsonl_line_with_a_key_twice_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = jsonl(
        dir.path(),
        "twice.jsonl",
        "{\"id\": \"a\", \"x\": 1}\n\n{\"id\": \"b\", \"x\": 2, \"id\": \"c\"}\n",
    );
    let err = Inputs::open(std::slice::from_ref(&path)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}, line 3: two columns are named `id`: the line holds the key twice",
            path.display()
        )
    );
    assert_eq!(err.line, Some(3));
    // Not an object, and not JSON: the messages they had.
    let array = jsonl(dir.path(), "array.jsonl", "{\"id\": 1}\n[1, 2]\n");
    assert_eq!(
        open_error(&array),
        format!("{}, line 2: line is not a JSON object", array.display())
    );
    let broken = jsonl(dir.path(), "broken.jsonl", "{\"id\": 1,}\n");
    assert!(
        open_error(&broken).starts_with(&format!("{}, line 1: not valid JSON: ", broken.display()))
    );
}

/// arrow-json infers a column holding strings and numbers as text, then refuses to decode a
/// number as text; the error names the line.
#[test]
fn a_jsonl_type_conflict_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = jsonl(
        dir.path(),
        "ids.jsonl",
        "{\"id\": \"a\", \"n\": 1}\n{\"id\": \"b\", \"n\": 2}\n\n{\"id\": 0, \"n\": 3}\n",
    );
    let inputs = Inputs::open(std::slice::from_ref(&path)).unwrap();
    let unit = inputs.units()[0];
    let err = inputs
        .read_unit(&unit, &["id".to_owned()], |_| {
            Ok::<(), evalscore_reader::ReadError>(())
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}, line 4: cannot decode: Json error: whilst decoding field 'id': expected string got 0",
            path.display()
        )
    );
    assert_eq!(err.line, Some(4));
}
