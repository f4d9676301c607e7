//! `valid_json`: the whole value is one JSON text (RFC 8259), fitting `schema:` when one is
//! given.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, DETAILS_FIELDS};
use crate::kernel_options::schema_option;
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::{valid_json, JsonSchema};
use evalscore_task::{ScorerField, TaskError};

/// The kind `valid_json`.
#[derive(Debug)]
pub struct ValidJson;

impl Kind for ValidJson {
    const ABOUT: About = About::new(
        &["valid_json"],
        "`is_correct` is 1.0 when the whole value is one JSON text (and fits `schema:`); `details` says why not.",
        &[
            OptionDoc::optional("schema", "a JSON Schema, inline or the path of a JSON file"),
            VALUE_OPTION,
        ],
        "{type: valid_json, schema: {type: object, required: [answer]}}",
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let schema = schema_option(cx)?;
        cx.bind(ValidJsonCheck { schema }, None)
    }
}

/// A bound `valid_json`.
#[derive(Debug)]
struct ValidJsonCheck {
    schema: Option<JsonSchema>,
}

impl Check for ValidJsonCheck {
    const FIELDS: &'static [ScorerField] = DETAILS_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_value(input, |batch| valid_json(batch, self.schema.as_ref()))
    }
}
