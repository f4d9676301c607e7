//! Templates: compiled once per task, classified, and evaluated per record batch.
//!
//! Classification decides how much work a row costs:
//! - [`TemplateKind::Literal`] / [`TemplateKind::LiteralList`]: no `{{`, or a YAML list; a
//!   broadcast scalar, no per-row work at all.
//! - [`TemplateKind::Column`]: exactly `{{ sample.col }}` (or `sample["col"]`); the input
//!   column is used as it is.
//! - [`TemplateKind::ModelOutput`]: exactly `{{ solver_output.output }}`; the model output column.
//! - [`TemplateKind::Expression`]: a single `{{ expr }}`; evaluated per row with minijinja's
//!   expression compiler, so the result keeps its type (a list stays a list, none stays missing).
//! - [`TemplateKind::Render`]: anything else; rendered per row to text. Text with plain
//!   `{{ sample.col }}` / `{{ solver_output.output }}` tags in it (a judge's prompt) is
//!   joined a column at a time instead (see [`concat_plan`]), with the same result.

mod compile;
mod concat;
mod values;
mod vector;

use crate::raw::{Node, Tree};
use crate::value::cell_to_value;
use crate::{Location, TaskError};
use arrow::array::{ArrayRef, ListBuilder, RecordBatch, StringBuilder};
use arrow::datatypes::Schema;
pub(crate) use compile::*;
pub use concat::*;
use minijinja::value::{Enumerator, Object, ObjectRepr, Value, ValueKind};
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::sync::Arc;
use values::*;
pub use vector::*;

/// The template variable holding the model output (`solver_output.output`).
pub const MODEL_OUTPUT_VAR: &str = "solver_output";
/// The model output as an object (`model_output.choices[0].message.content`), as seed
/// judge prompts read it.
pub const MODEL_OUTPUT_OBJECT_VAR: &str = "model_output";
/// The message of the error a template raises when it reaches something that does not exist.
pub const UNDEFINED_MESSAGE: &str =
    "reaches an attribute, key or variable that does not exist (undefined value)";
const SAMPLE_VAR: &str = "sample";
/// The error detail the formatter raises when a template prints a null value.
const NULL_MARKER: &str = "evalscore: printed a null value";
/// Instructions one row's template may run; stops runaway loops in hostile task files.
pub const TEMPLATE_FUEL: u64 = 100_000;
/// Bytes one row's template may build (output, captures, concatenations, formatting,
/// repetition, sequences), and the largest value it may give: fuel bounds steps, this bounds
/// memory (the patched minijinja's `budget`).
pub const TEMPLATE_BYTES: usize = 16 << 20;
/// What a template's values for one batch may add up to: keeps the batch's column far below
/// Arrow's 2 GiB offsets and its memory bounded.
pub const BATCH_TEMPLATE_BYTES: usize = 1 << 30;

/// How a template is evaluated (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub enum TemplateKind {
    Literal(String),
    LiteralList(Vec<String>),
    Column(String),
    ModelOutput,
    Expression(String),
    Render,
    /// A `custom` scorer's `condition:`: a minijinja expression over `value`, `ground_truth`
    /// and `sample`, evaluated with [`Template::evaluate_condition`].
    Condition(String),
}

/// A compiled, classified template of one scorer option.
#[derive(Debug, Clone)]
pub struct Template {
    /// The template text as written (after placeholder substitution).
    pub source: String,
    /// Where the template is in the task file.
    pub location: Option<Location>,
    /// Which option it is, e.g. `string_equals.ground_truth`.
    pub what: String,
    pub kind: TemplateKind,
    columns: BTreeSet<String>,
    /// `sample.a.b.c` paths the template reads (without `sample.`), checked against the
    /// struct fields of the schema.
    paths: BTreeSet<String>,
    all_columns: bool,
    model_output: bool,
    name: String,
    env: Option<Arc<Environment<'static>>>,
    /// `{{ sample.col | trim | lower }}`-shaped expressions: evaluated over the whole column
    /// at once when the column is text (see [`vector_plan`]).
    vector: Option<(String, Vec<TextFilter>)>,
    /// Text and plain column tags: joined a column at a time (see [`concat_plan`]).
    concat: Option<Vec<Piece>>,
}

