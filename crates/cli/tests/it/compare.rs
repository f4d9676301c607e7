//! `evalscore compare` end to end: the golden fixture folders (made by
//! scripts/golden/compare.py, expected figures from statsmodels and scipy), the files it
//! writes, the gate's exit codes, the refusal to overwrite, and its error messages.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/golden/compare")
}

fn golden() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/golden/compare.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// p-values to a relative 1e-12, other figures to 1e-12 (absolute up to 1).
fn close(what: &str, got: Option<f64>, want: &Value, relative: bool) {
    match (got, want.as_f64()) {
        (None, None) => {}
        (Some(g), Some(w)) => {
            let tol = if relative {
                1e-12 * w.abs()
            } else {
                1e-12 * w.abs().max(1.0)
            };
            assert!((g - w).abs() <= tol, "{what}: got {g:e}, want {w:e}");
        }
        (g, _) => panic!("{what}: got {g:?}, want {want}"),
    }
}

const COLUMNS: [&str; 20] = [
    "column",
    "group",
    "test",
    "n_pairs",
    "missing_pairs",
    "only_base",
    "only_new",
    "n_clusters",
    "base_mean",
    "new_mean",
    "diff",
    "diff_se",
    "ci_low",
    "ci_high",
    "p_value",
    "p_value_holm",
    "pass_to_fail",
    "fail_to_pass",
    "min_detectable_diff",
    "verdict",
];

/// Clustered, grouped, 90%, with the gate on: three comparisons regress, exit 1; both files
/// hold every golden figure.
#[test]
fn gate_fails_and_files_match_the_golden_figures() {
    let g = golden();
    let want = &g["folders"]["runs"][2];
    assert_eq!(want["options"]["cluster"], "passage");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let o = evalscore()
        .arg("compare")
        .arg(fixtures().join("base"))
        .arg(fixtures().join("new"))
        .args(["--out"])
        .arg(&out)
        .args([
            "--cluster",
            "passage",
            "--group-by",
            "subject",
            "--confidence",
            "0.9",
            "--max-drop",
            "0.05",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.ends_with(
            "\n150 rows in base, 153 in new; 7 only in base, 10 only in new\n\
         gate: FAILED, 3 comparison(s) regressed by more than 0.05\n"
        ),
        "{stdout}"
    );
    assert_eq!(
        stdout
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["column", "group", "pairs", "base", "new", "diff", "interval", "p", "p_holm", "verdict"]
    );
    assert_eq!(files_in(&out), ["compare.json", "compare.parquet"]);

    let b = read_parquet(&out.join("compare.parquet"));
    assert_eq!(column_names(&b), COLUMNS);
    let rows = want["rows"].as_array().unwrap();
    assert_eq!(b.num_rows(), rows.len());
    let column = strings(&b, "column");
    let group = strings(&b, "group");
    let test = strings(&b, "test");
    let verdict = strings(&b, "verdict");
    for (i, w) in rows.iter().enumerate() {
        let what = format!("row {i}");
        assert_eq!(column[i].as_deref(), w["column"].as_str(), "{what}");
        assert_eq!(group[i].as_deref(), w["group"].as_str(), "{what}");
        assert_eq!(test[i].as_deref(), Some("cluster_t"), "{what}");
        assert_eq!(verdict[i].as_deref(), w["verdict"].as_str(), "{what}");
        for c in [
            "n_pairs",
            "missing_pairs",
            "only_base",
            "only_new",
            "pass_to_fail",
            "fail_to_pass",
            "n_clusters",
        ] {
            assert_eq!(Some(uints(&b, c)[i]), w[c].as_u64(), "{what} {c}");
        }
        for c in [
            "base_mean",
            "new_mean",
            "diff",
            "diff_se",
            "ci_low",
            "ci_high",
            "min_detectable_diff",
        ] {
            close(&format!("{what} {c}"), floats(&b, c)[i], &w[c], false);
        }
        for c in ["p_value", "p_value_holm"] {
            close(&format!("{what} {c}"), floats(&b, c)[i], &w[c], true);
        }
    }

    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    assert_eq!(j["gate"], "failed");
    assert_eq!(j["key"], serde_json::json!(["id"]));
    assert_eq!(j["cluster"], "passage");
    assert_eq!(j["group_by"], "subject");
    assert_eq!(j["confidence"], 0.9);
    assert_eq!(j["max_drop"], 0.05);
    let comps = j["comparisons"].as_array().unwrap();
    assert_eq!(comps.len(), rows.len());
    for (c, w) in comps.iter().zip(rows) {
        assert_eq!(c["column"], w["column"]);
        assert_eq!(c["verdict"], w["verdict"]);
        assert_eq!(c["pass_to_fail"], w["pass_to_fail"]);
        assert_eq!(c["pass_to_fail_keys"], w["pass_to_fail_keys"]);
        close("json p_value", c["p_value"].as_f64(), &w["p_value"], true);
    }
    assert_eq!(j["only_base_keys"].as_array().unwrap().len(), 7);
    assert_eq!(j["only_new_keys"].as_array().unwrap().len(), 10);
}

/// Without --max-drop the gate is off: exit 0 whatever the verdicts; McNemar and the paired
/// t test pick by column.
#[test]
fn without_max_drop_the_gate_is_off_and_the_files_are_refused_then_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let run = |extra: &[&str]| {
        evalscore()
            .arg("compare")
            .arg(fixtures().join("base"))
            .arg(fixtures().join("new"))
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.ends_with("gate: off (pass --max-drop to turn it on)\n"),
        "{stdout}"
    );
    let b = read_parquet(&out.join("compare.parquet"));
    assert_eq!(
        strings(&b, "test"),
        [
            Some("mcnemar_exact".to_owned()),
            Some("paired_t".to_owned())
        ]
    );
    assert_eq!(
        strings(&b, "verdict"),
        [Some("regressed".to_owned()), Some("tied".to_owned())]
    );
    let before = std::fs::read(out.join("compare.json")).unwrap();

    let o = run(&["--max-drop", "0.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        format!(
            "error: the output folder `{}` already holds compare.parquet, compare.json\n\
             hint: pass `--overwrite` to replace them, or choose another `--out` folder\n",
            out.display()
        )
    );
    assert_eq!(std::fs::read(out.join("compare.json")).unwrap(), before);

    // A drop of 0.112 is within a 0.5 allowance: tied, exit 0.
    let o = run(&["--max-drop", "0.5", "--overwrite"]);
    assert_eq!(o.status.code(), Some(0));
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    assert_eq!(j["gate"], "passed");
    assert_eq!(files_in(&out), ["compare.json", "compare.parquet"]);
}

