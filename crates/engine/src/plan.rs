//! What a run reads and writes, decided and checked before any row is read.

use crate::metric_inputs::MetricData;
use crate::output::{ConfusionRow, MetricRow};
use crate::{AvailableColumns, EngineError};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use evalscore_kernels::readable_as_text;
use evalscore_metrics::{Grouped, Setup};
use evalscore_scorers::{ScorerSpec, Task};
use evalscore_task::{FieldKind, MetricSpec, ScorerField, TaskError, Template, TemplateKind};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// The model output column used when neither `--output-column` nor
/// `definition.output_column` names one.
pub const DEFAULT_OUTPUT_COLUMN: &str = "output";

/// A plan could not be made: a task problem (located in the task file) or another one.
#[derive(Debug)]
pub enum PlanError {
    Task(TaskError),
    Other(EngineError),
}

/// The resolved shape of a run.
#[derive(Debug)]
pub struct Plan {
    /// Input columns to decode, in schema order.
    pub columns: Vec<String>,
    /// Input columns copied to scores.parquet, with their output fields.
    pub keep: Vec<(String, Arc<Field>)>,
    /// Per entry of `keep`: whether the column is decoded only to be copied (no template,
    /// output column or `group_by` reads it), so its stored chunk can be copied instead.
    pub keep_only: Vec<bool>,
    /// The model output column, when a scorer needs it.
    pub output_column: Option<String>,
    pub scorers: Vec<ScorerPlan>,
    /// Every `group_by` column of every metric, in order of first appearance; metrics.parquet
    /// and confusion.parquet get one nullable column per entry.
    pub group_columns: Vec<String>,
    output_schema: SchemaRef,
    /// The judge side of the run (cache, endpoints, counters), when a scorer asks a model.
    pub(crate) judge: Option<Arc<evalscore_scorers::judge::JudgeRuntime>>,
    /// The user functions the task's `custom` scorers and `python` metrics call.
    pub(crate) functions: Option<crate::functions::Functions>,
    /// The metric inputs read from the data (columns, templates), evaluated once per batch.
    pub(crate) metric_data: MetricData,
    /// The schema the plan was bound to.
    input_schema: SchemaRef,
    state_template: Vec<Vec<Grouped>>,
}

/// Per scorer: which fields are computed, which written.
#[derive(Debug)]
pub struct ScorerPlan {
    /// Fields written to scores.parquet, in order.
    pub written: Vec<&'static str>,
    /// Fields computed per batch: the written ones and those metrics read.
    pub needed: BTreeSet<&'static str>,
}

/// The fixed columns of metrics.parquet and confusion.parquet, which a group-by column may not shadow.
const RESERVED: &[&str] = &[
    "scorer",
    "scorer_type",
    "metric",
    "metric_type",
    "field",
    "stat",
    "label",
    "value",
    "n",
    "actual",
    "predicted",
    "count",
];

/// What a run asks of the plan besides the task: `--keep` and `--output-column`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions<'a> {
    /// Input columns copied to the scores; `None` keeps `id` when the input has it.
    pub keep: Option<&'a [String]>,
    /// The model output column; `None`: the task's, else `output`.
    pub output_column: Option<&'a str>,
    /// Where the schema was read from, for messages.
    pub source: Option<&'a Path>,
}

