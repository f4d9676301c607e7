//! The scorers crate's integration tests, one binary: loading task files (the registry's
//! kinds, templates, `models:`), hostile inputs, and the registry itself.

mod graded;
mod hostile;
mod judge_memory;
mod models;
mod parse;
mod registry;
mod template_chains;
mod templates;
mod value;
mod write_fields;
