//! Comparing two evalscore runs, and the HTML report of a run.
//!
//! - [`compare()`]: reads the `scores.parquet` of a baseline and a new run folder
//!   ([`runs`], through evalscore's checked reader), pairs their rows by key (row by row
//!   when their keys arrive in the same order, checked as they stream in; else by a hash
//!   join in memory, partitions joined in parallel, when the runs fit its memory budget;
//!   else partition by partition, spilled to the temporary folder), and compares every
//!   numeric score column present in both, overall and per group: paired differences,
//!   their standard error (paired, or cluster-robust), a Student t interval, a p-value
//!   (McNemar's exact test for 0/1 columns, the paired t test otherwise, the
//!   cluster-robust t test with clusters), the minimum detectable difference,
//!   Holm-adjusted p-values and a verdict ([`stats`]).
//!   [`write`] puts `compare.parquet` and `compare.json` in place through the all-or-nothing
//!   output folder ([`evalscore_outdir`]).
//! - [`compare_suites`]: two suites' folders (`suite.json` and a `task=NAME/` run folder per
//!   task) compared whole, task by task as two runs are, into one comparison whose files
//!   lead each row with its task ([`suite`]); [`compare_folders`] takes either kind.
//! - [`report()`]: one self-contained HTML page of a run (and, with a baseline, of the
//!   comparison): minijinja with auto-escaping for the page, plotters' SVG backend for the
//!   charts, inline CSS, and a Content-Security-Policy that forbids any fetch.
//!
//! Failures are [`CompareError`]s, which `?` turns into the project's
//! [`evalscore_error::Error`].
//!
//! The statistics are checked against statsmodels and scipy through golden files made by
//! `scripts/golden/compare.py` (`data/golden/compare.json`); docs/compare.md and
//! docs/report.md describe the commands.

mod aligned;
mod charts;
pub mod compare;
mod comparison;
mod differences;
mod error;
mod hash_join;
mod hash_pairs;
mod join;
mod opened;
mod output;
mod packed;
mod page;
pub mod report;
mod report_suite;
pub mod row_samples;
pub mod runs;
mod spill;
pub mod stats;
pub mod suite;
mod tally;
mod typed_rows;

pub use compare::{compare, verdict, write, CompareOptions, CompareRow, Comparison, COMPARE_FILES};
pub use error::{CompareError, NewScoreColumns, ScoreColumns};
pub use page::report;
pub use report::ReportOptions;
pub use suite::{compare_folders, compare_suites, Compared, SuiteComparison};
