//! Hive partitions: `key=value` folders of a tree or glob read as typed columns
//! (`--hive-partitioning`), what their values and types are, and when they are an error.

use crate::remote::parquet_of;
use evalscore_reader::{HivePartitioning, Inputs};
use std::path::{Path, PathBuf};

/// A temporary folder holding a Parquet file (100 rows whose `answer` is the file's path) at
/// each of `rels`.
fn tree(rels: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for rel in rels {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, parquet_of(rel)).unwrap();
    }
    dir
}

fn open(dir: &Path, pattern: &str, hive: HivePartitioning) -> Result<Inputs, String> {
    let glob = PathBuf::from(format!("{}/{pattern}", dir.display()));
    Inputs::open_partitioned(&[glob], false, hive, &[]).map_err(|e| e.to_string())
}

/// The schema's columns as `name: type` (`?` when nullable).
fn columns(inputs: &Inputs) -> Vec<String> {
    crate::union::columns(&inputs.schema)
}

/// The first row of every unit, `columns` read, as text (`∅` for null) joined by ` | `; and
/// the rows read in all.
fn first_rows(inputs: &Inputs, columns: &[&str]) -> (Vec<String>, usize) {
    let names: Vec<String> = columns.iter().map(|c| (*c).to_owned()).collect();
    let options = arrow::util::display::FormatOptions::default().with_null("∅");
    let (mut firsts, mut rows) = (Vec::new(), 0);
    for unit in inputs.units() {
        let mut first = true;
        inputs
            .read_unit(&unit, &names, |b| {
                let got: Vec<String> = b
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect();
                assert_eq!(got, names);
                if first {
                    first = false;
                    let line: Vec<String> = b
                        .columns()
                        .iter()
                        .map(|a| {
                            let f =
                                arrow::util::display::ArrayFormatter::try_new(a, &options).unwrap();
                            f.value(0).to_string()
                        })
                        .collect();
                    firsts.push(line.join(" | "));
                }
                // Every row of the batch holds the file's values.
                for a in b.columns() {
                    assert_eq!(
                        a.slice(0, 1).to_data(),
                        a.slice(b.num_rows() - 1, 1).to_data()
                    );
                }
                rows += b.num_rows();
                Ok::<(), evalscore_reader::ReadError>(())
            })
            .unwrap();
    }
    (firsts, rows)
}

#[test]
fn folders_are_typed_columns_as_duckdb_infers_them() {
    let dir = tree(&[
        "n=1/d=2001-02-03/t=a%3Db/e=7/part-0.parquet",
        "n=20/d=2001-02-04/t=__HIVE_DEFAULT_PARTITION__/e=2001-02-05/part-0.parquet",
        "n=-3/d=__HIVE_DEFAULT_PARTITION__/t=c%2Fd%20e/e=8/part-0.parquet",
    ]);
    for hive in [HivePartitioning::Auto, HivePartitioning::On] {
        let inputs = open(dir.path(), "**/*.parquet", hive).unwrap();
        assert_eq!(
            columns(&inputs),
            [
                "answer: Utf8",
                "n: Int64?",
                "d: Date32?",
                "t: Utf8?",
                "e: Utf8?"
            ]
        );
        // Files in byte order of their paths: `n=-3` < `n=1` < `n=20`.
        assert_eq!(
            first_rows(&inputs, &["answer", "n", "d", "t", "e"]),
            (
                vec![
                    "n=-3/d=__HIVE_DEFAULT_PARTITION__/t=c%2Fd%20e/e=8/part-0.parquet | -3 | ∅ | c/d e | 8".to_owned(),
                    "n=1/d=2001-02-03/t=a%3Db/e=7/part-0.parquet | 1 | 2001-02-03 | a=b | 7".to_owned(),
                    "n=20/d=2001-02-04/t=__HIVE_DEFAULT_PARTITION__/e=2001-02-05/part-0.parquet | 20 | 2001-02-04 | ∅ | 2001-02-05".to_owned(),
                ],
                300
            )
        );
        // Partition columns alone, without any of the file's own.
        assert_eq!(
            first_rows(&inputs, &["n", "d"]),
            (
                vec![
                    "-3 | ∅".to_owned(),
                    "1 | 2001-02-03".to_owned(),
                    "20 | 2001-02-04".to_owned()
                ],
                300
            )
        );
    }
    let off = open(dir.path(), "**/*.parquet", HivePartitioning::Off).unwrap();
    assert_eq!(columns(&off), ["answer: Utf8"]);
}

#[test]
fn files_with_different_keys_have_none_unless_asked_for() {
    let dir = tree(&[
        "model=m1/part-0.parquet",
        "model=m2/date=2001-02-03/part-0.parquet",
    ]);
    let auto = open(dir.path(), "**/*.parquet", HivePartitioning::Auto).unwrap();
    assert_eq!(columns(&auto), ["answer: Utf8"]);
    assert_eq!(auto.files.len(), 2);
    let base = dir.path().display();
    assert_eq!(
        open(dir.path(), "**/*.parquet", HivePartitioning::On).unwrap_err(),
        format!(
            "inputs `{base}/model=m1/part-0.parquet` and `{base}/model=m2/date=2001-02-03/part-0.parquet` have different Hive partition keys: `model` in the first, `model`, `date` in the second"
        )
    );
    // Only the folders the glob walks count: the base's own `key=value` names are not keys.
    let one = open(
        &dir.path().join("model=m1"),
        "*.parquet",
        HivePartitioning::On,
    )
    .unwrap();
    assert_eq!(columns(&one), ["answer: Utf8"]);
    // The same keys in another order are the same keys, in the first file's order.
    let dir = tree(&["a=1/b=x/part-0.parquet", "b=y/a=2/part-0.parquet"]);
    let swapped = open(dir.path(), "**/*.parquet", HivePartitioning::On).unwrap();
    assert_eq!(columns(&swapped), ["answer: Utf8", "a: Int64?", "b: Utf8?"]);
    assert_eq!(first_rows(&swapped, &["a", "b"]).0, ["1 | x", "2 | y"]);
}

