//! The merge law: folding the input in one pass gives the same figures as folding any split
//! of it (empty chunks included) into separate states and merging them, in any order.
#![allow(clippy::unwrap_used)]

use arrow::array::{Float64Array, StringArray};
use evalscore_metrics::{
    ClassMode, Confusion, Extremum, Figure, Frequency, Mean, MetricState, StdDev,
};
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

fn bounds(len: usize, cuts: &[usize]) -> Vec<usize> {
    let mut b: Vec<usize> = cuts.iter().map(|c| c % (len + 1)).collect();
    b.push(0);
    b.push(len);
    b.sort_unstable();
    b
}

fn fold_numbers(
    kind: &MetricState,
    values: &[Option<f64>],
    cuts: &[usize],
    reverse: bool,
) -> Vec<Figure> {
    let mut parts: Vec<MetricState> = bounds(values.len(), cuts)
        .windows(2)
        .map(|w| {
            let mut s = kind.clone();
            s.update(&[&Float64Array::from(values[w[0]..w[1]].to_vec())])
                .unwrap();
            s
        })
        .collect();
    if reverse {
        parts.reverse();
    }
    let mut total = kind.clone();
    for p in &parts {
        total.merge(p).unwrap();
    }
    total.finish()
}

fn classification(mode: ClassMode) -> MetricState {
    MetricState::new(Confusion::new(
        mode,
        Some("a".into()),
        if mode == ClassMode::Multiclass {
            None
        } else {
            Some("b".into())
        },
        None,
        0.95,
    ))
}

proptest! {
    #[test]
    fn numeric_states_merge(
        values in prop::collection::vec(prop::option::weighted(0.9, -1e6f64..1e6), 0..200),
        cuts in prop::collection::vec(0usize..1000, 0..6),
        reverse: bool,
    ) {
        for kind in [MetricState::new(Mean::new(0.95)), MetricState::new(Extremum::min()), MetricState::new(Extremum::max()), MetricState::new(StdDev::default())] {
            let whole = fold_numbers(&kind, &values, &[], false);
            let split = fold_numbers(&kind, &values, &cuts, reverse);
            prop_assert!(close(&whole, &split), "{kind:?}: {whole:?} vs {split:?}");
        }
    }

    #[test]
    fn zero_one_means_are_exactly_split_independent(
        values in prop::collection::vec(prop::option::weighted(0.9, prop::bool::ANY.prop_map(f64::from)), 0..300),
        cuts in prop::collection::vec(0usize..1000, 0..6),
    ) {
        let kind = MetricState::new(Mean::new(0.95));
        prop_assert_eq!(fold_numbers(&kind, &values, &[], false), fold_numbers(&kind, &values, &cuts, true));
    }

    #[test]
    fn frequency_and_classification_merge(
        gt in prop::collection::vec(prop::option::weighted(0.8, "[abc]{0,1}"), 0..200),
        pred in prop::collection::vec(prop::option::weighted(0.8, "[abc]{0,1}"), 200),
        cuts in prop::collection::vec(0usize..1000, 0..6),
    ) {
        let pred = &pred[..gt.len()];
        let kinds = [
            MetricState::new(Frequency::default()),
            classification(ClassMode::Binary),
            classification(ClassMode::Multiclass),
            classification(ClassMode::Precision),
            classification(ClassMode::Recall),
            classification(ClassMode::F1),
        ];
        for kind in kinds {
            let fold = |cuts: &[usize]| {
                let mut total = kind.clone();
                for w in bounds(gt.len(), cuts).windows(2) {
                    let mut s = kind.clone();
                    let g = StringArray::from(gt[w[0]..w[1]].to_vec());
                    let p = StringArray::from(pred[w[0]..w[1]].to_vec());
                    s.update(&[&g, &p]).unwrap();
                    total.merge(&s).unwrap();
                }
                (total.finish(), total.confusion())
            };
            prop_assert_eq!(fold(&[]), fold(&cuts));
        }
    }
}

#[test]
fn exact_figures() {
    let v = Float64Array::from(vec![Some(1.0), None, Some(0.0), Some(1.0), Some(1.0)]);
    let fig = |k: MetricState| {
        let mut s = k.clone();
        s.update(&[&v]).unwrap();
        s.finish()
    };
    let mean = fig(MetricState::new(Mean::new(0.95)));
    assert_eq!(mean[0], Figure::new("value", None, Some(0.75), 4));
    assert_eq!(mean[1], Figure::new("stderr", None, Some(0.25), 4));
    assert_eq!(
        (mean[2].stat.as_str(), mean[3].stat.as_str()),
        ("ci_low", "ci_high")
    );
    assert_eq!(
        fig(MetricState::new(Extremum::min())),
        vec![Figure::new("value", None, Some(0.0), 4)]
    );
    assert_eq!(
        fig(MetricState::new(Extremum::max())),
        vec![Figure::new("value", None, Some(1.0), 4)]
    );
    assert_eq!(
        fig(MetricState::new(StdDev::default())),
        vec![Figure::new("value", None, Some(0.5), 4)]
    );
}

