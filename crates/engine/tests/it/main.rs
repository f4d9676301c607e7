//! The engine's integration tests, in one test binary (one link, not one per file): a module per
//! area. `cargo test -p evalscore-engine --test it library::` runs one module's tests.

mod functions;
mod judge_requests;
mod library;
mod metric_data;
mod row_filter;
mod run_labels;
mod suite_commit;
mod suite_progress;
