//! Run identity: `run_id`, `run_started_at` and `labels` in metrics.parquet,
//! confusion.parquet, metrics.json and run.json, `--run-columns` in scores.parquet, and
//! Hive-style `--out` folders used as given.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, TimeUnit, TimestampMicrosecondType};
use std::path::Path;

fn run(task: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    evalscore()
        .arg("run")
        .arg(examples().join(task))
        .arg("--input")
        .arg(examples().join("qa.parquet"))
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run")
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The three run columns of a table, checked to be the last three with their types; returns
/// (run ids, start times in microseconds, labels).
#[allow(clippy::type_complexity)]
fn run_columns(b: &RecordBatch) -> (Vec<Option<String>>, Vec<i64>, Vec<Option<String>>) {
    let names = column_names(b);
    assert_eq!(
        names[names.len() - 3..],
        ["run_id", "run_started_at", "labels"]
    );
    let schema = b.schema();
    assert_eq!(
        schema.field_with_name("run_id").unwrap().data_type(),
        &DataType::Utf8
    );
    assert!(!schema.field_with_name("run_id").unwrap().is_nullable());
    assert_eq!(
        schema
            .field_with_name("run_started_at")
            .unwrap()
            .data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(
        schema.field_with_name("labels").unwrap().data_type(),
        &DataType::Utf8
    );
    let started = b
        .column_by_name("run_started_at")
        .unwrap()
        .as_primitive::<TimestampMicrosecondType>();
    assert_eq!(started.null_count(), 0);
    (
        strings(b, "run_id"),
        started.values().to_vec(),
        strings(b, "labels"),
    )
}

fn micros(rfc3339: &serde_json::Value) -> i64 {
    chrono_micros(rfc3339.as_str().unwrap())
}

/// RFC 3339 with exactly six fractional digits and `Z`, as microseconds since the epoch.
fn chrono_micros(t: &str) -> i64 {
    assert_eq!(t.len(), "2026-11-23T04:05:06.123456Z".len(), "{t}");
    assert!(t.ends_with('Z'), "{t}");
    let (date, time) = t.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let (hms, frac) = time.split_once('.').unwrap();
    let h: Vec<i64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
    // Days from the civil date (Howard Hinnant's algorithm), independent of chrono.
    let (y, m) = if d[1] <= 2 {
        (d[0] - 1, d[1] + 9)
    } else {
        (d[0], d[1] - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 86_400 + h[0] * 3600 + h[1] * 60 + h[2]) * 1_000_000) + frac.parse::<i64>().unwrap()
}

#[test]
fn given_id_and_labels_reach_every_output_and_hive_folders_are_used_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir
        .path()
        .join("warehouse/metrics/run_date=2026-11-23/model=m-1");
    let o = run(
        "classification.yaml",
        &out,
        &[
            "--run-id",
            "nightly-2026-11-23",
            "--label",
            "model=m-1",
            "--label",
            "dataset=qa \"v2\"",
            "--run-columns",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The folder is the one given, `=` and all, created with its parents.
    assert_eq!(
        files_in(&out),
        [
            "confusion.parquet",
            "metrics.json",
            "metrics.parquet",
            "run.json",
            "scores.parquet"
        ]
    );
    let labels = r#"{"dataset":"qa \"v2\"","model":"m-1"}"#;
    let rj = json(&out.join("run.json"));
    assert_eq!(rj["run_id"], "nightly-2026-11-23");
    assert_eq!(
        rj["labels"],
        serde_json::json!({"dataset": "qa \"v2\"", "model": "m-1"})
    );
    let start = micros(&rj["run_started_at"]);
    // `started_at` is the same instant to the millisecond.
    let started_at = rj["started_at"].as_str().unwrap();
    assert_eq!(
        &started_at[..23],
        &rj["run_started_at"].as_str().unwrap()[..23]
    );
    let mj = json(&out.join("metrics.json"));
    assert_eq!(mj["run_id"], rj["run_id"]);
    assert_eq!(mj["run_started_at"], rj["run_started_at"]);
    assert_eq!(mj["labels"], rj["labels"]);

    for file in ["metrics.parquet", "confusion.parquet"] {
        let t = read_parquet(&out.join(file));
        assert!(t.num_rows() > 10, "{file}");
        let (ids, starts, ls) = run_columns(&t);
        assert_eq!(
            ids,
            vec![Some("nightly-2026-11-23".to_owned()); t.num_rows()],
            "{file}"
        );
        assert_eq!(starts, vec![start; t.num_rows()], "{file}");
        assert_eq!(ls, vec![Some(labels.to_owned()); t.num_rows()], "{file}");
    }

    // --run-columns: scores.parquet ends in `run_id`, a plain string column.
    let s = read_parquet(&out.join("scores.parquet"));
    assert_eq!(column_names(&s), ["id", "judge__is_correct", "run_id"],);
    assert_eq!(s.schema().field(2).data_type(), &DataType::Utf8);
    assert_eq!(
        strings(&s, "run_id"),
        vec![Some("nightly-2026-11-23".to_owned()); 300]
    );
}

#[test]
fn by_default_a_uuid_v7_per_run_no_labels_and_no_run_column_in_scores() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let o = run("classification.yaml", out, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let id = |out: &Path| {
        json(&out.join("run.json"))["run_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (ia, ib) = (id(&a), id(&b));
    assert_ne!(ia, ib);
    for (out, id) in [(&a, &ia), (&b, &ib)] {
        // 8-4-4-4-12 hex digits, version 7, RFC 9562 variant.
        let groups: Vec<&str> = id.split('-').collect();
        assert_eq!(
            groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12],
            "{id}"
        );
        assert!(
            id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()),
            "{id}"
        );
        assert_eq!(&id[14..15], "7", "{id}");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        let rj = json(&out.join("run.json"));
        // The id's first 48 bits are the start in milliseconds.
        let ms = i64::from_str_radix(&id.replace('-', "")[..12], 16).unwrap();
        assert_eq!(ms, micros(&rj["run_started_at"]) / 1000, "{id}");
        assert_eq!(rj["labels"], serde_json::Value::Null);
        assert_eq!(
            json(&out.join("metrics.json"))["labels"],
            serde_json::Value::Null
        );
        let m = read_parquet(&out.join("metrics.parquet"));
        let (ids, _, labels) = run_columns(&m);
        assert_eq!(ids, vec![Some(id.clone()); m.num_rows()]);
        assert_eq!(labels, vec![None; m.num_rows()]);
        let s = read_parquet(&out.join("scores.parquet"));
        assert_eq!(column_names(&s), ["id", "judge__is_correct"]);
    }
    // The figures are the same; only the run columns differ.
    assert_eq!(
        metric_lines(&read_parquet(&a.join("metrics.parquet"))),
        metric_lines(&read_parquet(&b.join("metrics.parquet")))
    );
}

#[test]
fn bad_run_ids_and_labels_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cases: [(&[&str], &str); 3] = [
        (
            &["--label", "model=a", "--label", "model=b"],
            "error: `--label model=...` is given twice\n",
        ),
        (
            &["--run-id", ""],
            "error: `--run-id` is empty\nhint: leave `--run-id` out for a fresh UUIDv7\n",
        ),
        (
            &["--run-id", "a\tb"],
            "error: `--run-id a\\tb` holds '\\t'; a run id has no whitespace or control characters\n",
        ),
    ];
    for (args, want) in cases {
        let o = run("qa.yaml", &out, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), want, "{args:?}");
        assert!(!out.exists(), "{args:?}");
    }
    // An input column named `run_id` kept in scores.parquet clashes with --run-columns.
    let input = dir.path().join("with_run_id.jsonl");
    std::fs::write(
        &input,
        "{\"id\": 1, \"output\": \"a\", \"answer\": \"a\", \"run_id\": \"old\"}\n",
    )
    .unwrap();
    let o = evalscore()
        .arg("run")
        .arg(examples().join("qa.yaml"))
        .arg("--input")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .args(["--keep", "id,run_id", "--run-columns"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: `--run-columns` adds a `run_id` column to scores.parquet, which already has one\nhint: leave the input's `run_id` out of `--keep`, or drop `--run-columns`\n"
    );
    assert!(!out.exists());
    let o = run("qa.yaml", &out, &["--label", "novalue"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "invalid value 'novalue' for '--label <KEY=VALUE>': `novalue` is not KEY=VALUE"
        ),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
