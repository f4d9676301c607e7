//! `exact`: the value is the expected output, character for character; `details` shows where
//! they first differ.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::exact;
use evalscore_task::{ScorerField, TaskError};

/// The kind `exact`: it is its own `Check`, with nothing to hold beyond what `Bound` holds.
#[derive(Debug)]
pub struct Exact;

impl Kind for Exact {
    const ABOUT: About = About::new(
        &["exact"],
        "`is_correct` is 1.0 when the value is `expected_output` character for character; `details` shows where they first differ.",
        &[
            OptionDoc::required("expected_output", "template of the expected text"),
            VALUE_OPTION,
        ],
        r#"{type: exact, expected_output: "{{ sample.expected_output }}"}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected_output =
            cx.required_template("expected_output", r#""{{ sample.expected_output }}""#)?;
        cx.bind(Exact, Some(expected_output))
    }
}

impl Check for Exact {
    const FIELDS: &'static [ScorerField] = &[
        ScorerField::number("is_correct"),
        ScorerField::text("details"),
        ScorerField::compared("value"),
        ScorerField::compared("expected"),
    ];

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_text(input, "expected", exact)
    }
}

#[cfg(test)]
mod tests {
    use super::Exact;
    use crate::bound::Bound;
    use crate::Task;

    #[test]
    fn the_walker_hands_extract_to_the_scored_text() {
        let text = "definition:\n  scorers:\n    - {type: exact, expected_output: \"{{ sample.e }}\", extract: answer_letter}\n";
        let task = Task::from_yaml(text, &[]).unwrap();
        let any: &dyn std::any::Any = task.scorers[0].scorer.as_ref();
        let e = any.downcast_ref::<Bound<Exact>>().unwrap();
        assert!(e.input.extracts() && e.input.normalize().is_none());
    }
}
