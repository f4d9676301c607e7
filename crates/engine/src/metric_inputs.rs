//! Metric inputs read from the data instead of a scorer field: an input column named bare, or
//! a template over the row (`field_gt: "{{ sample.human_label }}"`). They are checked against
//! the input schema when the task is bound, and evaluated once per batch however many metrics
//! read them.

use crate::row_error::{internal, RowError};
use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Schema};
use evalscore_kernels::readable_as_text;
use evalscore_scorers::{input, Fields, ScorerSpec, Task};
use evalscore_task::{
    did_you_mean, MetricInput, MetricReads, MetricSpec, RowContext, TaskError, Template,
    TemplateKind, TemplateOutput,
};
use std::collections::BTreeMap;
use std::path::Path;

/// The data inputs of a task's metrics, bound to an input schema.
#[derive(Debug, Default)]
pub(crate) struct MetricData {
    /// The distinct inputs (one per column, one per template text), with the scorer key and
    /// metric name of their first reader, for messages.
    templates: Vec<(Template, String, String)>,
    /// Per scorer, per metric, per input: its index in `templates`, `None` for a scorer field.
    refs: Vec<Vec<Vec<Option<usize>>>>,
}

impl MetricData {
    /// Checks every data input of `task`'s metrics against `schema` (from `source`, for
    /// messages): the column exists, and has a type the metric can read.
    pub(crate) fn bind(
        task: &Task,
        schema: &Schema,
        source: Option<&Path>,
    ) -> Result<MetricData, TaskError> {
        let mut data = MetricData::default();
        // A column is one input however it is named (bare or `{{ sample.col }}`).
        let mut index: BTreeMap<(bool, String), usize> = BTreeMap::new();
        for s in &task.scorers {
            let mut metrics = Vec::with_capacity(s.metrics.len());
            for m in &s.metrics {
                let mut inputs = Vec::with_capacity(m.inputs.len());
                for (k, (name, src)) in m.inputs.iter().zip(&m.sources).enumerate() {
                    let Some(t) = src.template() else {
                        inputs.push(None);
                        continue;
                    };
                    // Inputs after what the type reads (a bootstrap's row keys) are labels.
                    let numeric = m.reads.numeric() && k < m.reads.keys().len();
                    check((s, m), (name, src), numeric, schema, source)?;
                    let key = match &t.kind {
                        TemplateKind::Column(c) => (true, c.clone()),
                        _ => (false, t.source.clone()),
                    };
                    let i = *index.entry(key).or_insert_with(|| {
                        data.templates
                            .push((t.clone(), s.key.clone(), m.name.clone()));
                        data.templates.len() - 1
                    });
                    inputs.push(Some(i));
                }
                metrics.push(inputs);
            }
            data.refs.push(metrics);
        }
        Ok(data)
    }

    /// The templates, for the columns they read.
    pub(crate) fn templates(&self) -> impl Iterator<Item = &Template> {
        self.templates.iter().map(|(t, _, _)| t)
    }

    /// Every data input's values for one batch: a column as it is stored (a numeric column
    /// stays numeric, labels keep their type), any other template as text.
    pub(crate) fn evaluate(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>, RowError> {
        let ctx = RowContext {
            batch,
            model_output: None,
            model_output_raw: None,
        };
        self.templates
            .iter()
            .map(|(t, scorer, metric)| {
                let values = match &t.kind {
                    TemplateKind::Column(_) => match t.evaluate(&ctx) {
                        Ok(TemplateOutput::Array(a)) => Ok(a),
                        Ok(_) => Err(internal(&"a column template gave no column")),
                        Err(e) => Err(input::template_err(t, e)),
                    },
                    _ => input::text(Some(t), &ctx).map(|v| v.array(batch.num_rows())),
                };
                values.map_err(|mut e| {
                    e.message = format!("scorer `{scorer}`: metric `{metric}`: {}", e.message);
                    e.hint = Some("a metric's template is read on every row, and a row it fails on stops the run (`--max-row-errors` allows scorers' row errors only)".to_owned());
                    e
                })
            })
            .collect()
    }

    /// What metric `metric` of scorer `scorer` reads from one batch: the scorer's `fields`,
    /// and `data` as [`MetricData::evaluate`] gave it.
    pub(crate) fn inputs<'a>(
        &self,
        (scorer, metric): (usize, usize),
        m: &MetricSpec,
        fields: &'a Fields,
        data: &'a [ArrayRef],
    ) -> Result<Vec<&'a dyn Array>, RowError> {
        let refs = self.refs.get(scorer).and_then(|r| r.get(metric));
        m.inputs
            .iter()
            .enumerate()
            .map(
                |(k, f)| match refs.and_then(|r| r.get(k)).copied().flatten() {
                    Some(i) => data
                        .get(i)
                        .map(|a| a.as_ref())
                        .ok_or_else(|| internal(&"metric input")),
                    None => fields
                        .get(f.as_str())
                        .map(|a| a.as_ref())
                        .ok_or_else(|| RowError {
                            row: 0,
                            message: format!("field `{f}` was not computed"),
                            hint: None,
                            ..RowError::default()
                        }),
                },
            )
            .collect()
    }
}