fn write_scores(dir: &Path, cols: Vec<(&str, ArrayRef)>) {
    std::fs::create_dir_all(dir).unwrap();
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let f = std::fs::File::create(dir.join("scores.parquet")).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn compare_err(base: &Path, new: &Path, extra: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = evalscore()
        .arg("compare")
        .arg(base)
        .arg(new)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists(), "no output folder on errors");
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn bad_inputs_are_clear_errors_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixtures().join("new");
    let nowhere = dir.path().join("nowhere");
    assert_eq!(
        compare_err(&nowhere, &good, &[]),
        format!(
            "error: the base run folder `{}` does not exist\nhint: pass the `--out` folder of an `evalscore run`\n",
            nowhere.display()
        )
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_eq!(
        compare_err(&good, &empty, &[]),
        format!(
            "error: the new run folder `{}` has no scores.parquet\nhint: pass the `--out` folder of a finished `evalscore run`\n",
            empty.display()
        )
    );
    let dup = dir.path().join("dup");
    write_scores(
        &dup,
        vec![
            (
                "id",
                Arc::new(Int64Array::from(vec![1, 2, 3, 2])) as ArrayRef,
            ),
            (
                "exact__is_correct",
                Arc::new(Float64Array::from(vec![1.0, 0.0, 1.0, 1.0])),
            ),
        ],
    );
    assert_eq!(
        compare_err(&good, &dup, &[]),
        format!(
            "error: `{}`: the key `id` is not unique: 2 appears in rows 2 and 4\n\
             hint: pass `--key` with columns that identify each row, e.g. `--key id,sample`\n",
            dup.join("scores.parquet").display()
        )
    );
    assert_eq!(
        compare_err(&good, &good, &["--key", "id,nope"]),
        format!(
            "error: `{}` has no key column `nope`\n\
             hint: pass `--key` with columns both runs kept (`evalscore run --keep`)\n",
            good.join("scores.parquet").display()
        )
    );
    let text_only = dir.path().join("text");
    write_scores(
        &text_only,
        vec![
            ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            (
                "mcqa__completion_validity",
                Arc::new(StringArray::from(vec!["valid", "invalid"])),
            ),
        ],
    );
    assert_eq!(
        compare_err(&good, &text_only, &[]),
        format!(
            "error: `{}` and `{}` have no numeric score column in common\n\
             \x20 Caused by: base score columns: exact__is_correct, f1__score\n\
             \x20 Caused by: new score columns: none\n\
             hint: compare runs of the same task\n",
            good.join("scores.parquet").display(),
            text_only.join("scores.parquet").display()
        )
    );
    assert_eq!(
        compare_err(&good, &good, &["--cluster", "nope"]),
        format!(
            "error: --cluster `nope`: neither `{0}` nor `{0}` has that column\n\
             hint: keep it in the run: `evalscore run --keep id,nope`\n",
            good.join("scores.parquet").display()
        )
    );
}

/// `dir/scores.parquet` with `id`, a score and a column nested `levels` structs deep.
/// Written on a thread with a large stack: the writer recurses once per level. Without the
/// embedded Arrow schema, as other writers make it.
fn deep_scores(dir: &Path, levels: usize) {
    use arrow::array::StructArray;
    use arrow::datatypes::Field;
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("scores.parquet");
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut deep: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
            for _ in 0..levels {
                let field = Arc::new(Field::new("a", deep.data_type().clone(), true));
                deep = Arc::new(StructArray::from(vec![(field, deep)]));
            }
            let batch = RecordBatch::try_from_iter(vec![
                ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
                (
                    "exact__is_correct",
                    Arc::new(Float64Array::from(vec![1.0, 0.0])),
                ),
                ("deep", deep),
            ])
            .unwrap();
            let f = std::fs::File::create(&path).unwrap();
            let options = parquet::arrow::arrow_writer::ArrowWriterOptions::new()
                .with_skip_arrow_metadata(true);
            let mut w =
                parquet::arrow::ArrowWriter::try_new_with_options(f, batch.schema(), options)
                    .unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Run folders travel between teams and CI jobs: a `scores.parquet` whose schema nests
/// thousands of structs deep (which overflowed the decoder's stack: SIGABRT, no message) is
/// refused by the reader's checks, for `compare` and for `report --baseline`.
#[test]
fn a_scores_file_nested_too_deep_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixtures().join("new");
    let deep = dir.path().join("deep");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::copy(good.join("scores.parquet"), run.join("scores.parquet")).unwrap();
    std::fs::write(run.join("run.json"), "{}").unwrap();
    std::fs::write(run.join("metrics.json"), "{}").unwrap();
    for levels in [500, 5000] {
        deep_scores(&deep, levels);
        let want = format!(
            "error: {}: unsupported schema: the schema nests deeper than 64 levels\n\
             hint: flatten the deepest columns, or drop those the task does not use\n",
            deep.join("scores.parquet").display()
        );
        assert_eq!(compare_err(&good, &deep, &[]), want);
        assert_eq!(compare_err(&deep, &good, &[]), want);
        let page = dir.path().join("report.html");
        let o = evalscore()
            .arg("report")
            .arg(&run)
            .arg("--baseline")
            .arg(&deep)
            .arg("-o")
            .arg(&page)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(String::from_utf8(o.stderr).unwrap(), want);
        assert!(!page.exists());
    }
}

/// Scores of +inf or -inf are refused, naming the file, the row and the column; finite
/// scores whose sum or difference overflows (1e308 against -1e308, or a run of 1e308
/// compared with itself) are refused naming the column. Neither panics in the statistics.
#[test]
fn infinite_and_overflowing_scores_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ids = || Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef;
    let scores = |name: &str, v: Vec<f64>| {
        let d = dir.path().join(name);
        write_scores(
            &d,
            vec![("id", ids()), ("x__score", Arc::new(Float64Array::from(v)))],
        );
        d
    };
    let plain = scores("plain", vec![0.5, 0.5, 1.0]);
    let inf = scores("inf", vec![0.5, f64::INFINITY, 1.0]);
    let minus = scores("minus", vec![0.5, 0.5, f64::NEG_INFINITY]);
    let hint = "hint: compare needs finite scores (null and NaN count as missing pairs); fix what wrote this value\n";
    assert_eq!(
        compare_err(&inf, &plain, &[]),
        format!(
            "error: `{}` row 2: the score column `x__score` holds inf\n{hint}",
            inf.join("scores.parquet").display()
        )
    );
    assert_eq!(
        compare_err(&plain, &minus, &["--group-by", "nope"]),
        format!(
            "error: --group-by `nope`: neither `{0}` nor `{1}` has that column\n\
             hint: keep it in the run: `evalscore run --keep id,nope`\n",
            plain.join("scores.parquet").display(),
            minus.join("scores.parquet").display()
        )
    );
    assert_eq!(
        compare_err(&plain, &minus, &[]),
        format!(
            "error: `{}` row 3: the score column `x__score` holds -inf\n{hint}",
            minus.join("scores.parquet").display()
        )
    );
    let overflow = "error: the score column `x__score` holds values too large to compare: their sum or a difference overflows a 64-bit float\n\
                    hint: rescale the column in both runs, e.g. divide it by a power of ten\n";
    let high = scores("high", vec![1e308, -1e308, 0.0]);
    let low = scores("low", vec![-1e308, 1e308, 0.0]);
    assert_eq!(compare_err(&high, &low, &[]), overflow);
    let big = scores("big", vec![1e308, 1e308, 1e308]);
    assert_eq!(compare_err(&big, &big, &[]), overflow);
    // Large values whose sums and differences stay finite are compared.
    let half = scores("half", vec![4e307, -4e307, 0.0]);
    let o = evalscore()
        .arg("compare")
        .arg(&half)
        .arg(&half)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
