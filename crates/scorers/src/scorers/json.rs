//! The JSON scorers `valid_json` (the whole value is one JSON text, RFC 8259) and
//! `contains_json` (some substring of the value is a JSON object or array), each fitting
//! `schema:` when one is given. One kind per kernel; both take the same options.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, DETAILS_FIELDS};
use crate::kernel_options::schema_option;
use crate::row_error::RowError;
use crate::scorer::{About, OptionDoc, ParseCx, Scorer, ScorerType, VALUE_OPTION};
use evalscore_kernels::{contains_json, valid_json, Batch, JsonSchema, KernelError, Scored};
use evalscore_task::{ScorerField, TaskError};

/// The kernel of a JSON kind: its batch's values checked, against `schema:` if given.
type JsonKernel = fn(Batch<'_>, Option<&JsonSchema>) -> Result<Scored, KernelError>;

/// A JSON scorer kind: one name, one kernel.
#[derive(Debug)]
pub struct JsonScorerType {
    about: &'static About,
    kernel: JsonKernel,
}

const OPTIONS: &[OptionDoc] = &[
    OptionDoc::optional("schema", "a JSON Schema, inline or the path of a JSON file"),
    VALUE_OPTION,
];

pub static VALID_JSON: JsonScorerType = JsonScorerType {
    about: &About::new(
        &["valid_json"],
        "`is_correct` is 1.0 when the whole value is one JSON text (and fits `schema:`); `details` says why not.",
        OPTIONS,
        "{type: valid_json, schema: {type: object, required: [answer]}}",
    ),
    kernel: valid_json,
};

pub static CONTAINS_JSON: JsonScorerType = JsonScorerType {
    about: &About::new(
        &["contains_json"],
        "`is_correct` is 1.0 when some substring of the value is a JSON object or array (fitting `schema:`); `details` says what was found.",
        OPTIONS,
        "{type: contains_json}",
    ),
    kernel: contains_json,
};

impl ScorerType for JsonScorerType {
    fn about(&self) -> &'static About {
        self.about
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let schema = schema_option(cx)?;
        cx.bind(
            JsonCheck {
                schema,
                kernel: self.kernel,
            },
            None,
        )
    }
}

/// A bound `valid_json` or `contains_json`.
#[derive(Debug)]
struct JsonCheck {
    schema: Option<JsonSchema>,
    kernel: JsonKernel,
}

impl Check for JsonCheck {
    const FIELDS: &'static [ScorerField] = DETAILS_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_value(input, |batch| (self.kernel)(batch, self.schema.as_ref()))
    }
}
