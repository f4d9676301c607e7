//! A scorer's `metrics:` as the metric registry parses them: what each input reads (a scorer field
//! first, then an input column, or a template) and the default names.
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_metrics::parse_metrics;
use evalscore_task::{
    MetricInput, MetricSpec, RowContext, ScorerField, TaskDocument, TaskError, TemplateCompiler,
    TemplateOutput,
};
use std::sync::Arc;

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("predicted"),
    ScorerField::text("ground_truth"),
];

/// The metrics of the task's one scorer (a scorer type `judge` with [`FIELDS`]), and the
/// compiler, finished, that their templates use.
fn metrics(list: &str) -> Result<Vec<MetricSpec>, TaskError> {
    let doc = TaskDocument::parse(
        &format!("definition:\n  scorers:\n    - type: judge\n      metrics:\n{list}"),
        &[],
    )?;
    let scorer = doc.scorers().next().unwrap();
    let node = scorer.as_map().unwrap().get("metrics").unwrap();
    let mut compiler = TemplateCompiler::new();
    let out = parse_metrics(node, FIELDS, "judge", &mut compiler);
    compiler.finish();
    out
}

#[test]
fn a_scorer_field_first_then_a_column_or_a_template() {
    let m = metrics("        - {type: multiclass-classification, field_gt: ground_truth, field_pred: predicted}\n        - {type: multiclass-classification, field_gt: human, field_pred: predicted}\n        - {type: frequency, field: \"{{ sample.human | lower }}\"}\n        - {type: mean, field: \"{{ sample.latency }}\"}\n").unwrap();
    let sources: Vec<Vec<String>> = m
        .iter()
        .map(|m| {
            m.sources
                .iter()
                .map(|s| match s {
                    MetricInput::Field => "field".to_owned(),
                    MetricInput::Column(t) => format!("column {:?} {}", t.kind, t.what),
                    MetricInput::Template(t) => format!("template {:?} {}", t.kind, t.what),
                })
                .collect()
        })
        .collect();
    assert_eq!(
        sources,
        [
            vec!["field".to_owned(), "field".to_owned()],
            vec![
                "column Column(\"human\") multiclass-classification.field_gt".to_owned(),
                "field".to_owned()
            ],
            vec!["template Expression(\"sample.human | lower\") frequency.field".to_owned()],
            vec!["template Column(\"latency\") mean.field".to_owned()],
        ]
    );
    // Two unnamed metrics of one type share it: each is named by its fields.
    let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "multiclass-classification(ground_truth,predicted)",
            "multiclass-classification(human,predicted)",
            "frequency",
            "mean"
        ]
    );

    // A column reference reads the column with its type; a general template gives text.
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("human", DataType::Utf8, true),
            Field::new("latency", DataType::Int64, true),
        ])),
        vec![
            Arc::new(StringArray::from(vec![Some("Y"), None])),
            Arc::new(Int64Array::from(vec![Some(120), Some(80)])),
        ],
    )
    .unwrap();
    let ctx = RowContext {
        batch: &batch,
        model_output: None,
        model_output_raw: None,
    };
    let eval = |m: &MetricSpec| match m.sources[0].template().unwrap().evaluate(&ctx).unwrap() {
        TemplateOutput::Array(a) => a,
        other => panic!("{other:?}"),
    };
    let latency = eval(&m[3]);
    assert_eq!(latency.data_type(), &DataType::Int64);
    assert_eq!(
        latency.as_any().downcast_ref::<Int64Array>().unwrap(),
        &Int64Array::from(vec![Some(120), Some(80)])
    );
    let lower = eval(&m[2]);
    let lower = arrow::compute::cast(&lower, &DataType::Utf8).unwrap();
    assert_eq!(
        lower.as_any().downcast_ref::<StringArray>().unwrap(),
        &StringArray::from(vec![Some("y"), None])
    );
}

