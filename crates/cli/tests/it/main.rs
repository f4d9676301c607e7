//! The CLI's integration tests, in one test binary (one link, not one per file): a module per area.
//! `cargo test -p evalscore-cli --test it e2e::` runs one module's tests.

mod agreement;
mod checks;
mod common;
mod compare;
mod compare_suites;
mod compressed;
mod copy;
mod delta;
mod e2e;
mod errors;
mod faults;
mod fidelity;
mod graded;
mod hive;
mod judge;
mod judge_robust;
mod judge_robust_real;
mod judged;
mod judged_real;
mod labels;
mod outdir;
mod pairwise;
mod partition_filter;
mod report;
mod robustness;
mod run_identity;
mod storage;
mod storage_secrets;
mod suite_inputs;
mod suites;
mod trees;
mod union;