/// What a template gives for one batch.
#[derive(Debug, Clone)]
pub enum TemplateOutput {
    /// One value per row (text, a list, or whatever type the input column has).
    Array(ArrayRef),
    /// The same text for every row.
    Scalar(String),
    /// The same list for every row.
    List(Vec<String>),
}

/// The row data a template is evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct RowContext<'a> {
    pub batch: &'a RecordBatch,
    /// The model output as text, one per row, if the task has one.
    pub model_output: Option<&'a ArrayRef>,
    /// The model output column as stored (text, JSON text or a struct), for `model_output`.
    pub model_output_raw: Option<&'a ArrayRef>,
}

/// A template failed on one row (index within the batch).
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateRowError {
    pub row: usize,
    pub message: String,
    /// The error is about this row's data (and `row` says which); otherwise it is about the
    /// template or the batch as a whole.
    pub per_row: bool,
}

impl TemplateRowError {
    /// The template reached something that does not exist.
    pub fn is_undefined(&self) -> bool {
        self.message.starts_with(UNDEFINED_MESSAGE)
    }
}

impl Template {
    pub(crate) fn column(name: String, location: Option<Location>, what: &str) -> Template {
        Template {
            source: format!("{{{{ sample.{name} }}}}"),
            location,
            what: what.to_owned(),
            columns: BTreeSet::from([name.clone()]),
            paths: BTreeSet::new(),
            kind: TemplateKind::Column(name),
            all_columns: false,
            model_output: false,
            name: String::new(),
            env: None,
            vector: None,
            concat: None,
        }
    }

    pub(crate) fn attach(&mut self, env: &Arc<Environment<'static>>) {
        self.env = Some(Arc::clone(env));
    }

    /// Input columns the template reads. `(columns, true)` means it reads the whole row.
    pub fn columns(&self) -> (&BTreeSet<String>, bool) {
        (&self.columns, self.all_columns)
    }

    pub fn uses_model_output(&self) -> bool {
        self.model_output
    }

    /// Checks that every column the template names is in `schema`.
    pub fn check_columns(&self, schema: &Schema) -> Result<(), TaskError> {
        for col in &self.columns {
            if schema.column_with_name(col).is_none() {
                let available: Vec<&str> =
                    schema.fields().iter().map(|f| f.name().as_str()).collect();
                let names: Vec<&str> = available.clone();
                let mut hint = format!("available columns: {}", available.join(", "));
                if let Some(s) = crate::error::did_you_mean(col, &names) {
                    hint = format!("did you mean `{s}`? {hint}");
                }
                return Err(TaskError::new(
                    format!(
                        "template of `{}` names column `{col}`, which the input does not have",
                        self.what
                    ),
                    self.location,
                )
                .with_hint(hint));
            }
        }
        for path in &self.paths {
            self.check_path(path, schema)?;
        }
        Ok(())
    }

    /// A `sample.col.field...` path through struct columns must name fields that exist: the
    /// schema tells before any row is read. The walk stops at the first list, map or
    /// non-struct value, whose contents only rows can tell.
    fn check_path(&self, path: &str, schema: &Schema) -> Result<(), TaskError> {
        let mut parts = path.split('.');
        let Some(col) = parts.next() else {
            return Ok(());
        };
        let Some((_, field)) = schema.column_with_name(col) else {
            return Ok(());
        };
        let mut data_type = field.data_type();
        let mut walked = col.to_owned();
        for part in parts {
            let arrow::datatypes::DataType::Struct(fields) = data_type else {
                return Ok(());
            };
            let Some((_, f)) = fields.find(part) else {
                let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
                let mut hint = format!("`{walked}` has the fields {}", names.join(", "));
                if let Some(s) = crate::error::did_you_mean(part, &names) {
                    hint = format!("did you mean `{s}`? {hint}");
                }
                return Err(TaskError::new(
                    format!(
                        "template of `{}` reads `sample.{walked}.{part}`, but the struct column `{walked}` has no field `{part}`",
                        self.what
                    ),
                    self.location,
                )
                .with_hint(hint));
            };
            walked = format!("{walked}.{part}");
            data_type = f.data_type();
        }
        Ok(())
    }

