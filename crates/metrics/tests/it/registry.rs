//! The metric registry: the one list of metric types, in the order errors list them; every
//! type's example parses, its keys are what unknown-key errors allow, its empty state names
//! its type and comes back from its bytes; the committed reference is the one the registry
//! renders.
#![allow(clippy::unwrap_used)]

use evalscore_metrics::reference::{example_task, render};
use evalscore_metrics::registry::{self, METRIC_TYPES};
use evalscore_metrics::{parse_metrics, Grouped, Setup};
use evalscore_task::{MetricSpec, ScorerField, TaskDocument, TaskError, TemplateCompiler};

/// The fields of `string_equals`, which the examples read.
const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("value"),
    ScorerField::text("ground_truth"),
];

/// The metrics of a task whose one scorer is `string_equals` holding `metric`.
fn parse(metric: &str) -> Result<Vec<MetricSpec>, TaskError> {
    let doc = TaskDocument::parse(&example_task(metric), &[])?;
    let scorer = doc.scorers().next().unwrap();
    let node = scorer.as_map().unwrap().get("metrics").unwrap();
    let mut compiler = TemplateCompiler::new();
    let out = parse_metrics(node, FIELDS, "string_equals", &mut compiler);
    compiler.finish();
    out
}

#[test]
fn the_types_in_the_order_errors_list_them() {
    assert_eq!(
        registry::type_names().join(", "),
        "mean, min, max, std_dev, frequency, binary-classification, multiclass-classification, precision, recall, f1_score, python, win_rate, cohen_kappa, matthews_corrcoef, krippendorff_alpha, pearson, spearman, kendall_tau, roc_auc, average_precision, brier_score, expected_calibration_error, pass_at_k, bradley_terry, length_controlled_win_rate"
    );
    let e = parse("{type: maen, field: is_correct}").unwrap_err();
    assert_eq!(e.message, "unknown metric type `maen`");
    assert_eq!(
        e.hint.as_deref(),
        Some("did you mean `mean`? metric types: mean, min, max, std_dev, frequency, binary-classification, multiclass-classification, precision, recall, f1_score, python, win_rate, cohen_kappa, matthews_corrcoef, krippendorff_alpha, pearson, spearman, kendall_tau, roc_auc, average_precision, brier_score, expected_calibration_error, pass_at_k, bradley_terry, length_controlled_win_rate")
    );
}

#[test]
fn every_example_parses_and_its_state_round_trips() {
    let setup = Setup { confidence: 0.9 };
    for t in METRIC_TYPES {
        let a = t.about();
        let m = parse(a.example)
            .unwrap_or_else(|e| panic!("{}: {e:?}", a.name))
            .remove(0);
        assert_eq!(m.metric_type, a.name);
        assert_eq!(m.reads, a.reads);
        assert_eq!(m.python.is_some(), a.name == "python");
        let g = Grouped::for_metric(&m, &setup).unwrap();
        assert_eq!(g.overall.accumulator().metric_type(), a.name);
        // Its state reads its inputs as the registry says (the value model's one source).
        assert_eq!(g.overall.accumulator().reads(), a.reads, "{}", a.name);
        assert_eq!(Grouped::from_bytes(&g.to_bytes().unwrap()).unwrap(), g);
        // An unknown key: the error allows exactly the type's keys.
        let bogus = a.example.replacen('{', "{bogus_key: 1, ", 1);
        let e = parse(&bogus).unwrap_err();
        assert_eq!(
            e.message,
            format!("unknown key `bogus_key` in metric `{}`", a.name)
        );
        let mut want = vec!["type"];
        want.extend(a.reads.keys());
        want.extend(a.options.iter().map(|o| o.key));
        want.extend(["name", "key", "group_by"]);
        assert_eq!(
            e.hint.as_deref(),
            Some(format!("allowed keys: {}", want.join(", ")).as_str()),
            "{}",
            a.name
        );
    }
}

/// docs/metric-reference.md is the registry's rendering. To regenerate it after changing a
/// type: `EVALSCORE_UPDATE_REFERENCE=1 cargo test -p evalscore-metrics --test it reference`.
#[test]
fn reference_doc_is_up_to_date() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/metric-reference.md"
    );
    let committed = evalscore_test_support::generated::check(
        path,
        &render(),
        "EVALSCORE_UPDATE_REFERENCE=1 cargo test -p evalscore-metrics --test it reference",
    );
    for name in registry::type_names() {
        assert!(committed.contains(&format!("## `{name}`")), "{name}");
    }
}
