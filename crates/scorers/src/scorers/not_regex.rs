//! `not_regex` (promptfoo's `not-regex`): the value does not contain a match of `pattern`.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{score_array, TextInput};
use crate::kernel_options::pattern_error;
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use evalscore_kernels::not_regex;
use evalscore_kernels::pattern::SearchPattern;
use evalscore_task::{ScorerField, TaskError, Template};

/// The kind `not_regex`.
#[derive(Debug)]
pub struct NotRegex;

impl ScorerType for NotRegex {
    fn names(&self) -> &'static [&'static str] {
        &["not_regex"]
    }

    fn doc(&self) -> &'static str {
        "promptfoo's `not-regex`: `is_correct` is 1.0 when `pattern` is not found in the value."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::required(
                "pattern",
                "a regular expression (Rust syntax) that must not match",
            ),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        r#"{type: not_regex, pattern: "(?i)\\bsorry\\b"}"#
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let node = cx.required("pattern", r#""(?i)\\bsorry\\b""#)?;
        let text = node.scalar_string("pattern")?;
        let pattern = SearchPattern::new(&text).map_err(|e| {
            pattern_error(node, "not_regex.pattern", e, "patterns use Rust regex syntax (https://docs.rs/regex): inline flags like (?i), no look-around or backreferences")
        })?;
        Ok(Box::new(NotRegexScorer {
            pattern,
            input: cx.text_input()?,
        }))
    }
}

/// A bound `not_regex`.
#[derive(Debug)]
struct NotRegexScorer {
    pattern: SearchPattern,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
];

impl Scorer for NotRegexScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.input.value().into_iter().collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        self.input.score(input, |v, fields| {
            let out = not_regex(v.column, &self.pattern, v.normalize, input.rows);
            fields.insert("is_correct", score_array(out.is_correct));
            Ok(out.missing)
        })
    }
}
