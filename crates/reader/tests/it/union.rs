//! Union by name (`--union-by-name`): files whose columns differ read as one table, the run's
//! columns in first-seen order, missing columns null, compatible types widened, and every
//! batch holding exactly the requested columns of the run's schema; without it, today's
//! errors, whose hint names the option where it would help.

use arrow::array::{
    ArrayRef, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, LargeStringArray,
    RecordBatch, StringArray, UInt64Array,
};
use arrow::datatypes::{Field, Schema};
use evalscore_reader::{HivePartitioning, Inputs, OpenOptions, ReadError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes a Parquet file of `columns` (name, nullable, values) at `dir/name`.
fn parquet(dir: &Path, name: &str, columns: Vec<(&str, bool, ArrayRef)>) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, null, a)| Field::new(*n, a.data_type().clone(), *null))
        .collect();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns.into_iter().map(|(_, _, a)| a).collect(),
    )
    .unwrap();
    let file = std::fs::File::create(&path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    path
}

fn union(paths: &[PathBuf]) -> Result<Inputs, ReadError> {
    Inputs::open_options(
        paths,
        &OpenOptions {
            union_by_name: true,
            ..OpenOptions::default()
        },
    )
}

/// The schema's columns as `name: type` (`?` when nullable).
pub fn columns(schema: &Schema) -> Vec<String> {
    schema
        .fields()
        .iter()
        .map(|f| {
            let null = if f.is_nullable() { "?" } else { "" };
            format!("{}: {}{null}", f.name(), f.data_type())
        })
        .collect()
}

/// Every row of `columns` as text (`∅` for null) joined by ` | `, in input order, and the
/// schemas of the batches (one line per distinct schema, in order).
fn rows(inputs: &Inputs, columns_read: &[&str]) -> Result<(Vec<String>, Vec<String>), ReadError> {
    let names: Vec<String> = columns_read.iter().map(|c| (*c).to_owned()).collect();
    let options = arrow::util::display::FormatOptions::default().with_null("∅");
    let (mut lines, mut schemas) = (Vec::new(), Vec::<String>::new());
    for unit in inputs.units() {
        inputs.read_unit(&unit, &names, |b| {
            let schema = columns(&b.schema()).join(", ");
            if schemas.last() != Some(&schema) {
                schemas.push(schema);
            }
            let formatters: Vec<_> = b
                .columns()
                .iter()
                .map(|a| arrow::util::display::ArrayFormatter::try_new(a, &options).unwrap())
                .collect();
            for row in 0..b.num_rows() {
                let cells: Vec<String> = formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect();
                lines.push(cells.join(" | "));
            }
            Ok::<(), ReadError>(())
        })?;
    }
    Ok((lines, schemas))
}

fn arr(a: impl arrow::array::Array + 'static) -> ArrayRef {
    Arc::new(a)
}

/// Two files: the first's columns, the second's in another order, one of them new, with
/// other widths and layouts.
fn evolving(dir: &Path) -> Vec<PathBuf> {
    vec![
        parquet(
            dir,
            "a.parquet",
            vec![
                ("id", false, arr(Int32Array::from(vec![1, 2, 3]))),
                (
                    "output",
                    true,
                    arr(StringArray::from(vec![Some("A"), None, Some("C")])),
                ),
                ("score", true, arr(Float32Array::from(vec![0.5, 1.0, 0.25]))),
            ],
        ),
        parquet(
            dir,
            "b.parquet",
            vec![
                ("output", true, arr(LargeStringArray::from(vec!["D", "E"]))),
                ("id", false, arr(Int64Array::from(vec![4, 5_000_000_000]))),
                (
                    "judge",
                    true,
                    arr(StringArray::from(vec![Some("j1"), None])),
                ),
                ("score", true, arr(Int16Array::from(vec![Some(2), None]))),
            ],
        ),
    ]
}

#[test]
fn columns_unite_in_first_seen_order_and_types_widen() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = union(&evolving(dir.path())).unwrap();
    assert_eq!(
        columns(&inputs.schema),
        [
            "id: Int64?",
            "output: Utf8?",
            "score: Float64?",
            "judge: Utf8?"
        ]
    );
    let (lines, schemas) = rows(&inputs, &["id", "output", "score", "judge"]).unwrap();
    assert_eq!(
        lines,
        [
            "1 | A | 0.5 | ∅",
            "2 | ∅ | 1.0 | ∅",
            "3 | C | 0.25 | ∅",
            "4 | D | 2.0 | j1",
            "5000000000 | E | ∅ | ∅",
        ]
    );
    // Both files' batches hold the run's columns, strings as the decoder's views.
    assert_eq!(
        schemas,
        ["id: Int64?, output: Utf8View?, score: Float64?, judge: Utf8View?"]
    );
}