impl Plan {
    /// Binds `task` to an input `schema`: every template, column and type is checked here,
    /// before any row is read.
    pub fn new(task: &Task, schema: &Schema, opts: PlanOptions<'_>) -> Result<Plan, PlanError> {
        // Columns are found by name: two of one name would make every reference ambiguous.
        let mut names = BTreeSet::new();
        for f in schema.fields() {
            if !names.insert(f.name().as_str()) {
                return Err(PlanError::Other(EngineError::DuplicateInputColumn {
                    file: opts.source.map(Path::to_path_buf),
                    column: f.name().clone(),
                }));
            }
        }
        for s in &task.scorers {
            let templates = s.scorer.templates();
            for t in &templates {
                t.check_columns(schema).map_err(PlanError::Task)?;
            }
            for t in &templates {
                check_column_type(s, t, schema, opts.source).map_err(PlanError::Task)?;
            }
        }
        let metric_data = MetricData::bind(task, schema, opts.source).map_err(PlanError::Task)?;
        let output_column = if task.needs_model_output() {
            let (name, from_flag) = match (opts.output_column, &task.output_column) {
                (Some(c), _) => (c.to_owned(), true),
                (None, Some(c)) => (c.clone(), false),
                (None, None) => (DEFAULT_OUTPUT_COLUMN.to_owned(), false),
            };
            if schema.column_with_name(&name).is_none() {
                let who = task
                    .scorers
                    .iter()
                    .find(|s| s.scorer.value().is_none())
                    .map(|s| {
                        format!(
                            "scorer `{}` has no `value:`, so it scores the model output, but ",
                            s.key
                        )
                    })
                    .unwrap_or_default();
                let origin = if from_flag {
                    " (from --output-column)"
                } else {
                    ""
                };
                return Err(PlanError::Other(EngineError::NoModelOutputColumn {
                    who,
                    column: name,
                    origin,
                    available: AvailableColumns(column_list(schema)),
                }));
            }
            Some(name)
        } else {
            None
        };

        let keep_names: Vec<String> = match opts.keep {
            Some(k) => k.to_vec(),
            None if schema.column_with_name("id").is_some() => vec!["id".to_owned()],
            None => Vec::new(),
        };
        let mut keep = Vec::new();
        let mut out_fields: Vec<Arc<Field>> = Vec::new();
        let mut seen = BTreeSet::new();
        for k in &keep_names {
            let Some((_, f)) = schema.column_with_name(k) else {
                return Err(PlanError::Other(EngineError::KeepMissing {
                    column: k.clone(),
                    available: AvailableColumns(column_list(schema)),
                }));
            };
            let name = sanitize(k);
            // Strings are read as views; the output keeps the plain string type warehouses expect.
            let dt = match f.data_type() {
                DataType::Utf8View => DataType::Utf8,
                t => t.clone(),
            };
            // Nullable as in the input: a column every input declares required (`id`) stays
            // required, so its stored chunks can be copied as they are.
            let field = Arc::new(Field::new(&name, dt, f.is_nullable()));
            if let Some((other, _)) = keep
                .iter()
                .find(|(_, f): &&(String, Arc<Field>)| *f.name() == name)
            {
                return Err(PlanError::Other(if other == k {
                    EngineError::KeepTwice(k.clone())
                } else {
                    EngineError::KeepCollide {
                        first: other.clone(),
                        second: k.clone(),
                        name,
                    }
                }));
            }
            seen.insert(name.clone());
            keep.push((k.clone(), Arc::clone(&field)));
            out_fields.push(field);
        }

        let mut scorers = Vec::new();
        for s in &task.scorers {
            let fields = s.scorer.fields_for(schema);
            check_numeric_metrics(s, fields).map_err(PlanError::Task)?;
            // The default fields, then `write_fields:` in its order (a field written by
            // default is written once).
            let mut written: Vec<&'static str> = fields
                .iter()
                .filter(|f| f.written && s.write_scores)
                .map(|f| f.name)
                .collect();
            for name in &s.write_fields {
                if !written.contains(name) {
                    written.push(name);
                }
            }
            let mut needed: BTreeSet<&'static str> = written.iter().copied().collect();
            for m in &s.metrics {
                for input in &m.inputs {
                    if let Some(f) = fields.iter().find(|f| f.name == input) {
                        needed.insert(f.name);
                    }
                }
            }
            for name in &written {
                let col = format!("{}__{name}", s.key);
                if !seen.insert(col.clone()) {
                    return Err(PlanError::Other(EngineError::OutputColumnTwice(col)));
                }
                let kind = fields.iter().find(|f| f.name == *name).map(|f| f.kind);
                let dt = match kind {
                    Some(FieldKind::Number) => DataType::Float64,
                    // Labels with a fixed small set of values are dictionary-encoded in memory;
                    // scores.parquet stores them as plain strings (no Arrow schema is embedded).
                    _ if *name == "completion_validity" => {
                        DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
                    }
                    _ => DataType::Utf8,
                };
                out_fields.push(Arc::new(Field::new(col, dt, true)));
            }
            scorers.push(ScorerPlan { written, needed });
        }

        let mut group_columns: Vec<String> = Vec::new();
        for s in &task.scorers {
            for m in &s.metrics {
                for g in &m.group_by {
                    if schema.column_with_name(g).is_none() {
                        return Err(PlanError::Task(
                            TaskError::new(
                                format!("metric `{}` groups by column `{g}`, which the input does not have", m.name),
                                m.location,
                            )
                            .with_hint(format!("available columns: {}", column_list(schema))),
                        ));
                    }
                    if RESERVED.contains(&sanitize(g).as_str()) {
                        return Err(PlanError::Task(TaskError::new(
                            format!("metric `{}` groups by column `{g}`, whose name metrics.parquet already uses", m.name),
                            m.location,
                        ).with_hint(format!("rename the column; reserved names: {}", RESERVED.join(", ")))));
                    }
                    if !group_columns.contains(g) {
                        if let Some(other) =
                            group_columns.iter().find(|c| sanitize(c) == sanitize(g))
                        {
                            return Err(PlanError::Task(TaskError::new(
                                format!("group-by columns `{other}` and `{g}` would both be named `{}` in metrics.parquet", sanitize(g)),
                                m.location,
                            ).with_hint("group by one of them, or rename a column so that their names differ in letters, digits or _")));
                        }
                        group_columns.push(g.clone());
                    }
                }
            }
        }
        let mut wanted: BTreeSet<String> = BTreeSet::new();
        wanted.extend(group_columns.iter().cloned());
        wanted.extend(output_column.iter().cloned());
        let mut all = false;
        for s in &task.scorers {
            for t in s.scorer.templates() {
                let (cols, whole) = t.columns();
                all |= whole;
                wanted.extend(cols.iter().cloned());
            }
        }
        for t in metric_data.templates() {
            let (cols, whole) = t.columns();
            all |= whole;
            wanted.extend(cols.iter().cloned());
        }
        let keep_only = keep
            .iter()
            .map(|(k, _)| !all && !wanted.contains(k))
            .collect();
        wanted.extend(keep_names.iter().cloned());
        let columns = schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|n| all || wanted.contains(n))
            .collect();
        Ok(Plan {
            columns,
            keep,
            keep_only,
            output_column,
            scorers,
            group_columns,
            output_schema: Arc::new(Schema::new(out_fields)),
            judge: None,
            functions: None,
            metric_data,
            input_schema: Arc::new(schema.clone()),
            state_template: state_template(task).map_err(PlanError::Other)?,
        })
    }

    /// The schema of scores.parquet.
    pub fn output_schema(&self) -> SchemaRef {
        Arc::clone(&self.output_schema)
    }

    /// The type of input column `name` in the schema the plan was bound to.
    pub fn input_type(&self, name: &str) -> Option<&DataType> {
        self.input_schema
            .column_with_name(name)
            .map(|(_, f)| f.data_type())
    }

    pub(crate) fn empty_states(&self) -> Vec<Vec<Grouped>> {
        self.state_template.clone()
    }
}

