//! A template's value for one batch as text (or as a list where a list is accepted), and a
//! template's or kernel's failure as a [`RowError`] naming the column or option at fault.

use crate::row_error::{CellRef, RowError};
use arrow::array::{Array, ArrayRef, BooleanArray, Scalar, StringArray};
use evalscore_kernels::KernelError;
use evalscore_task::{RowContext, Template, TemplateKind, TemplateOutput, TemplateRowError};
use evalscore_text::{to_text, TextColumn};
use std::sync::Arc;

/// A template's value as text: an array, or one scalar for every row.
#[derive(Debug)]
pub enum Text {
    Array(ArrayRef),
    Scalar(String),
    /// No template: null on every row.
    Null,
}

impl Text {
    pub fn column(&self) -> Result<TextColumn<'_>, KernelError> {
        match self {
            Text::Array(a) => Ok(TextColumn::new(a.as_ref(), "value")?),
            Text::Scalar(s) => Ok(TextColumn::scalar(Some(s))),
            Text::Null => Ok(TextColumn::scalar(None)),
        }
    }

    /// The text as an Arrow datum: the array, or a one-row scalar.
    pub fn datum(&self) -> Box<dyn arrow::array::Datum + '_> {
        match self {
            Text::Array(a) => Box::new(Arc::clone(a)),
            Text::Scalar(s) => Box::new(Scalar::new(StringArray::from(vec![s.as_str()]))),
            Text::Null => Box::new(Scalar::new(StringArray::new_null(1))),
        }
    }

    /// The text as a column of `rows` rows.
    pub fn array(&self, rows: usize) -> ArrayRef {
        match self {
            Text::Array(a) => Arc::clone(a),
            Text::Scalar(s) => Arc::new(StringArray::from(vec![s.as_str(); rows])),
            Text::Null => Arc::new(StringArray::new_null(rows)),
        }
    }
}

fn describe(t: &Template) -> String {
    match &t.kind {
        TemplateKind::Column(c) => format!("column `{c}` (`{}`)", t.what),
        _ => format!("`{}`", t.what),
    }
}

/// A kernel's failure on the values of template `t` (`None`: the model output).
pub fn row_err(t: Option<&Template>, e: impl Into<KernelError>) -> RowError {
    let e: KernelError = e.into();
    let what = t.map_or_else(|| "the model output".to_owned(), describe);
    match e {
        KernelError::Value {
            row,
            value,
            message,
            ..
        } => RowError {
            row,
            message: format!("{what} value {value:?} {message}"),
            per_row: true,
            cell: Some(Box::new(CellRef {
                column: Some(t.map_or_else(|| "model output".to_owned(), column_of)),
                value: Some(value),
            })),
            ..RowError::default()
        },
        KernelError::Type { data_type, .. } => RowError {
            row: 0,
            message: format!("{what} has type {data_type}, which cannot be read as text"),
            hint: Some("point the template at a text, number or boolean column, or convert it in the template (e.g. `{{ sample.col | tojson }}`)".to_owned()),
            ..RowError::default()
        },
        KernelError::Arrow(m) => RowError {
            row: 0,
            message: format!("{what}: {m}"),
            ..RowError::default()
        },
    }
}

/// The input column a template reads, or its scorer option when it computes a value.
fn column_of(t: &Template) -> String {
    match &t.kind {
        TemplateKind::Column(c) => c.clone(),
        _ => t.what.clone(),
    }
}

/// A template's failure as a row error (or a batch error, when it is not about one row).
pub fn template_err(t: &Template, e: TemplateRowError) -> RowError {
    RowError {
        row: e.row,
        message: format!("template of `{}` failed: {}", t.what, e.message),
        per_row: e.per_row,
        cell: Some(Box::new(CellRef {
            column: Some(column_of(t)),
            value: None,
        })),
        ..RowError::default()
    }
}

/// Evaluates a text template (or the model output when `t` is `None`).
pub fn text(t: Option<&Template>, ctx: &RowContext<'_>) -> Result<Text, RowError> {
    let Some(t) = t else {
        let out = ctx.model_output.ok_or_else(|| RowError {
            row: 0,
            message: "no model output column".to_owned(),
            hint: None,
            ..RowError::default()
        })?;
        return Ok(Text::Array(Arc::clone(out)));
    };
    match t.evaluate(ctx).map_err(|e| template_err(t, e))? {
        TemplateOutput::Scalar(s) => Ok(Text::Scalar(s)),
        TemplateOutput::List(l) => Ok(Text::Scalar(serde_json::to_string(&l).unwrap_or_default())),
        TemplateOutput::Array(a) => Ok(Text::Array(
            to_text(&a, &t.what).map_err(|e| row_err(Some(t), e))?,
        )),
    }
}

/// Evaluates a template whose value may be a list (the `expected` of the match family):
/// list arrays stay lists, other arrays become text.
pub fn evaluate_any(t: &Template, ctx: &RowContext<'_>) -> Result<TemplateOutput, RowError> {
    let out = t.evaluate(ctx).map_err(|e| template_err(t, e))?;
    Ok(match out {
        TemplateOutput::Array(a) if !is_list(a.as_ref()) => {
            TemplateOutput::Array(to_text(&a, &t.what).map_err(|e| row_err(Some(t), e))?)
        }
        other => other,
    })
}

/// Whether `a` is a list column.
pub fn is_list(a: &dyn Array) -> bool {
    matches!(
        a.data_type(),
        arrow::datatypes::DataType::List(_) | arrow::datatypes::DataType::LargeList(_)
    )
}

/// A list column as text (a JSON array per row), for the `expected` field.
pub fn list_as_text(a: &dyn Array) -> ArrayRef {
    let rows: Vec<Option<String>> = (0..a.len())
        .map(|r| {
            if a.is_null(r) {
                return None;
            }
            let v = evalscore_task::cell_to_value(a, r);
            Some(serde_json::to_string(&v).unwrap_or_default())
        })
        .collect();
    Arc::new(StringArray::from(rows))
}

/// A scorer's `is_correct` field: the kernel's pass mask, which the score writer writes as
/// Float64 0.0/1.0 and the metrics read as those scores.
pub fn score_array(scores: BooleanArray) -> ArrayRef {
    Arc::new(scores)
}
