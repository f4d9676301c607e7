//! `exact` (AgenticAssure): the value is the expected output, character for character;
//! `details` shows where they first differ.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, score_array, text, TextInput};
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use arrow::array::ArrayRef;
use evalscore_kernels::exact;
use evalscore_task::{ScorerField, TaskError, Template};
use std::sync::Arc;

/// The kind `exact`.
#[derive(Debug)]
pub struct Exact;

impl ScorerType for Exact {
    fn names(&self) -> &'static [&'static str] {
        &["exact"]
    }

    fn doc(&self) -> &'static str {
        "AgenticAssure's `exact`: `is_correct` is 1.0 when the value is `expected_output` character for character; `details` shows where they first differ."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::required("expected_output", "template of the expected text"),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        r#"{type: exact, expected_output: "{{ sample.expected_output }}"}"#
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected_output =
            cx.required_template("expected_output", r#""{{ sample.expected_output }}""#)?;
        Ok(Box::new(ExactScorer {
            expected_output,
            input: cx.text_input()?,
        }))
    }
}

/// A bound `exact`.
#[derive(Debug)]
struct ExactScorer {
    expected_output: Template,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("details"),
    ScorerField::compared("value"),
    ScorerField::compared("expected"),
];

impl Scorer for ExactScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        std::iter::once(&self.expected_output)
            .chain(self.input.value())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let t = &self.expected_output;
            let e = text(Some(t), input.ctx)?;
            let ec = e.column().map_err(|x| row_err(Some(t), x))?;
            let out = exact(v.column, ec, v.normalize, rows);
            fields.insert("is_correct", score_array(out.is_correct));
            fields.insert("details", Arc::new(out.details) as ArrayRef);
            if input.want("expected") {
                fields.insert("expected", e.array(rows));
            }
            Ok(out.missing)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ExactScorer;
    use crate::Task;

    #[test]
    fn the_walker_hands_extract_to_the_scored_text() {
        let text = "definition:\n  scorers:\n    - {type: exact, expected_output: \"{{ sample.e }}\", extract: answer_letter}\n";
        let task = Task::from_yaml(text, &[]).unwrap();
        let any: &dyn std::any::Any = task.scorers[0].scorer.as_ref();
        let e = any.downcast_ref::<ExactScorer>().unwrap();
        assert!(e.input.extracts() && e.input.normalize().is_none());
    }
}
