//! Pruning end to end: `--where` and a task's `filter:` choose the partitions scored, before
//! the other files are opened; run.json records the partition columns, the filter and the
//! files it kept; errors name the expression's column (and the task file's line); the same
//! over S3 (moto).
#![allow(clippy::unwrap_used)]

use crate::common::*;
use crate::hive::{exports, write_part, TASK};

/// [`exports`] (model m1: ids 0, 1; model m2, the next day: ids 2 to 4) with a third day
/// of model m2 (id 5) and a model m3 whose file is not Parquet at all, so a run that opens
/// it fails.
/// The prefix the object-storage test uploads the exports under.
const LAKE: &str = "s3://lake/evals/";

fn pruned_exports() -> Case {
    let case = exports();
    write_part(
        &case,
        "exports/model=m2/date=2001-02-05/part-0.parquet",
        &[5],
        &["f"],
        &["x"],
    );
    case.write(
        "exports/model=m3/date=2001-02-05/part-0.parquet",
        "not parquet",
    );
    case
}

/// A task that reads no partition column.
const PLAIN: &str =
    "definition:\n  scorers:\n    - {type: string_equals, ground_truth: \"{{ sample.answer }}\"}\n";

/// The ids scored by a run in `case` with `args` (to `--out out`), and its run.json.
fn scored(case: &Case, args: &[&str], out: &str) -> (String, serde_json::Value) {
    let (code, stdout, err) = case.run_out(args, out);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {err}");
    let scores = read_parquet(&case.path(out).join("scores.parquet"));
    let run = read_json(&case.path(out).join("run.json"));
    (column_text(&scores, "id"), run)
}

#[test]
fn where_reads_only_the_matching_partitions_and_run_json_counts_them() {
    let case = pruned_exports();
    let glob = "exports/**/*.parquet";
    let (ids, run) = scored(
        &case,
        &[
            "t.yaml",
            "--input",
            glob,
            "--where",
            "model = \"m2\" and date >= '2001-02-04'",
            "--keep",
            "id,model,date",
        ],
        "out",
    );
    assert_eq!(ids, "2 | 3 | 4 | 5");
    assert_eq!(
        input_paths(&run),
        [
            "exports/model=m2/date=2001-02-04/part-0.parquet",
            "exports/model=m2/date=2001-02-05/part-0.parquet"
        ]
    );
    assert_eq!(run["rows_scored"], 4);
    assert_eq!(
        run["input_partitions"],
        serde_json::json!({
            "columns": [{"name": "model", "type": "Utf8"}, {"name": "date", "type": "Date32"}],
            "filter": "model = \"m2\" and date >= '2001-02-04'",
            "files_listed": 4,
            "files_matched": 2,
        })
    );
    assert_eq!(
        run["inputs"][0]["partitions"],
        serde_json::json!({"model": "m2", "date": "2001-02-04"})
    );
    // The other keys of an input are as before.
    let keys: Vec<&String> = run["inputs"][1].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "compression",
            "footer_sha256",
            "format",
            "partitions",
            "path",
            "row_groups",
            "rows"
        ]
    );
    // Without the filter the file that is not Parquet is opened, and fails the run.
    let err = case.fails(&["t.yaml", "--input", glob]);
    assert_starts(
        &err,
        "error: exports/model=m3/date=2001-02-05/part-0.parquet: not a readable Parquet file",
    );
}

#[test]
fn a_task_filter_is_anded_with_where() {
    let case = pruned_exports();
    case.write(
        "f.yaml",
        &format!("{TASK}filter: \"date = '2001-02-05'\"\n"),
    );
    let (ids, run) = scored(
        &case,
        &[
            "f.yaml",
            "--input",
            "exports/**/*.parquet",
            "--where",
            "model != 'm3'",
        ],
        "out",
    );
    assert_eq!(ids, "5");
    assert_eq!(
        run["input_partitions"]["filter"],
        "(model != 'm3') and (date = '2001-02-05')"
    );
    assert_eq!(
        (
            &run["input_partitions"]["files_listed"],
            &run["input_partitions"]["files_matched"]
        ),
        (&serde_json::json!(4), &serde_json::json!(1))
    );
    // The task's filter alone keeps model=m3, which then fails the run when opened.
    let err = case.fails(&["f.yaml", "--input", "exports/**/*.parquet"]);
    assert_starts(
        &err,
        "error: exports/model=m3/date=2001-02-05/part-0.parquet: not a readable Parquet file",
    );
    // Partitions without a filter: the columns, every file listed and matched.
    case.write("plain.yaml", PLAIN);
    let (_, run) = scored(
        &case,
        &[
            "plain.yaml",
            "--input",
            "exports/model=m1/**/*.parquet",
            "--input",
            "exports/model=m2/**/*.parquet",
        ],
        "all",
    );
    assert_eq!(
        run["input_partitions"],
        serde_json::json!({
            "columns": [{"name": "date", "type": "Date32"}],
            "filter": null,
            "files_listed": 3,
            "files_matched": 3,
        })
    );
    // No partition columns: run.json is as it was.
    let (_, run) = scored(
        &case,
        &[
            "plain.yaml",
            "--input",
            "exports/model=m1/**/*.parquet",
            "--no-hive-partitioning",
            "--keep",
            "id",
        ],
        "none",
    );
    assert!(run.get("input_partitions").is_none(), "{run}");
    assert!(run["inputs"][0].get("partitions").is_none(), "{run}");
}

