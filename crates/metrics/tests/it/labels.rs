//! One text per value: every metric that reads a field as labels writes it the same way
//! ([`evalscore_metrics::values`]), the two sides of a classification metric and its options
//! compare by value, and a metric that excludes most rows says which labels it saw.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray};
use evalscore_metrics::bytes::STATE_FORMAT_VERSION;
use evalscore_metrics::values::{label, label_array, MAX_SEEN_LABELS};
use evalscore_metrics::{ClassMode, Confusion, Frequency, GroupKeys, Grouped, MetricState};
use std::sync::Arc;

fn kind(
    mode: ClassMode,
    positive: Option<&str>,
    negative: Option<&str>,
    labels: Option<&[&str]>,
) -> MetricState {
    MetricState::new(Confusion::new(
        mode,
        positive.map(str::to_owned),
        negative.map(str::to_owned),
        labels.map(|l| l.iter().map(|s| (*s).to_owned()).collect()),
        0.95,
    ))
}

fn folded(kind: &MetricState, gt: &dyn Array, pred: &dyn Array) -> Grouped {
    let mut s = Grouped::new(kind);
    s.update(&[gt, pred], None).unwrap();
    s
}

/// A multiclass state over all labels.
fn multiclass(gt: &dyn Array, pred: &dyn Array) -> Grouped {
    folded(&kind(ClassMode::Multiclass, None, None, None), gt, pred)
}

/// A binary state with the answers `yes` and `no`.
fn yes_no(gt: &dyn Array, pred: &dyn Array) -> Grouped {
    folded(
        &kind(ClassMode::Binary, Some("yes"), Some("no"), None),
        gt,
        pred,
    )
}

/// `stat` (label `None`) of the overall figures.
fn stat(s: &Grouped, name: &str) -> Option<f64> {
    s.finish()
        .into_iter()
        .find(|(k, f)| k.is_none() && f.stat == name && f.label.is_none())
        .unwrap()
        .1
        .value
}

fn cells(s: &Grouped) -> Vec<(String, String, u64)> {
    s.overall.confusion().unwrap()
}

fn cell(actual: &str, predicted: &str, count: u64) -> (String, String, u64) {
    (actual.to_owned(), predicted.to_owned(), count)
}

fn texts(a: &ArrayRef) -> Vec<Option<String>> {
    let t = arrow::compute::cast(a, &arrow::datatypes::DataType::Utf8).unwrap();
    t.as_any()
        .downcast_ref::<StringArray>()
        .unwrap()
        .iter()
        .map(|v| v.map(str::to_owned))
        .collect()
}

fn pass_mask() -> BooleanArray {
    BooleanArray::from(vec![Some(true), Some(false), Some(true), None, Some(true)])
}

