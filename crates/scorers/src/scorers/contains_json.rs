//! `contains_json`: some substring of the value is a JSON object or array, fitting `schema:`
//! when one is given.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, DETAILS_FIELDS};
use crate::kernel_options::schema_option;
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::{contains_json, JsonSchema};
use evalscore_task::{ScorerField, TaskError};

/// The kind `contains_json`.
#[derive(Debug)]
pub struct ContainsJson;

impl Kind for ContainsJson {
    const ABOUT: About = About::new(
        &["contains_json"],
        "`is_correct` is 1.0 when some substring of the value is a JSON object or array (fitting `schema:`); `details` says what was found.",
        &[
            OptionDoc::optional("schema", "a JSON Schema, inline or the path of a JSON file"),
            VALUE_OPTION,
        ],
        "{type: contains_json}",
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let schema = schema_option(cx)?;
        cx.bind(ContainsJsonCheck { schema }, None)
    }
}

/// A bound `contains_json`.
#[derive(Debug)]
struct ContainsJsonCheck {
    schema: Option<JsonSchema>,
}

impl Check for ContainsJsonCheck {
    const FIELDS: &'static [ScorerField] = DETAILS_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_value(input, |batch| contains_json(batch, self.schema.as_ref()))
    }
}
