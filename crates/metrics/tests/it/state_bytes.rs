//! States as bytes: partial states folded apart, sent as bytes and merged in any order give
//! the figures of one pass; equal states give equal bytes; foreign or newer bytes are refused.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, ArrayRef, Float64Array, StringArray};
use evalscore_metrics::bytes::{STATE_FORMAT_VERSION, STATE_MAGIC};
use evalscore_metrics::{
    ClassMode, Confusion, Extremum, Frequency, GroupKeys, Grouped, Mean, MetricState, StdDev,
};
use proptest::prelude::*;
use std::sync::Arc;

fn kinds() -> Vec<MetricState> {
    vec![
        MetricState::new(Mean::new(0.95)),
        MetricState::new(Extremum::min()),
        MetricState::new(Extremum::max()),
        MetricState::new(StdDev::default()),
        MetricState::new(Frequency::default()),
        MetricState::new(Confusion::new(
            ClassMode::Multiclass,
            None,
            None,
            None,
            0.95,
        )),
        MetricState::new(Confusion::new(
            ClassMode::Binary,
            Some("1".into()),
            Some("0".into()),
            None,
            0.9,
        )),
    ]
}

/// Folds rows `lo..hi` of `(values, groups)` into a fresh state of `kind`.
fn fold(
    kind: &MetricState,
    values: &[Option<f64>],
    groups: &[&str],
    lo: usize,
    hi: usize,
) -> Grouped {
    let v: ArrayRef = Arc::new(Float64Array::from(values[lo..hi].to_vec()));
    let text: ArrayRef = arrow::compute::cast(&v, &arrow::datatypes::DataType::Utf8).unwrap();
    let g: ArrayRef = Arc::new(StringArray::from(groups[lo..hi].to_vec()));
    let keys = GroupKeys::compute(&[g]).unwrap();
    let inputs: Vec<&dyn Array> = match kind.get::<Confusion>() {
        Some(_) => vec![text.as_ref(), text.as_ref()],
        None => vec![v.as_ref()],
    };
    let mut s = Grouped::new(kind);
    s.update(&inputs, Some(&keys)).unwrap();
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn states_sent_as_bytes_merge_to_one_pass(
        values in proptest::collection::vec(proptest::option::of(prop_oneof![Just(0.0), Just(1.0), -5.0..5.0f64]), 0..60),
        cut_a in 0usize..61,
        cut_b in 0usize..61,
    ) {
        let n = values.len();
        let groups: Vec<&str> = (0..n).map(|i| ["x", "y", "z"][i % 3]).collect();
        let (a, b) = (cut_a.min(n), cut_b.min(n));
        let (a, b) = (a.min(b), a.max(b));
        for kind in kinds() {
            let whole = fold(&kind, &values, &groups, 0, n);
            let parts = [fold(&kind, &values, &groups, 0, a), fold(&kind, &values, &groups, a, b), fold(&kind, &values, &groups, b, n)];
            let bytes: Vec<Vec<u8>> = parts.iter().map(|p| p.to_bytes().unwrap()).collect();
            // Merged in reverse order, from bytes only.
            let mut merged = Grouped::from_bytes(&bytes[2]).unwrap();
            for b in bytes[..2].iter().rev() {
                merged.merge(&Grouped::from_bytes(b).unwrap()).unwrap();
            }
            prop_assert_eq!(merged.finish().len(), whole.finish().len());
            for ((ka, x), (kb, y)) in merged.finish().iter().zip(whole.finish().iter()) {
                prop_assert_eq!(ka, kb);
                prop_assert_eq!(&x.stat, &y.stat);
                prop_assert_eq!(&x.label, &y.label);
                prop_assert_eq!(x.n, y.n);
                match (x.value, y.value) {
                    (Some(p), Some(q)) => prop_assert!((p - q).abs() <= 1e-12 * (1.0 + p.abs()), "{:?} {} {}", kind, p, q),
                    (p, q) => prop_assert_eq!(p, q),
                }
            }
            // A state survives the round trip exactly.
            prop_assert_eq!(Grouped::from_bytes(&whole.to_bytes().unwrap()).unwrap(), whole);
        }
    }
}

#[test]
fn equal_states_give_equal_bytes_and_the_header_is_documented() {
    let values: Vec<Option<f64>> = (0..200).map(|i| Some(f64::from(i % 7))).collect();
    let groups: Vec<&str> = (0..200).map(|i| ["a", "b", "c", "d"][i % 4]).collect();
    let kind = MetricState::new(Frequency::default());
    let one = fold(&kind, &values, &groups, 0, 200);
    let mut two = fold(&kind, &values, &groups, 100, 200);
    two.merge(&fold(&kind, &values, &groups, 0, 100)).unwrap();
    let (b1, b2) = (one.to_bytes().unwrap(), two.to_bytes().unwrap());
    assert_eq!(b1, b2);
    assert_eq!(&b1[..4], b"ESMS");
    assert_eq!(&b1[..4], STATE_MAGIC);
    assert_eq!(b1[4..6], STATE_FORMAT_VERSION.to_le_bytes());
    assert_eq!(STATE_FORMAT_VERSION, 5);
}

#[test]
fn foreign_newer_damaged_and_mismatched_states_are_refused() {
    let kind = MetricState::new(Mean::new(0.95));
    let s = fold(&kind, &[Some(1.0), Some(0.0)], &["a", "b"], 0, 2);
    let bytes = s.to_bytes().unwrap();
    assert_eq!(
        Grouped::from_bytes(b"PAR1xxxx").unwrap_err().to_string(),
        "not an evalscore metric state (the bytes do not start with `ESMS`)"
    );
    let mut newer = bytes.clone();
    newer[4] = 6;
    assert_eq!(
        Grouped::from_bytes(&newer).unwrap_err().to_string(),
        "a metric state of format version 6; this build reads version 5"
    );
    assert_eq!(
        Grouped::from_bytes(&bytes[..5]).unwrap_err().to_string(),
        "a metric state ends before its version"
    );
    assert!(Grouped::from_bytes(&bytes[..bytes.len() - 3])
        .unwrap_err()
        .to_string()
        .starts_with("a damaged metric state: "));
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        Grouped::from_bytes(&longer).unwrap_err().to_string(),
        "a metric state has 1 bytes after its end"
    );
    // A state of another metric (here another confidence) does not merge.
    let mut other = Grouped::new(&MetricState::new(Mean::new(0.9)));
    let e = other.merge(&s).unwrap_err().to_string();
    assert!(
        e.starts_with("cannot merge a state of Mean { moments: Moments { n: 0,"),
        "{e}"
    );
    assert!(
        e.contains("confidence: 0.95, bootstrap: None } into a state of Mean {"),
        "{e}"
    );
    assert!(e.ends_with("confidence: 0.9, bootstrap: None }"), "{e}");
    // Nor does a state of another type.
    let mut max = Grouped::new(&MetricState::new(Extremum::max()));
    let e = max.merge(&s).unwrap_err().to_string();
    assert!(e.starts_with("cannot merge a state of Mean {"), "{e}");
    assert!(
        e.ends_with(
            "into a state of Extremum { largest: true, n: 0, value: None, nulls: 0, nan: 0 }"
        ),
        "{e}"
    );
}
