//! `includes_all`: every expected string is in the value.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check};
use crate::row_error::RowError;
use crate::scorer::{About, OptionDoc, ParseCx, Scorer, ScorerType, VALUE_OPTION};
use evalscore_kernels::includes_all;
use evalscore_task::{ScorerField, TaskError};

/// The kind `includes_all`.
#[derive(Debug)]
pub struct IncludesAll;

static ABOUT: About = About::new(
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

impl ScorerType for IncludesAll {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected =
            cx.required_list_template("expected", r#"[Paris, France] or "{{ sample.keywords }}""#)?;
        Ok(Bound::boxed(
            IncludesAllCheck,
            Some(expected),
            cx.text_input()?,
        ))
    }
}

/// A bound `includes_all`: the value against the `expected` strings.
#[derive(Debug)]
struct IncludesAllCheck;

impl Check for IncludesAllCheck {
    const FIELDS: &'static [ScorerField] = &[
        ScorerField::number("is_correct"),
        ScorerField::compared("value"),
        ScorerField::compared("expected"),
    ];

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_strings(input, None, includes_all)
    }
}