    /// Evaluates the template for every row of `ctx.batch`.
    ///
    /// Null rule: a column cell that is null, an expression that yields none, and a rendered
    /// template that prints a null value all give a null (missing) row, never the text "none".
    pub fn evaluate(&self, ctx: &RowContext<'_>) -> Result<TemplateOutput, TemplateRowError> {
        match &self.kind {
            TemplateKind::Literal(s) => Ok(TemplateOutput::Scalar(s.clone())),
            TemplateKind::LiteralList(l) => Ok(TemplateOutput::List(l.clone())),
            TemplateKind::Column(name) => ctx
                .batch
                .column_by_name(name)
                .map(|c| TemplateOutput::Array(Arc::clone(c)))
                .ok_or_else(|| TemplateRowError {
                    row: 0,
                    message: format!("the input has no column `{name}`"),
                    per_row: false,
                }),
            TemplateKind::ModelOutput => ctx
                .model_output
                .map(|c| TemplateOutput::Array(Arc::clone(c)))
                .ok_or_else(|| TemplateRowError {
                    row: 0,
                    message: "the task has no model output column".to_owned(),
                    per_row: false,
                }),
            TemplateKind::Expression(expr) => {
                if let Some((column, filters)) = &self.vector {
                    if let Some(out) = ctx
                        .batch
                        .column_by_name(column)
                        .and_then(|c| filter_column(c, filters))
                    {
                        return Ok(TemplateOutput::Array(out));
                    }
                }
                let env = self.env()?;
                let compiled = env
                    .compile_expression_owned(expr.clone())
                    .map_err(|e| batch_error(&e))?;
                self.per_row(ctx, |row, context| match compiled.eval(context) {
                    Ok(v) if v.is_none() => Ok(None),
                    Ok(v) if has_undefined(&v, 0) => Err(undefined_row_error(row)),
                    Ok(v) => Ok(Some(v)),
                    Err(e) => Err(row_error(row, &e)),
                })
            }
            TemplateKind::Condition(_) => Err(TemplateRowError {
                row: 0,
                message: "a condition is evaluated with its value".to_owned(),
                per_row: false,
            }),
            TemplateKind::Render => {
                if let Some(out) = self.concat.as_ref().and_then(|p| concat_column(p, ctx)) {
                    return Ok(TemplateOutput::Array(out));
                }
                let env = self.env()?;
                let tmpl = env.get_template(&self.name).map_err(|e| batch_error(&e))?;
                self.per_row(ctx, |row, context| match tmpl.render(context) {
                    Ok(s) => Ok(Some(Value::from(s))),
                    Err(e) if e.detail() == Some(NULL_MARKER) => Ok(None),
                    Err(e) => Err(row_error(row, &e)),
                })
            }
        }
    }

