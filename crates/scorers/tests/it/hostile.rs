//! Property tests: random task-file texts and mutations of a valid task never make the loader
//! panic, and a task that loads never panics when its templates meet random rows.
#![allow(clippy::unwrap_used)]

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use evalscore_scorers::Task;
use evalscore_task::RowContext;
use proptest::prelude::*;
use std::sync::Arc;

const VALID: &str = r#"config:
  col: answer
definition:
  output_column: output
  scorers:
    - type: string_equals
      key: exact
      ground_truth: "{{ sample.<< config.col >> | trim | upper }}"
      value: "{% if solver_output.output %}{{ solver_output.output | lower }}{% endif %}"
      metrics:
        - {type: mean, field: is_correct, name: Accuracy}
    - type: string_equals_mcqa
      ground_truth_choice: "{{ sample.answer }}"
      choices: [A, B, C, D]
      metrics:
        - {type: frequency, field: completion_validity}
        - {type: multiclass-classification, field_gt: ground_truth, field_pred: value}
"#;

/// Pieces of YAML and Jinja syntax a mutation may splice in.
const TOKENS: &[&str] = &[
    "{{",
    "}}",
    "{%",
    "%}",
    "{#",
    "#}",
    "<<",
    ">>",
    "config.",
    "sample.",
    "&a",
    "*a",
    "!!str",
    "- ",
    ": ",
    "\n",
    "\n  ",
    "\t",
    "[",
    "]",
    "{",
    "}",
    "'",
    "\"",
    "|",
    "range(100000)",
    "for x in sample",
    "endfor",
    "loop",
    "include",
    "import",
    "\u{0}",
    "é",
    "🦀",
    "~",
    "null",
    "type",
    "metrics",
    "scorers",
    "definition",
    "---",
    "...",
    "? ",
    "%YAML 1.2\n",
];

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Char(usize, char),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (any::<usize>(), 1usize..40).prop_map(|(p, n)| Edit::Delete(p, n)),
        (any::<usize>(), 1usize..80).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        (any::<usize>(), any::<char>()).prop_map(|(p, c)| Edit::Char(p, c)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        let len = chars.len().max(1);
        match *e {
            Edit::Insert(p, t) => {
                let p = p % (chars.len() + 1);
                chars.splice(p..p, TOKENS[t].chars());
            }
            Edit::Delete(p, n) => {
                let p = p % len;
                let end = (p + n).min(chars.len());
                if p < end {
                    chars.drain(p..end);
                }
            }
            Edit::Duplicate(p, n) => {
                let p = p % len;
                let end = (p + n).min(chars.len());
                if p < end {
                    let piece: Vec<char> = chars[p..end].to_vec();
                    chars.splice(end..end, piece);
                }
            }
            Edit::Char(p, c) => {
                let p = p % len;
                if p < chars.len() {
                    chars[p] = c;
                }
            }
        }
    }
    chars.into_iter().collect()
}

fn rows() -> impl Strategy<Value = RecordBatch> {
    let cell = proptest::option::of(".{0,12}");
    (1usize..6).prop_flat_map(move |n| {
        (
            proptest::collection::vec(cell.clone(), n),
            proptest::collection::vec(cell.clone(), n),
            proptest::collection::vec(proptest::option::of(any::<i64>()), n),
        )
            .prop_map(|(a, o, k)| {
                let schema = Schema::new(vec![
                    Field::new("answer", DataType::Utf8, true),
                    Field::new("output", DataType::Utf8, true),
                    Field::new("k", DataType::Int64, true),
                ]);
                RecordBatch::try_new(
                    Arc::new(schema),
                    vec![
                        Arc::new(StringArray::from(a)) as ArrayRef,
                        Arc::new(StringArray::from(o)),
                        Arc::new(Int64Array::from(k)),
                    ],
                )
                .unwrap()
            })
    })
}

/// Loads `text` and, if it loads, evaluates every template on `batch`.
fn exercise(text: &str, batch: &RecordBatch) {
    let Ok(task) = Task::from_yaml(text, &[]) else {
        return;
    };
    let out = Arc::clone(batch.column(1));
    let ctx = RowContext {
        batch,
        model_output: Some(&out),
        model_output_raw: None,
    };
    for s in &task.scorers {
        for t in s.scorer.templates() {
            let _ = t.evaluate(&ctx);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "(?s).{0,400}") {
        let _ = Task::from_yaml(&text, &[]);
    }

    #[test]
    fn yamlish_text_never_panics(parts in proptest::collection::vec(0..TOKENS.len(), 0..60)) {
        let text: String = parts.iter().map(|i| TOKENS[*i]).collect();
        let _ = Task::from_yaml(&text, &[("col".into(), "answer".into())]);
    }

    #[test]
    fn mutated_valid_task_never_panics(edits in proptest::collection::vec(edit(), 1..8), batch in rows()) {
        exercise(&apply(VALID, &edits), &batch);
    }

    #[test]
    fn random_template_never_panics(template in "(?s).{0,60}", batch in rows()) {
        let text = format!(
            "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: {}\n",
            serde_json::to_string(&template).unwrap()
        );
        exercise(&text, &batch);
    }
}

#[test]
fn the_valid_task_loads() {
    let task = Task::from_yaml(VALID, &[]).unwrap();
    assert_eq!(task.scorers.len(), 2);
}
