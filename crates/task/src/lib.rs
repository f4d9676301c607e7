//! The typed task definition of evalscore.
//!
//! A task file is YAML in the shape of the AI GO! task definitions: `config:` values fill
//! `<< config.NAME >>` placeholders ([`substitute_placeholders`]) before the YAML is parsed, and
//! `definition.scorers` lists the scorers. [`Task::from_yaml`] turns the text into a [`Task`]:
//! each [`ScorerSpec`] carries its [`ScorerKind`] (the scorer's typed options), its
//! [`MetricSpec`]s and its templates, each a [`Template`] compiled once and classified
//! ([`TemplateKind`]) so that a plain column reference or a literal is never rendered row by row.
//! [`Template::evaluate`] turns a template into an Arrow array for one record batch.
//! A top-level `models:` map names judge endpoints ([`ModelSpec`]), which the model-graded
//! scorers ([`judge`]) ask by `model_key`.
//! Every error is a [`TaskError`] that points at the task file's line and column.

mod error;
pub mod judge;
mod models;
mod parse;
mod parse_more;
mod placeholders;
mod raw;
mod spec;
mod template;
mod value;

pub use error::{Location, TaskError};
pub use models::ModelSpec;
pub use placeholders::substitute_placeholders;
pub use spec::{
    sanitize, FieldKind, FunctionRef, GradedMeasure, MetricKind, MetricSpec, Purpose, PythonMetric,
    ScorerField, ScorerKind, ScorerSpec, Task,
};
pub use template::{
    RowContext, Template, TemplateKind, TemplateOutput, TemplateRowError, MODEL_OUTPUT_OBJECT_VAR,
    MODEL_OUTPUT_VAR, UNDEFINED_MESSAGE,
};
pub use value::cell_to_value;
