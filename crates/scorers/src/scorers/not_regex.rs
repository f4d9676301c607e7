//! `not_regex`: the value does not contain a match of `pattern`.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, VALUE_FIELDS};
use crate::kernel_options::search_pattern;
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::not_regex;
use evalscore_kernels::pattern::SearchPattern;
use evalscore_task::{ScorerField, TaskError};

/// The kind `not_regex`.
#[derive(Debug)]
pub struct NotRegex;

impl Kind for NotRegex {
    const ABOUT: About = About::new(
        &["not_regex"],
        "`is_correct` is 1.0 when `pattern` is not found in the value.",
        &[
            OptionDoc::required(
                "pattern",
                "a regular expression (Rust syntax) that must not match",
            ),
            VALUE_OPTION,
        ],
        r#"{type: not_regex, pattern: "(?i)\\bsorry\\b"}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let (pattern, _) = search_pattern(cx, "not_regex.pattern", r#""(?i)\\bsorry\\b""#)?;
        cx.bind(NotRegexCheck { pattern }, None)
    }
}

/// A bound `not_regex`.
#[derive(Debug)]
struct NotRegexCheck {
    pattern: SearchPattern,
}

impl Check for NotRegexCheck {
    const FIELDS: &'static [ScorerField] = VALUE_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_value(input, |batch| not_regex(batch, &self.pattern))
    }
}
