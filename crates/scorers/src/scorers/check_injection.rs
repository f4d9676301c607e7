//! `check_injection`: a heuristic list of prompt-injection patterns.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, DETAILS_FIELDS};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::check_injection;
use evalscore_task::{ScorerField, TaskError};

/// The kind `check_injection`: it is its own `Check`, with nothing to hold beyond what `Bound` holds.
#[derive(Debug)]
pub struct CheckInjection;

impl Kind for CheckInjection {
    const ABOUT: About = About::new(
        &["check_injection"],
        "A heuristic: `is_correct` is 1.0 when the value shows none of a fixed list of prompt-injection patterns; `details` names the one found.",
        &[VALUE_OPTION],
        "{type: check_injection}",
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        cx.bind(CheckInjection, None)
    }
}

impl Check for CheckInjection {
    const FIELDS: &'static [ScorerField] = DETAILS_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_value(input, check_injection)
    }
}
