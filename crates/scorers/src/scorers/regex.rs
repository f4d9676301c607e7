//! `regex`: `pattern` is found in the value; with `ground_truth`, its first capture group
//! must also equal the ground truth.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check};
use crate::kernel_options::search_pattern;
use crate::row_error::RowError;
use crate::scorer::{About, OptionDoc, ParseCx, Scorer, ScorerType, VALUE_OPTION};
use evalscore_kernels::pattern::SearchPattern;
use evalscore_kernels::regex_check;
use evalscore_task::{ScorerField, TaskError};

/// The kind `regex`.
#[derive(Debug)]
pub struct Regex;

static ABOUT: About = About::new(
    &["regex"],
    "`is_correct` is 1.0 when `pattern` is found in the value; with `ground_truth`, when its first capture group equals the ground truth.",
    &[
        OptionDoc::required(
            "pattern",
            "a regular expression (Rust syntax) searched in the value",
        ),
        OptionDoc::optional(
            "ground_truth",
            "template the first capture group must equal",
        ),
        VALUE_OPTION,
    ],
    r#"{type: regex, pattern: "(?i)answer: (\\d+)", ground_truth: "{{ sample.answer }}"}"#,
);

impl ScorerType for Regex {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let (pattern, node) = search_pattern(cx, "regex.pattern", r#""(?i)answer: (\\d+)""#)?;
        let ground_truth = cx.template("ground_truth")?;
        if ground_truth.is_some() && pattern.regex().captures_len() < 2 {
            return Err(node
                .err("`regex.pattern` has no capture group, but `ground_truth` is given")
                .with_hint("with `ground_truth`, the first capture group is compared: e.g. `answer: (\\d+)`"));
        }
        Ok(Bound::boxed(
            RegexCheck { pattern },
            ground_truth,
            cx.text_input()?,
        ))
    }
}

/// A bound `regex`: `pattern` in the value, against `ground_truth` if given.
#[derive(Debug)]
struct RegexCheck {
    pattern: SearchPattern,
}

impl Check for RegexCheck {
    const FIELDS: &'static [ScorerField] = &[
        ScorerField::number("is_correct"),
        ScorerField::compared("value"),
        ScorerField::compared("ground_truth"),
    ];

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let compares = b.other.is_some();
        b.score_text(input, "ground_truth", |batch, g| {
            regex_check(batch, &self.pattern, compares.then_some(g))
        })
    }
}
