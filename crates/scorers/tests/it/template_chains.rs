//! Long operator chains in templates (filters, lookups, binary operators, inline `if`s) are
//! bounded when the task is loaded, as the `not` chain is: minijinja builds them as trees one
//! level deeper per operator and walks them recursively, so 10,000 of them overflowed a
//! worker's stack.
#![allow(clippy::unwrap_used)]

use arrow::array::{AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_scorers::Task;
use evalscore_task::{RowContext, TemplateOutput};
use std::sync::Arc;

fn task_text(key: &str, template: &str) -> String {
    format!(
        "definition:\n  scorers:\n    - type: string_equals\n      {key}: {}\n",
        serde_json::to_string(template).unwrap()
    )
}

/// The error of loading a task whose `ground_truth` is `template`, on a 2 MiB stack (a
/// worker's), with its line and column.
fn load_error(template: String) -> (String, Option<(u64, u64)>) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let err = Task::from_yaml(&task_text("ground_truth", &template), &[]).unwrap_err();
            (err.message, err.location.map(|l| (l.line, l.column)))
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn ten_thousand_chained_filters_are_a_load_error() {
    let (message, at) = load_error(format!("{{{{ sample.a{} }}}}", " | lower".repeat(10_000)));
    assert_eq!(
        message,
        "template of `string_equals.ground_truth` chains 10001 operators in one expression (filters, tests, lookups, calls, binary operators); the limit is 256"
    );
    assert_eq!(at, Some((4, 21)));
}

#[test]
fn every_kind_of_chain_is_bounded() {
    let chains = [
        (" ~ sample.a".repeat(5_000), 10_001),
        (".b".repeat(5_000), 5_001),
        ("[0]".repeat(5_000), 5_001),
        (" if sample.a else sample.a".repeat(3_000), 12_001),
        (" is string".repeat(5_000), 5_001),
        (" + 1".repeat(5_000), 5_001),
    ];
    for (chain, operators) in chains {
        let (message, _) = load_error(format!("{{{{ sample.a{chain} }}}}"));
        assert!(
            message.starts_with(&format!(
                "template of `string_equals.ground_truth` chains {operators} operators in one expression"
            )),
            "{message}"
        );
    }
    // In a statement too, and in a `custom` condition (a bare expression).
    let (message, _) = load_error(format!(
        "{{% if sample.a{} %}}x{{% endif %}}",
        " | lower".repeat(300)
    ));
    // `if` and the lookup count too.
    assert!(message.contains("chains 302 operators"), "{message}");
    let condition = format!(
        "definition:\n  scorers:\n    - type: custom\n      condition: \"value{}\"\n",
        " | lower".repeat(1_000)
    );
    let err = Task::from_yaml(&condition, &[]).unwrap_err();
    assert_eq!(
        err.message,
        "template of `custom.condition` chains 1000 operators in one expression (filters, tests, lookups, calls, binary operators); the limit is 256"
    );
    assert_eq!(err.location.map(|l| (l.line, l.column)), Some((4, 18)));
}

/// Operators in string literals and in the text around the blocks do not count, and each
/// block is counted on its own.
#[test]
fn text_and_literals_do_not_count() {
    let text = "a | b . c ~ d ".repeat(500);
    let literal = format!("{{{{ sample.a ~ '{}' }}}}", "|.~".repeat(500));
    let blocks = "{{ sample.a | lower | upper }}".repeat(200);
    for template in [format!("{text}{{{{ sample.a }}}}"), literal, blocks] {
        assert!(Task::from_yaml(&task_text("ground_truth", &template), &[]).is_ok());
    }
}

/// A chain at the limit loads, and renders on a worker's 2 MiB stack.
#[test]
fn a_chain_at_the_limit_renders_on_a_worker_stack() {
    let template = format!("{{{{ sample.a{} }}}}", " | lower".repeat(255));
    let out = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let task = Task::from_yaml(&task_text("ground_truth", &template), &[]).unwrap();
            let batch = RecordBatch::try_new(
                Arc::new(Schema::new(vec![Field::new("a", DataType::Utf8, true)])),
                vec![Arc::new(StringArray::from(vec!["MiXeD"]))],
            )
            .unwrap();
            let ctx = RowContext {
                batch: &batch,
                model_output: None,
                model_output_raw: None,
            };
            let TemplateOutput::Array(a) = task.scorers[0].scorer.templates()[0]
                .evaluate(&ctx)
                .unwrap()
            else {
                panic!("not an array");
            };
            let a = arrow::compute::cast(&a, &DataType::Utf8).unwrap();
            a.as_string::<i32>().value(0).to_owned()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out, "mixed");
}