    /// Evaluates a `custom` condition for every row: the expression is compiled once per
    /// batch, then run per row with `value` (the row of `value`), `ground_truth` (the row of
    /// `ground_truth`, none without one), `sample` and `solver_output.output` in scope.
    ///
    /// Null rule: a row whose value is null, or whose ground truth is null when one is given,
    /// is not evaluated and gives `None`. Otherwise the result is the expression's truthiness.
    pub fn evaluate_condition(
        &self,
        ctx: &RowContext<'_>,
        value: &dyn arrow::array::Array,
        ground_truth: Option<&dyn arrow::array::Array>,
    ) -> Result<Vec<Option<bool>>, TemplateRowError> {
        let TemplateKind::Condition(expr) = &self.kind else {
            return Err(TemplateRowError {
                row: 0,
                message: "not a condition".to_owned(),
                per_row: false,
            });
        };
        let env = self.env()?;
        let compiled = env
            .compile_expression_owned(expr.clone())
            .map_err(|e| batch_error(&e))?;
        let shared = Arc::new(Shared {
            batch: ctx.batch.clone(),
            model_output: ctx.model_output.cloned(),
            model_output_raw: ctx.model_output_raw.cloned(),
        });
        let n = ctx.batch.num_rows();
        let mut out = Vec::with_capacity(n);
        for row in 0..n {
            if value.is_null(row) || ground_truth.is_some_and(|g| g.is_null(row)) {
                out.push(None);
                continue;
            }
            let v = cell_to_value(value, row);
            let g = ground_truth.map_or_else(|| Value::from(()), |g| cell_to_value(g, row));
            let context = minijinja::context! {
                value => v,
                ground_truth => g,
                ..self.row_context(&shared, row)
            };
            let (r, over) =
                minijinja::budget::with_byte_budget(TEMPLATE_BYTES, || compiled.eval(context));
            let r = match r {
                _ if over => Err(too_large_row_error(row)),
                Ok(r) if r.is_undefined() => Err(undefined_row_error(row)),
                Ok(r) => Ok(r),
                Err(e) => Err(row_error(row, &e)),
            };
            match r {
                Ok(r) => out.push(Some(r.is_true())),
                Err(e) if e.is_undefined() && self.reads_null(&shared, row) => out.push(None),
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    fn env(&self) -> Result<&Environment<'static>, TemplateRowError> {
        self.env.as_deref().ok_or_else(|| TemplateRowError {
            row: 0,
            message: "template used before its task was compiled".to_owned(),
            per_row: false,
        })
    }

    /// What every row sees: `sample`, and `solver_output.output` when the template uses it.
    fn row_context(&self, shared: &Arc<Shared>, row: usize) -> Value {
        let sample = Value::from_object(RowObject {
            shared: Arc::clone(shared),
            row,
        });
        if self.model_output {
            let out = shared
                .model_output
                .as_ref()
                .map(|a| cell_to_value(a.as_ref(), row))
                .unwrap_or_default();
            let object = shared
                .model_output_raw
                .as_ref()
                .map(|a| model_output_object(a.as_ref(), row))
                .unwrap_or_default();
            minijinja::context! {
                sample => sample,
                solver_output => minijinja::context! { output => out },
                model_output => object,
            }
        } else {
            minijinja::context! { sample => sample }
        }
    }

    fn per_row(
        &self,
        ctx: &RowContext<'_>,
        mut f: impl FnMut(usize, Value) -> Result<Option<Value>, TemplateRowError>,
    ) -> Result<TemplateOutput, TemplateRowError> {
        let shared = Arc::new(Shared {
            batch: ctx.batch.clone(),
            model_output: ctx.model_output.cloned(),
            model_output_raw: ctx.model_output_raw.cloned(),
        });
        let n = ctx.batch.num_rows();
        let mut values = Vec::with_capacity(n);
        let mut total = 0usize;
        for row in 0..n {
            let (r, over) = minijinja::budget::with_byte_budget(TEMPLATE_BYTES, || {
                f(row, self.row_context(&shared, row))
            });
            let v = match r {
                _ if over => return Err(too_large_row_error(row)),
                Err(e) if e.is_undefined() && self.reads_null(&shared, row) => None,
                other => other?,
            };
            if let Some(v) = &v {
                let bytes = value_bytes(v, TEMPLATE_BYTES);
                if bytes > TEMPLATE_BYTES {
                    return Err(too_large_row_error(row));
                }
                total += bytes;
                if total > BATCH_TEMPLATE_BYTES {
                    return Err(TemplateRowError {
                        row,
                        message: format!(
                            "its values for the {} rows of one batch add up to more than {} MiB",
                            n,
                            BATCH_TEMPLATE_BYTES >> 20
                        ),
                        per_row: false,
                    });
                }
            }
            values.push(v);
        }
        Ok(TemplateOutput::Array(values_to_array(&values)))
    }

    /// Whether a cell this template reads holds a null at some depth on `row`: reaching
    /// into a null struct (`sample.meta.n` where `meta` is null) gives undefined, and that
    /// row is missing, as a null column cell is, rather than an error.
    fn reads_null(&self, shared: &Shared, row: usize) -> bool {
        let batch = &shared.batch;
        let columns: Vec<&ArrayRef> = if self.all_columns {
            batch.columns().iter().collect()
        } else {
            self.columns
                .iter()
                .filter_map(|c| batch.column_by_name(c))
                .collect()
        };
        let output = self
            .model_output
            .then_some(shared.model_output_raw.as_ref())
            .flatten();
        columns
            .into_iter()
            .chain(output)
            .any(|c| cell_has_null(c.as_ref(), row, 0))
    }
}

/// A row whose template built more than [`TEMPLATE_BYTES`].
fn too_large_row_error(row: usize) -> TemplateRowError {
    TemplateRowError {
        row,
        message: format!(
            "the template builds more than {} MiB for one row (the per-row limit)",
            TEMPLATE_BYTES >> 20
        ),
        per_row: true,
    }
}

/// The bytes a value takes as a text cell, or as a list of text cells (each item's text and
/// its offset), counted up to a little past `limit`.
fn value_bytes(v: &Value, limit: usize) -> usize {
    if let Some(s) = v.as_str() {
        return s.len();
    }
    if v.kind() == minijinja::value::ValueKind::Seq {
        if let Ok(items) = v.try_iter() {
            let mut n = 0usize;
            for item in items {
                n += 8 + item
                    .as_str()
                    .map_or_else(|| item.to_string().len(), str::len);
                if n > limit {
                    break;
                }
            }
            return n;
        }
    }
    v.to_string().len()
}

pub(super) fn row_error(row: usize, e: &minijinja::Error) -> TemplateRowError {
    let message = if e.kind() == ErrorKind::OutOfFuel {
        format!("the template ran out of fuel ({TEMPLATE_FUEL} steps per row); it probably loops without end")
    } else if e.kind() == ErrorKind::UndefinedError {
        match e.line() {
            Some(line) if line > 1 => format!("{UNDEFINED_MESSAGE} (template line {line})"),
            _ => UNDEFINED_MESSAGE.to_owned(),
        }
    } else {
        let mut m = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            m.push_str(&format!(": {s}"));
            source = s.source();
        }
        m
    };
    TemplateRowError {
        row,
        message,
        per_row: true,
    }
}

/// A template error that is not about one row (compiling it for the batch).
pub(super) fn batch_error(e: &minijinja::Error) -> TemplateRowError {
    TemplateRowError {
        per_row: false,
        ..row_error(0, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_templates() {
        assert_eq!(classify("YES"), TemplateKind::Literal("YES".into()));
        assert_eq!(
            classify("{{ sample.answer }}"),
            TemplateKind::Column("answer".into())
        );
        assert_eq!(
            classify("{{sample.answer}}"),
            TemplateKind::Column("answer".into())
        );
        assert_eq!(
            classify("{{- sample.answer -}}"),
            TemplateKind::Column("answer".into())
        );
        assert_eq!(
            classify("{{ sample[\"my col\"] }}"),
            TemplateKind::Column("my col".into())
        );
        assert_eq!(
            classify("{{ solver_output.output }}"),
            TemplateKind::ModelOutput
        );
        assert_eq!(
            classify("{{ sample.answer_key | upper }}"),
            TemplateKind::Expression("sample.answer_key | upper".into())
        );
        assert_eq!(
            classify("The country is {{ sample.country }}"),
            TemplateKind::Render
        );
        assert_eq!(classify(" {{ sample.a }}"), TemplateKind::Render);
        assert_eq!(
            classify("{{ sample.a }}{{ sample.b }}"),
            TemplateKind::Render
        );
        assert_eq!(classify("{% if x %}a{% endif %}"), TemplateKind::Render);
    }

    #[test]
    fn finds_statements_that_need_a_loader() {
        assert_eq!(loader_statement("{% include 'a' %}"), Some("include"));
        assert_eq!(loader_statement("x{%- import 'a' as m -%}"), Some("import"));
        assert_eq!(loader_statement("{%+\n from 'a' import b %}"), Some("from"));
        assert_eq!(loader_statement("{%extends 'a'%}"), Some("extends"));
        assert_eq!(loader_statement("{% if included %}{% endif %}"), None);
        assert_eq!(loader_statement("{% for f in from_x %}{% endfor %}"), None);
        assert_eq!(loader_statement("{{ sample.include }} {%"), None);
    }
}

#[cfg(test)]
mod vector_tests {
    use super::*;
    use crate::Task;
    use arrow::array::{Array, Int64Array, LargeStringArray, StringArray, StringViewArray};
    use arrow::datatypes::{DataType, Field};

    #[test]
    fn vector_plans() {
        assert_eq!(
            vector_plan("sample.answer | trim"),
            Some(("answer".into(), vec![TextFilter::Trim]))
        );
        assert_eq!(
            vector_plan("sample[\"a b\"]|trim|lower|upper()"),
            Some((
                "a b".into(),
                vec![TextFilter::Trim, TextFilter::Lower, TextFilter::Upper]
            ))
        );
        assert_eq!(vector_plan("sample.answer"), None);
        assert_eq!(vector_plan("sample.answer | trim('x')"), None);
        assert_eq!(vector_plan("sample.answer | title"), None);
        assert_eq!(vector_plan("sample.a ~ sample.b | trim"), None);
    }

    const CELLS: [Option<&str>; 9] = [
        Some("  Yes \n"),
        None,
        Some(""),
        Some("   "),
        Some("ÉCOLE straße İ"),
        Some("a much longer answer that does not fit in a view  "),
        Some("\u{3000}全角\u{3000}"),
        Some("ǅ title-case digraph"),
        Some("x"),
    ];

    /// Every vectorized shape gives exactly what minijinja's per-row evaluation gives, over
    /// the three string layouts, with nulls, whitespace-only, Unicode case and long strings.
    #[test]
    fn vectorized_filters_match_minijinja_row_by_row() {
        let layouts: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(CELLS.to_vec())),
            Arc::new(LargeStringArray::from(CELLS.to_vec())),
            Arc::new(StringViewArray::from(CELLS.to_vec())),
        ];
        for shape in [
            "sample.a | trim",
            "sample.a | lower",
            "sample.a | upper",
            "sample.a | trim | lower",
            "sample.a|upper|trim",
        ] {
            let text = format!(
                "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{{{ {shape} }}}}\"\n"
            );
            let task = Task::from_yaml(&text, &[]).unwrap();
            let fast = task.scorers[0].kind.templates()[0].clone();
            assert!(fast.vector.is_some(), "{shape}");
            let mut slow = fast.clone();
            slow.vector = None;
            for col in &layouts {
                let schema = Schema::new(vec![Field::new("a", col.data_type().clone(), true)]);
                let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::clone(col)]).unwrap();
                let ctx = RowContext {
                    batch: &batch,
                    model_output: None,
                    model_output_raw: None,
                };
                let (TemplateOutput::Array(f), TemplateOutput::Array(s)) =
                    (fast.evaluate(&ctx).unwrap(), slow.evaluate(&ctx).unwrap())
                else {
                    panic!("{shape}: not arrays");
                };
                assert_eq!(f.data_type(), &DataType::Utf8View);
                let f = f.as_any().downcast_ref::<StringViewArray>().unwrap();
                let s = arrow::compute::cast(&s, &DataType::Utf8View).unwrap();
                let s = s.as_any().downcast_ref::<StringViewArray>().unwrap();
                let fv: Vec<Option<&str>> = f.iter().collect();
                let sv: Vec<Option<&str>> = s.iter().collect();
                assert_eq!(fv, sv, "{shape} over {}", col.data_type());
            }
        }
    }

    /// A non-text column takes minijinja's path: `{{ sample.n | trim }}` on integers gives
    /// the numbers' text, as before.
    #[test]
    fn non_text_columns_fall_back_to_row_by_row() {
        let text = "definition:\n  scorers:\n    - type: string_equals\n      ground_truth: \"{{ sample.n | trim }}\"\n";
        let task = Task::from_yaml(text, &[]).unwrap();
        let t = &task.scorers[0].kind.templates()[0];
        let schema = Schema::new(vec![Field::new("n", DataType::Int64, true)]);
        let col: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None]));
        let batch = RecordBatch::try_new(Arc::new(schema), vec![col]).unwrap();
        let ctx = RowContext {
            batch: &batch,
            model_output: None,
            model_output_raw: None,
        };
        let TemplateOutput::Array(out) = t.evaluate(&ctx).unwrap() else {
            panic!("not an array");
        };
        let out = arrow::compute::cast(&out, &DataType::Utf8).unwrap();
        let out = out.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(out.iter().collect::<Vec<_>>(), [Some("3"), None]);
    }
}

