//! The kernels' integration tests, in one test binary (one link, not one per file): a module per
//! area. `cargo test -p evalscore-kernels --test it props::` runs one module's tests.
//! proptest keeps the seeds of past failures in `tests/proptest-regressions/` (its place for a
//! test binary with a `main.rs`) and replays them first.

mod lexical_golden;
mod numeric;
mod props;
mod schema_vs_jsonschema;