/// Each column type's labels, as frequency, group_by and classification read them.
#[test]
fn each_type_has_one_text() {
    let cases: Vec<(ArrayRef, Vec<Option<&str>>)> = vec![
        (
            Arc::new(pass_mask()),
            vec![Some("1"), Some("0"), Some("1"), None, Some("1")],
        ),
        (
            Arc::new(Float64Array::from(vec![
                Some(1.0),
                Some(0.5),
                None,
                Some(1e20),
                Some(f64::NAN),
                Some(1e300),
            ])),
            vec![
                Some("1"),
                Some("0.5"),
                None,
                Some("100000000000000000000"),
                None,
                Some("1e300"),
            ],
        ),
        (
            Arc::new(Int64Array::from(vec![Some(3), Some(-1), None])),
            vec![Some("3"), Some("-1"), None],
        ),
        (
            Arc::new(StringArray::from(vec![
                Some("1"),
                Some("true"),
                None,
                Some("01"),
                Some(" 2.50"),
            ])),
            vec![Some("1"), Some("1"), None, Some("01"), Some("2.5")],
        ),
    ];
    for (a, want) in cases {
        let got = texts(&label_array(a.as_ref()).unwrap());
        let want: Vec<Option<String>> = want.into_iter().map(|w| w.map(str::to_owned)).collect();
        assert_eq!(got, want, "{}", a.data_type());
        // frequency counts the same texts
        let mut f = MetricState::new(Frequency::default());
        f.update(&[a.as_ref()]).unwrap();
        let mut counted: Vec<Option<String>> = f
            .finish()
            .into_iter()
            .filter(|x| x.stat == "count")
            .map(|x| x.label)
            .collect();
        let mut distinct = want.clone();
        distinct.sort_by(|a, b| match (a, b) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, _) => std::cmp::Ordering::Greater,
            (_, None) => std::cmp::Ordering::Less,
            (a, b) => a.cmp(b),
        });
        distinct.dedup();
        counted.dedup();
        assert_eq!(counted, distinct, "{}", a.data_type());
    }
    // group_by keys are identities in their own type's text, not values
    let keys = GroupKeys::compute(&[Arc::new(pass_mask()) as ArrayRef]).unwrap();
    assert_eq!(keys.keys, [vec!["1.0".to_owned()], vec!["0.0".to_owned()]]);
    assert_eq!(keys.rows, [vec![0, 2, 4], vec![1]]);
}

/// The repro of the bug: a pass mask compared with itself has accuracy 1 and two classes.
#[test]
fn a_field_compared_with_itself_has_accuracy_one() {
    let mask = pass_mask();
    let s = multiclass(&mask, &mask);
    assert_eq!(stat(&s, "accuracy"), Some(1.0));
    assert_eq!(stat(&s, "support"), Some(4.0));
    assert_eq!(stat(&s, "excluded"), Some(1.0));
    assert_eq!(cells(&s), [cell("0", "0", 1), cell("1", "1", 3)]);
    let classes: Vec<Option<String>> = s
        .finish()
        .into_iter()
        .filter(|(_, f)| f.stat == "support" && f.label.is_some())
        .map(|(_, f)| f.label)
        .collect();
    assert_eq!(classes, [Some("0".to_owned()), Some("1".to_owned())]);
}

