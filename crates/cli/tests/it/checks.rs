//! End-to-end runs of the check family on the bundled examples: exact per-row
//! results for the edge-case rows listed in data/examples/README.md.
#![allow(clippy::unwrap_used)]

use crate::common::*;

fn run(task: &str, input: &str) -> (tempfile::TempDir, arrow::array::RecordBatch) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = evalscore()
        .arg("run")
        .arg(examples().join(task))
        .arg("--input")
        .arg(examples().join(input))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let scores = read_parquet(&out.join("scores.parquet"));
    (dir, scores)
}

/// The values of `col` at the rows whose `id` is in `ids`.
fn at<T: Clone>(b: &arrow::array::RecordBatch, values: &[T], ids: &[i64]) -> Vec<T> {
    let all = ints(b, "id");
    ids.iter()
        .map(|id| values[all.iter().position(|x| x == id).unwrap()].clone())
        .collect()
}

fn scores_at(b: &arrow::array::RecordBatch, key: &str, ids: &[i64]) -> Vec<f64> {
    let f: Vec<f64> = floats(b, &format!("{key}__is_correct"))
        .into_iter()
        .map(Option::unwrap)
        .collect();
    at(b, &f, ids)
}

// null, "", "Yes", "yes ", " no", "yes\n", "YES", "sí", "是", answer null
const QA_IDS: [i64; 10] = [3, 17, 42, 99, 100, 150, 199, 200, 299, 58];

#[test]
fn qa_checks_per_row() {
    let (_d, b) = run("checks.yaml", "qa.parquet");
    let cases: [(&str, [f64; 10]); 13] = [
        ("includes_yes", [0., 0., 0., 1., 0., 1., 0., 0., 1., 1.]),
        ("not_includes_yes", [0., 1., 1., 0., 1., 0., 1., 1., 0., 0.]),
        ("match_answer", [0., 0., 1., 1., 1., 1., 1., 0., 0., 0.]),
        ("fuzzy_answer", [0., 0., 0., 1., 1., 1., 0., 0., 0., 0.]),
        ("not_fuzzy_answer", [0., 1., 1., 0., 0., 0., 1., 1., 1., 0.]),
        ("lenient", [0., 0., 1., 1., 1., 1., 1., 0., 0., 0.]),
        ("exact", [0., 0., 0., 0., 0., 0., 0., 0., 0., 0.]),
        // Row 58 has no answer: a null expected output checks only that an output was produced.
        ("pass_fail", [0., 0., 1., 1., 1., 1., 1., 0., 0., 1.]),
        ("regex", [0., 0., 1., 1., 1., 1., 1., 0., 0., 1.]),
        ("regex_answer", [0., 0., 0., 0., 0., 0., 0., 0., 0., 0.]),
        ("valid_json", [0.; 10]),
        ("check_injection", [0., 1., 1., 1., 1., 1., 1., 1., 1., 1.]),
        ("custom", [0.; 10]),
    ];
    for (key, want) in cases {
        assert_eq!(scores_at(&b, key, &QA_IDS), want, "{key}");
    }
    let details = strings(&b, "exact__details");
    assert_eq!(
        at(&b, &details, &[3, 17, 42, 99, 150, 58]),
        [
            Some("Exact match: FAIL. Expected \"yes\", got null.".to_owned()),
            Some("Exact match: FAIL. Expected \"yes\", got \"\".".to_owned()),
            Some("Exact match: FAIL. Expected \"yes\", got \"Yes\".".to_owned()),
            Some("Exact match: FAIL. Expected \"yes\", got \"yes \".".to_owned()),
            Some("Exact match: FAIL. Expected \"yes\", got \"yes\n\".".to_owned()),
            Some("Exact match: FAIL. No expected_output defined for this scenario.".to_owned()),
        ]
    );
    // Every ordinary correct row passes with the seed's text.
    let outputs = strings(&b, "exact__is_correct");
    assert_eq!(outputs.len(), 300);
    let pass = details
        .iter()
        .filter(|d| d.as_deref() == Some("Exact match: PASS."))
        .count();
    let ones = floats(&b, "exact__is_correct")
        .iter()
        .filter(|v| **v == Some(1.0))
        .count();
    assert_eq!(pass, ones);
    assert_eq!(ones, 234);
    let json = strings(&b, "valid_json__details");
    assert_eq!(
        at(&b, &json, &[3, 17, 42]),
        [
            None,
            Some("invalid JSON: EOF while parsing a value at line 1 column 0".to_owned()),
            Some("invalid JSON: expected value at line 1 column 1".to_owned()),
        ]
    );
    let inj = strings(&b, "check_injection__details");
    assert_eq!(
        at(&b, &inj, &[3, 299]),
        [None, Some("no injection found".to_owned())]
    );
    // Written columns: is_correct for all, details for exact, valid_json, check_injection.
    let names = column_names(&b);
    assert!(names.contains(&"exact__details".to_owned()));
    assert!(!names.contains(&"exact__value".to_owned()));
    assert!(!names.contains(&"match_answer__details".to_owned()));
}

// null, "", " C", "B. because", "b", "D) the answer", "É", "日本", "Ä", "🙂 A", "D" (not a
// choice), "A", choices null (77)
const MCQA_IDS: [i64; 13] = [4, 19, 33, 50, 99, 100, 120, 150, 180, 199, 210, 250, 77];

#[test]
fn mcqa_extraction_per_row() {
    let (_d, b) = run("checks_mcqa.yaml", "mcqa.parquet");
    assert_eq!(
        scores_at(&b, "letter", &MCQA_IDS),
        [0., 0., 1., 1., 0., 1., 0., 0., 0., 1., 0., 1., 0.]
    );
    let validity = strings(&b, "letter__completion_validity");
    let v: Vec<String> = at(&b, &validity, &MCQA_IDS)
        .into_iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(
        v,
        [
            "INVALID", "INVALID", "VALID", "VALID", "INVALID", "VALID", "INVALID", "INVALID",
            "INVALID", "VALID", "INVALID", "VALID", "INVALID"
        ]
    );
    let details = strings(&b, "exact_letter__details");
    assert_eq!(
        at(&b, &details, &[33, 99, 4]),
        [
            Some("Exact match: PASS.".to_owned()),
            Some("Exact match: FAIL. Expected \"B\", got \"[invalid]\".".to_owned()),
            Some("Exact match: FAIL. Expected \"A\", got null.".to_owned()),
        ]
    );
    // normalize: [strip, ignore_case] folds the output, the answer and the choices.
    assert_eq!(
        scores_at(&b, "folded", &MCQA_IDS),
        [0., 0., 1., 1., 1., 1., 0., 0., 0., 0., 0., 1., 0.]
    );
}
