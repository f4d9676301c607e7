//! `contains_json`: some substring of the value is a JSON object or array, fitting `schema:`
//! when one is given.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check};
use crate::kernel_options::schema_option;
use crate::row_error::RowError;
use crate::scorer::{About, OptionDoc, ParseCx, Scorer, ScorerType, VALUE_OPTION};
use evalscore_kernels::{contains_json, JsonSchema};
use evalscore_task::{ScorerField, TaskError};

/// The kind `contains_json`.
#[derive(Debug)]
pub struct ContainsJson;

static ABOUT: About = About::new(
    &["contains_json"],
    "`is_correct` is 1.0 when some substring of the value is a JSON object or array (fitting `schema:`); `details` says what was found.",
    &[
        OptionDoc::optional("schema", "a JSON Schema, inline or the path of a JSON file"),
        VALUE_OPTION,
    ],
    "{type: contains_json}",
);

impl ScorerType for ContainsJson {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let schema = schema_option(cx)?;
        Ok(Bound::boxed(
            ContainsJsonCheck { schema },
            None,
            cx.text_input()?,
        ))
    }
}

/// A bound `contains_json`.
#[derive(Debug)]
struct ContainsJsonCheck {
    schema: Option<JsonSchema>,
}

impl Check for ContainsJsonCheck {
    const FIELDS: &'static [ScorerField] = &[
        ScorerField::number("is_correct"),
        ScorerField::text("details"),
        ScorerField::compared("value"),
    ];

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_value(input, |batch| contains_json(batch, self.schema.as_ref()))
    }
}
