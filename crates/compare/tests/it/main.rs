//! The compare crate's integration tests, in one test binary (one link, not one per file): a module
//! per area. `cargo test -p evalscore-compare --test it golden::` runs one module's tests.

mod golden;
