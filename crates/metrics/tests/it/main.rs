//! The metrics crate's integration tests, in one test binary (one link, not one per file): a module
//! per area. `cargo test -p evalscore-metrics --test it merge_law::` runs one module's tests.

mod agreement;
mod bootstrap;
mod conformance;
mod fits;
mod golden;
mod labels;
mod length_controlled;
mod limits;
mod merge_law;
mod parse;
mod registry;
mod state_bytes;
