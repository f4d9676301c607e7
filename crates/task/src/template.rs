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
mod evaluate;
#[cfg(test)]
mod tests;
mod values;
mod vector;

use crate::raw::{Node, Tree};
use crate::value::cell_to_value;
use crate::{Location, TaskError};
use arrow::array::{ArrayRef, ListBuilder, RecordBatch, StringBuilder};
use arrow::datatypes::Schema;
pub use compile::TemplateCompiler;
pub(crate) use compile::*;
pub use concat::*;
use minijinja::value::{Enumerator, Object, ObjectRepr, Value, ValueKind};
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use values::*;
pub use vector::*;

/// The template variable holding the model output (`solver_output.output`).
pub const MODEL_OUTPUT_VAR: &str = "solver_output";
/// The model output as an object (`model_output.choices[0].message.content`), as judge
/// prompts written for chat completion replies read it.
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
    /// A scorer reads this template's value as text or as a list (`choices`, `expected`);
    /// every other template is read as text.
    pub(crate) list: bool,
    name: String,
    /// The task's environment, shared by all its templates and set once the whole task is
    /// compiled ([`TemplateCompiler::finish`]).
    env: Arc<OnceLock<Environment<'static>>>,
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
    /// Whether a scorer reads this template's value as a list as well as text.
    pub fn may_be_list(&self) -> bool {
        self.list
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
}