/// Empty metric states of every metric of `task`, per scorer, made by the metric registry.
pub(crate) fn state_template(task: &Task) -> Result<Vec<Vec<Grouped>>, EngineError> {
    let setup = Setup {
        confidence: task.confidence,
    };
    task.scorers
        .iter()
        .map(|s| {
            s.metrics
                .iter()
                .map(|m| {
                    Grouped::for_metric(m, &setup).map_err(|e| EngineError::Internal {
                        message: format!("scorer `{}`: metric `{}`: {e}", s.key, m.name),
                        kind: evalscore_error::ErrorKind::Internal,
                    })
                })
                .collect()
        })
        .collect()
}

/// Every `group_by` column of `task`'s metrics, in order of first appearance: what
/// [`Plan::group_columns`] holds once [`Plan::new`] has checked them against a schema.
pub(crate) fn group_columns(task: &Task) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in task.scorers.iter().flat_map(|s| &s.metrics) {
        for g in &m.group_by {
            if !out.contains(g) {
                out.push(g.clone());
            }
        }
    }
    out
}

/// A group key of `m` spread over the group-by columns.
fn spread(
    group_columns: &[String],
    m: &MetricSpec,
    key: Option<Vec<String>>,
) -> Vec<Option<String>> {
    let mut out = vec![None; group_columns.len()];
    if let Some(key) = key {
        for (col, v) in m.group_by.iter().zip(key) {
            if let Some(i) = group_columns.iter().position(|c| c == col) {
                out[i] = Some(v);
            }
        }
    }
    out
}

/// The rows of metrics.parquet over the given group-by columns: each scorer's metrics in task
/// order (overall figures, then each group's), then its missing count. Needs no schema.
pub(crate) fn metric_rows(
    group_columns: &[String],
    task: &Task,
    states: &[Vec<Grouped>],
    missing: &[u64],
    invalid: &[u64],
    row_errors: Option<&[u64]>,
    rows: u64,
) -> Vec<MetricRow> {
    let mut out = Vec::new();
    for (i, ((s, st), miss)) in task.scorers.iter().zip(states).zip(missing).enumerate() {
        for (m, state) in s.metrics.iter().zip(st) {
            for (key, fig) in state.finish() {
                out.push(MetricRow {
                    scorer: s.key.clone(),
                    scorer_type: s.scorer_type.clone(),
                    metric: m.name.clone(),
                    metric_type: m.metric_type.clone(),
                    field: m.field.clone(),
                    stat: fig.stat,
                    label: fig.label,
                    value: fig.value,
                    n: fig.n,
                    groups: spread(group_columns, m, key),
                });
            }
        }
        let mut row = missing_row(s, *miss, rows);
        row.groups = vec![None; group_columns.len()];
        let count = |metric: &str, n: u64| {
            let mut r = row.clone();
            r.metric = metric.to_owned();
            r.metric_type = metric.to_owned();
            r.value = Some(n as f64);
            r
        };
        // Judge replies that could not be read: scored 0.0, never dropped silently.
        let invalid_row = s
            .scorer
            .judge()
            .map(|_| count("invalid", invalid.get(i).copied().unwrap_or(0)));
        let errors_row = row_errors.map(|e| count("row_errors", e.get(i).copied().unwrap_or(0)));
        out.push(row);
        out.extend(invalid_row);
        out.extend(errors_row);
    }
    out
}

