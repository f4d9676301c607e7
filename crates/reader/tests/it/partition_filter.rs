//! Partition filters (`--where`, a task's `filter:`): which listed files they keep, typed as
//! the partition columns are, with SQL's nulls and precedence; their errors, word for word;
//! and that pruned files are never opened, locally and in object storage (moto).

use crate::remote::parquet_of;
use evalscore_reader::{HivePartitioning, Inputs, OpenOptions, PartitionFilter, Pruning};
use std::path::{Path, PathBuf};

/// Four files partitioned by `n` (Int64), `d` (Date32) and `m` (Utf8), with nulls; listed in
/// byte order: `n=1`, `n=10`, `n=2`, `n=__HIVE_DEFAULT_PARTITION__`.
const FILES: [&str; 4] = [
    "n=1/d=2001-02-03/m=a/part-0.parquet",
    "n=2/d=2001-02-04/m=b/part-0.parquet",
    "n=10/d=__HIVE_DEFAULT_PARTITION__/m=c/part-0.parquet",
    "n=__HIVE_DEFAULT_PARTITION__/d=2001-03-01/m=o%27k/part-0.parquet",
];

fn tree(rels: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for rel in rels {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, parquet_of(rel)).unwrap();
    }
    dir
}

/// Opens `input` with the filters `(origin, text)`.
fn open(
    input: &str,
    hive: HivePartitioning,
    filters: &[(&str, &str)],
    storage_options: &[(String, String)],
) -> Result<Inputs, evalscore_reader::ReadError> {
    let filters = filters
        .iter()
        .map(|(origin, text)| PartitionFilter::parse(*origin, text))
        .collect::<Result<Vec<_>, _>>()?;
    Inputs::open_options(
        &[PathBuf::from(input)],
        &OpenOptions {
            recursive: false,
            hive,
            storage_options: storage_options.to_vec(),
            filters,
            ..OpenOptions::default()
        },
    )
}

/// The `n=...` folder of each file read, for `--where EXPR` over [`FILES`].
fn kept(dir: &Path, expr: &str) -> Vec<String> {
    let glob = format!("{}/**/*.parquet", dir.display());
    let inputs = open(&glob, HivePartitioning::Auto, &[("--where", expr)], &[])
        .unwrap_or_else(|e| panic!("{expr}: {e}"));
    inputs
        .files
        .iter()
        .map(|f| {
            let rel = f.path.strip_prefix(dir).unwrap().to_str().unwrap();
            rel.split('/').next().unwrap().to_owned()
        })
        .collect()
}

/// The error of `--where EXPR` over [`FILES`]: its text and hint.
fn error(dir: &Path, expr: &str) -> (String, Option<String>) {
    let glob = format!("{}/**/*.parquet", dir.display());
    let e = open(&glob, HivePartitioning::Auto, &[("--where", expr)], &[]).unwrap_err();
    (e.to_string(), e.hint)
}

const NULL_N: &str = "n=__HIVE_DEFAULT_PARTITION__";

/// The prefix the object-storage test lists.
const LAKE: &str = "s3://lake/evals/";

#[test]
fn filters_compare_as_the_columns_are_typed() {
    let dir = tree(&FILES);
    let d = dir.path();
    for (expr, files) in [
        ("n = 1", vec!["n=1"]),
        // Numerically, not as text (`"10" < "9"`).
        ("n < 9", vec!["n=1", "n=2"]),
        ("n > 1", vec!["n=10", "n=2"]),
        ("n >= -3 and n <= 2", vec!["n=1", "n=2"]),
        ("n = '10'", vec!["n=10"]),
        // A quoted integer as the folders' values read (hex too), or with leading zeros.
        ("n = '0xA'", vec!["n=10"]),
        ("n = '010'", vec!["n=10"]),
        ("d = '2001-2-4'", vec!["n=2"]),
        ("n in (2, 10, 99)", vec!["n=10", "n=2"]),
        ("d >= '2001-02-04'", vec!["n=2", NULL_N]),
        ("d < \"2001-02-04\"", vec!["n=1"]),
        ("m = 'a'", vec!["n=1"]),
        ("m > 'a'", vec!["n=10", "n=2", NULL_N]),
        ("m = 'o''k'", vec![NULL_N]),
        ("m in ('a', \"c\")", vec!["n=1", "n=10"]),
        // A literal on the left, the comparison turned around.
        ("1 = n", vec!["n=1"]),
        ("3 > n", vec!["n=1", "n=2"]),
        ("`n` == 2 AND m = 'b' OR n = 99", vec!["n=2"]),
        ("n <> 1 and n != 2", vec!["n=10"]),
    ] {
        assert_eq!(kept(d, expr), files, "{expr}");
    }
}

