//! The task crate's integration tests, in one test binary: a module per area.
//! `cargo test -p evalscore-task --test it filter::` runs one module's tests.

mod filter;
mod suite;
