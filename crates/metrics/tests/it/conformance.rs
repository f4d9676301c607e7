//! The value model, checked over the whole registry: for every registered metric type (but
//! those that hand values to user code), a metric whose label options are written as
//! numbers, folded over the same values arriving as each Arrow type that can hold them, in
//! any spelling a text column may use (`2`, `2.0`, `true`), gives the figures of the
//! Float64 reference, computed once; and so do the same rows split into batches, into
//! states merged through bytes in any order, and into batches of different types. The
//! list of types comes from the registry, so a new type is covered without editing this
//! file.
#![allow(clippy::unwrap_used)]

use arrow::array::{
    Array, ArrayRef, BooleanArray, DictionaryArray, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, Int8Array, LargeStringArray, StringArray, StringViewArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow::datatypes::Int32Type;
use evalscore_metrics::reference::example_task;
use evalscore_metrics::registry::METRIC_TYPES;
use evalscore_metrics::values::ValueKind;
use evalscore_metrics::{parse_metrics, Figure, GroupKey, Grouped, Setup};
use evalscore_task::{MetricReads, MetricSpec, ScorerField, TaskDocument, TemplateCompiler};
use std::sync::Arc;

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("value"),
    ScorerField::text("ground_truth"),
];

/// The metric of `type_name` over the columns `x0`, `x1`, ... with every label option
/// written as numbers: the answers `1` and `0`, `labels` `[0, 1, 2]` for a pair of label
/// fields, and the verdicts `{a: 2, b: 0, tie: 1}` for pairwise ones.
fn numeric_metric(type_name: &str) -> Option<MetricSpec> {
    let t = METRIC_TYPES.iter().find(|t| t.about().name == type_name)?;
    let a = t.about();
    let mut parts = vec![format!("type: {}", a.name)];
    for (i, key) in a.reads.keys().iter().enumerate() {
        parts.push(format!("{key}: x{i}"));
    }
    let bootstrap = a.options.iter().any(|o| o.key == "interval");
    for o in a.options {
        let value = match o.key {
            "positive_answer" => "1",
            "negative_answer" => "0",
            "labels" if a.reads == MetricReads::Pair => "[0, 1, 2]",
            "labels" => "{a: 2, b: 0, tie: 1}",
            "difficulty" => "x3",
            // Fewer replicates of a fit's own bootstrap keep the test quick.
            "replicates" if !bootstrap => "20",
            _ => continue,
        };
        parts.push(format!("{}: {value}", o.key));
    }
    let doc =
        TaskDocument::parse(&example_task(&format!("{{{}}}", parts.join(", "))), &[]).unwrap();
    let scorer = doc.scorers().next().unwrap();
    let node = scorer.as_map().unwrap().get("metrics").unwrap();
    let mut compiler = TemplateCompiler::new();
    let mut specs = parse_metrics(node, FIELDS, "string_equals", &mut compiler)
        .unwrap_or_else(|e| panic!("{}: {e:?}", a.name));
    compiler.finish();
    Some(specs.remove(0))
}

/// Rows of one input: small whole numbers (`None` a null), different per input.
fn column(input: usize, rows: usize, values: &[i64]) -> Vec<Option<i64>> {
    (0..rows)
        .map(|r| {
            let h = (r * 7 + input * 13 + r * r * (input + 3)) % 97;
            (!h.is_multiple_of(11)).then(|| values[h % values.len()])
        })
        .collect()
}

/// How a text column writes a number: one of its spellings, by row.
fn spelled(v: i64, row: usize) -> String {
    match (v, row % 3) {
        (0, 1) => "false".to_owned(),
        (1, 1) => "TRUE".to_owned(),
        (v, 2) => format!("{v}.0"),
        (v, _) => format!("{v}"),
    }
}

