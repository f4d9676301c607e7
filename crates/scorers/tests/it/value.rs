//! The `value` scorer as a task loads it: its field's kind before and after the input is
//! bound, what metrics may read, and located errors.
#![allow(clippy::unwrap_used)]

use arrow::datatypes::{DataType, Field, Schema};
use evalscore_scorers::Task;
use evalscore_task::{FieldKind, ScorerField};

fn load(scorer: &str) -> Result<Task, String> {
    let text = format!("definition:\n  scorers:\n{scorer}");
    Task::from_yaml(&text, &[]).map_err(|e| e.to_string())
}

fn kinds(fields: &[ScorerField]) -> Vec<(&str, FieldKind, bool)> {
    fields.iter().map(|f| (f.name, f.kind, f.written)).collect()
}

#[test]
fn value_field_follows_the_column_and_parse() {
    let t = load(concat!(
        "    - type: value\n      key: judge\n      value: \"{{ sample.judge_score }}\"\n      metrics:\n        - {type: mean, field: value, group_by: subject}\n",
        "    - {type: value, key: latency, value: \"{{ sample.latency_ms }} ms\", parse: number}\n",
        "    - {type: value, key: label, value: \"{{ sample.human }}\"}\n",
        "    - {type: value, key: rendered, value: \"{{ sample.a }}-{{ sample.b }}\"}\n",
    ))
    .unwrap();
    let schema = Schema::new(vec![
        Field::new("judge_score", DataType::Int32, true),
        Field::new("latency_ms", DataType::Utf8, true),
        Field::new("human", DataType::Utf8, true),
        Field::new("a", DataType::Float64, true),
        Field::new("b", DataType::Float64, true),
    ]);
    let number = vec![("value", FieldKind::Number, true)];
    let text = vec![("value", FieldKind::Text, true)];
    let at_load: Vec<_> = t.scorers.iter().map(|s| kinds(s.scorer.fields())).collect();
    assert_eq!(
        at_load,
        [number.clone(), number.clone(), number.clone(), text.clone()]
    );
    let bound: Vec<_> = t
        .scorers
        .iter()
        .map(|s| kinds(s.scorer.fields_for(&schema)))
        .collect();
    assert_eq!(bound, [number.clone(), number, text.clone(), text]);
    assert!(!t.needs_model_output());
    assert_eq!(t.scorers[0].metrics[0].group_by, ["subject"]);
}

#[test]
fn value_errors_are_located() {
    let cases = [
        (
            "    - {type: value}\n",
            "line 3, column 7: scorer `value` needs `value`\nhint: e.g. `value: \"{{ sample.judge_score }}\"`",
        ),
        (
            "    - {type: value, value: \"{{ sample.x }}\", parse: numbers}\n",
            "line 3, column 53: unknown parse `numbers`\nhint: parse is `number` or `text`",
        ),
        (
            "    - {type: value, value: \"{{ sample.x }}!\", metrics: [{type: mean, field: value}]}\n",
            "line 3, column 77: metric `mean` needs a numeric field, and `value` of scorer `value` is text\nhint: scorer `value` has no numeric field; use `frequency` to count text values",
        ),
        (
            "    - {type: value, value: \"{{ sample.x }}\", pars: number}\n",
            "line 3, column 46: unknown key `pars` in scorer `value`\nhint: did you mean `parse`? allowed keys: type, key, display_name, purpose, metrics, normalize, extract, write_scores, write_fields, value, parse",
        ),
    ];
    for (scorer, want) in cases {
        let text = format!("definition:\n  scorers:\n{scorer}");
        let e = Task::from_yaml(&text, &[]).unwrap_err();
        let got = match &e.hint {
            Some(h) => format!("{e}\nhint: {h}"),
            None => e.to_string(),
        };
        assert!(got.starts_with(want), "{scorer}\n{got}\nwant: {want}");
    }
}