#[cfg(test)]
mod concat_tests {
    use super::*;
    use crate::Task;
    use arrow::array::{
        Array, BooleanArray, Int32Array, Int64Array, LargeStringArray, StringArray,
        StringViewArray, UInt8Array,
    };
    use arrow::datatypes::{DataType, Field};

    #[test]
    fn concat_plans() {
        use Piece::*;
        assert_eq!(
            concat_plan(
                "Row {{ sample.id }}. Q: {{sample[\"q x\"]}}\nA: {{ solver_output.output }}"
            ),
            Some(vec![
                Text("Row ".into()),
                Column("id".into()),
                Text(". Q: ".into()),
                Column("q x".into()),
                Text("\nA: ".into()),
                ModelOutput,
            ])
        );
        assert_eq!(
            concat_plan("{{ sample.a }}{{ sample.b }}"),
            Some(vec![Column("a".into()), Column("b".into())])
        );
        for other in [
            "no tags",
            "{{ sample.a }}\n",
            "{{- sample.a }} x",
            "x {{ sample.a -}}",
            "x {{+ sample.a }}",
            "x {{ sample.a | upper }}",
            "x {{ sample.a.b }}",
            "x {{ model_output.choices[0].message.content }}",
            "x {% if sample.a %}y{% endif %}",
            "x {# note #} {{ sample.a }}",
            "x }} {{ sample.a }}",
            "x {{ sample.a ",
            "x {{ 'a' }}",
        ] {
            assert_eq!(concat_plan(other), None, "{other}");
        }
    }