#[test]
fn a_projected_column_a_file_lacks_reads_as_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = union(&evolving(dir.path())).unwrap();
    let (lines, schemas) = rows(&inputs, &["judge"]).unwrap();
    assert_eq!(lines, ["∅", "∅", "∅", "j1", "∅"]);
    assert_eq!(schemas, ["judge: Utf8View?"]);
    // In the run's order, whatever the order asked for.
    let (lines, _) = rows(&inputs, &["score", "id"]).unwrap();
    assert_eq!(
        lines,
        [
            "1 | 0.5",
            "2 | 1.0",
            "3 | 0.25",
            "4 | 2.0",
            "5000000000 | ∅"
        ]
    );
}

#[test]
fn files_of_one_schema_read_as_without_union() {
    let dir = tempfile::tempdir().unwrap();
    let one = evolving(dir.path()).remove(0);
    let two = parquet(
        dir.path(),
        "c.parquet",
        vec![
            ("id", false, arr(Int32Array::from(vec![7]))),
            ("output", true, arr(StringArray::from(vec!["G"]))),
            ("score", true, arr(Float32Array::from(vec![0.75]))),
        ],
    );
    let paths = [one, two];
    let with = union(&paths).unwrap();
    let without = Inputs::open(&paths).unwrap();
    assert_eq!(with.schema, without.schema);
    assert_eq!(
        columns(&with.schema),
        ["id: Int32", "output: Utf8?", "score: Float32?"]
    );
    let cols = ["id", "output", "score"];
    assert_eq!(rows(&with, &cols).unwrap(), rows(&without, &cols).unwrap());
}

#[test]
fn incompatible_types_name_both_files_the_column_and_types() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = evolving(dir.path());
    paths.push(parquet(
        dir.path(),
        "c.parquet",
        vec![("score", true, arr(StringArray::from(vec!["high"])))],
    ));
    let e = union(&paths).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "inputs `{}` and `{}` cannot be read as one table: column `score` is Float32 in the first and Utf8 in the second",
            paths[0].display(),
            paths[2].display()
        )
    );
    assert_eq!(
        e.hint.unwrap(),
        "`--union-by-name` widens integer widths, integers to floats, string and list layouts, and timestamp units; other types must match: cast the column in the exports, or run them separately"
    );
}

#[test]
fn without_union_the_errors_stay_and_suggest_it_where_it_helps() {
    let dir = tempfile::tempdir().unwrap();
    let paths = evolving(dir.path());
    let e = Inputs::open(&paths).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "inputs `{}` and `{}` have different schemas: column `score` is Float32 in the first and Int16 in the second",
            paths[0].display(),
            paths[1].display()
        )
    );
    let suggest = "all inputs of one run must share one schema; pass `--union-by-name` to read them as one table (a column a file lacks is null there, types widen to one), or run them separately";
    assert_eq!(e.hint.unwrap(), suggest);
    let missing = parquet(
        dir.path(),
        "c.parquet",
        vec![("id", false, arr(Int32Array::from(vec![7])))],
    );
    let e = Inputs::open(&[paths[0].clone(), missing.clone()]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "inputs `{}` and `{}` have different schemas: column `output` is missing from the second",
            paths[0].display(),
            missing.display()
        )
    );
    assert_eq!(e.hint.unwrap(), suggest);
    let text = parquet(
        dir.path(),
        "d.parquet",
        vec![("id", false, arr(StringArray::from(vec!["x"])))],
    );
    let e = Inputs::open(&[missing.clone(), text.clone()]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "inputs `{}` and `{}` have different schemas: column `id` is Int32 in the first and Utf8 in the second",
            missing.display(),
            text.display()
        )
    );
    assert_eq!(
        e.hint.unwrap(),
        "all inputs of one run must share one schema; run them separately"
    );
}

#[test]
fn a_value_out_of_the_widened_range_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let small = parquet(
        dir.path(),
        "a.parquet",
        vec![("n", true, arr(Int32Array::from(vec![-1])))],
    );
    let big = parquet(
        dir.path(),
        "b.parquet",
        vec![("n", true, arr(UInt64Array::from(vec![7, u64::MAX])))],
    );
    let inputs = union(&[small, big.clone()]).unwrap();
    assert_eq!(columns(&inputs.schema), ["n: Int64?"]);
    let e = rows(&inputs, &["n"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: column `n`: cannot read UInt64 as Int64: Cast error: Can't cast value 18446744073709551615 to type Int64",
            big.display()
        )
    );
}