/// `positive_answer` / `negative_answer` spelled `1`, `1.0` or `true` on a 0/1 field give
/// the same figures and cells.
#[test]
fn answers_in_any_spelling_of_the_value_agree() {
    let gt = Float64Array::from(vec![1.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
    let pred = BooleanArray::from(vec![true, false, false, true, true, false]);
    let mut results = Vec::new();
    for (pos, neg) in [
        ("1", "0"),
        ("1.0", "0.0"),
        ("true", "false"),
        (" TRUE", "0"),
    ] {
        let s = folded(
            &kind(ClassMode::Binary, Some(pos), Some(neg), None),
            &gt,
            &pred,
        );
        let figures: Vec<(String, Option<f64>)> = s
            .finish()
            .into_iter()
            .map(|(_, f)| (f.stat, f.value))
            .collect();
        results.push((figures, cells(&s)));
    }
    let (figures, cells) = &results[0];
    let get = |name: &str| figures.iter().find(|f| f.0 == name).unwrap().1;
    assert_eq!(
        [get("tp"), get("fp"), get("tn"), get("fn"), get("excluded")],
        [Some(2.0), Some(1.0), Some(2.0), Some(1.0), Some(0.0)]
    );
    assert_eq!(
        cells,
        &[
            cell("0", "0", 2),
            cell("0", "1", 1),
            cell("1", "0", 1),
            cell("1", "1", 2),
        ]
    );
    for r in &results[1..] {
        assert_eq!(r, &results[0]);
    }
    // without a negative answer, and for precision alone
    for pos in ["1", "1.0", "true"] {
        let s = folded(
            &kind(ClassMode::Precision, Some(pos), None, None),
            &gt,
            &pred,
        );
        assert_eq!(stat(&s, "value"), Some(2.0 / 3.0), "{pos}");
    }
}

/// An integer 0/1 column against a pass mask counts 1 = 1.0; text that reads as a number or
/// a boolean is that number, on any side; other text stays as it is.
#[test]
fn labels_compare_by_value_across_types() {
    let human = Int64Array::from(vec![Some(1), Some(0), Some(1), None, Some(0)]);
    let is_correct = BooleanArray::from(vec![true, false, false, true, false]);
    let s = multiclass(&human, &is_correct);
    assert_eq!(
        cells(&s),
        [cell("0", "0", 2), cell("1", "0", 1), cell("1", "1", 1)]
    );
    assert_eq!(stat(&s, "accuracy"), Some(0.75));
    // `labels:` in any spelling
    let s = folded(
        &kind(ClassMode::Multiclass, None, None, Some(&["1.0", "false"])),
        &human,
        &human,
    );
    assert_eq!(cells(&s), [cell("0", "0", 2), cell("1", "1", 2)]);
    // text against a float
    let text = StringArray::from(vec!["1", "false", "yes", " 1.0", "0"]);
    let scores = Float64Array::from(vec![1.0, 0.0, 1.0, 1.0, 0.5]);
    let s = multiclass(&text, &scores);
    assert_eq!(
        cells(&s),
        [
            cell("0", "0", 1),
            cell("0", "0.5", 1),
            cell("1", "1", 2),
            cell("yes", "1", 1)
        ]
    );
    // text against text compares by value too: equality is one relation, transitive
    let other = StringArray::from(vec!["1.0", "false", "yes", "1", "0"]);
    let s = multiclass(&text, &other);
    assert_eq!(stat(&s, "accuracy"), Some(1.0));
    assert_eq!(label("1"), "1");
    assert_eq!(label("TRUE"), "1");
    assert_eq!(label("2.0"), "2");
    assert_eq!(label("2.5"), "2.5");
    assert_eq!(label("yes"), "yes");
}

/// A binary metric whose answers match no label excludes every row and says which labels
/// it saw against the ones it expected.
#[test]
fn a_metric_that_excludes_most_rows_says_which_labels_it_saw() {
    let gt = StringArray::from(vec![Some("y"), Some("n"), Some("maybe"), None, Some("yes")]);
    let pred = StringArray::from(vec![Some("yes"), Some("no"), Some("no"), Some("no"), None]);
    let s = yes_no(&gt, &pred);
    assert_eq!(stat(&s, "excluded"), Some(5.0));
    assert_eq!(
        s.exclusion_warning().unwrap(),
        r#"excluded 5 of 5 rows (2 with a null label); other labels seen: "maybe", "n", "y"; expected: "yes" (positive), "no" (negative)"#
    );
    // a 0/1 field against answers that are not its values
    let mask = pass_mask();
    let s = folded(
        &kind(ClassMode::Binary, Some("pass"), Some("fail"), None),
        &mask,
        &mask,
    );
    assert_eq!(
        s.exclusion_warning().unwrap(),
        r#"excluded 5 of 5 rows (1 with a null label); other labels seen: "0", "1"; expected: "pass" (positive), "fail" (negative)"#
    );
    let s = folded(
        &kind(ClassMode::Multiclass, None, None, Some(&["a", "b"])),
        &gt,
        &pred,
    );
    assert_eq!(
        s.exclusion_warning().unwrap(),
        r#"excluded 5 of 5 rows (2 with a null label); other labels seen: "maybe", "n", "no", "y", "yes"; expected: "a", "b""#
    );
    // half excluded is not more than half
    let gt = StringArray::from(vec!["yes", "no", "x", "y"]);
    let s = yes_no(&gt, &gt);
    assert_eq!(stat(&s, "excluded"), Some(2.0));
    assert_eq!(s.exclusion_warning(), None);
    let gt = StringArray::from(vec!["yes", "x", "y"]);
    let s = yes_no(&gt, &gt);
    assert_eq!(
        s.exclusion_warning().unwrap(),
        r#"excluded 2 of 3 rows (0 with a null label); other labels seen: "x", "y"; expected: "yes" (positive), "no" (negative)"#
    );
}

fn exclusions(s: &Grouped) -> (u64, u64, Vec<String>, bool) {
    let Some(c) = s.overall.get::<Confusion>() else {
        panic!("not a classification state")
    };
    let (excluded, nulls, seen) = c.exclusions();
    (
        excluded,
        nulls,
        seen.labels().map(str::to_owned).collect(),
        seen.more(),
    )
}

/// The excluded rows, null labels and seen labels of parts merged in any order (and sent as
/// bytes) are those of one pass; seen labels keep the smallest [`MAX_SEEN_LABELS`].
#[test]
fn exclusion_counts_and_seen_labels_merge() {
    let n = 60;
    let gt: Vec<Option<String>> = (0..n)
        .map(|i| match i % 4 {
            0 => None,
            1 => Some("yes".to_owned()),
            _ => Some(format!("l{:02}", (i * 7) % 31)),
        })
        .collect();
    let pred: Vec<Option<String>> = (0..n)
        .map(|i| Some(if i % 3 == 0 { "no" } else { "yes" }.to_owned()))
        .collect();
    let k = kind(ClassMode::Binary, Some("yes"), Some("no"), None);
    let part = |lo: usize, hi: usize| {
        folded(
            &k,
            &StringArray::from(gt[lo..hi].to_vec()),
            &StringArray::from(pred[lo..hi].to_vec()),
        )
    };
    let whole = part(0, n);
    let (excluded, nulls, seen, more) = exclusions(&whole);
    assert_eq!((excluded, nulls, more), (45, 15, true));
    assert_eq!(seen.len(), MAX_SEEN_LABELS);
    assert_eq!(seen.first().unwrap(), "l00");
    assert_eq!(seen.last().unwrap(), "l25");
    for cuts in [[0, 7, 30, 60], [0, 31, 59, 60], [0, 1, 2, 60]] {
        let parts: Vec<Grouped> = cuts.windows(2).map(|w| part(w[0], w[1])).collect();
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let mut m = Grouped::from_bytes(&parts[order[0]].to_bytes().unwrap()).unwrap();
            for &i in &order[1..] {
                m.merge(&Grouped::from_bytes(&parts[i].to_bytes().unwrap()).unwrap())
                    .unwrap();
            }
            assert_eq!(exclusions(&m), exclusions(&whole), "{cuts:?} {order:?}");
            assert_eq!(m.to_bytes().unwrap(), whole.to_bytes().unwrap());
        }
    }
}

/// States of older layouts (versions 1 to 4) are refused, naming their version; a state over
/// text labels merged with one over numbers adds up the same labels.
#[test]
fn older_layouts_are_refused_and_labels_merge_by_value() {
    let k = kind(ClassMode::Multiclass, None, None, None);
    let text = StringArray::from(vec!["1", "0"]);
    let old = folded(&k, &text, &text);
    let bytes = old.to_bytes().unwrap();
    assert_eq!(bytes[4..6], STATE_FORMAT_VERSION.to_le_bytes());
    for version in [1u8, 2, 3, 4] {
        let mut older = bytes.clone();
        older[4] = version;
        assert_eq!(
            Grouped::from_bytes(&older).unwrap_err().to_string(),
            format!("a metric state of format version {version}; this build reads version 5")
        );
    }
    let read = Grouped::from_bytes(&bytes).unwrap();
    assert_eq!(read, old);
    let mut merged = read;
    let mask = BooleanArray::from(vec![true, true]);
    merged.merge(&folded(&k, &mask, &mask)).unwrap();
    assert_eq!(cells(&merged), [cell("0", "0", 1), cell("1", "1", 3)]);
}
