//! `contains_json` (promptfoo's `contains-json`): some substring of the value is a JSON object
//! or array, fitting `schema:` when one is given.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{score_array, TextInput};
use crate::kernel_options::parse_schema;
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use arrow::array::ArrayRef;
use evalscore_kernels::{contains_json, JsonSchema};
use evalscore_task::{ScorerField, TaskError, Template};
use std::sync::Arc;

/// The kind `contains_json`.
#[derive(Debug)]
pub struct ContainsJson;

impl ScorerType for ContainsJson {
    fn names(&self) -> &'static [&'static str] {
        &["contains_json"]
    }

    fn doc(&self) -> &'static str {
        "promptfoo's `contains-json`: `is_correct` is 1.0 when some substring of the value is a JSON object or array (fitting `schema:`); `details` says what was found."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::optional("schema", "a JSON Schema, inline or the path of a JSON file"),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        "{type: contains_json}"
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let schema = match cx.given("schema") {
            Some(n) => Some(parse_schema(n, cx.base_dir())?),
            None => None,
        };
        Ok(Box::new(ContainsJsonScorer {
            schema,
            input: cx.text_input()?,
        }))
    }
}

/// A bound `contains_json`.
#[derive(Debug)]
struct ContainsJsonScorer {
    schema: Option<JsonSchema>,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("details"),
    ScorerField::compared("value"),
];

impl Scorer for ContainsJsonScorer {
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
            let out = contains_json(v.column, self.schema.as_ref(), v.normalize, input.rows);
            fields.insert("is_correct", score_array(out.is_correct));
            fields.insert("details", Arc::new(out.details) as ArrayRef);
            Ok(out.missing)
        })
    }
}
