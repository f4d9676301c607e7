//! The outdir crate's integration tests, in one test binary: a module per area.
//! `cargo test -p evalscore-outdir --test it lock::` runs one module's tests.

mod lock;