/// The Arrow types a column of `values` arrives as, each with its name: every integer
/// width that holds them, floats, Boolean (0/1 only), text (in every spelling when the
/// input is compared by value, as written otherwise) and dictionaries.
fn arrivals(v: &[Option<i64>], kind: ValueKind) -> Vec<(&'static str, ArrayRef)> {
    let f = |x: &Option<i64>| x.map(|x| x as f64);
    let text: Vec<Option<String>> = v
        .iter()
        .enumerate()
        .map(|(r, x)| {
            x.map(|x| match kind {
                ValueKind::Text => x.to_string(),
                _ => spelled(x, r),
            })
        })
        .collect();
    let mut out: Vec<(&'static str, ArrayRef)> = vec![
        (
            "Float64",
            Arc::new(v.iter().map(f).collect::<Float64Array>()),
        ),
        (
            "Float32",
            Arc::new(
                v.iter()
                    .map(|x| x.map(|x| x as f32))
                    .collect::<Float32Array>(),
            ),
        ),
        (
            "Int8",
            Arc::new(v.iter().map(|x| x.map(|x| x as i8)).collect::<Int8Array>()),
        ),
        (
            "Int16",
            Arc::new(
                v.iter()
                    .map(|x| x.map(|x| x as i16))
                    .collect::<Int16Array>(),
            ),
        ),
        (
            "Int32",
            Arc::new(
                v.iter()
                    .map(|x| x.map(|x| x as i32))
                    .collect::<Int32Array>(),
            ),
        ),
        ("Int64", Arc::new(v.iter().copied().collect::<Int64Array>())),
        (
            "UInt8",
            Arc::new(v.iter().map(|x| x.map(|x| x as u8)).collect::<UInt8Array>()),
        ),
        (
            "UInt16",
            Arc::new(
                v.iter()
                    .map(|x| x.map(|x| x as u16))
                    .collect::<UInt16Array>(),
            ),
        ),
        (
            "UInt32",
            Arc::new(
                v.iter()
                    .map(|x| x.map(|x| x as u32))
                    .collect::<UInt32Array>(),
            ),
        ),
        (
            "UInt64",
            Arc::new(
                v.iter()
                    .map(|x| x.map(|x| x as u64))
                    .collect::<UInt64Array>(),
            ),
        ),
        (
            "Utf8",
            Arc::new(text.iter().cloned().collect::<StringArray>()),
        ),
        (
            "LargeUtf8",
            Arc::new(text.iter().cloned().collect::<LargeStringArray>()),
        ),
        (
            "Utf8View",
            Arc::new(text.iter().cloned().collect::<StringViewArray>()),
        ),
        (
            "Dictionary<Int32, Utf8>",
            Arc::new(
                text.iter()
                    .map(|x| x.as_deref())
                    .collect::<DictionaryArray<Int32Type>>(),
            ),
        ),
        (
            "Dictionary<Int32, Int64>",
            Arc::new(
                DictionaryArray::<Int32Type>::try_new(
                    Int32Array::from((0..v.len() as i32).collect::<Vec<_>>()),
                    Arc::new(v.iter().copied().collect::<Int64Array>()),
                )
                .unwrap(),
            ),
        ),
    ];
    if v.iter().flatten().all(|x| *x == 0 || *x == 1) {
        out.push((
            "Boolean",
            Arc::new(
                v.iter()
                    .map(|x| x.map(|x| x == 1))
                    .collect::<BooleanArray>(),
            ),
        ));
    }
    out
}

fn figures(g: &Grouped) -> Vec<(GroupKey, Figure)> {
    g.finish()
}

fn fold(spec: &MetricSpec, inputs: &[ArrayRef]) -> Result<Grouped, String> {
    let mut g = Grouped::for_metric(spec, &Setup { confidence: 0.95 }).unwrap();
    let refs: Vec<&dyn Array> = inputs.iter().map(|a| a.as_ref()).collect();
    g.update(&refs, None).map_err(|e| e.to_string())?;
    Ok(g)
}

fn slice(inputs: &[ArrayRef], from: usize, to: usize) -> Vec<ArrayRef> {
    inputs.iter().map(|a| a.slice(from, to - from)).collect()
}

/// The value sets a type is tried with, widest first: one that a type refuses (a truth
/// that must be 0 or 1) falls back to the next.
const VALUE_SETS: &[&[i64]] = &[&[0, 1, 2, 10, 100], &[0, 1]];
const ROWS: usize = 60;