#[test]
fn filter_errors_name_where_they_are() {
    let case = pruned_exports();
    let glob = "exports/**/*.parquet";
    let syntax = "hint: a filter compares partition columns with values: `model = 'm1' and date >= '2001-02-03'`, `run in (1, 2)`, `model is not null`, with `and`, `or`, `not` and parentheses\n";
    for (task, filter, expected) in [
        (
            "t.yaml",
            "modle = 'm1'",
            "error: --where: unknown partition column `modle` at column 1; partition columns: model, date\n\
             hint: did you mean `model`?\n"
                .to_owned(),
        ),
        (
            "t.yaml",
            "model = 'm1' and date >",
            format!("error: --where: expected a value (a quoted string or an integer) at column 24, found the end\n{syntax}"),
        ),
        (
            "t.yaml",
            "date = 'yesterday'",
            "error: --where: partition column `date` is a date (Date32): `'yesterday'` at column 8 is not one\n\
             hint: compare it with a date written `'YYYY-MM-DD'`, such as `'2001-02-03'`\n"
                .to_owned(),
        ),
        (
            "t.yaml",
            "model = 'm9'",
            "error: no input file matches the partition filter `model = 'm9'` (4 files listed)\n\
             hint: the listed files' partition values: model: m1, m2, m3; date: 2001-02-03, 2001-02-04, 2001-02-05\n"
                .to_owned(),
        ),
    ] {
        let err = case.fails(&[task, "--input", glob, "--where", filter]);
        assert_eq!(err, expected, "{filter}");
    }
    case.write("bad.yaml", &format!("{TASK}filter: modle = 'm1'\n"));
    assert_eq!(
        case.fails(&["bad.yaml", "--input", glob]),
        "error: task file `bad.yaml`, line 15, column 9: `filter`: unknown partition column `modle` at column 1; partition columns: model, date\n\
         hint: did you mean `model`?\n"
    );
    case.write(
        "syntax.yaml",
        &format!("{TASK}filter: \"model = 'm1' or\"\n"),
    );
    assert_eq!(
        case.fails(&["syntax.yaml", "--input", glob]),
        format!("error: task file `syntax.yaml`, line 15, column 9: `filter`: expected a partition column at column 16, found the end\n{syntax}")
    );
    // No partition columns to filter on.
    assert_eq!(
        case.fails(&[
            "t.yaml",
            "--input",
            "exports/model=m1/date=2001-02-03/part-0.parquet",
            "--where",
            "model = 'm1'"
        ]),
        "error: --where: the inputs have no partition columns to filter on\n\
         hint: partition columns come from the `key=value` folders of a tree or glob (`--recursive DIR`, `'dir/**/*.parquet'`) when every file has the same keys; `--hive-partitioning` names two files whose keys differ\n"
    );
}

#[test]
fn object_storage_partitions_are_pruned_before_they_are_read() {
    use evalscore_test_support::stores::*;
    let server = moto();
    create_bucket(server.port, "lake");
    let case = pruned_exports();
    for rel in [
        "model=m1/date=2001-02-03/part-0.parquet",
        "model=m2/date=2001-02-04/part-0.parquet",
        "model=m2/date=2001-02-05/part-0.parquet",
        "model=m3/date=2001-02-05/part-0.parquet",
    ] {
        let bytes = std::fs::read(case.path(&format!("exports/{rel}"))).unwrap();
        put_object(server.port, "lake", &format!("evals/{rel}"), &bytes);
    }
    let endpoint = format!("aws_endpoint=http://127.0.0.1:{}", server.port);
    let storage = [
        "--storage-option",
        endpoint.as_str(),
        "--storage-option",
        "aws_allow_http=true",
        "--storage-option",
        "aws_access_key_id=testing",
        "--storage-option",
        "aws_secret_access_key=s3-secret-never-printed",
        "--storage-option",
        "aws_region=us-east-1",
    ];
    let mut args = vec![
        "t.yaml",
        "--input",
        "s3://lake/evals/",
        "--recursive",
        "--where",
        "date in ('2001-02-03', '2001-02-05') and model < 'm3'",
    ];
    args.extend_from_slice(&storage);
    let (ids, run) = scored(&case, &args, "out");
    assert_eq!(ids, "0 | 1 | 5");
    assert_eq!(
        input_paths(&run),
        [
            format!("{LAKE}model=m1/date=2001-02-03/part-0.parquet"),
            format!("{LAKE}model=m2/date=2001-02-05/part-0.parquet"),
        ]
    );
    assert_eq!(
        (
            &run["input_partitions"]["files_listed"],
            &run["input_partitions"]["files_matched"]
        ),
        (&serde_json::json!(4), &serde_json::json!(2))
    );
}
