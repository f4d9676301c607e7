//! The expected strings of the match family, `includes_all` and the graded scorers: a literal
//! text (a JSON or Python list text is several strings), a literal list, or a column; and the
//! `expected` field that shows them.

use crate::input::{evaluate_any, is_list, list_as_text};
use crate::row_error::{internal, RowError};
use arrow::array::{ArrayRef, StringArray};
use evalscore_kernels::{text_as_list, Expected, Needles, Normalizer};
use evalscore_task::{RowContext, Template, TemplateOutput};
use std::sync::Arc;

/// A batch's expected strings.
pub(crate) struct ExpectedList<'p> {
    out: TemplateOutput,
    strings: Strings<'p>,
}

enum Strings<'p> {
    /// The strings of a literal, prepared when the task was loaded.
    Prepared(&'p Needles),
    /// The same strings for every row of this batch, prepared here.
    Batch(Needles),
    /// A column: a list column, or text cells (each one string or a list written as text).
    Column(ArrayRef),
}

impl<'p> ExpectedList<'p> {
    /// Evaluates `t` (`None` only by mistake: every kind with expected strings requires
    /// them); `prepared` are its strings when it is a literal, `norm` the `normalize:` steps.
    pub fn new(
        t: Option<&Template>,
        ctx: &RowContext<'_>,
        prepared: Option<&'p Needles>,
        norm: Option<&Normalizer>,
    ) -> Result<Self, RowError> {
        let t = t.ok_or_else(|| internal(&"expected strings without a template"))?;
        let out = evaluate_any(t, ctx)?;
        let strings = match (&out, prepared) {
            (TemplateOutput::Array(a), _) => Strings::Column(Arc::clone(a)),
            (_, Some(n)) => Strings::Prepared(n),
            (TemplateOutput::Scalar(s), None) => Strings::Batch(Needles::new(
                text_as_list(s).unwrap_or_else(|| vec![s.clone()]),
                norm,
            )),
            (TemplateOutput::List(l), None) => Strings::Batch(Needles::new(l, norm)),
        };
        Ok(ExpectedList { out, strings })
    }

    /// The strings as the kernels take them.
    pub fn expected(&self) -> Expected<'_> {
        match &self.strings {
            Strings::Prepared(n) => Expected::Fixed(n),
            Strings::Batch(n) => Expected::Fixed(n),
            Strings::Column(a) => Expected::PerRow(a.as_ref()),
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
