//! The expected strings of `includes_all` and the graded scorers: a literal text (a JSON or
//! Python list text is several strings), a literal list, or a column; and the `expected`
//! field that shows them.

use crate::input::{evaluate_any, is_list, list_as_text};
use crate::row_error::RowError;
use arrow::array::{ArrayRef, StringArray};
use evalscore_kernels::References;
use evalscore_task::{RowContext, Template, TemplateOutput};
use std::sync::Arc;

/// A batch's expected strings.
pub(crate) struct ExpectedList {
    out: TemplateOutput,
    fixed: Option<Vec<String>>,
}

impl ExpectedList {
    pub fn new(t: &Template, ctx: &RowContext<'_>) -> Result<Self, RowError> {
        let out = evaluate_any(t, ctx)?;
        let fixed = match &out {
            TemplateOutput::Scalar(s) => {
                Some(evalscore_kernels::text_as_list(s).unwrap_or_else(|| vec![s.clone()]))
            }
            TemplateOutput::List(l) => Some(l.clone()),
            TemplateOutput::Array(_) => None,
        };
        Ok(ExpectedList { out, fixed })
    }

    pub fn references(&self) -> References<'_> {
        match (&self.fixed, &self.out) {
            (Some(f), _) => References::Fixed(f),
            (None, TemplateOutput::Array(a)) => References::PerRow(a.as_ref()),
            (None, _) => References::Fixed(&[]),
        }
    }

    /// The `expected` field: the text, a list as JSON text, or the column.
    pub fn field(&self, rows: usize) -> ArrayRef {
        match &self.out {
            TemplateOutput::Scalar(s) => Arc::new(StringArray::from(vec![s.as_str(); rows])),
            TemplateOutput::List(l) => {
                let text = serde_json::to_string(l).unwrap_or_default();
                Arc::new(StringArray::from(vec![text.as_str(); rows]))
            }
            TemplateOutput::Array(a) if is_list(a.as_ref()) => list_as_text(a.as_ref()),
            TemplateOutput::Array(a) => Arc::clone(a),
        }
    }
}
