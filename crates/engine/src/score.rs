//! Scoring one unit of input: decode, evaluate templates, run kernels, fold metric states.

use crate::model_output::model_output_text;
use crate::plan::Plan;
use crate::Error;
use arrow::array::{Array, ArrayRef, RecordBatch, Scalar, StringArray};
use arrow::compute::cast;
use evalscore_kernels::{
    missing_count, parse_choice_list, string_equals, string_equals_mcqa, to_text, Choices,
    KernelError, TextColumn,
};
use evalscore_metrics::{GroupKeys, Grouped};
use evalscore_reader::{Inputs, ReadError, Unit};
use evalscore_task::{
    RowContext, ScorerKind, ScorerSpec, Task, Template, TemplateKind, TemplateOutput,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What one unit produced: the score batches to write, partial metric states, missing counts.
#[derive(Debug)]
pub struct UnitResult {
    pub batches: Vec<RecordBatch>,
    pub states: Vec<Vec<Grouped>>,
    pub missing: Vec<u64>,
    pub rows: u64,
}

/// A failure on one row of a batch, before it is placed in its file.
#[derive(Debug)]
pub(crate) struct RowError {
    pub row: usize,
    pub message: String,
    pub hint: Option<String>,
}

pub fn score_unit(
    plan: &Plan,
    task: &Task,
    inputs: &Inputs,
    unit: &Unit,
) -> Result<UnitResult, Error> {
    let mut result = UnitResult {
        batches: Vec::new(),
        states: plan.empty_states(),
        missing: vec![0; task.scorers.len()],
        rows: 0,
    };
    let path = &inputs.files[unit.file].path;
    let mut failure: Option<Error> = None;
    let read = inputs.read_unit(unit, &plan.columns, |batch| {
        let first_row = unit.first_row + result.rows;
        match score_batch(plan, task, &batch, &mut result) {
            Ok(out) => {
                result.batches.push(out);
                result.rows += batch.num_rows() as u64;
                Ok(())
            }
            Err(e) => {
                let mut err = Error::new(format!(
                    "{}, row {}: {}",
                    path.display(),
                    first_row + e.row as u64 + 1,
                    e.message
                ));
                if let Some(h) = e.hint {
                    err = err.hint(h);
                }
                failure = Some(err);
                Err(ReadError::new("stopped"))
            }
        }
    });
    match (failure, read) {
        (Some(e), _) => Err(e),
        (None, Err(e)) => Err(Error::read(e)),
        (None, Ok(())) => Ok(result),
    }
}

fn score_batch(
    plan: &Plan,
    task: &Task,
    batch: &RecordBatch,
    acc: &mut UnitResult,
) -> Result<RecordBatch, RowError> {
    let rows = batch.num_rows();
    let model_output = match &plan.output_column {
        Some(name) => {
            let col = batch.column_by_name(name).ok_or_else(|| RowError {
                row: 0,
                message: format!("the input has no column `{name}`"),
                hint: None,
            })?;
            Some(model_output_text(col, name)?)
        }
        None => None,
    };
    let ctx = RowContext {
        batch,
        model_output: model_output.as_ref(),
    };
    let mut columns: Vec<ArrayRef> = Vec::new();
    // Group keys of this batch, computed once per distinct `group_by` list.
    let mut groups: BTreeMap<Vec<String>, GroupKeys> = BTreeMap::new();
    for (name, field) in &plan.keep {
        let col = batch.column_by_name(name).ok_or_else(|| RowError {
            row: 0,
            message: format!("the input has no column `{name}`"),
            hint: None,
        })?;
        let col = if col.data_type() == field.data_type() {
            Arc::clone(col)
        } else {
            cast(col, field.data_type()).map_err(|e| RowError {
                row: 0,
                message: format!("cannot convert kept column `{name}`: {e}"),
                hint: None,
            })?
        };
        columns.push(col);
    }
    for (i, (spec, sp)) in task.scorers.iter().zip(&plan.scorers).enumerate() {
        let scored = score_scorer(spec, &ctx, rows).map_err(|mut e| {
            e.message = format!("scorer `{}`: {}", spec.key, e.message);
            e
        })?;
        acc.missing[i] += scored.missing;
        for (m, state) in spec.metrics.iter().zip(acc.states[i].iter_mut()) {
            let mut inputs: Vec<&dyn Array> = Vec::with_capacity(m.inputs.len());
            for f in &m.inputs {
                let values = scored.fields.get(f.as_str()).ok_or_else(|| RowError {
                    row: 0,
                    message: format!("field `{f}` was not computed"),
                    hint: None,
                })?;
                inputs.push(values.as_ref());
            }
            let keys = if m.group_by.is_empty() {
                None
            } else {
                if !groups.contains_key(&m.group_by) {
                    let cols: Vec<ArrayRef> = m
                        .group_by
                        .iter()
                        .filter_map(|c| batch.column_by_name(c).cloned())
                        .collect();
                    let k = GroupKeys::compute(&cols).map_err(|e| RowError {
                        row: 0,
                        message: format!("metric `{}`: {e}", m.name),
                        hint: None,
                    })?;
                    groups.insert(m.group_by.clone(), k);
                }
                groups.get(&m.group_by)
            };
            state.update(&inputs, keys).map_err(|e| RowError {
                row: 0,
                message: format!("metric `{}`: {e}", m.name),
                hint: None,
            })?;
        }
        for name in &sp.written {
            if let Some(a) = scored.fields.get(name) {
                columns.push(Arc::clone(a));
            }
        }
    }
    RecordBatch::try_new(plan.output_schema(), columns).map_err(|e| RowError {
        row: 0,
        message: format!("internal error building the score batch: {e}"),
        hint: None,
    })
}

/// One scorer's fields for one batch.
pub(crate) struct Scored {
    pub fields: BTreeMap<&'static str, ArrayRef>,
    pub missing: u64,
}

/// A template's value as text: an array, or one scalar for every row.
enum Text {
    Array(ArrayRef),
    Scalar(String),
}

impl Text {
    fn column(&self) -> Result<TextColumn<'_>, KernelError> {
        match self {
            Text::Array(a) => TextColumn::new(a.as_ref(), "value"),
            Text::Scalar(s) => Ok(TextColumn::scalar(Some(s))),
        }
    }

    fn datum(&self) -> Box<dyn arrow::array::Datum + '_> {
        match self {
            Text::Array(a) => Box::new(Arc::clone(a)),
            Text::Scalar(s) => Box::new(Scalar::new(StringArray::from(vec![s.as_str()]))),
        }
    }

    fn array(&self, rows: usize) -> ArrayRef {
        match self {
            Text::Array(a) => Arc::clone(a),
            Text::Scalar(s) => Arc::new(StringArray::from(vec![s.as_str(); rows])),
        }
    }
}