#[test]
fn a_null_partition_matches_is_null_and_nothing_else() {
    let dir = tree(&FILES);
    let d = dir.path();
    for (expr, files) in [
        ("d is null", vec!["n=10"]),
        ("n IS NULL", vec![NULL_N]),
        ("n is not null and d is not null", vec!["n=1", "n=2"]),
        // As in SQL: `not` of unknown is unknown, so the null `n` is never kept.
        ("n != 1", vec!["n=10", "n=2"]),
        ("not (n = 1)", vec!["n=10", "n=2"]),
        ("n not in (1)", vec!["n=10", "n=2"]),
        ("not n in (1, 2)", vec!["n=10"]),
        // Unknown or true is true; unknown and false is false.
        (
            "d > '2001-01-01' or n = 10",
            vec!["n=1", "n=10", "n=2", NULL_N],
        ),
        ("not (d > '2001-01-01' and n = 1)", vec!["n=10", "n=2"]),
    ] {
        assert_eq!(kept(d, expr), files, "{expr}");
    }
}

#[test]
fn not_binds_before_and_and_before_or() {
    let dir = tree(&FILES);
    let d = dir.path();
    for (expr, files) in [
        // `n = 2 or (m = 'a' and n = 10)`, not `(n = 2 or m = 'a') and n = 10`.
        ("n = 2 or m = 'a' and n = 10", vec!["n=2"]),
        ("(n = 2 or m = 'a') and n = 10", vec![]),
        ("(n = 2 or m = 'c') and n = 10", vec!["n=10"]),
        // `(not n = 1) and m = 'b'`.
        ("not n = 1 and m = 'b'", vec!["n=2"]),
        ("not not n = 1", vec!["n=1"]),
        ("((n = 1)) or (((m = 'b')))", vec!["n=1", "n=2"]),
    ] {
        if files.is_empty() {
            let (message, _) = error(d, expr);
            assert_eq!(
                message,
                format!("no input file matches the partition filter `{expr}` (4 files listed)")
            );
        } else {
            assert_eq!(kept(d, expr), files, "{expr}");
        }
    }
}