#[test]
fn every_metric_type_gives_the_same_figures_whatever_type_its_values_arrive_as() {
    let mut covered = Vec::new();
    for t in METRIC_TYPES {
        let about = t.about();
        if about.reads == MetricReads::Values {
            continue;
        }
        let spec = numeric_metric(about.name).unwrap();
        let kinds = evalscore_metrics::values::kinds(about.reads);
        let n_inputs = spec.inputs.len();
        // The reference: every input as Float64, folded whole.
        let mut chosen = None;
        for set in VALUE_SETS {
            let cols: Vec<Vec<Option<i64>>> = (0..n_inputs).map(|i| column(i, ROWS, set)).collect();
            let floats: Vec<ArrayRef> = cols
                .iter()
                .map(|c| arrivals(c, ValueKind::Label)[0].1.clone())
                .collect();
            if let Ok(g) = fold(&spec, &floats) {
                chosen = Some((cols, floats, figures(&g)));
                break;
            }
        }
        let (cols, floats, want) =
            chosen.unwrap_or_else(|| panic!("{}: no value set folds", about.name));
        assert!(
            want.iter().any(|(_, f)| f.value.is_some()),
            "{}: the reference has no defined figure: {want:?}",
            about.name
        );
        // Each input in turn arrives as each type, the others as Float64.
        for i in 0..n_inputs {
            let kind = kinds.get(i).copied().unwrap_or(ValueKind::Key);
            for (type_name, a) in arrivals(&cols[i], kind) {
                let mut inputs = floats.clone();
                inputs[i] = a;
                let got = fold(&spec, &inputs)
                    .unwrap_or_else(|e| panic!("{} input {i} as {type_name}: {e}", about.name));
                assert_eq!(
                    figures(&got),
                    want,
                    "{} input {i} as {type_name}",
                    about.name
                );
            }
        }
        // Split into batches of one state, and into states merged through bytes in any
        // order, the batches of different types.
        let typed: Vec<Vec<ArrayRef>> = (0..3)
            .map(|k| {
                (0..n_inputs)
                    .map(|i| {
                        let kind = kinds.get(i).copied().unwrap_or(ValueKind::Key);
                        let all = arrivals(&cols[i], kind);
                        all[(k * 5 + i) % all.len()].1.clone()
                    })
                    .collect()
            })
            .collect();
        let cuts = [0, 7, 31, ROWS];
        let mut batches = Grouped::for_metric(&spec, &Setup { confidence: 0.95 }).unwrap();
        let mut parts = Vec::new();
        for k in 0..3 {
            let part = slice(&typed[k], cuts[k], cuts[k + 1]);
            let refs: Vec<&dyn Array> = part.iter().map(|a| a.as_ref()).collect();
            batches.update(&refs, None).unwrap();
            parts.push(fold(&spec, &part).unwrap());
        }
        assert_eq!(figures(&batches), want, "{} in batches", about.name);
        for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
            let mut m = Grouped::from_bytes(&parts[order[0]].to_bytes().unwrap()).unwrap();
            for &k in &order[1..] {
                m.merge(&Grouped::from_bytes(&parts[k].to_bytes().unwrap()).unwrap())
                    .unwrap();
            }
            assert_eq!(figures(&m), want, "{} merged in {order:?}", about.name);
        }
        covered.push(about.name);
    }
    // Every type but `python` (user code reads the values as they are).
    assert_eq!(covered.len(), METRIC_TYPES.len() - 1, "{covered:?}");
}

/// A float field with NaN where the others have nulls gives the same figures: NaN is a
/// missing value, counted as such.
#[test]
fn nan_is_a_missing_value_for_every_metric_type() {
    for t in METRIC_TYPES {
        let about = t.about();
        if about.reads == MetricReads::Values {
            continue;
        }
        let spec = numeric_metric(about.name).unwrap();
        for set in VALUE_SETS {
            let cols: Vec<Vec<Option<i64>>> = (0..spec.inputs.len())
                .map(|i| column(i, ROWS, set))
                .collect();
            let floats: Vec<ArrayRef> = cols
                .iter()
                .map(|c| arrivals(c, ValueKind::Label)[0].1.clone())
                .collect();
            let Ok(want) = fold(&spec, &floats) else {
                continue;
            };
            let nans: Vec<ArrayRef> = cols
                .iter()
                .map(|c| {
                    Arc::new(
                        c.iter()
                            .map(|x| Some(x.map_or(f64::NAN, |x| x as f64)))
                            .collect::<Float64Array>(),
                    ) as ArrayRef
                })
                .collect();
            let got = fold(&spec, &nans).unwrap();
            assert_eq!(figures(&got), figures(&want), "{}", about.name);
            break;
        }
    }
}

/// The metric written as `yaml` (one flow mapping) over `string_equals`'s fields.
fn metric(yaml: &str) -> MetricSpec {
    let doc = TaskDocument::parse(&example_task(yaml), &[]).unwrap();
    let scorer = doc.scorers().next().unwrap();
    let node = scorer.as_map().unwrap().get("metrics").unwrap();
    let mut compiler = TemplateCompiler::new();
    let mut specs = parse_metrics(node, FIELDS, "string_equals", &mut compiler).unwrap();
    compiler.finish();
    specs.remove(0)
}

fn value(g: &Grouped, stat: &str) -> (Option<f64>, u64) {
    let f = g
        .finish()
        .into_iter()
        .find(|(k, f)| k.is_none() && f.stat == stat && f.label.is_none())
        .unwrap()
        .1;
    (f.value, f.n)
}

