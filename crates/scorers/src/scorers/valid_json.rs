//! `valid_json` (Baserun): the whole value is one JSON text (RFC 8259), fitting `schema:`
//! when one is given.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, score_array, TextInput};
use crate::kernel_options::parse_schema;
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use arrow::array::ArrayRef;
use evalscore_kernels::{valid_json, JsonSchema};
use evalscore_task::{ScorerField, TaskError, Template};
use evalscore_text::TextColumn;
use std::sync::Arc;

/// The kind `valid_json`.
#[derive(Debug)]
pub struct ValidJson;

impl ScorerType for ValidJson {
    fn names(&self) -> &'static [&'static str] {
        &["valid_json"]
    }

    fn doc(&self) -> &'static str {
        "Baserun's `valid_json`: `is_correct` is 1.0 when the whole value is one JSON text (and fits `schema:`); `details` says why not."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::optional("schema", "a JSON Schema, inline or the path of a JSON file"),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        "{type: valid_json, schema: {type: object, required: [answer]}}"
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let schema = match cx.given("schema") {
            Some(n) => Some(parse_schema(n, cx.base_dir())?),
            None => None,
        };
        Ok(Box::new(ValidJsonScorer {
            schema,
            input: cx.text_input()?,
        }))
    }
}

/// A bound `valid_json`.
#[derive(Debug)]
struct ValidJsonScorer {
    schema: Option<JsonSchema>,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("details"),
    ScorerField::compared("value"),
];

impl Scorer for ValidJsonScorer {
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
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let normalized;
            let vc = match v.normalize {
                Some(n) => {
                    normalized = n.column(&v.column, rows);
                    TextColumn::new(normalized.as_ref(), "value").map_err(|e| row_err(None, e))?
                }
                None => v.column,
            };
            let out = valid_json(vc, self.schema.as_ref(), rows);
            fields.insert("is_correct", score_array(out.is_correct));
            fields.insert("details", Arc::new(out.details) as ArrayRef);
            Ok(out.missing)
        })
    }
}
