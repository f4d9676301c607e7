//! Every figure of the classification metrics and of the mean's interval, compared with the
//! golden files made by scikit-learn, scipy and statsmodels (`scripts/golden/make_golden.py`).
#![allow(clippy::unwrap_used)]

use arrow::array::{Float64Array, StringArray};
use evalscore_metrics::{ClassMode, Figure, GroupKeys, Grouped, MetricState, StateKind};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

fn golden(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/golden")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn close(got: Option<f64>, want: &Value, what: &str) {
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

fn get<'a>(figs: &'a [Figure], stat: &str, label: Option<&str>) -> &'a Figure {
    figs.iter()
        .find(|f| f.stat == stat && f.label.as_deref() == label)
        .unwrap_or_else(|| panic!("no figure {stat} {label:?}"))
}

/// Folds in two chunks to exercise merge on every case.
fn fold(kind: &StateKind, gt: &[Option<String>], pred: &[Option<String>]) -> MetricState {
    let cut = gt.len() / 3;
    let mut whole = MetricState::new(kind);
    for (a, b) in [(0, cut), (cut, gt.len())] {
        let mut part = MetricState::new(kind);
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
    let g = golden("classification.json");
    let mut count = 0;
    for case in g["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "binary")
    {
        let name = case["name"].as_str().unwrap();
        let input = &case["input"];
        let kind = StateKind::Classification {
            mode: ClassMode::Binary,
            positive: Some(input["positive"].as_str().unwrap().to_owned()),
            negative: Some(input["negative"].as_str().unwrap().to_owned()),
            labels: None,
            confidence: 0.95,
        };
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
        let cells: Vec<Value> = state
            .confusion()
            .unwrap()
            .into_iter()
            .map(|(a, p, c)| serde_json::json!({"actual": a, "predicted": p, "count": c}))
            .collect();
        assert_eq!(
            Value::Array(cells),
            exp["confusion_matrix"],
            "{name} confusion"
        );
        // The single-figure metric types agree with the binary report.
        for (mode, stat) in [
            (ClassMode::Precision, "precision"),
            (ClassMode::Recall, "recall"),
            (ClassMode::F1, "f1_score"),
        ] {
            let k = StateKind::Classification {
                mode,
                positive: Some(input["positive"].as_str().unwrap().to_owned()),
                negative: Some(input["negative"].as_str().unwrap().to_owned()),
                labels: None,
                confidence: 0.95,
            };
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
        count += 1;
    }
    assert!(count >= 30, "{count} binary cases");
}

#[test]
fn multiclass_classification_matches_scikit_learn() {
    let g = golden("classification.json");
    let mut count = 0;
    for case in g["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "multiclass")
    {
        let name = case["name"].as_str().unwrap();
        let input = &case["input"];
        let given: Option<Vec<String>> = input["labels"]
            .as_array()
            .map(|l| l.iter().map(|x| x.as_str().unwrap().to_owned()).collect());
        let kind = StateKind::Classification {
            mode: ClassMode::Multiclass,
            positive: None,
            negative: None,
            labels: given,
            confidence: 0.95,
        };
        let state = fold(&kind, &labels(&input["gt"]), &labels(&input["pred"]));
        let figs = state.finish();
        let exp = &case["expected"];
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
        let cells: Vec<Value> = state
            .confusion()
            .unwrap()
            .into_iter()
            .map(|(a, p, c)| serde_json::json!({"actual": a, "predicted": p, "count": c}))
            .collect();
        assert_eq!(
            Value::Array(cells),
            exp["confusion_matrix"],
            "{name} confusion"
        );
        count += 1;
    }
    assert!(count >= 30, "{count} multiclass cases");
}

#[test]
fn mean_intervals_match_scipy_and_statsmodels() {
    let g = golden("intervals.json");
    let mut count = 0;
    for case in g["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let values: Vec<f64> = case["input"]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let confidence = case["input"]["confidence"].as_f64().unwrap();
        let mut s = MetricState::new(&StateKind::Mean { confidence });
        let cut = values.len() / 2;
        for part in [&values[..cut], &values[cut..]] {
            let mut p = MetricState::new(&StateKind::Mean { confidence });
            p.update(&[&Float64Array::from(part.to_vec())]).unwrap();
            s.merge(&p).unwrap();
        }
        let figs = s.finish();
        let exp = &case["expected"];
        assert_eq!(figs[0].n, exp["n"].as_u64().unwrap(), "{name} n");
        close(
            get(&figs, "value", None).value,
            &exp["mean"],
            &format!("{name} mean"),
        );
        close(
            get(&figs, "stderr", None).value,
            &exp["stderr"],
            &format!("{name} stderr"),
        );
        close(
            get(&figs, "ci_low", None).value,
            &exp["ci_low"],
            &format!("{name} ci_low"),
        );
        close(
            get(&figs, "ci_high", None).value,
            &exp["ci_high"],
            &format!("{name} ci_high"),
        );
        let mut sd = MetricState::new(&StateKind::StdDev);
        sd.update(&[&Float64Array::from(values.clone())]).unwrap();
        close(
            sd.finish()[0].value,
            &exp["std_dev"],
            &format!("{name} std_dev"),
        );
        count += 1;
    }
    assert!(count >= 30, "{count} interval cases");
}

#[test]
fn groups_report_each_key_and_skip_null_keys() {
    let kind = StateKind::Mean { confidence: 0.95 };
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
