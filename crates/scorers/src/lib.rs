//! The scorers of evalscore: a task file's scorers parsed into bound [`Scorer`]s, and what
//! they need to score a batch.
//!
//! - [`Task::from_yaml`] reads a task file: the language (YAML, placeholders, templates,
//!   metrics, `models:`) is `evalscore_task`'s; each scorer's own options are parsed by its
//!   kind, a [`ScorerType`] found in the [`registry`] by its `type`.
//! - A kind lives in one file under [`scorers`] (`scorers/not_regex.rs`, ...) and is one line
//!   of [`registry::SCORER_TYPES`]. Its bound [`Scorer`] says which fields it writes, which
//!   templates it reads and which model it asks, and scores a batch ([`BatchInput`]) into
//!   [`ScoreColumns`]; a row it cannot score is a [`RowError`].
//!   A kind implements [`Kind`]: one constant, [`About`] (names, doc, options, example),
//!   and its parser.
//! - The scorers that score a text share [`input::TextInput`] (`value:`, `extract:`,
//!   `normalize:`) and are bound as one generic scorer (`bound.rs`: the kind's kernel call,
//!   the template it compares with, the kernel's fields); the model-graded ones share
//!   [`judge`]: the prompt windows, the reply cache
//!   and each model's endpoint ([`judge::JudgeRuntime`]).
//! - [`reference::render`] writes docs/scorer-reference.md from the registry.

mod batch;
mod bound;
mod expected;
pub mod functions;
mod graded;
pub mod input;
pub mod judge;
mod kernel_options;
mod parse;
pub mod reference;
pub mod registry;
mod row_error;
mod scorer;
pub mod scorers;
mod spec;
mod task;

pub use batch::{BatchInput, Fields, ScoreColumns};
pub use functions::{Functions, UserFunctions};
pub use row_error::{internal, CellRef, RowError};
pub use scorer::{About, Kind, OptionDoc, ParseCx, Scorer, ScorerType, VALUE_OPTION};
pub use spec::ScorerSpec;
pub use task::Task;
