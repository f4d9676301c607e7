//! `regex`: `pattern` is found in the value; with `ground_truth`, its first capture group
//! must also equal the ground truth.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, GROUND_TRUTH_FIELDS};
use crate::kernel_options::search_pattern;
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::pattern::SearchPattern;
use evalscore_kernels::regex_check;
use evalscore_task::{ScorerField, TaskError};

/// The kind `regex`.
#[derive(Debug)]
pub struct Regex;

impl Kind for Regex {
    const ABOUT: About = About::new(
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

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let (pattern, node) = search_pattern(cx, "regex.pattern", r#""(?i)answer: (\\d+)""#)?;
        let ground_truth = cx.template("ground_truth")?;
        if ground_truth.is_some() && pattern.regex().captures_len() < 2 {
            return Err(node
                .err("`regex.pattern` has no capture group, but `ground_truth` is given")
                .with_hint("with `ground_truth`, the first capture group is compared: e.g. `answer: (\\d+)`"));
        }
        cx.bind(RegexCheck { pattern }, ground_truth)
    }
}

/// A bound `regex`: `pattern` in the value, against `ground_truth` if given.
#[derive(Debug)]
struct RegexCheck {
    pattern: SearchPattern,
}

impl Check for RegexCheck {
    const FIELDS: &'static [ScorerField] = GROUND_TRUTH_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let compares = b.other.is_some();
        b.score_text(input, "ground_truth", |batch, g| {
            regex_check(batch, &self.pattern, compares.then_some(g))
        })
    }
}
