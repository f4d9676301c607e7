//! Metric states are bounded by documented limits, enforced with an error, not by the input.
#![allow(clippy::unwrap_used)]

use arrow::array::{ArrayRef, StringArray};
use evalscore_metrics::{
    ClassMode, Confusion, Frequency, GroupKeys, Grouped, Mean, MetricState, MAX_CONFUSION_CELLS,
    MAX_DISTINCT_VALUES, MAX_GROUPS,
};
use std::sync::Arc;

fn distinct(n: usize) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(
        (0..n).map(|i| format!("v{i}")),
    ))
}

#[test]
fn frequency_distinct_values_are_bounded() {
    let mut f = MetricState::new(Frequency::default());
    f.update(&[distinct(MAX_DISTINCT_VALUES).as_ref()]).unwrap();
    let err = f
        .update(&[distinct(MAX_DISTINCT_VALUES + 1).as_ref()])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the field has more than 100000 distinct values, the limit of a frequency metric"
    );
    // Merging two states under the limit can exceed it too.
    let mut a = MetricState::new(Frequency::default());
    a.update(&[distinct(60_000).as_ref()]).unwrap();
    let mut b = MetricState::new(Frequency::default());
    let other: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..60_000).map(|i| format!("w{i}")),
    ));
    b.update(&[other.as_ref()]).unwrap();
    assert!(a.merge(&b).is_err());
}

#[test]
fn groups_are_bounded() {
    let mut g = Grouped::new(&MetricState::new(Mean::new(0.95)));
    let n = MAX_GROUPS + 1;
    let keys = GroupKeys::compute(&[distinct(n)]).unwrap();
    let scores: ArrayRef = Arc::new(arrow::array::Float64Array::from(vec![1.0; n]));
    let err = g.update(&[scores.as_ref()], Some(&keys)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the group-by columns have more than 100000 distinct groups, the limit of a metric"
    );
}

#[test]
fn confusion_pairs_are_bounded() {
    let mut c = MetricState::new(Confusion::new(
        ClassMode::Multiclass,
        None,
        None,
        None,
        0.95,
    ));
    let n = MAX_CONFUSION_CELLS + 1;
    let gt = distinct(n);
    let pred: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|_| "x")));
    let err = c.update(&[gt.as_ref(), pred.as_ref()]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the confusion matrix has more than 100000 (actual, predicted) pairs, its limit"
    );
}
