//! `check_injection`: a heuristic list of prompt-injection patterns.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check};
use crate::row_error::RowError;
use crate::scorer::{About, ParseCx, Scorer, ScorerType, VALUE_OPTION};
use evalscore_kernels::check_injection;
use evalscore_task::{ScorerField, TaskError};

/// The kind `check_injection`.
#[derive(Debug)]
pub struct CheckInjection;

static ABOUT: About = About::new(
    &["check_injection"],
    "A heuristic: `is_correct` is 1.0 when the value shows none of a fixed list of prompt-injection patterns; `details` names the one found.",
    &[VALUE_OPTION],
    "{type: check_injection}",
);

impl ScorerType for CheckInjection {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        Ok(Bound::boxed(CheckInjectionCheck, None, cx.text_input()?))
    }
}

/// A bound `check_injection`.
#[derive(Debug)]
struct CheckInjectionCheck;

impl Check for CheckInjectionCheck {
    const FIELDS: &'static [ScorerField] = &[
        ScorerField::number("is_correct"),
        ScorerField::text("details"),
        ScorerField::compared("value"),
    ];

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_value(input, check_injection)
    }
}
