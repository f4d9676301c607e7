//! The Poisson bootstrap of mean-like metrics (`interval: bootstrap`): the same figures however
//! the rows are split, merged and carried as bytes; intervals that cover the true mean at
//! their nominal level on simulated data; its options' errors and its group limit.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray};
use evalscore_metrics::bootstrap::Bootstrap;
use evalscore_metrics::types::mean::MeanMetric;
use evalscore_metrics::types::win_rate::{WinRateMetric, WinRateOptions};
use evalscore_metrics::{Figure, GroupKeys, Grouped, Kind, MetricState, Setup};
use std::sync::Arc;

const SETUP: Setup = Setup { confidence: 0.95 };

fn mean(replicates: u32, seed: u64) -> MetricState {
    let boot = Some(Bootstrap { replicates, seed });
    MetricState::new(MeanMetric.state(&boot, &SETUP))
}

fn figure(figures: &[Figure], stat: &str) -> Option<f64> {
    figures.iter().find(|f| f.stat == stat).unwrap().value
}

/// Folds `values` with their `keys` split at `cuts` into separate states, each carried
/// through its bytes, merged in the given order.
fn split_fold(
    kind: &MetricState,
    values: &ArrayRef,
    keys: &ArrayRef,
    cuts: &[usize],
    order: &[usize],
) -> Vec<Figure> {
    let parts: Vec<Grouped> = cuts
        .windows(2)
        .map(|w| {
            let mut g = Grouped::new(kind);
            let (v, k) = (
                values.slice(w[0], w[1] - w[0]),
                keys.slice(w[0], w[1] - w[0]),
            );
            g.update(&[v.as_ref(), k.as_ref()], None).unwrap();
            Grouped::from_bytes(&g.to_bytes().unwrap()).unwrap()
        })
        .collect();
    let mut total = Grouped::new(kind);
    for &i in order {
        total.merge(&parts[i % parts.len()]).unwrap();
    }
    total.finish().into_iter().map(|(_, f)| f).collect()
}

/// Rows of one of four kinds (`kind`): 0/1 booleans with nulls, scores of 0, 0.5 and 1,
/// other values with NaN and nulls, integers; keys of integers or text.
fn rows(rng: &mut fastrand::Rng, n: usize, kind: usize, text_keys: bool) -> (ArrayRef, ArrayRef) {
    let values: ArrayRef = match kind {
        0 => Arc::new(BooleanArray::from_iter(
            (0..n).map(|_| (rng.u8(..) > 10).then(|| rng.bool())),
        )),
        1 => Arc::new(Float64Array::from_iter(
            (0..n).map(|_| Some([0.0, 0.5, 1.0][rng.usize(0..3)])),
        )),
        2 => Arc::new(Float64Array::from_iter((0..n).map(|_| {
            let x = rng.f64() * 10.0 - 3.0;
            (rng.u8(..) > 20).then_some(if rng.bool() { x } else { f64::NAN })
        }))),
        _ => Arc::new(Int64Array::from_iter_values(
            (0..n).map(|_| rng.i64(-5..50)),
        )),
    };
    let keys: ArrayRef = if text_keys {
        Arc::new(StringArray::from_iter_values(
            (0..n).map(|i| format!("row-{i}")),
        ))
    } else {
        Arc::new(Int64Array::from_iter_values(
            (0..n as i64).map(|i| i * 7 + 3),
        ))
    };
    (values, keys)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// The merge law for the bootstrap: any split of the rows (empty parts included), each
    /// part carried through its bytes, merged in any order, gives the figures of one pass,
    /// bit for bit, for every kind of values and keys.
    #[test]
    fn figures_do_not_depend_on_the_split(
        seed in proptest::prelude::any::<u64>(),
        n in 0usize..400,
        kind in 0usize..4,
        text_keys in proptest::prelude::any::<bool>(),
        replicates in 1u32..120,
        cuts in proptest::collection::vec(0usize..400, 0..6),
    ) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let (values, keys) = rows(&mut rng, n, kind, text_keys);
        let kind_state = mean(replicates, seed);
        let whole = split_fold(&kind_state, &values, &keys, &[0, n], &[0]);
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (n + 1)).collect();
        bounds.extend([0, n]);
        bounds.sort_unstable();
        let mut order: Vec<usize> = (0..bounds.len() - 1).collect();
        rng.shuffle(&mut order);
        let split = split_fold(&kind_state, &values, &keys, &bounds, &order);
        proptest::prop_assert_eq!(split, whole);
    }
}

/// A win rate's bootstrap is the mean's over the verdicts' scores (1, 0.5, 0) with the same
/// keys; a verdict that is none of the labels is left out of both.
#[test]
fn win_rate_bootstraps_its_scores() {
    let verdicts = ["A", "B", "tie", "A", "x", "A", "B", "tie", "A", "A"];
    let scores = [
        Some(1.0),
        Some(0.0),
        Some(0.5),
        Some(1.0),
        None,
        Some(1.0),
        Some(0.0),
        Some(0.5),
        Some(1.0),
        Some(1.0),
    ];
    let n = 300;
    let texts = StringArray::from_iter_values((0..n).map(|i| verdicts[i % 10]));
    let numbers = Float64Array::from_iter((0..n).map(|i| scores[i % 10]));
    let keys = StringArray::from_iter_values((0..n).map(|i| format!("k{i}")));
    let boot = Some(Bootstrap {
        replicates: 400,
        seed: 3,
    });
    let options = WinRateOptions {
        bootstrap: boot,
        ..WinRateOptions::default()
    };
    let mut w = MetricState::new(WinRateMetric.state(&options, &SETUP));
    w.update(&[&texts, &keys]).unwrap();
    let mut m = MetricState::new(MeanMetric.state(&boot, &SETUP));
    m.update(&[&numbers, &keys]).unwrap();
    let (w, m) = (w.finish(), m.finish());
    for stat in ["value", "stderr", "ci_low", "ci_high"] {
        assert_eq!(figure(&w, stat), figure(&m, stat), "{stat}");
        assert!(figure(&w, stat).is_some(), "{stat}");
    }
    assert_eq!(w[0].n, 270);
}

