//! The bound scorer of the text kinds: a kernel call ([`Check`]) with the template the value
//! is compared with, if any, and the scored text ([`TextInput`]). A kind's file says which
//! kernel it calls and how; the templates, the scored text, the compared field and the
//! kernel's fields (`is_correct`, `score`, `details`) are handled here, once.

use crate::batch::{BatchInput, Fields, ScoreColumns};
use crate::expected::ExpectedList;
use crate::input::{row_err, score_array, text, ScoredValue, Text, TextInput};
use crate::row_error::RowError;
use crate::scorer::{ParseCx, Scorer};
use evalscore_kernels::{Batch, Expected, KernelError, Needles, Scored};
use evalscore_task::{ModelSpec, ScorerField, TaskError, Template};
use evalscore_text::TextColumn;
use std::collections::BTreeMap;

/// The field lists most text kinds share: `is_correct` and the scored `value`, then `details`
/// or the compared template, named as the kind's option names it.
pub(crate) const VALUE_FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
];
/// [`VALUE_FIELDS`] with the kernel's `details`.
pub(crate) const DETAILS_FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("details"),
    ScorerField::compared("value"),
];
/// [`VALUE_FIELDS`] with the compared template `expected`.
pub(crate) const EXPECTED_FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
    ScorerField::compared("expected"),
];
/// [`VALUE_FIELDS`] with the compared template `ground_truth`.
pub(crate) const GROUND_TRUTH_FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
    ScorerField::compared("ground_truth"),
];

/// What a kind's bound scorer does with its [`Bound`] parts.
pub(crate) trait Check: std::fmt::Debug + Send + Sync + Sized + 'static {
    /// Every field it produces, written ones first in output order.
    const FIELDS: &'static [ScorerField];
    /// Scores one batch, through [`Bound::score_value`], [`Bound::score_text`] or
    /// [`Bound::score_strings`].
    fn score(&self, bound: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError>;
    /// See [`Scorer::model_key`].
    fn model_key(&self) -> Option<&str> {
        None
    }
    /// See [`Scorer::check`].
    fn check(&self, _models: &BTreeMap<String, ModelSpec>) -> Result<(), TaskError> {
        Ok(())
    }
}

/// A bound scorer of a text kind.
#[derive(Debug)]
pub(crate) struct Bound<K> {
    /// The kind's own options.
    pub check: K,
    /// The template the value is compared with (`expected`, `ground_truth`, ...), if any.
    pub other: Option<Template>,
    pub input: TextInput,
}

impl<K: Check> Bound<K> {
    pub fn boxed(check: K, other: Option<Template>, input: TextInput) -> Box<dyn Scorer> {
        Box::new(Bound {
            check,
            other,
            input,
        })
    }

    /// Scores the value alone.
    pub fn score_value(
        &self,
        input: &BatchInput<'_>,
        kernel: impl FnOnce(Batch<'_>) -> Result<Scored, KernelError>,
    ) -> Result<ScoreColumns, RowError> {
        self.input.score(input, |v, fields| {
            let out = kernel(batch(v, input.rows)).map_err(|e| row_err(None, e))?;
            Ok(insert(fields, out))
        })
    }

    /// Scores the value against the other template read as text (a null column when the
    /// scorer has none), shown as the field `field` when it is wanted.
    pub fn score_text(
        &self,
        input: &BatchInput<'_>,
        field: &'static str,
        kernel: impl FnOnce(Batch<'_>, TextColumn<'_>) -> Result<Scored, KernelError>,
    ) -> Result<ScoreColumns, RowError> {
        let (t, rows) = (self.other.as_ref(), input.rows);
        self.input.score(input, |v, fields| {
            let e = match t {
                Some(t) => text(Some(t), input.ctx)?,
                None => Text::Null,
            };
            let ec = e.column().map_err(|x| row_err(t, x))?;
            let out = kernel(batch(v, rows), ec).map_err(|x| row_err(t, x))?;
            if input.want(field) {
                fields.insert(field, e.array(rows));
            }
            Ok(insert(fields, out))
        })
    }

    /// Scores the value against the expected strings of the other template (a literal, a
    /// literal list, a list column, or a list written as text), shown as the field
    /// `expected`. `prepared`: the strings prepared when the task was loaded, if the
    /// template is a literal.
    pub fn score_strings(
        &self,
        input: &BatchInput<'_>,
        prepared: Option<&Needles>,
        kernel: impl FnOnce(Batch<'_>, Expected<'_>) -> Result<Scored, KernelError>,
    ) -> Result<ScoreColumns, RowError> {
        let (t, rows) = (self.other.as_ref(), input.rows);
        self.input.score(input, |v, fields| {
            let e = ExpectedList::new(t, input.ctx, prepared, v.normalize)?;
            let out = kernel(batch(v, rows), e.expected()).map_err(|x| row_err(t, x))?;
            if input.want("expected") {
                fields.insert("expected", e.field(rows));
            }
            Ok(insert(fields, out))
        })
    }
}

/// The kernel's batch: the scored value with its `normalize:` steps.
pub(crate) fn batch<'a>(v: &ScoredValue<'a>, rows: usize) -> Batch<'a> {
    Batch::new(v.column, v.normalize, rows)
}

/// Adds a kernel's fields; returns its missing count.
pub(crate) fn insert(fields: &mut Fields, out: Scored) -> usize {
    fields.insert("is_correct", score_array(out.is_correct));
    if let Some(s) = out.score {
        fields.insert("score", std::sync::Arc::new(s) as arrow::array::ArrayRef);
    }
    if let Some(d) = out.details {
        fields.insert("details", d);
    }
    out.missing
}

impl<K: Check> Scorer for Bound<K> {
    fn fields(&self) -> &'static [ScorerField] {
        K::FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.other.iter().chain(self.input.value()).collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        self.check.score(self, input)
    }

    fn model_key(&self) -> Option<&str> {
        self.check.model_key()
    }

    fn check(&self, models: &BTreeMap<String, ModelSpec>) -> Result<(), TaskError> {
        self.check.check(models)
    }
}

impl ParseCx<'_> {
    /// Binds a text kind's `check` to the text it scores and the template its value is
    /// compared with, if any.
    pub(crate) fn bind<K: Check>(
        &mut self,
        check: K,
        other: Option<Template>,
    ) -> Result<Box<dyn Scorer>, TaskError> {
        Ok(Bound::boxed(check, other, self.text_input()?))
    }
}