/// A human's 0/1 integers against a scorer's 0.0/1.0 floats: scikit-learn's
/// `cohen_kappa_score([1, 0, 1, 0], [1.0, 0.0, 1.0, 1.0])` is 0.5 and `matthews_corrcoef`
/// 1/sqrt(3); compared as text, both were 0.
#[test]
fn agreement_of_integers_with_floats_is_by_value() {
    let h: ArrayRef = Arc::new(Int64Array::from(vec![1, 0, 1, 0]));
    let f: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 0.0, 1.0, 1.0]));
    let kappa = fold(
        &metric("{type: cohen_kappa, field_gt: h, field_pred: f}"),
        &[h.clone(), f.clone()],
    )
    .unwrap();
    assert_eq!(value(&kappa, "value"), (Some(0.5), 4));
    let mcc = fold(
        &metric("{type: matthews_corrcoef, field_gt: h, field_pred: f}"),
        &[h.clone(), f.clone()],
    )
    .unwrap();
    let (v, n) = value(&mcc, "value");
    assert!((v.unwrap() - 1.0 / 3f64.sqrt()).abs() < 1e-15, "{v:?}");
    assert_eq!(n, 4);
    // Krippendorff's alpha (nominal), by hand: 1 - (8 - 1) * 2 / (2 * 3 * 5) = 8/15.
    let alpha = fold(
        &metric("{type: krippendorff_alpha, field_gt: h, field_pred: f}"),
        &[h, f],
    )
    .unwrap();
    let (v, _) = value(&alpha, "value");
    assert!((v.unwrap() - 8.0 / 15.0).abs() < 1e-15, "{v:?}");
}

/// Verdict labels written as numbers (`{a: 2, b: 1, tie: 1.5}`) match a float verdict
/// column; before, every row but the ties was left out without a word. A verdict that is
/// none of the three is left out with a warning naming it.
#[test]
fn numeric_verdicts_match_float_columns() {
    let spec = metric("{type: win_rate, field: p, labels: {a: 2, b: 1, tie: 1.5}}");
    let p: ArrayRef = Arc::new(Float64Array::from(vec![
        Some(2.0),
        Some(1.0),
        Some(1.5),
        Some(2.0),
        None,
        Some(3.0),
    ]));
    let g = fold(&spec, std::slice::from_ref(&p)).unwrap();
    assert_eq!(value(&g, "value"), (Some(0.625), 4));
    assert_eq!(value(&g, "excluded").0, Some(2.0));
    assert_eq!(
        g.overall.exclusion_warning().as_deref(),
        Some(
            r#"excluded 2 of 6 rows: 1 null, 1 with another label; other labels seen: "3"; expected: "2" (a), "1" (b), "1.5" (tie)"#
        )
    );
    // Bradley-Terry over the same verdicts: two models, A ahead.
    let spec = metric("{type: bradley_terry, field: p, model_a: a, model_b: b, labels: {a: 2, b: 1, tie: 1.5}, replicates: 0}");
    let a: ArrayRef = Arc::new(StringArray::from(vec!["m1"; 6]));
    let b: ArrayRef = Arc::new(StringArray::from(vec!["m2"; 6]));
    let g = fold(&spec, &[p, a, b]).unwrap();
    let ratings: Vec<(Option<String>, Option<f64>)> = g
        .finish()
        .into_iter()
        .filter(|(_, f)| f.stat == "rating")
        .map(|(_, f)| (f.label, f.value))
        .collect();
    assert_eq!(ratings.len(), 2, "{ratings:?}");
    assert!(
        ratings[0].1.unwrap() > 1000.0 && ratings[1].1.unwrap() < 1000.0,
        "{ratings:?}"
    );
}

/// Weighted kappa with `labels: [0, 1, ..., 10]` over float scores: before, null with n = 0;
/// scikit-learn's `cohen_kappa_score(x, y, labels=range(11), weights="quadratic")` is
/// 0.970873786407767.
#[test]
fn weighted_kappa_over_float_scores_reads_integer_labels() {
    let spec = metric("{type: cohen_kappa, field_gt: x, field_pred: y, labels: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], weights: quadratic}");
    let x: ArrayRef = Arc::new(Float64Array::from(vec![0.0, 5.0, 10.0, 7.0, 3.0]));
    let y: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 5.0, 9.0, 7.0, 2.0]));
    let g = fold(&spec, &[x, y]).unwrap();
    let (v, n) = value(&g, "value");
    assert_eq!(n, 5);
    assert!((v.unwrap() - 0.970873786407767).abs() < 1e-15, "{v:?}");
}
