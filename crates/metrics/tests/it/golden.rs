//! Every figure of the classification metrics and of the mean's interval, compared with the
//! golden files made by scikit-learn, scipy and statsmodels (`scripts/golden/make_golden.py`).
#![allow(clippy::unwrap_used)]

use arrow::array::{Float64Array, StringArray};
use evalscore_metrics::values;
use evalscore_metrics::{
    ClassMode, Confusion, Figure, GroupKeys, Grouped, Mean, MetricState, StdDev,
};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// A golden file of data/golden, parsed.
pub(crate) fn golden(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/golden")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// `got` equals `want` to 1e-12 (relative), or both are null.
pub(crate) fn close(got: Option<f64>, want: &Value, what: &str) {
    match (got, want.as_f64()) {
        (None, None) => assert!(want.is_null(), "{what}: got null, want {want}"),
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
            "{what}: got {g:e}, want {w:e}"
        ),
        (g, _) => panic!("{what}: got {g:?}, want {want}"),
    }
}

fn labels(v: &Value) -> Vec<Option<String>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// The golden classification cases of `kind` (`binary`, `multiclass`), at least 30.
fn classification_cases(kind: &str) -> Vec<Value> {
    let g = golden("classification.json");
    let all = g["cases"].as_array().unwrap();
    let cases: Vec<Value> = all.iter().filter(|c| c["kind"] == kind).cloned().collect();
    assert!(cases.len() >= 30, "{} {kind} cases", cases.len());
    cases
}

/// A classification state of `mode` at 95%.
fn classification(
    mode: ClassMode,
    positive: Option<String>,
    negative: Option<String>,
    labels: Option<Vec<String>>,
) -> MetricState {
    MetricState::new(Confusion::new(mode, positive, negative, labels, 0.95))
}

/// Checks the confusion cells of `state` against the golden `want`.
fn assert_confusion(state: &MetricState, want: &Value, name: &str) {
    let cells: Vec<Value> = state
        .confusion()
        .unwrap()
        .into_iter()
        .map(|(a, p, c)| serde_json::json!({"actual": a, "predicted": p, "count": c}))
        .collect();
    // scikit-learn's labels as evalscore writes them (`true` is the label `1`)
    let label = |v: &Value| Value::from(values::label(v.as_str().unwrap()).into_owned());
    let want: Vec<Value> = want
        .as_array()
        .unwrap()
        .iter()
        .map(|c| serde_json::json!({"actual": label(&c["actual"]), "predicted": label(&c["predicted"]), "count": c["count"]}))
        .collect();
    assert_eq!(cells, want, "{name} confusion");
}

fn get<'a>(figs: &'a [Figure], stat: &str, label: Option<&str>) -> &'a Figure {
    figs.iter()
        .find(|f| f.stat == stat && f.label.as_deref() == label)
        .unwrap_or_else(|| panic!("no figure {stat} {label:?}"))
}

/// Folds in two chunks to exercise merge on every case.
fn fold(kind: &MetricState, gt: &[Option<String>], pred: &[Option<String>]) -> MetricState {
    let cut = gt.len() / 3;
    let mut whole = kind.clone();
    for (a, b) in [(0, cut), (cut, gt.len())] {
        let mut part = kind.clone();
        part.update(&[
            &StringArray::from(gt[a..b].to_vec()),
            &StringArray::from(pred[a..b].to_vec()),
        ])
        .unwrap();
        whole.merge(&part).unwrap();
    }
    whole
}

#[test]
fn binary_classification_matches_scikit_learn() {
    for case in &classification_cases("binary") {
        let name = case["name"].as_str().unwrap();
        let input = &case["input"];
        let answer = |key: &str| Some(input[key].as_str().unwrap().to_owned());
        let kind = classification(
            ClassMode::Binary,
            answer("positive"),
            answer("negative"),
            None,
        );
        let state = fold(&kind, &labels(&input["gt"]), &labels(&input["pred"]));
        let figs = state.finish();
        let exp = &case["expected"];
        for stat in [
            "accuracy",
            "precision",
            "recall",
            "f1_score",
            "tp",
            "fp",
            "tn",
            "fn",
            "support",
            "excluded",
            "accuracy_ci_low",
            "accuracy_ci_high",
            "precision_ci_low",
            "precision_ci_high",
            "recall_ci_low",
            "recall_ci_high",
        ] {
            close(
                get(&figs, stat, None).value,
                &exp[stat],
                &format!("{name} {stat}"),
            );
        }
        assert_confusion(&state, &exp["confusion_matrix"], name);
        // The single-figure metric types agree with the binary report.
        for (mode, stat) in [
            (ClassMode::Precision, "precision"),
            (ClassMode::Recall, "recall"),
            (ClassMode::F1, "f1_score"),
        ] {
            let k = MetricState::new(Confusion::new(
                mode,
                Some(input["positive"].as_str().unwrap().to_owned()),
                Some(input["negative"].as_str().unwrap().to_owned()),
                None,
                0.95,
            ));
            let f = fold(&k, &labels(&input["gt"]), &labels(&input["pred"])).finish();
            close(
                get(&f, "value", None).value,
                &exp[stat],
                &format!("{name} {stat} metric"),
            );
            if mode != ClassMode::F1 {
                close(
                    get(&f, "ci_low", None).value,
                    &exp[format!("{stat}_ci_low")],
                    &format!("{name} {stat} ci_low"),
                );
            }
        }
    }
}

