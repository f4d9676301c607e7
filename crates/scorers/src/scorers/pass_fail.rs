//! `pass_fail`: a non-empty output that holds the expected output, or any non-empty output
//! without one.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, EXPECTED_FIELDS};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::pass_fail;
use evalscore_task::{ScorerField, TaskError};

/// The kind `pass_fail`: it is its own `Check`, with nothing to hold beyond what `Bound` holds.
#[derive(Debug)]
pub struct PassFail;

impl Kind for PassFail {
    const ABOUT: About = About::new(
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

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected_output = cx.template("expected_output")?;
        cx.bind(PassFail, expected_output)
    }
}

impl Check for PassFail {
    const FIELDS: &'static [ScorerField] = EXPECTED_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_text(input, "expected", pass_fail)
    }
}
