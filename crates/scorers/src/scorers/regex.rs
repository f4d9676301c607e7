//! `regex` (AgenticAssure): `pattern` is found in the value; with `ground_truth`, its first
//! capture group must also equal the ground truth.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, score_array, text, TextInput};
use crate::kernel_options::pattern_error;
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use arrow::array::{ArrayRef, StringArray};
use evalscore_kernels::pattern::SearchPattern;
use evalscore_kernels::regex_check;
use evalscore_task::{ScorerField, TaskError, Template};
use std::sync::Arc;

/// The kind `regex`.
#[derive(Debug)]
pub struct Regex;

impl ScorerType for Regex {
    fn names(&self) -> &'static [&'static str] {
        &["regex"]
    }

    fn doc(&self) -> &'static str {
        "AgenticAssure's `regex`: `is_correct` is 1.0 when `pattern` is found in the value; with `ground_truth`, when its first capture group equals the ground truth."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::required(
                "pattern",
                "a regular expression (Rust syntax) searched in the value",
            ),
            OptionDoc::optional(
                "ground_truth",
                "template the first capture group must equal",
            ),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        r#"{type: regex, pattern: "(?i)answer: (\\d+)", ground_truth: "{{ sample.answer }}"}"#
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let node = cx.required("pattern", r#""(?i)answer: (\\d+)""#)?;
        let text = node.scalar_string("pattern")?;
        let pattern = SearchPattern::new(&text).map_err(|e| {
            pattern_error(node, "regex.pattern", e, "patterns use Rust regex syntax (https://docs.rs/regex): inline flags like (?i), no look-around or backreferences")
        })?;
        let ground_truth = cx.template("ground_truth")?;
        if ground_truth.is_some() && pattern.regex().captures_len() < 2 {
            return Err(node
                .err("`regex.pattern` has no capture group, but `ground_truth` is given")
                .with_hint("with `ground_truth`, the first capture group is compared: e.g. `answer: (\\d+)`"));
        }
        Ok(Box::new(RegexScorer {
            pattern,
            ground_truth,
            input: cx.text_input()?,
        }))
    }
}

/// A bound `regex`.
#[derive(Debug)]
struct RegexScorer {
    pattern: SearchPattern,
    ground_truth: Option<Template>,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
    ScorerField::compared("ground_truth"),
];

impl Scorer for RegexScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.ground_truth.iter().chain(self.input.value()).collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let g = self
                .ground_truth
                .as_ref()
                .map(|t| text(Some(t), input.ctx))
                .transpose()?;
            let gc = g
                .as_ref()
                .map(|g| g.column())
                .transpose()
                .map_err(|e| row_err(self.ground_truth.as_ref(), e))?;
            let out = regex_check(v.column, &self.pattern, gc, v.normalize, rows);
            fields.insert("is_correct", score_array(out.is_correct));
            if input.want("ground_truth") {
                let gt_field = g.map_or_else(
                    || Arc::new(StringArray::new_null(rows)) as ArrayRef,
                    |g| g.array(rows),
                );
                fields.insert("ground_truth", gt_field);
            }
            Ok(out.missing)
        })
    }
}