#[test]
fn multiclass_classification_matches_scikit_learn() {
    for case in &classification_cases("multiclass") {
        let name = case["name"].as_str().unwrap();
        let input = &case["input"];
        let given: Option<Vec<String>> = input["labels"]
            .as_array()
            .map(|l| l.iter().map(|x| x.as_str().unwrap().to_owned()).collect());
        let exp = &case["expected"];
        let kind = classification(ClassMode::Multiclass, None, None, given);
        let state = fold(&kind, &labels(&input["gt"]), &labels(&input["pred"]));
        let figs = state.finish();
        for stat in [
            "accuracy",
            "accuracy_ci_low",
            "accuracy_ci_high",
            "support",
            "excluded",
        ] {
            close(
                get(&figs, stat, None).value,
                &exp[stat],
                &format!("{name} {stat}"),
            );
        }
        for avg in ["macro", "micro", "weighted"] {
            for m in ["precision", "recall", "f1_score"] {
                let stat = format!("{avg}_{m}");
                close(
                    get(&figs, &stat, None).value,
                    &exp[&stat],
                    &format!("{name} {stat}"),
                );
            }
        }
        let per_class = exp["per_class"].as_array().unwrap();
        let reported: Vec<&str> = figs
            .iter()
            .filter(|f| f.stat == "support" && f.label.is_some())
            .map(|f| f.label.as_deref().unwrap())
            .collect();
        let want: Vec<&str> = per_class
            .iter()
            .map(|c| c["class"].as_str().unwrap())
            .collect();
        assert_eq!(reported, want, "{name} classes");
        for c in per_class {
            let class = c["class"].as_str().unwrap();
            for m in ["precision", "recall", "f1_score", "support"] {
                close(
                    get(&figs, m, Some(class)).value,
                    &c[m],
                    &format!("{name} {class} {m}"),
                );
            }
        }
        assert_confusion(&state, &exp["confusion_matrix"], name);
    }
}

#[test]
fn mean_intervals_match_scipy_and_statsmodels() {
    let g = golden("intervals.json");
    let all = g["cases"].as_array().unwrap();
    assert!(all.len() >= 30, "{} interval cases", all.len());
    for case in all {
        let name = case["name"].as_str().unwrap();
        let values: Vec<f64> = case["input"]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let confidence = case["input"]["confidence"].as_f64().unwrap();
        let mut s = MetricState::new(Mean::new(confidence));
        let cut = values.len() / 2;
        for part in [&values[..cut], &values[cut..]] {
            let mut p = MetricState::new(Mean::new(confidence));
            p.update(&[&Float64Array::from(part.to_vec())]).unwrap();
            s.merge(&p).unwrap();
        }
        let figs = s.finish();
        let exp = &case["expected"];
        assert_eq!(figs[0].n, exp["n"].as_u64().unwrap(), "{name} n");
        for (stat, key) in [
            ("value", "mean"),
            ("stderr", "stderr"),
            ("ci_low", "ci_low"),
            ("ci_high", "ci_high"),
        ] {
            let what = format!("{name} {key}");
            close(get(&figs, stat, None).value, &exp[key], &what);
        }
        let mut sd = MetricState::new(StdDev::default());
        sd.update(&[&Float64Array::from(values.clone())]).unwrap();
        close(
            sd.finish()[0].value,
            &exp["std_dev"],
            &format!("{name} std_dev"),
        );
    }
}

#[test]
fn groups_report_each_key_and_skip_null_keys() {
    let kind = MetricState::new(Mean::new(0.95));
    let subject: arrow::array::ArrayRef = Arc::new(StringArray::from(vec![
        Some("math"),
        Some("bio"),
        None,
        Some("math"),
    ]));
    let keys = GroupKeys::compute(&[subject]).unwrap();
    let mut g = Grouped::new(&kind);
    g.update(
        &[&Float64Array::from(vec![1.0, 0.0, 1.0, 0.0])],
        Some(&keys),
    )
    .unwrap();
    let figs: Vec<(Option<Vec<String>>, f64, u64)> = g
        .finish()
        .into_iter()
        .filter(|(_, f)| f.stat == "value")
        .map(|(k, f)| (k, f.value.unwrap(), f.n))
        .collect();
    assert_eq!(
        figs,
        vec![
            (None, 0.5, 4),
            (Some(vec!["bio".to_owned()]), 0.0, 1),
            (Some(vec!["math".to_owned()]), 0.5, 2),
        ]
    );
}