#[test]
fn json_lines_files_unite_too() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    std::fs::write(
        &a,
        "{\"id\":1,\"output\":\"A\",\"note\":null}\n{\"id\":2,\"output\":null,\"note\":null}\n",
    )
    .unwrap();
    let b = dir.path().join("b.jsonl");
    std::fs::write(&b, "{\"id\":2.5,\"tags\":[1,2],\"note\":\"n\"}\n").unwrap();
    let c = parquet(
        dir.path(),
        "c.parquet",
        vec![
            ("output", true, arr(StringArray::from(vec!["C"]))),
            ("id", true, arr(Float64Array::from(vec![3.5]))),
        ],
    );
    let inputs = union(&[a, b, c]).unwrap();
    // A JSON Lines file's columns are in name order (as its schema is inferred).
    assert_eq!(
        columns(&inputs.schema),
        [
            "id: Float64?",
            "note: Utf8?",
            "output: Utf8?",
            "tags: List(Int64)?"
        ]
    );
    let (lines, _) = rows(&inputs, &["id", "note", "output", "tags"]).unwrap();
    assert_eq!(
        lines,
        [
            "1.0 | ∅ | A | ∅",
            "2.0 | ∅ | ∅ | ∅",
            "2.5 | n | ∅ | [1, 2]",
            "3.5 | ∅ | C | ∅",
        ]
    );
    // Files lacking every column asked for still give their rows, all null.
    let (lines, _) = rows(&inputs, &["tags"]).unwrap();
    assert_eq!(lines, ["∅", "∅", "[1, 2]", "∅"]);
}

#[test]
fn partition_columns_follow_the_union() {
    let dir = tempfile::tempdir().unwrap();
    parquet(
        dir.path(),
        "model=m1/part-0.parquet",
        vec![("id", false, arr(Int64Array::from(vec![1])))],
    );
    parquet(
        dir.path(),
        "model=m2/part-0.parquet",
        vec![
            ("id", false, arr(Int64Array::from(vec![2]))),
            ("judge", true, arr(StringArray::from(vec!["j"]))),
        ],
    );
    let open = |hive| {
        Inputs::open_options(
            &[dir.path().to_path_buf()],
            &OpenOptions {
                recursive: true,
                hive,
                union_by_name: true,
                ..OpenOptions::default()
            },
        )
    };
    let inputs = open(HivePartitioning::Auto).unwrap();
    assert_eq!(
        columns(&inputs.schema),
        ["id: Int64", "judge: Utf8?", "model: Utf8?"]
    );
    let (lines, _) = rows(&inputs, &["model", "judge", "id"]).unwrap();
    assert_eq!(lines, ["1 | ∅ | m1", "2 | j | m2"]);

    // A later file's column that is also a partition key: the error names that file.
    let clash = parquet(
        dir.path(),
        "model=m3/part-0.parquet",
        vec![
            ("id", false, arr(Int64Array::from(vec![3]))),
            ("model", true, arr(StringArray::from(vec!["m3"]))),
        ],
    );
    let e = open(HivePartitioning::On).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: column `model` is in the file and also a Hive partition key of its path (`model=...`)",
            clash.display()
        )
    );
}

#[test]
fn dictionary_strings_unite_with_plain_ones() {
    let dir = tempfile::tempdir().unwrap();
    let plain = parquet(
        dir.path(),
        "a.parquet",
        vec![("output", true, arr(StringArray::from(vec!["A"])))],
    );
    let dict: arrow::array::DictionaryArray<arrow::datatypes::Int32Type> =
        vec![Some("B"), None, Some("B")].into_iter().collect();
    let coded = parquet(dir.path(), "b.parquet", vec![("output", true, arr(dict))]);
    let inputs = union(&[plain, coded]).unwrap();
    assert_eq!(columns(&inputs.schema), ["output: Utf8?"]);
    let (lines, schemas) = rows(&inputs, &["output"]).unwrap();
    assert_eq!(lines, ["A", "B", "∅", "B"]);
    assert_eq!(schemas, ["output: Utf8View?"]);
}

#[test]
fn timestamps_of_two_units_read_in_the_finer() {
    use arrow::array::{TimestampMicrosecondArray, TimestampNanosecondArray};
    let dir = tempfile::tempdir().unwrap();
    let micros = parquet(
        dir.path(),
        "a.parquet",
        vec![(
            "at",
            true,
            arr(TimestampMicrosecondArray::from(vec![981_158_400_000_001])),
        )],
    );
    let nanos = parquet(
        dir.path(),
        "b.parquet",
        vec![(
            "at",
            true,
            arr(TimestampNanosecondArray::from(vec![
                981_158_400_000_000_002,
            ])),
        )],
    );
    let inputs = union(&[micros, nanos]).unwrap();
    assert_eq!(columns(&inputs.schema), ["at: Timestamp(ns)?"]);
    let (lines, _) = rows(&inputs, &["at"]).unwrap();
    assert_eq!(
        lines,
        [
            "2001-02-03T00:00:00.000001",
            "2001-02-03T00:00:00.000000002"
        ]
    );
}