/// Checks one data input of metric `m` of scorer `s`: a bare name must be an input column (it
/// is no field of the scorer); a template's columns must exist; a column must have a type the
/// metric reads (numbers for `mean`, `min`, `max`, `std_dev`; text, numbers or booleans for
/// labels).
fn check(
    (s, m): (&ScorerSpec, &MetricSpec),
    (name, src): (&str, &MetricInput),
    numeric: bool,
    schema: &Schema,
    source: Option<&Path>,
) -> Result<(), TaskError> {
    let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let t = match src {
        MetricInput::Field => return Ok(()),
        MetricInput::Column(t) => {
            if schema.column_with_name(name).is_none() && t.what.ends_with(".row_key") {
                return Err(TaskError::new(
                    format!(
                        "metric `{}` with `interval: bootstrap` reads each row's key from column `{name}`, and the input has no column `{name}`",
                        m.metric_type
                    ),
                    t.location,
                )
                .with_hint(format!(
                    "name the column that identifies a row with `row_key: COLUMN`, or key a row by all its values with `row_key: \"{{{{ sample | tojson }}}}\"`; input columns: {}",
                    columns.join(", ")
                )));
            }
            if schema.column_with_name(name).is_none() {
                let fields: Vec<&str> = s.scorer.fields().iter().map(|f| f.name).collect();
                let candidates: Vec<&str> = fields.iter().chain(&columns).copied().collect();
                let mut hint = format!(
                    "fields of `{}`: {}; input columns: {}",
                    s.scorer_type,
                    fields.join(", "),
                    columns.join(", ")
                );
                if let Some(d) = did_you_mean(name, &candidates) {
                    hint = format!("did you mean `{d}`? {hint}");
                }
                return Err(TaskError::new(
                    format!(
                        "scorer `{}` has no field `{name}`, and the input has no column `{name}`",
                        s.scorer_type
                    ),
                    t.location,
                )
                .with_hint(hint));
            }
            t
        }
        MetricInput::Template(t) => {
            t.check_columns(schema)?;
            t
        }
    };
    let TemplateKind::Column(col) = &t.kind else {
        return Ok(());
    };
    let Some((_, field)) = schema.column_with_name(col) else {
        return Ok(());
    };
    let dt = field.data_type();
    let file = source
        .map(|p| format!(" in `{}`", p.display()))
        .unwrap_or_default();
    if numeric {
        if is_number(dt) {
            return Ok(());
        }
        let numeric: Vec<&str> = schema
            .fields()
            .iter()
            .filter(|f| is_number(f.data_type()))
            .map(|f| f.name().as_str())
            .collect();
        return Err(TaskError::new(
            format!(
                "metric `{}` needs a numeric field, and column `{col}` has type {dt}{file}",
                m.metric_type
            ),
            t.location,
        )
        .with_hint(format!(
            "numeric columns: {}; use `frequency` to count text values",
            numeric.join(", ")
        )));
    }
    if m.reads == MetricReads::Values || readable_as_text(dt) {
        return Ok(());
    }
    Err(TaskError::new(
        format!(
            "column `{col}` has type {dt}{file}, which metric `{}` cannot read as text",
            m.metric_type
        ),
        t.location,
    )
    .with_hint(format!(
        "point `{}` at a text, number or boolean column, or convert it in a template (e.g. `{{{{ sample.{col} | tojson }}}}`)",
        t.what
    )))
}

/// A type a numeric metric reads as numbers (booleans as 0/1).
fn is_number(dt: &DataType) -> bool {
    dt.is_numeric() || matches!(dt, DataType::Boolean | DataType::Null)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::datatypes::Field;

    /// A column named bare or as `{{ sample.col }}`, and a template written twice, are each
    /// one input, evaluated once per batch for every metric that reads them.
    #[test]
    fn shared_inputs_are_one_each() {
        let task = Task::from_yaml(
            "definition:\n  scorers:\n    - type: includes\n      expected: x\n      metrics:\n        - {type: frequency, field: human}\n        - {type: frequency, field: \"{{ sample.human | lower }}\"}\n        - {type: multiclass-classification, field_gt: \"{{ sample.human }}\", field_pred: value}\n    - type: includes\n      expected: y\n      metrics:\n        - {type: multiclass-classification, field_gt: \"{{ sample.human | lower }}\", field_pred: is_correct}\n",
            &[],
        )
        .unwrap();
        let schema = Schema::new(vec![
            Field::new("output", DataType::Utf8, true),
            Field::new("human", DataType::Utf8, true),
        ]);
        let data = MetricData::bind(&task, &schema, None).unwrap();
        let sources: Vec<&str> = data.templates().map(|t| t.source.as_str()).collect();
        assert_eq!(
            sources,
            vec!["{{ sample.human }}", "{{ sample.human | lower }}"]
        );
        assert_eq!(
            data.refs,
            vec![
                vec![vec![Some(0)], vec![Some(1)], vec![Some(0), None]],
                vec![vec![Some(1), None]],
            ]
        );
    }
}
