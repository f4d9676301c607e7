//! The task crate's integration tests, in one test binary: a module per area.
//! `cargo test -p evalscore-task --test it metric::` runs one module's tests.

mod metric;
mod suite;
