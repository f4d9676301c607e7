//! The task-file language of evalscore: what every task file shares, whatever its scorers.
//!
//! A task file is YAML in the shape docs/compatibility.md describes: `config:` values fill
//! `<< config.NAME >>` placeholders ([`substitute_placeholders`]) before the YAML is parsed, and
//! `definition.scorers` lists the scorers. [`TaskDocument::parse`] reads a task file up to its
//! scorers: the YAML with every node's line and column ([`Node`], [`MapNode`]), the top-level
//! keys, `confidence:`, the judge endpoints of `models:` ([`ModelSpec`]) and the partition
//! `filter:` ([`TaskFilter`]). The scorers themselves are parsed by the scorer registry (the
//! `evalscore-scorers` crate) through [`ScorerOptions`], typed getters over one scorer's
//! mapping.
//!
//! A [`Template`] is compiled once ([`TemplateCompiler`]) and classified ([`TemplateKind`]) so
//! that a plain column reference or a literal is never rendered row by row;
//! [`Template::evaluate`] turns it into an Arrow array for one record batch. A scorer's
//! `metrics:` are [`MetricSpec`]s (parsed by the metric registry of the `evalscore-metrics`
//! crate), each input a [`ScorerField`] of the
//! scorer, an input column or a template over the row ([`MetricInput`]). Every error is a [`TaskError`] that points at the task file's line and
//! column.
//!
//! A [`SuiteFile`] (a YAML file with top-level `tasks:`) lists many tasks to score in one run
//! over shared inputs; its errors point at the suite file's line and column too.

mod document;
mod error;
mod fields;
mod metric;
mod models;
mod options;
mod placeholders;
mod raw;
mod suite;
mod template;
mod value;

pub use document::{TaskDocument, TaskFilter};
pub use error::{did_you_mean, Location, TaskError};
pub use fields::{sanitize, FieldKind, Purpose, ScorerField};
pub use metric::{
    function_ref, FunctionRef, MetricInput, MetricOptions, MetricReads, MetricSpec, OptionsValue,
    PythonMetric,
};
pub use models::ModelSpec;
pub use options::{OptionDoc, ScorerOptions};
pub use placeholders::substitute_placeholders;
pub use raw::{MapNode, Node};
pub use suite::{SuiteFile, SuiteTask, TaskSource, MAX_TASK_NAME_BYTES};
pub use template::{
    RowContext, Template, TemplateCompiler, TemplateKind, TemplateOutput, TemplateRowError,
    MODEL_OUTPUT_OBJECT_VAR, MODEL_OUTPUT_VAR, UNDEFINED_MESSAGE,
};
pub use value::{cell_to_value, literal_list};
