//! The reader crate's integration tests, one binary: inputs opened and decoded through the
//! public API.

mod input_names;
