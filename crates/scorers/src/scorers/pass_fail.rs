//! `pass_fail`: a non-empty output that holds the expected output, or any non-empty output
//! without one.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check};
use crate::row_error::RowError;
use crate::scorer::{About, OptionDoc, ParseCx, Scorer, ScorerType, VALUE_OPTION};
use evalscore_kernels::pass_fail;
use evalscore_task::{ScorerField, TaskError};

/// The kind `pass_fail`.
#[derive(Debug)]
pub struct PassFail;

static ABOUT: About = About::new(
    &["pass_fail"],
    "`is_correct` is 1.0 when the value is not empty and contains `expected_output`; without `expected_output`, when it is not empty.",
    &[
        OptionDoc::optional(
            "expected_output",
            "template of a text the value must contain",
        ),
        VALUE_OPTION,
    ],
    "{type: pass_fail, expected_output: yes}",
);

impl ScorerType for PassFail {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected_output = cx.template("expected_output")?;
        Ok(Bound::boxed(
            PassFailCheck,
            expected_output,
            cx.text_input()?,
        ))
    }
}

/// A bound `pass_fail`: the value against `expected_output`, if any.
#[derive(Debug)]
struct PassFailCheck;

impl Check for PassFailCheck {
    const FIELDS: &'static [ScorerField] = &[
        ScorerField::number("is_correct"),
        ScorerField::compared("value"),
        ScorerField::compared("expected"),
    ];

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_text(input, "expected", pass_fail)
    }
}