#[test]
fn empty_states_report_null_never_nan() {
    for k in [
        MetricState::new(Extremum::min()),
        MetricState::new(Extremum::max()),
        MetricState::new(StdDev::default()),
    ] {
        let mut s = k.clone();
        s.update(&[&Float64Array::from(Vec::<f64>::new())]).unwrap();
        assert_eq!(s.finish(), vec![Figure::new("value", None, None, 0)]);
    }
    let mut s = MetricState::new(Mean::new(0.95));
    s.update(&[&Float64Array::from(Vec::<f64>::new())]).unwrap();
    assert_eq!(s.finish().len(), 4);
    assert!(s.finish().iter().all(|f| f.value.is_none() && f.n == 0));
    let mut s = MetricState::new(StdDev::default());
    s.update(&[&Float64Array::from(vec![3.0])]).unwrap();
    assert_eq!(s.finish(), vec![Figure::new("value", None, None, 1)]);
    assert!(MetricState::new(Frequency::default()).finish().is_empty());
    let c = classification(ClassMode::Binary).finish();
    assert!(c
        .iter()
        .filter(|f| f.stat != "excluded"
            && !["tp", "fp", "tn", "fn", "support"].contains(&f.stat.as_str()))
        .all(|f| f.value.is_none()));
}

#[test]
fn frequency_counts_labels_in_order_with_null_last() {
    let mut s = MetricState::new(Frequency::default());
    s.update(&[&StringArray::from(vec![
        Some("VALID"),
        None,
        Some("INVALID"),
        Some("VALID"),
    ])])
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
    let mut a = MetricState::new(Mean::new(0.95));
    let b = MetricState::new(Extremum::max());
    assert_eq!(
        a.merge(&b).unwrap_err().to_string(),
        "cannot merge max state into mean state"
    );
}

/// A dictionary-encoded field counts the same as its plain strings, whatever the key type
/// and whether keys or values are null: Int8 keys with and without null keys, Int16 keys, a
/// null dictionary value, and unused dictionary values.
#[test]
fn frequency_of_dictionaries_equals_frequency_of_their_strings() {
    use arrow::array::{DictionaryArray, Int16Array, Int8Array};
    use arrow::datatypes::{Int16Type, Int8Type};
    use std::sync::Arc;
    let words = Arc::new(StringArray::from(vec![
        Some("INVALID"),
        Some("VALID"),
        None,
        Some("unused"),
    ]));
    let keys: Vec<Option<i8>> = (0..300)
        .map(|i| match i % 7 {
            0 | 3 => Some(0),
            6 => Some(2),
            _ => Some(1),
        })
        .collect();
    let plain = |keys: &[Option<i8>]| -> Vec<Figure> {
        let strings: Vec<Option<&str>> = keys
            .iter()
            .map(|k| k.and_then(|k| [Some("INVALID"), Some("VALID"), None][k as usize]))
            .collect();
        let mut s = MetricState::new(Frequency::default());
        s.update(&[&StringArray::from(strings)]).unwrap();
        s.finish()
    };
    let count = |a: &dyn arrow::array::Array| -> Vec<Figure> {
        let mut s = MetricState::new(Frequency::default());
        s.update(&[a]).unwrap();
        s.finish()
    };
    // Int8 keys, no null keys.
    let d8 =
        DictionaryArray::<Int8Type>::try_new(Int8Array::from(keys.clone()), words.clone()).unwrap();
    assert_eq!(count(&d8), plain(&keys));
    // Int8 keys with null keys, and Int16 keys.
    let mut with_nulls = keys.clone();
    with_nulls[5] = None;
    with_nulls[200] = None;
    let d8n =
        DictionaryArray::<Int8Type>::try_new(Int8Array::from(with_nulls.clone()), words.clone())
            .unwrap();
    assert_eq!(count(&d8n), plain(&with_nulls));
    let k16: Vec<Option<i16>> = keys.iter().map(|k| k.map(i16::from)).collect();
    let d16 = DictionaryArray::<Int16Type>::try_new(Int16Array::from(k16), words).unwrap();
    assert_eq!(count(&d16), plain(&keys));
    // The expected figures themselves: 300 rows, keys 0 at i % 7 in {0, 3}, null value at 6.
    let invalid = (0..300).filter(|i| i % 7 == 0 || i % 7 == 3).count() as f64;
    assert_eq!(
        plain(&keys)[0],
        Figure::new("count", Some("INVALID".into()), Some(invalid), 300)
    );
}