#[test]
fn types_are_inferred_over_every_listed_file() {
    let dir = tree(&FILES);
    let glob = format!("{}/**/*.parquet", dir.path().display());
    // The one file kept has a null `d`: over it alone `d` would be text.
    let inputs = open(
        &glob,
        HivePartitioning::Auto,
        &[("--where", "d is null")],
        &[],
    )
    .unwrap();
    let columns: Vec<String> = inputs
        .partition_columns
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect();
    assert_eq!(columns, ["n: Int64", "d: Date32", "m: Utf8"]);
    assert_eq!(inputs.schema.fields().len(), 4);
    assert_eq!(
        inputs.pruning,
        Some(Pruning {
            filter: "d is null".to_owned(),
            files_listed: 4,
            files_matched: 1
        })
    );
    // Several filters are ANDed, and recorded so.
    let inputs = open(
        &glob,
        HivePartitioning::On,
        &[
            ("--where", "n > 1"),
            ("task file `t.yaml`, line 1, column 9: `filter`", "m != 'c'"),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(inputs.files.len(), 1);
    assert!(inputs.files[0].path.ends_with(FILES[1]));
    assert_eq!(
        inputs.pruning,
        Some(Pruning {
            filter: "(n > 1) and (m != 'c')".to_owned(),
            files_listed: 4,
            files_matched: 1
        })
    );
    // Without a filter nothing is recorded.
    let inputs = open(&glob, HivePartitioning::Auto, &[], &[]).unwrap();
    assert_eq!((inputs.files.len(), inputs.pruning), (4, None));
}

#[test]
fn errors_name_the_column_of_the_expression() {
    let dir = tree(&FILES);
    let d = dir.path();
    let syntax = "a filter compares partition columns with values: `model = 'm1' and date >= '2001-02-03'`, `run in (1, 2)`, `model is not null`, with `and`, `or`, `not` and parentheses";
    let date_hint = "compare it with a date written `'YYYY-MM-DD'`, such as `'2001-02-03'`";
    // Nested or chained past what the parser reads: an error, not a stack overflow.
    let deep = format!("{}n = 1{}", "(".repeat(10_000), ")".repeat(10_000));
    let long = vec!["n = 1"; 20_000].join(" and ");
    for (expr, message, hint) in [
        (
            "mm = 'a'",
            "unknown partition column `mm` at column 1; partition columns: n, d, m",
            Some("did you mean `m`?"),
        ),
        (
            "n = 1 and `my key` = 'x'",
            "unknown partition column `my key` at column 11; partition columns: n, d, m",
            None,
        ),
        (
            "n = 'x'",
            "partition column `n` is an integer (Int64): `'x'` at column 5 is not one",
            Some("compare it with an integer such as `7`"),
        ),
        (
            "d < 20010203",
            "partition column `d` is a date (Date32): `20010203` at column 5 is not one",
            Some(date_hint),
        ),
        (
            "d in ('2001-02-03', '2001-02-30')",
            "partition column `d` is a date (Date32): `'2001-02-30'` at column 21 is not one",
            Some(date_hint),
        ),
        (
            "m = 1",
            "partition column `m` is text (Utf8): `1` at column 5 is not one",
            Some("quote the value: `'1'`"),
        ),
        (
            "n = ",
            "expected a value (a quoted string or an integer) at column 5, found the end",
            Some(syntax),
        ),
        (
            "n = 1 and",
            "expected a partition column at column 10, found the end",
            Some(syntax),
        ),
        ("(n = 1", "expected `)` at column 7, found the end", Some(syntax)),
        (
            "n = 1)",
            "expected `and`, `or` or the end at column 6, found `)`",
            Some(syntax),
        ),
        (
            "n = 1 m = 'a'",
            "expected `and`, `or` or the end at column 7, found `m`",
            Some(syntax),
        ),
        (
            "n 1",
            "expected a comparison (`=`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `is null`) at column 3, found `1`",
            Some(syntax),
        ),
        (
            "m = 'a",
            "the string starting at column 5 has no closing '",
            Some("end it with '; write '' for a ' inside it"),
        ),
        (
            "n == null",
            "a comparison with `null` at column 6 is never true",
            Some("write `column is null` or `column is not null`"),
        ),
        ("n is 1", "expected `null` at column 6, found `1`", Some(syntax)),
        ("n in 1", "expected `(` after `in` at column 6, found `1`", Some(syntax)),
        (
            "n in (1 2)",
            "expected `,` or `)` at column 9, found `2`",
            Some(syntax),
        ),
        ("n not 1", "expected `in` at column 7, found `1`", Some(syntax)),
        (
            "and = 1",
            "expected a partition column at column 1, found `and`",
            Some(syntax),
        ),
        (
            "'a' = 'b'",
            "expected a partition column at column 7, found `'b'`",
            Some(syntax),
        ),
        ("n ~ 1", "unexpected character `~` at column 3", Some(syntax)),
        (
            "n = 1.5",
            "`1.5` at column 5 is not an integer",
            Some("numbers are integers such as `7` or `-3`; quote anything else: `'1.5'`"),
        ),
        ("  ", "the expression is empty", Some(syntax)),
        (
            deep.as_str(),
            "the expression holds 10000 of `and`, `or`, `not` and `(`; at most 1000 are read",
            Some("list the values a column may take with `column in ('a', 'b', ...)`"),
        ),
        (
            long.as_str(),
            "the expression holds 19999 of `and`, `or`, `not` and `(`; at most 1000 are read",
            Some("list the values a column may take with `column in ('a', 'b', ...)`"),
        ),
    ] {
        assert_eq!(
            error(d, expr),
            (
                format!("--where: {message}"),
                hint.map(str::to_owned)
            ),
            "{expr}"
        );
    }
    assert_eq!(
        error(d, "n = 99"),
        (
            "no input file matches the partition filter `n = 99` (4 files listed)".to_owned(),
            Some("the listed files' partition values: n: 1, 10, 2, null; d: 2001-02-03, null, 2001-02-04, 2001-03-01; m: a, c, b, o'k".to_owned())
        )
    );
    let glob = format!("{}/**/*.parquet", d.display());
    let e = open(&glob, HivePartitioning::Off, &[("--where", "n = 1")], &[]).unwrap_err();
    assert_eq!(
        (e.to_string(), e.hint.unwrap()),
        (
            "--where: the inputs have no partition columns to filter on".to_owned(),
            "`--no-hive-partitioning` turns them off; leave it out to read `key=value` folders as columns".to_owned()
        )
    );
    let one = format!("{}/{}", d.display(), FILES[0]);
    let e = open(&one, HivePartitioning::Auto, &[("--where", "n = 1")], &[]).unwrap_err();
    assert_eq!(
        (e.to_string(), e.hint.unwrap()),
        (
            "--where: the inputs have no partition columns to filter on".to_owned(),
            "partition columns come from the `key=value` folders of a tree or glob (`--recursive DIR`, `'dir/**/*.parquet'`) when every file has the same keys; `--hive-partitioning` names two files whose keys differ".to_owned()
        )
    );
}

#[test]
fn pruned_files_are_never_opened() {
    let dir = tree(&FILES[..2]);
    // Not Parquet at all: opening it would fail the run.
    let bad = dir.path().join("n=3/d=2001-02-05/m=z/part-0.parquet");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, b"not parquet").unwrap();
    assert_eq!(kept(dir.path(), "m != 'z'"), ["n=1", "n=2"]);
    let (message, _) = error(dir.path(), "n >= 2");
    assert_eq!(
        message,
        format!(
            "{}: not a readable Parquet file: Parquet error: Invalid Parquet file. Corrupt footer",
            bad.display()
        )
    );
}

#[test]
fn object_storage_listings_are_pruned_too() {
    use evalscore_test_support::stores::put_object;
    let server = crate::hive::lake(&[
        "evals/model=m1/date=2001-02-03/part-0.parquet",
        "evals/model=m1/date=2001-02-04/part-0.parquet",
        "evals/model=m2/date=2001-02-03/part-0.parquet",
    ]);
    put_object(
        server.port,
        "lake",
        "evals/model=m3/date=2001-02-03/part-0.parquet",
        b"not parquet",
    );
    let options = crate::remote::s3_options(server.port);
    let inputs = open(
        "s3://lake/evals/**/*.parquet",
        HivePartitioning::Auto,
        &[("--where", "model in ('m1', 'm2') and date = '2001-02-03'")],
        &options,
    )
    .unwrap();
    let paths: Vec<String> = inputs
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            format!("{LAKE}model=m1/date=2001-02-03/part-0.parquet"),
            format!("{LAKE}model=m2/date=2001-02-03/part-0.parquet"),
        ]
    );
    assert_eq!(
        inputs.pruning,
        Some(Pruning {
            filter: "model in ('m1', 'm2') and date = '2001-02-03'".to_owned(),
            files_listed: 4,
            files_matched: 2
        })
    );
}
