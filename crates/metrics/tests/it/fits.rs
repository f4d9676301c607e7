//! Fits that must end, and end at the answer: `bradley_terry` against an exact Newton fit
//! (numpy, `scripts/golden/bradley_terry_newton.py`) on graphs an iteration over every pair
//! converges slowly on, and over the documented 1,000 models; `pearson` against scipy
//! (`scripts/golden/pearson.py`) on constant, large, infinite and huge values.
#![allow(clippy::unwrap_used)]

use crate::golden::golden;
use arrow::array::{Array, Float64Array, StringArray};
use evalscore_metrics::types::bradley_terry::{BradleyTerryMetric, BtOptions};
use evalscore_metrics::types::correlation::PearsonMetric;
use evalscore_metrics::types::win_rate::Verdicts;
use evalscore_metrics::{Figure, Kind, MetricState, NoOptions, Setup};
use serde_json::Value;

const SETUP: Setup = Setup { confidence: 0.95 };

/// The battles of cells `(model A, model B, [A's wins, B's wins, ties])` as (verdict, model
/// A, model B) columns.
fn battle_rows(cells: &[(String, String, [u64; 3])]) -> [StringArray; 3] {
    let (mut v, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
    for (ma, mb, counts) in cells {
        for (verdict, n) in ["A", "B", "tie"].into_iter().zip(counts) {
            for _ in 0..*n {
                v.push(verdict);
                a.push(ma.as_str());
                b.push(mb.as_str());
            }
        }
    }
    [v.into(), a.into(), b.into()]
}

fn state(cells: &[(String, String, [u64; 3])], replicates: u32) -> MetricState {
    let options = BtOptions {
        verdicts: Verdicts::default(),
        replicates,
        seed: 0,
    };
    let mut state = MetricState::new(BradleyTerryMetric.state(&options, &SETUP));
    let [v, a, b] = battle_rows(cells);
    let inputs: [&dyn Array; 3] = [&v, &a, &b];
    state.update(&inputs).unwrap();
    state
}

fn ratings(cells: &[(String, String, [u64; 3])], replicates: u32) -> Vec<Figure> {
    let state = state(cells, replicates);
    assert_eq!(state.exclusion_warning(), None);
    state.finish()
}

fn cells(v: &Value) -> Vec<(String, String, [u64; 3])> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: usize| r[k].as_u64().unwrap();
            let m = |k: usize| r[k].as_str().unwrap().to_owned();
            (m(0), m(1), [n(2), n(3), n(4)])
        })
        .collect()
}

/// The figure `stat` of `model`.
fn value(figures: &[Figure], stat: &str, model: &str) -> f64 {
    figures
        .iter()
        .find(|f| f.stat == stat && f.label.as_deref() == Some(model))
        .unwrap()
        .value
        .unwrap()
}

fn rating(figures: &[Figure], model: &str) -> f64 {
    value(figures, "rating", model)
}

#[test]
fn bradley_terry_equals_an_exact_newton_fit_on_hard_graphs() {
    let g = golden("bradley_terry_newton.json");
    let cases = g["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        // The cells' battles, the state merged with itself `doublings` times, then the bridge.
        let mut merged = state(&cells(&c["cells"]), 0);
        for _ in 0..c["doublings"].as_u64().unwrap() {
            let copy = merged.clone();
            merged.merge(&copy).unwrap();
        }
        let bridge = cells(&c["bridge"]);
        if !bridge.is_empty() {
            merged.merge(&state(&bridge, 0)).unwrap();
        }
        assert_eq!(merged.exclusion_warning(), None, "{name}");
        let figures = merged.finish();
        let want = c["ratings"].as_object().unwrap();
        assert_eq!(figures.len(), 3 * want.len(), "{name}");
        for (model, w) in want {
            let (got, w) = (rating(&figures, model), w.as_f64().unwrap());
            assert!(
                (got - w).abs() < 1e-6,
                "{name} {model}: got {got}, want {w}"
            );
        }
    }
}

