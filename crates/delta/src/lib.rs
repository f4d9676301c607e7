//! A run's outputs as Delta Lake tables (`evalscore run --format delta`): under one root,
//! `scores/`, `metrics/` and `confusion/` (the run's files' columns, partitioned by `run_id`
//! and `task`) and `runs/` (one row per task run, partitioned by `run_id`), written with
//! delta-rs's core (`deltalake-core`, without DataFusion) on the same `object_store` as every
//! other output. [`DeltaRoot::publish`] commits a run's staged files, the `runs` row last
//! (module `publish` says what a failure leaves); [`DeltaRoot::materialize`] gives a run back
//! as folders, for `compare` and `report`. The layout is documented in docs/output-format.md.

mod error;
mod files;
mod publish;
mod read;
mod root;
mod runs;
mod schema;

pub use error::DeltaError;
pub use publish::{TaskFailure, TaskFiles, ATTEMPTS, DATA_TABLES, ORPHAN_AGE_MS, RUNS_TABLE};
pub use read::Materialized;
pub use root::DeltaRoot;
pub use schema::DATA_PARTITIONS;