#[test]
fn a_key_that_is_also_a_column_is_an_error_naming_both() {
    let dir = tree(&["answer=a/part-0.parquet", "answer=b/part-0.parquet"]);
    for hive in [HivePartitioning::Auto, HivePartitioning::On] {
        let e = Inputs::open_partitioned(&[dir.path().to_path_buf()], true, hive, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}/answer=a/part-0.parquet: column `answer` is in the file and also a Hive partition key of its path (`answer=...`)",
                dir.path().display()
            )
        );
        assert_eq!(
            e.hint.unwrap(),
            "rename the column or the `answer=` folders, or pass `--no-hive-partitioning` to read the file's column and ignore the folders"
        );
    }
    let off = Inputs::open_partitioned(
        &[dir.path().to_path_buf()],
        true,
        HivePartitioning::Off,
        &[],
    )
    .unwrap();
    assert_eq!(columns(&off), ["answer: Utf8"]);
}

/// A moto server whose bucket `lake` holds a Parquet file (as [`parquet_of`] makes) at each
/// of `keys`.
pub fn lake(keys: &[&str]) -> evalscore_test_support::stores::Server {
    use evalscore_test_support::stores::*;
    let server = moto();
    create_bucket(server.port, "lake");
    for key in keys {
        put_object(server.port, "lake", key, &parquet_of(key));
    }
    server
}

#[test]
fn partitions_are_read_from_object_keys_too() {
    let server = lake(&[
        "evals/model=m1/date=2001-02-03/part-0.parquet",
        "evals/model=m2/date=__HIVE_DEFAULT_PARTITION__/part-0.parquet",
        "evals/model=m2/date=2001-02-04/_SUCCESS",
    ]);
    let options = crate::remote::s3_options(server.port);
    for (input, recursive) in [
        ("s3://lake/evals/**/*.parquet", false),
        ("s3://lake/evals/", true),
    ] {
        let inputs = Inputs::open_partitioned(
            &[PathBuf::from(input)],
            recursive,
            HivePartitioning::On,
            &options,
        )
        .unwrap();
        assert_eq!(
            columns(&inputs),
            ["answer: Utf8", "model: Utf8?", "date: Date32?"],
            "{input}"
        );
        assert_eq!(
            first_rows(&inputs, &["model", "date"]),
            (vec!["m1 | 2001-02-03".to_owned(), "m2 | ∅".to_owned()], 200),
            "{input}"
        );
    }
}

/// Folders whose `key=value` names are not UTF-8 (`model=\xff`, `model=\xfe`) would read as
/// one lossy value: an error naming the file, unless the folders are not read as columns.
#[cfg(unix)]
#[test]
fn a_partition_folder_that_is_not_utf8_is_an_error() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    for byte in [0xff_u8, 0xfe] {
        let folder = dir
            .path()
            .join(std::ffi::OsStr::from_bytes(&[b'm', b'=', byte]));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("p.parquet"), parquet_of("x")).unwrap();
    }
    let e = open(dir.path(), "**/*.parquet", HivePartitioning::Auto).unwrap_err();
    let first = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"m=\xfe/p.parquet"));
    assert_eq!(
        e,
        format!(
            "{}: a `key=value` folder of its path is not UTF-8 text, so it cannot be a partition value",
            first.display()
        )
    );
    let off = open(dir.path(), "**/*.parquet", HivePartitioning::Off).unwrap();
    assert_eq!((off.files.len(), off.partition_columns.len()), (2, 0));
}

/// Folders whose escapes decode to bytes that are not UTF-8 (`model=%FF`, `model=%FE`)
/// would read as one lossy value too: the same error, naming the file.
#[test]
fn a_partition_folder_whose_escapes_are_not_utf8_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["model=%FF", "model=%FE"] {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("p.parquet"), parquet_of("x")).unwrap();
    }
    let e = open(dir.path(), "**/*.parquet", HivePartitioning::Auto).unwrap_err();
    assert_eq!(
        e,
        format!(
            "{}: a `key=value` folder of its path is not UTF-8 text, so it cannot be a partition value",
            dir.path().join("model=%FE/p.parquet").display()
        )
    );
    // An escaped U+FFFD is UTF-8 text: a value of its own.
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("model=%EF%BF%BD");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("p.parquet"), parquet_of("x")).unwrap();
    let ok = open(dir.path(), "**/*.parquet", HivePartitioning::Auto).unwrap();
    assert_eq!(ok.partition_columns.len(), 1);
}

/// A folder with an empty key (`=v`) cannot name a partition column: an error naming the
/// file, unless the folders are not read as columns.
#[test]
fn a_partition_folder_with_an_empty_key_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("=v");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("p.parquet"), parquet_of("x")).unwrap();
    let e = open(dir.path(), "**/*.parquet", HivePartitioning::Auto).unwrap_err();
    assert_eq!(
        e,
        format!(
            "{}: a `key=value` folder of its path has an empty key, so it cannot name a partition column",
            dir.path().join("=v/p.parquet").display()
        )
    );
    let off = open(dir.path(), "**/*.parquet", HivePartitioning::Off).unwrap();
    assert_eq!((off.files.len(), off.partition_columns.len()), (1, 0));
}
