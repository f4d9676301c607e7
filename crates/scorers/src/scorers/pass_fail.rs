//! `pass_fail` (AgenticAssure): a non-empty output that holds the expected output, or any
//! non-empty output without one.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, score_array, text, Text, TextInput};
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use evalscore_kernels::pass_fail;
use evalscore_task::{ScorerField, TaskError, Template};

/// The kind `pass_fail`.
#[derive(Debug)]
pub struct PassFail;

impl ScorerType for PassFail {
    fn names(&self) -> &'static [&'static str] {
        &["pass_fail"]
    }

    fn doc(&self) -> &'static str {
        "AgenticAssure's `pass_fail`: `is_correct` is 1.0 when the value is not empty and contains `expected_output`; without `expected_output`, when it is not empty."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::optional(
                "expected_output",
                "template of a text the value must contain",
            ),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        "{type: pass_fail, expected_output: yes}"
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        Ok(Box::new(PassFailScorer {
            expected_output: cx.template("expected_output")?,
            input: cx.text_input()?,
        }))
    }
}

/// A bound `pass_fail`.
#[derive(Debug)]
struct PassFailScorer {
    expected_output: Option<Template>,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
    ScorerField::compared("expected"),
];

impl Scorer for PassFailScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.expected_output
            .iter()
            .chain(self.input.value())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let t = self.expected_output.as_ref();
            let e = match t {
                Some(t) => text(Some(t), input.ctx)?,
                None => Text::Null,
            };
            let ec = e.column().map_err(|x| row_err(t, x))?;
            let out = pass_fail(v.column, ec, v.normalize, rows);
            fields.insert("is_correct", score_array(out.is_correct));
            if input.want("expected") {
                fields.insert("expected", e.array(rows));
            }
            Ok(out.missing)
        })
    }
}
