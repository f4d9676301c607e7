//! `includes_all` (promptfoo's `contains-all`): every expected string is in the value.

use crate::batch::{BatchInput, ScoreColumns};
use crate::expected::ExpectedList;
use crate::input::{row_err, score_array, TextInput};
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use evalscore_kernels::includes_all;
use evalscore_task::{ScorerField, TaskError, Template};

/// The kind `includes_all`.
#[derive(Debug)]
pub struct IncludesAll;

impl ScorerType for IncludesAll {
    fn names(&self) -> &'static [&'static str] {
        &["includes_all"]
    }

    fn doc(&self) -> &'static str {
        "promptfoo's `contains-all`: `is_correct` is 1.0 when every expected string is a substring of the value."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::required(
                "expected",
                "the strings: a literal list, a list column, or a JSON or Python list text",
            ),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        "{type: includes_all, expected: [Paris, France]}"
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected =
            cx.required_list_template("expected", r#"[Paris, France] or "{{ sample.keywords }}""#)?;
        Ok(Box::new(IncludesAllScorer {
            expected,
            input: cx.text_input()?,
        }))
    }
}

/// A bound `includes_all`.
#[derive(Debug)]
struct IncludesAllScorer {
    expected: Template,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
    ScorerField::compared("expected"),
];

impl Scorer for IncludesAllScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        std::iter::once(&self.expected)
            .chain(self.input.value())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let e = ExpectedList::new(&self.expected, input.ctx)?;
            let out = includes_all(v.column, e.references(), v.normalize, rows)
                .map_err(|err| row_err(Some(&self.expected), err))?;
            fields.insert("is_correct", score_array(out.is_correct));
            if input.want("expected") {
                fields.insert("expected", e.field(rows));
            }
            Ok(out.missing)
        })
    }
}