/// The rows of confusion.parquet over the given group-by columns. Needs no schema.
pub(crate) fn confusion_rows(
    group_columns: &[String],
    task: &Task,
    states: &[Vec<Grouped>],
) -> Vec<ConfusionRow> {
    let mut out = Vec::new();
    for (s, st) in task.scorers.iter().zip(states) {
        for (m, state) in s.metrics.iter().zip(st) {
            for (key, cells) in state.confusion() {
                let groups = spread(group_columns, m, key);
                for (actual, predicted, count) in cells {
                    out.push(ConfusionRow {
                        scorer: s.key.clone(),
                        metric: m.name.clone(),
                        actual,
                        predicted,
                        count,
                        groups: groups.clone(),
                    });
                }
            }
        }
    }
    out
}

/// A template that is exactly one column (`{{ sample.col }}`) hands the column to the scorer
/// as it is, so its type is checked against the schema here, before any row is read: text,
/// numbers and booleans are read as text; a list column only where a list is accepted
/// ([`Template::may_be_list`]: `choices`, the match family's `expected`); structs, maps,
/// binaries are an error.
fn check_column_type(
    s: &ScorerSpec,
    t: &Template,
    schema: &Schema,
    source: Option<&Path>,
) -> Result<(), TaskError> {
    let may_be_list = t.may_be_list();
    let TemplateKind::Column(col) = &t.kind else {
        return Ok(());
    };
    let Some((_, field)) = schema.column_with_name(col) else {
        return Ok(());
    };
    let dt = field.data_type();
    let list_of_text =
        matches!(dt, DataType::List(f) | DataType::LargeList(f) if readable_as_text(f.data_type()));
    if readable_as_text(dt) || (may_be_list && list_of_text) {
        return Ok(());
    }
    // All inputs share one schema; the first file is where it was read from.
    let file = source
        .map(|p| format!(" in `{}`", p.display()))
        .unwrap_or_default();
    let (what, hint) = if may_be_list {
        (
            "as text or as a list",
            format!(
                "point `{}` at a list column, or at a text column holding a JSON or Python list",
                t.what
            ),
        )
    } else {
        let ident = col.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && col.chars().next().is_some_and(|c| !c.is_ascii_digit());
        let sample = if ident {
            format!("sample.{col}")
        } else {
            format!("sample[\"{col}\"]")
        };
        (
            "as text",
            format!("point `{}` at a text, number or boolean column, or convert it in the template (e.g. `{{{{ {sample} | tojson }}}}`)", t.what),
        )
    };
    Err(TaskError::new(
        format!(
            "column `{col}` has type {dt}{file}, which scorer `{}` cannot read {what}",
            s.key
        ),
        t.location,
    )
    .with_hint(hint))
}

/// A field whose kind follows its input column (`value` over one column) is a number at
/// load time and may turn out to be text once bound: a numeric metric that reads it is then an
/// error, worded as when the task loads.
fn check_numeric_metrics(s: &ScorerSpec, fields: &[ScorerField]) -> Result<(), TaskError> {
    for m in s.metrics.iter().filter(|m| m.reads.numeric()) {
        for input in &m.inputs {
            if fields
                .iter()
                .any(|f| f.name == input && f.kind == FieldKind::Text)
            {
                return Err(TaskError::new(
                    format!(
                        "metric `{}` needs a numeric field, and `{input}` of scorer `{}` is text",
                        m.metric_type, s.scorer_type
                    ),
                    m.location,
                )
                .with_hint("the column it reads holds text: `parse: number` reads its texts as numbers; use `frequency` to count text values"));
            }
        }
    }
    Ok(())
}

fn missing_row(s: &ScorerSpec, missing: u64, rows: u64) -> MetricRow {
    MetricRow {
        scorer: s.key.clone(),
        scorer_type: s.scorer_type.clone(),
        metric: "missing".to_owned(),
        metric_type: "missing".to_owned(),
        field: "rows".to_owned(),
        stat: "count".to_owned(),
        label: None,
        value: Some(missing as f64),
        n: rows,
        groups: Vec::new(),
    }
}

fn column_list(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub use evalscore_task::sanitize;
