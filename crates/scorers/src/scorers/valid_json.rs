//! `valid_json`: the whole value is one JSON text (RFC 8259), fitting `schema:` when one is
//! given.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check};
use crate::kernel_options::schema_option;
use crate::row_error::RowError;
use crate::scorer::{About, OptionDoc, ParseCx, Scorer, ScorerType, VALUE_OPTION};
use evalscore_kernels::{valid_json, JsonSchema};
use evalscore_task::{ScorerField, TaskError};

/// The kind `valid_json`.
#[derive(Debug)]
pub struct ValidJson;

static ABOUT: About = About::new(
    &["valid_json"],
    "`is_correct` is 1.0 when the whole value is one JSON text (and fits `schema:`); `details` says why not.",
    &[
        OptionDoc::optional("schema", "a JSON Schema, inline or the path of a JSON file"),
        VALUE_OPTION,
    ],
    "{type: valid_json, schema: {type: object, required: [answer]}}",
);

impl ScorerType for ValidJson {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let schema = schema_option(cx)?;
        Ok(Bound::boxed(
            ValidJsonCheck { schema },
            None,
            cx.text_input()?,
        ))
    }
}

/// A bound `valid_json`.
#[derive(Debug)]
struct ValidJsonCheck {
    schema: Option<JsonSchema>,
}

impl Check for ValidJsonCheck {
    const FIELDS: &'static [ScorerField] = &[
        ScorerField::number("is_correct"),
        ScorerField::text("details"),
        ScorerField::compared("value"),
    ];

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_value(input, |batch| valid_json(batch, self.schema.as_ref()))
    }
}