fn describe(t: &Template) -> String {
    match &t.kind {
        TemplateKind::Column(c) => format!("column `{c}` (`{}`)", t.what),
        _ => format!("`{}`", t.what),
    }
}

fn row_err(t: Option<&Template>, e: KernelError) -> RowError {
    let what = t.map_or_else(|| "the model output".to_owned(), describe);
    match e {
        KernelError::Value { row, value, message, .. } => RowError {
            row,
            message: format!("{what} value {value:?} {message}"),
            hint: None,
        },
        KernelError::Type { data_type, .. } => RowError {
            row: 0,
            message: format!("{what} has type {data_type}, which cannot be read as text"),
            hint: Some("point the template at a text, number or boolean column, or convert it in the template (e.g. `{{ sample.col | tojson }}`)".to_owned()),
        },
        KernelError::Arrow(m) => RowError { row: 0, message: format!("{what}: {m}"), hint: None },
    }
}

/// Evaluates a text template (or the model output when `t` is `None`).
fn text(t: Option<&Template>, ctx: &RowContext<'_>) -> Result<Text, RowError> {
    let Some(t) = t else {
        let out = ctx.model_output.ok_or_else(|| RowError {
            row: 0,
            message: "no model output column".to_owned(),
            hint: None,
        })?;
        return Ok(Text::Array(Arc::clone(out)));
    };
    match t.evaluate(ctx).map_err(|e| RowError {
        row: e.row,
        message: format!("template of `{}` failed: {}", t.what, e.message),
        hint: None,
    })? {
        TemplateOutput::Scalar(s) => Ok(Text::Scalar(s)),
        TemplateOutput::List(l) => Ok(Text::Scalar(serde_json::to_string(&l).unwrap_or_default())),
        TemplateOutput::Array(a) => Ok(Text::Array(
            to_text(&a, &t.what).map_err(|e| row_err(Some(t), e))?,
        )),
    }
}

