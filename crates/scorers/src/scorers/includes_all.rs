//! `includes_all`: every expected string is in the value.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, EXPECTED_FIELDS};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::includes_all;
use evalscore_task::{ScorerField, TaskError};

/// The kind `includes_all`: it is its own `Check`, with nothing to hold beyond what `Bound` holds.
#[derive(Debug)]
pub struct IncludesAll;

impl Kind for IncludesAll {
    const ABOUT: About = About::new(
        &["includes_all"],
        "`is_correct` is 1.0 when every expected string is a substring of the value.",
        &[
            OptionDoc::required(
                "expected",
                "the strings: a literal list, a list column, or a JSON or Python list text",
            ),
            VALUE_OPTION,
        ],
        "{type: includes_all, expected: [Paris, France]}",
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected =
            cx.required_list_template("expected", r#"[Paris, France] or "{{ sample.keywords }}""#)?;
        cx.bind(IncludesAll, Some(expected))
    }
}

impl Check for IncludesAll {
    const FIELDS: &'static [ScorerField] = EXPECTED_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_strings(input, None, includes_all)
    }
}