/// Draws from a normal distribution (Box-Muller over the generator).
fn normal(rng: &mut fastrand::Rng, mu: f64, sigma: f64) -> f64 {
    let (u, v) = (1.0 - rng.f64(), rng.f64());
    mu + sigma * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// How often the interval holds `truth` over `trials` simulated data sets of `n` rows.
fn coverage(
    trials: usize,
    n: usize,
    seed: u64,
    draw: impl Fn(&mut fastrand::Rng) -> f64,
    truth: f64,
) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut covered = 0;
    for t in 0..trials {
        let values = Float64Array::from_iter_values((0..n).map(|_| draw(&mut rng)));
        let keys = Int64Array::from_iter_values((0..n as i64).map(|i| i + (t * n) as i64));
        let mut s = mean(400, t as u64);
        s.update(&[&values, &keys]).unwrap();
        let f = s.finish();
        let (lo, hi) = (
            figure(&f, "ci_low").unwrap(),
            figure(&f, "ci_high").unwrap(),
        );
        covered += usize::from(lo <= truth && truth <= hi);
    }
    covered as f64 / trials as f64
}

/// On simulated data the 95% interval covers the true mean 95% of the time, within three
/// binomial standard errors of the trials: skewed 0/1 scores and normal values.
#[test]
fn intervals_cover_at_their_nominal_level() {
    let trials = 600;
    let tolerance = 3.0 * (0.95 * 0.05 / trials as f64).sqrt();
    let scores = coverage(trials, 200, 1, |r| f64::from(u8::from(r.f64() < 0.3)), 0.3);
    assert!((scores - 0.95).abs() <= tolerance, "0/1 coverage {scores}");
    let values = coverage(trials, 150, 2, |r| normal(r, 5.0, 2.0), 5.0);
    assert!(
        (values - 0.95).abs() <= tolerance,
        "normal coverage {values}"
    );
}

/// With many rows the bootstrap's standard error is the analytic one's, within 5%.
#[test]
fn stderr_agrees_with_the_analytic_one() {
    let mut rng = fastrand::Rng::with_seed(5);
    let n = 20_000;
    let values = Float64Array::from_iter_values((0..n).map(|_| normal(&mut rng, 1.0, 3.0)));
    let keys = Int64Array::from_iter_values(0..n as i64);
    let mut b = mean(1000, 9);
    b.update(&[&values, &keys]).unwrap();
    let mut a = MetricState::new(MeanMetric.state(&None, &SETUP));
    a.update(&[&values]).unwrap();
    let (b, a) = (b.finish(), a.finish());
    assert_eq!(figure(&b, "value"), figure(&a, "value"));
    let (sb, sa) = (figure(&b, "stderr").unwrap(), figure(&a, "stderr").unwrap());
    assert!((sb / sa - 1.0).abs() < 0.05, "{sb} vs {sa}");
    let (lo, hi) = (
        figure(&b, "ci_low").unwrap(),
        figure(&b, "ci_high").unwrap(),
    );
    assert!(lo < figure(&a, "value").unwrap() && figure(&a, "value").unwrap() < hi);
}

/// Different seeds give different replicates; no rows give null intervals.
#[test]
fn seeds_and_empty_states() {
    let values = Float64Array::from(vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
    let keys = Int64Array::from(vec![1, 2, 3, 4, 5, 6]);
    let fold = |seed| {
        let mut s = mean(200, seed);
        s.update(&[&values, &keys]).unwrap();
        s.finish()
    };
    assert_ne!(figure(&fold(1), "stderr"), figure(&fold(2), "stderr"));
    assert_eq!(fold(1), fold(1));
    let empty = mean(200, 1).finish();
    for stat in ["value", "stderr", "ci_low", "ci_high"] {
        assert_eq!(figure(&empty, stat), None, "{stat}");
    }
}

/// A counted row needs a key; a null value's row does not.
#[test]
fn null_keys_are_refused() {
    let mut s = mean(10, 0);
    let values = Float64Array::from(vec![Some(1.0), None]);
    s.update(&[&values, &Int64Array::from(vec![Some(1), None])])
        .unwrap();
    let err = s
        .update(&[&values, &Int64Array::from(vec![None, Some(2)])])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a row's key is null, and the bootstrap draws each row's weights from its key; give every row a key (`row_key`)"
    );
}

/// Groups × replicates are bounded: 10,000 replicates allow 1,000 groups.
#[test]
fn groups_are_bounded_by_the_replicates() {
    let kind = mean(10_000, 0);
    let mut g = Grouped::new(&kind);
    let n = 1_001;
    let group: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..n).map(|i| format!("g{i}")),
    ));
    let keys = GroupKeys::compute(&[group]).unwrap();
    let values = Float64Array::from_iter_values((0..n).map(|i| (i % 2) as f64));
    let row_keys = Int64Array::from_iter_values(0..n as i64);
    let err = g.update(&[&values, &row_keys], Some(&keys)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the group-by columns have more than 1000 distinct groups, the limit of a metric with its bootstrap replicates (groups × replicates at most 10000000)"
    );
}
