//! The text a scorer scores: the `value:` template (default: the model output), then
//! `extract:`, with the `normalize:` steps that the kernels apply to both sides.

pub(crate) mod options;
pub mod text;

pub use text::{
    evaluate_any, is_list, list_as_text, row_err, score_array, template_err, text, Text,
};

use crate::batch::{BatchInput, Fields, ScoreColumns};
use crate::row_error::RowError;
use evalscore_kernels::{Extractor, Normalizer};
use evalscore_task::Template;
use evalscore_text::TextColumn;
use std::sync::Arc;

/// A scorer's `value:`, `extract:` and `normalize:`, from
/// [`ParseCx::text_input`](crate::scorer::ParseCx::text_input).
#[derive(Debug)]
pub struct TextInput {
    value: Option<Template>,
    extract: Option<Arc<Extractor>>,
    normalize: Option<Arc<Normalizer>>,
}

/// The scored text of one batch, as a scorer's kernel reads it.
#[derive(Clone, Copy)]
pub struct ScoredValue<'a> {
    /// The value after `extract:` (before `normalize:`).
    pub text: &'a Text,
    pub column: TextColumn<'a>,
    /// Per row, whether `extract:` found what it looks for (`None` without `extract:`).
    pub found: Option<&'a [bool]>,
    /// The `normalize:` steps, for the kernel to apply to both sides.
    pub normalize: Option<&'a Normalizer>,
}

impl TextInput {
    pub(crate) fn new(
        value: Option<Template>,
        extract: Option<Arc<Extractor>>,
        normalize: Option<Arc<Normalizer>>,
    ) -> Self {
        TextInput {
            value,
            extract,
            normalize,
        }
    }

    /// The `value:` template; `None`: the model output.
    pub fn value(&self) -> Option<&Template> {
        self.value.as_ref()
    }

    /// The `normalize:` steps.
    pub fn normalize(&self) -> Option<&Normalizer> {
        self.normalize.as_deref()
    }

    /// Whether the scorer has `extract:`.
    pub fn extracts(&self) -> bool {
        self.extract.is_some()
    }

    /// Scores one batch: evaluates the value, applies `extract:`, runs `kernel` (which adds
    /// its fields and returns the missing count), and adds the `value` field when wanted and
    /// the kernel has not.
    pub fn score(
        &self,
        input: &BatchInput<'_>,
        kernel: impl FnOnce(&ScoredValue<'_>, &mut Fields) -> Result<usize, RowError>,
    ) -> Result<ScoreColumns, RowError> {
        let rows = input.rows;
        let value_t = self.value.as_ref();
        let mut v = text(value_t, input.ctx)?;
        let mut found: Option<Vec<bool>> = None;
        if let Some(x) = &self.extract {
            let col = v.column().map_err(|e| row_err(value_t, e))?;
            let e = x.column(&col, rows);
            found = Some(e.found);
            v = Text::Array(e.values);
        }
        let mut fields = Fields::new();
        let scored = ScoredValue {
            text: &v,
            column: v.column().map_err(|e| row_err(value_t, e))?,
            found: found.as_deref(),
            normalize: self.normalize.as_deref(),
        };
        let missing = kernel(&scored, &mut fields)?;
        // A kind whose own field is `value` (the `value` scorer) has set it already.
        if input.want("value") {
            fields.entry("value").or_insert_with(|| v.array(rows));
        }
        Ok(ScoreColumns {
            fields,
            missing: missing as u64,
            invalid: 0,
        })
    }
}
