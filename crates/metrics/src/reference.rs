//! The metric reference (docs/metric-reference.md), rendered from the registry: every
//! type's name, description, keys, figures and an example. A test compares the committed
//! file with [`render`].

use crate::registry::METRIC_TYPES;
use evalscore_task::MetricReads;
use std::fmt::Write;

/// A task with one `string_equals` scorer (fields `is_correct`, `value`, `ground_truth`)
/// holding the one metric `example` (a YAML mapping), as the reference shows it.
pub fn example_task(example: &str) -> String {
    format!(
        "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{{{ sample.answer }}}}\"\n      metrics:\n        - {example}\n"
    )
}

/// The keys of what a type reads, as the reference lists them.
fn reads(r: MetricReads) -> &'static str {
    match r {
        MetricReads::Numbers => "`field` (numbers)",
        MetricReads::Labels => "`field` (labels: text, numbers or booleans)",
        MetricReads::Values => "`field` (any values, handed to the functions as they are)",
        MetricReads::Pair => "`field_gt` and `field_pred` (labels)",
        MetricReads::NumberPair => "`field_gt` and `field_pred` (numbers)",
        MetricReads::Battle => "`field` (the verdict: labels) and `model_a`, `model_b` (the models of each battle: columns or templates)",
        MetricReads::Lengths => "`field` (the verdict: labels) and `output_a`, `output_b` (the two answers, for their lengths: columns or templates)",
        MetricReads::FieldGroup => {
            "`field` (numbers) and `group` (the group of each row: a column or a template)"
        }
        MetricReads::ScoreTruth => {
            "`field` (a score, numbers) and `field_gt` (its truth: 0/1 numbers or booleans)"
        }
    }
}

/// docs/metric-reference.md.
pub fn render() -> String {
    let mut out = String::new();
    out.push_str("# Metric reference\n\n");
    out.push_str("<!-- Generated from the metric registry (crates/metrics/src/registry.rs) by `evalscore_metrics::reference::render`: do not edit by hand. Regenerate with `EVALSCORE_UPDATE_REFERENCE=1 cargo test -p evalscore-metrics --test it reference`. -->\n\n");
    out.push_str("Every metric type, what it reads, its options and its figures. Every metric of a scorer's `metrics:` also takes the common keys `type`, `name` (default: its type, or `type(field)` when the scorer has another unnamed metric of that type), `key` and `group_by` (input columns to report it by, besides overall). What it reads is a field of the scorer, an input column named bare, or a template over the input row (`{{ sample.col }}`). [Metrics](metrics.md) describes the figures, their intervals and null rules.\n\n");
    out.push_str("| type | reads | options |\n| --- | --- | --- |\n");
    for t in METRIC_TYPES {
        let a = t.about();
        let options: Vec<String> = a.options.iter().map(|o| o.listed()).collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            a.name,
            reads(a.reads),
            options.join(", ")
        );
    }
    for t in METRIC_TYPES {
        let a = t.about();
        let _ = write!(
            out,
            "\n## `{}`\n\n{}\n\nReads {}.\n",
            a.name,
            a.doc,
            reads(a.reads)
        );
        if !a.options.is_empty() {
            out.push_str("\n| option | required | meaning |\n| --- | --- | --- |\n");
            for o in a.options {
                let required = if o.required { "yes" } else { "" };
                let _ = writeln!(out, "| `{}` | {required} | {} |", o.key, o.doc);
            }
        }
        let confusion = if a.confusion {
            " Its confusion matrix goes to confusion.parquet and to metrics.json."
        } else {
            ""
        };
        let _ = write!(
            out,
            "\nFigures (`stat`): {}.{confusion}\n\n```yaml\n- {}\n```\n",
            a.figures, a.example
        );
    }
    out
}