/// The documented limit, 1,000 models, in a chain: each model beat the next three times and
/// lost once, so each step down the chain is 400 log10(3) Elo points, exactly.
#[test]
fn bradley_terry_over_a_chain_of_1000_models_ends_at_its_answer() {
    let name = |k: usize| format!("m{k:04}");
    let cells: Vec<(String, String, [u64; 3])> = (0..999)
        .map(|k| (name(k), name(k + 1), [3, 1, 0]))
        .collect();
    let start = std::time::Instant::now();
    let figures = ratings(&cells, 0);
    let took = start.elapsed();
    let step = 400.0 * 3f64.log10();
    for k in 0..1000 {
        let want = 1000.0 + step * (499.5 - k as f64);
        let got = rating(&figures, &name(k));
        assert!(
            (got - want).abs() < 1e-6,
            "{}: got {got}, want {want}",
            name(k)
        );
    }
    // Debug builds included; the sweep over every pair took hours here.
    assert!(took.as_secs() < 20, "took {took:?}");
}

/// Replicates over a long chain end too, each refit from the ratings, and give every model
/// an interval.
#[test]
fn bradley_terry_bootstraps_a_chain_of_200_models() {
    let name = |k: usize| format!("m{k:03}");
    let cells: Vec<(String, String, [u64; 3])> = (0..199)
        .map(|k| (name(k), name(k + 1), [30, 10, 4]))
        .collect();
    let figures = ratings(&cells, 20);
    assert_eq!(figures.len(), 600);
    for k in 0..200 {
        let m = name(k);
        assert!(
            value(&figures, "ci_low", &m) < value(&figures, "ci_high", &m),
            "{m}"
        );
    }
    // The middle of the chain, nearest the mean, lies inside its interval.
    let r = rating(&figures, "m100");
    assert!(value(&figures, "ci_low", "m100") < r && r < value(&figures, "ci_high", "m100"));
}

/// A golden file's numbers, written as text ("inf" and "-inf" for the infinities) and parsed
/// correctly rounded.
fn numbers(v: &Value) -> Float64Array {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().parse::<f64>().unwrap())
        .collect::<Vec<f64>>()
        .into()
}

#[test]
fn pearson_equals_scipy_and_the_exact_value() {
    let g = golden("pearson.json");
    let cases = g["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let (x, y) = (numbers(&c["x"]), numbers(&c["y"]));
        // Whole, and in three parts merged in both orders (Chan's update).
        let len = x.len();
        let cuts = [0, len / 3, 2 * len / 3, len];
        let part = |k: usize| {
            let mut s = MetricState::new(PearsonMetric.state(&NoOptions, &SETUP));
            let (from, to) = (cuts[k], cuts[k + 1]);
            s.update(&[&x.slice(from, to - from), &y.slice(from, to - from)])
                .unwrap();
            s
        };
        let mut whole = MetricState::new(PearsonMetric.state(&NoOptions, &SETUP));
        whole.update(&[&x, &y]).unwrap();
        let (mut forward, mut backward) = (part(0), part(2));
        forward.merge(&part(1)).unwrap();
        forward.merge(&part(2)).unwrap();
        backward.merge(&part(1)).unwrap();
        backward.merge(&part(0)).unwrap();
        for (how, state) in [
            ("whole", &whole),
            ("forward", &forward),
            ("backward", &backward),
        ] {
            let f = &state.finish()[0];
            assert_eq!(f.n, c["n"].as_u64().unwrap(), "{name} {how}");
            match (f.value, c["exact"].as_f64(), c["scipy"].as_f64()) {
                (None, None, None) => {}
                (Some(got), Some(exact), Some(scipy)) => {
                    assert!(
                        (got - exact).abs() <= 1e-12,
                        "{name} {how}: {got} vs {exact}"
                    );
                    let within = c["scipy_within"].as_f64().unwrap();
                    assert!(
                        (got - scipy).abs() <= within,
                        "{name} {how}: {got} vs scipy {scipy}"
                    );
                }
                other => panic!("{name} {how}: {other:?}"),
            }
            let warning = (name == "infinite")
                .then(|| "excluded 2 of 50 rows: 2 with an infinite value".to_owned());
            assert_eq!(state.exclusion_warning(), warning, "{name} {how}");
        }
    }
}