pub(crate) fn score_scorer(
    spec: &ScorerSpec,
    ctx: &RowContext<'_>,
    rows: usize,
) -> Result<Scored, RowError> {
    let mut fields = BTreeMap::new();
    let missing;
    match &spec.kind {
        ScorerKind::StringEquals {
            ground_truth,
            value,
        } => {
            let v = text(value.as_ref(), ctx)?;
            let g = text(Some(ground_truth), ctx)?;
            let scores = string_equals(v.datum().as_ref(), g.datum().as_ref())
                .map_err(|e| row_err(None, e))?;
            let scores: ArrayRef = if scores.len() == rows {
                Arc::new(scores)
            } else {
                let s = scores.values().first().copied().unwrap_or(0.0);
                Arc::new(arrow::array::Float64Array::from(vec![s; rows]))
            };
            missing = missing_count(
                &v.column().map_err(|e| row_err(value.as_ref(), e))?,
                &g.column().map_err(|e| row_err(Some(ground_truth), e))?,
                rows,
            );
            fields.insert("is_correct", scores);
            fields.insert("value", v.array(rows));
            fields.insert("ground_truth", g.array(rows));
        }
        ScorerKind::StringEqualsMcqa {
            ground_truth_choice,
            choices,
            value,
        } => {
            let v = text(value.as_ref(), ctx)?;
            let g = text(Some(ground_truth_choice), ctx)?;
            let vc = v.column().map_err(|e| row_err(value.as_ref(), e))?;
            let gc = g
                .column()
                .map_err(|e| row_err(Some(ground_truth_choice), e))?;
            let choice_out = match choices {
                Some(t) => Some(t.evaluate(ctx).map_err(|e| RowError {
                    row: e.row,
                    message: format!("template of `{}` failed: {}", t.what, e.message),
                    hint: None,
                })?),
                None => None,
            };
            let parsed;
            let choice_arg = match &choice_out {
                None => Choices::None,
                Some(TemplateOutput::List(l)) => Choices::Fixed(l),
                Some(TemplateOutput::Array(a)) => Choices::PerRow(a.as_ref()),
                Some(TemplateOutput::Scalar(s)) => {
                    parsed = parse_choice_list(s).ok_or_else(|| RowError {
                        row: 0,
                        message: format!("`choices` gives {s:?}, which is not a list"),
                        hint: Some("give choices as a list: `choices: [A, B, C]`, a list column, or a JSON array string".to_owned()),
                    })?;
                    Choices::Fixed(&parsed)
                }
            };
            let out = string_equals_mcqa(vc, gc, choice_arg, rows).map_err(|e| {
                let t = match &e {
                    KernelError::Value { input, .. } if input == "choices" => choices.as_ref(),
                    _ => Some(ground_truth_choice),
                };
                row_err(t, e)
            })?;
            missing = missing_count(&vc, &gc, rows);
            fields.insert("is_correct", Arc::new(out.is_correct) as ArrayRef);
            fields.insert(
                "completion_validity",
                Arc::new(out.completion_validity) as ArrayRef,
            );
            fields.insert("value", v.array(rows));
            fields.insert("ground_truth", g.array(rows));
        }
    }
    Ok(Scored {
        fields,
        missing: missing as u64,
    })
}
