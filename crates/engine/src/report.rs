//! [`Report`]: the figures of merged metric states, as the tables the CLI writes.

use crate::output::{ConfusionRow, MetricRow};
use crate::{EngineError, Error, RunIdentity};
use arrow::array::RecordBatch;

/// The figures of merged states: the rows of metrics.parquet and confusion.parquet.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The rows of metrics.parquet.
    pub metrics: Vec<MetricRow>,
    /// The rows of confusion.parquet.
    pub confusion: Vec<ConfusionRow>,
    /// The group-by columns, in the order of [`MetricRow::groups`].
    pub group_columns: Vec<String>,
    /// Rows folded into the states.
    pub rows: u64,
    /// The run identity of the scorer that made the report: the last columns of both tables.
    pub run: RunIdentity,
}

impl Report {
    /// metrics.parquet's table: the schema and rows the CLI writes, ending in the run
    /// identity columns (`run_id`, `run_started_at`, `labels`) of [`Report::run`].
    pub fn metrics_batch(&self) -> Result<RecordBatch, Error> {
        crate::output::tables::metrics_batch(&self.metrics, &self.group_columns, &self.run, false)
            .map_err(|e| EngineError::Arrow(e).into())
    }

    /// confusion.parquet's table: the schema and rows the CLI writes, with the same run
    /// identity columns.
    pub fn confusion_batch(&self) -> Result<RecordBatch, Error> {
        crate::output::tables::confusion_batch(
            &self.confusion,
            &self.group_columns,
            &self.run,
            false,
        )
        .map_err(|e| EngineError::Arrow(e).into())
    }
}