#[test]
fn default_names_are_distinct_only_where_a_type_repeats() {
    let m = metrics("        - {type: mean, field: is_correct}\n        - {type: mean, field: is_correct, name: Accuracy}\n        - {type: binary-classification, field_gt: ground_truth, field_pred: predicted, positive_answer: Y, negative_answer: N}\n        - {type: binary-classification, field_gt: is_correct, field_pred: \"{{ sample.human }}\", positive_answer: \"1.0\", negative_answer: \"0.0\"}\n        - {type: frequency, field: predicted}\n        - {type: frequency, field: predicted}\n").unwrap();
    let names: Vec<(&str, &str)> = m
        .iter()
        .map(|m| (m.name.as_str(), m.field.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            // A named metric does not count: the unnamed `mean` is alone.
            ("mean", "is_correct"),
            ("Accuracy", "is_correct"),
            (
                "binary-classification(ground_truth,predicted)",
                "ground_truth,predicted"
            ),
            (
                "binary-classification(is_correct,{{ sample.human }})",
                "is_correct,{{ sample.human }}"
            ),
            // The same type over the same field twice stays as written.
            ("frequency(predicted)", "predicted"),
            ("frequency(predicted)", "predicted"),
        ]
    );
}

#[test]
fn what_a_numeric_metric_cannot_read_is_a_located_error() {
    let e = metrics("        - {type: mean, field: predicted}\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 5, column 31: metric `mean` needs a numeric field, and `predicted` of scorer `judge` is text"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("numeric fields: is_correct; use `frequency` to count text values")
    );
    let e =
        metrics("        - {type: std_dev, field: \"{{ sample.latency | int }}\"}\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 5, column 34: metric `std_dev` needs a numeric field, and the template `{{ sample.latency | int }}` gives text"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("a template that is one column reference (`{{ sample.col }}`) reads a numeric column as numbers; numeric fields: is_correct; use `frequency` to count text values")
    );
    let e = metrics("        - {type: frequency, field: \"{{ solver_output.output }}\"}\n")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 5, column 36: template of `frequency.field` reads the model output, which a metric cannot read"
    );
    let e = metrics("        - {type: frequency, field: \"{{ sample.x \"}\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("line 5, column 36: template syntax error in `frequency.field`"),
        "{e}"
    );
}

/// `interval: bootstrap` reads the row keys as one more input: the `id` column by default,
/// else `row_key`'s column or template; without it, a metric reads what its type reads.
#[test]
fn a_bootstrap_reads_the_row_keys_last() {
    let m = metrics("        - {type: mean, field: is_correct, interval: bootstrap}\n        - {type: win_rate, field: predicted, interval: bootstrap, replicates: 50, seed: 4, row_key: \"{{ sample.q }}-{{ sample.model }}\"}\n        - {type: mean, field: is_correct, interval: analytic}\n").unwrap();
    let inputs: Vec<Vec<String>> = m
        .iter()
        .map(|m| {
            m.inputs
                .iter()
                .zip(&m.sources)
                .map(|(i, s)| match s {
                    MetricInput::Field => format!("field {i}"),
                    MetricInput::Column(t) => format!("column {i} {}", t.what),
                    MetricInput::Template(t) => format!("template {i} {}", t.what),
                })
                .collect()
        })
        .collect();
    assert_eq!(
        inputs,
        [
            vec!["field is_correct", "column id mean.row_key"],
            vec![
                "field predicted",
                "template {{ sample.q }}-{{ sample.model }} win_rate.row_key"
            ],
            vec!["field is_correct"],
        ]
    );
    assert_eq!(m[0].field, "is_correct");
}

#[test]
fn bootstrap_options_are_checked() {
    let cases = [
        (
            "{type: mean, field: is_correct, interval: jackknife}",
            "line 5, column 53: unknown interval `jackknife` of metric `mean`",
            "`interval: analytic` (the default) or `interval: bootstrap`",
        ),
        (
            "{type: mean, field: is_correct, replicates: 100}",
            "line 5, column 55: `replicates` of metric `mean` is an option of the bootstrap",
            "add `interval: bootstrap`, or remove it",
        ),
        (
            "{type: win_rate, field: predicted, interval: analytic, row_key: q}",
            "line 5, column 75: `row_key` of metric `win_rate` is an option of the bootstrap",
            "add `interval: bootstrap`, or remove it",
        ),
    ];
    for (metric, message, hint) in cases {
        let e = metrics(&format!("        - {metric}\n")).unwrap_err();
        assert_eq!(e.to_string(), message, "{metric}");
        assert_eq!(e.hint.as_deref(), Some(hint), "{metric}");
    }
    let e =
        metrics("        - {type: mean, field: is_correct, interval: bootstrap, replicates: 0}\n")
            .unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 5, column 76: `replicates` must be a whole number from 1 to 10000"
    );
    let e =
        metrics("        - {type: std_dev, field: is_correct, interval: bootstrap}\n").unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown key `interval` in metric `std_dev`"),
        "{e}"
    );
}