    /// Joined a column at a time, a template gives exactly what minijinja's rendering gives
    /// row by row: text in the three layouts, integers of several widths, nulls (a missing
    /// row), empty cells, Unicode, newlines and quotes; and falls back to minijinja for a
    /// column of another type.
    #[test]
    fn joined_columns_match_minijinja_row_by_row() {
        let texts = [
            Some("Paris"),
            None,
            Some(""),
            Some("ÉCOLE «straße» \"q\" {{ x }}"),
            Some("two\nlines\r\n"),
            Some("x"),
        ];
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("s", Arc::new(StringArray::from(texts.to_vec()))),
            ("l", Arc::new(LargeStringArray::from(texts.to_vec()))),
            ("v", Arc::new(StringViewArray::from(texts.to_vec()))),
            (
                "i",
                Arc::new(Int64Array::from(vec![
                    Some(i64::MIN),
                    Some(-7),
                    Some(0),
                    None,
                    Some(42),
                    Some(i64::MAX),
                ])),
            ),
            (
                "j",
                Arc::new(Int32Array::from(vec![
                    Some(1),
                    Some(2),
                    None,
                    Some(-3),
                    Some(4),
                    Some(5),
                ])),
            ),
            (
                "u",
                Arc::new(UInt8Array::from(vec![
                    Some(255),
                    Some(0),
                    Some(1),
                    Some(2),
                    Some(3),
                    None,
                ])),
            ),
            (
                "b",
                Arc::new(BooleanArray::from(vec![
                    Some(true),
                    Some(false),
                    None,
                    Some(true),
                    Some(true),
                    Some(false),
                ])),
            ),
        ];
        let fields: Vec<Field> = columns
            .iter()
            .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
            .collect();
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            columns.iter().map(|(_, c)| Arc::clone(c)).collect(),
        )
        .unwrap();
        let output: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("The answer is Paris."),
            Some("no"),
            Some("ok"),
            None,
            Some(""),
            Some("é"),
        ]));
        let ctx = RowContext {
            batch: &batch,
            model_output: Some(&output),
            model_output_raw: Some(&output),
        };
        for template in [
            "Row {{ sample.i }}. Question: {{ sample.s }}\nResponse: {{ solver_output.output }}",
            "{{ sample.l }}|{{ sample.v }}",
            "[{{ sample.j }}] [{{ sample.u }}] {{ sample['s'] }} done",
            "{{ sample.i }}{{ sample.i }}",
            "flag {{ sample.b }}: {{ sample.s }}",
        ] {
            let yaml = format!(
                "definition:\n  output_column: out\n  scorers:\n    - type: string_equals\n      ground_truth: {}\n",
                serde_json::to_string(template).unwrap()
            );
            let task = Task::from_yaml(&yaml, &[]).unwrap();
            let fast = task.scorers[0].kind.templates()[0].clone();
            assert!(fast.concat.is_some(), "{template}");
            let mut slow = fast.clone();
            slow.concat = None;
            let (TemplateOutput::Array(f), TemplateOutput::Array(s)) =
                (fast.evaluate(&ctx).unwrap(), slow.evaluate(&ctx).unwrap())
            else {
                panic!("{template}: not arrays");
            };
            assert_eq!(f.data_type(), s.data_type(), "{template}");
            let f = f.as_any().downcast_ref::<StringArray>().unwrap();
            let s = s.as_any().downcast_ref::<StringArray>().unwrap();
            let fv: Vec<Option<&str>> = f.iter().collect();
            let sv: Vec<Option<&str>> = s.iter().collect();
            assert_eq!(fv, sv, "{template}");
            assert!(sv.iter().any(Option::is_none) && sv.iter().any(Option::is_some));
        }
        // A Boolean column is not joined (minijinja writes it), with the same result.
        let pieces = concat_plan("flag {{ sample.b }}").unwrap();
        assert!(concat_column(&pieces, &ctx).is_none());
        assert_eq!(
            concat_column(&concat_plan("{{ sample.i }}").unwrap(), &ctx)
                .unwrap()
                .data_type(),
            &DataType::Utf8
        );
    }
}

