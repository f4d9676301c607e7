//! The merge law: folding the input in one pass gives the same figures as folding any split
//! of it (empty chunks included) into separate states and merging them, in any order.
#![allow(clippy::unwrap_used)]

use arrow::array::{Float64Array, StringArray};
use evalscore_metrics::{Figure, MetricState, StateKind};
use proptest::prelude::*;

fn close(a: &[Figure], b: &[Figure]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.stat == y.stat
                && x.label == y.label
                && x.n == y.n
                && match (x.value, y.value) {
                    (None, None) => true,
                    (Some(p), Some(q)) => (p - q).abs() <= 1e-9 * (1.0 + p.abs().max(q.abs())),
                    _ => false,
                }
        })
}

fn fold_numbers(
    kind: StateKind,
    values: &[Option<f64>],
    cuts: &[usize],
    reverse: bool,
) -> Vec<Figure> {
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (values.len() + 1)).collect();
    bounds.push(0);
    bounds.push(values.len());
    bounds.sort_unstable();
    let mut parts: Vec<MetricState> = bounds
        .windows(2)
        .map(|w| {
            let mut s = MetricState::new(kind);
            s.update(&Float64Array::from(values[w[0]..w[1]].to_vec()))
                .unwrap();
            s
        })
        .collect();
    if reverse {
        parts.reverse();
    }
    let mut total = MetricState::new(kind);
    for p in &parts {
        total.merge(p).unwrap();
    }
    total.finish()
}

proptest! {
    #[test]
    fn numeric_states_merge(
        values in prop::collection::vec(prop::option::weighted(0.9, -1e6f64..1e6), 0..200),
        cuts in prop::collection::vec(0usize..1000, 0..6),
        reverse: bool,
    ) {
        for kind in [StateKind::Mean, StateKind::Min, StateKind::Max, StateKind::StdDev] {
            let whole = fold_numbers(kind, &values, &[], false);
            let split = fold_numbers(kind, &values, &cuts, reverse);
            prop_assert!(close(&whole, &split), "{kind:?}: {whole:?} vs {split:?}");
        }
    }

    #[test]
    fn frequency_merges(
        values in prop::collection::vec(prop::option::weighted(0.8, "[abc]{0,2}"), 0..200),
        cut in 0usize..200,
    ) {
        let cut = cut.min(values.len());
        let mut whole = MetricState::new(StateKind::Frequency);
        whole.update(&StringArray::from(values.clone())).unwrap();
        let mut a = MetricState::new(StateKind::Frequency);
        a.update(&StringArray::from(values[..cut].to_vec())).unwrap();
        let mut b = MetricState::new(StateKind::Frequency);
        b.update(&StringArray::from(values[cut..].to_vec())).unwrap();
        b.merge(&a).unwrap();
        prop_assert_eq!(whole.finish(), b.finish());
    }
}

#[test]
fn exact_figures() {
    let v = Float64Array::from(vec![Some(1.0), None, Some(0.0), Some(1.0), Some(1.0)]);
    let fig = |k| {
        let mut s = MetricState::new(k);
        s.update(&v).unwrap();
        s.finish()
    };
    assert_eq!(
        fig(StateKind::Mean),
        vec![Figure::new("value", None, Some(0.75), 4)]
    );
    assert_eq!(
        fig(StateKind::Min),
        vec![Figure::new("value", None, Some(0.0), 4)]
    );
    assert_eq!(
        fig(StateKind::Max),
        vec![Figure::new("value", None, Some(1.0), 4)]
    );
    assert_eq!(
        fig(StateKind::StdDev),
        vec![Figure::new("value", None, Some(0.5), 4)]
    );
}

#[test]
fn empty_states_report_null_never_nan() {
    for k in [
        StateKind::Mean,
        StateKind::Min,
        StateKind::Max,
        StateKind::StdDev,
    ] {
        let mut s = MetricState::new(k);
        s.update(&Float64Array::from(Vec::<f64>::new())).unwrap();
        assert_eq!(s.finish(), vec![Figure::new("value", None, None, 0)]);
    }
    let mut s = MetricState::new(StateKind::StdDev);
    s.update(&Float64Array::from(vec![3.0])).unwrap();
    assert_eq!(s.finish(), vec![Figure::new("value", None, None, 1)]);
    assert!(MetricState::new(StateKind::Frequency).finish().is_empty());
}

#[test]
fn frequency_counts_labels_in_order_with_null_last() {
    let mut s = MetricState::new(StateKind::Frequency);
    s.update(&StringArray::from(vec![
        Some("VALID"),
        None,
        Some("INVALID"),
        Some("VALID"),
    ]))
    .unwrap();
    assert_eq!(
        s.finish(),
        vec![
            Figure::new("count", Some("INVALID".into()), Some(1.0), 4),
            Figure::new("proportion", Some("INVALID".into()), Some(0.25), 4),
            Figure::new("count", Some("VALID".into()), Some(2.0), 4),
            Figure::new("proportion", Some("VALID".into()), Some(0.5), 4),
            Figure::new("count", None, Some(1.0), 4),
            Figure::new("proportion", None, Some(0.25), 4),
        ]
    );
}

#[test]
fn merging_different_kinds_is_an_error() {
    let mut a = MetricState::new(StateKind::Mean);
    let b = MetricState::new(StateKind::Max);
    assert_eq!(
        a.merge(&b).unwrap_err().to_string(),
        "cannot merge max state into mean state"
    );
}