#[cfg(test)]
mod condition_tests {
    use super::*;
    use crate::{ScorerKind, Task};
    use arrow::array::StringArray;
    use arrow::datatypes::{DataType, Field};

    /// A condition sees `value`, `ground_truth`, `sample` and `solver_output.output` together
    /// (the row's own variables merged with the shared row context).
    #[test]
    fn condition_sees_value_ground_truth_sample_and_model_output() {
        let text = "definition:\n  scorers:\n    - type: custom\n      ground_truth: \"{{ sample.answer }}\"\n      condition: \"value == solver_output.output and ground_truth == sample.answer and sample.answer in value\"\n";
        let task = Task::from_yaml(text, &[]).unwrap();
        let ScorerKind::Custom {
            condition: Some(condition),
            ..
        } = &task.scorers[0].kind
        else {
            panic!("not a custom condition");
        };
        let output: ArrayRef = Arc::new(StringArray::from(vec![Some("yes!"), Some("no"), None]));
        let answer: ArrayRef =
            Arc::new(StringArray::from(vec![Some("yes"), Some("yes"), Some("x")]));
        let schema = Schema::new(vec![Field::new("answer", DataType::Utf8, true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::clone(&answer)]).unwrap();
        let ctx = RowContext {
            batch: &batch,
            model_output: Some(&output),
            model_output_raw: None,
        };
        let got = condition
            .evaluate_condition(&ctx, output.as_ref(), Some(answer.as_ref()))
            .unwrap();
        assert_eq!(got, [Some(true), Some(false), None]);
    }
}
