//! A task's `filter:` over in-memory batches. A run over files prunes them by their
//! partition values before opening them (the reader's partition filters); batches scored
//! through the library have no files, so the same expression keeps the rows whose columns
//! of those names match, and the rest are not scored, as the rows of a pruned file are not.

use crate::{Error, ErrorKind};
use arrow::array::{BooleanArray, RecordBatch};
use arrow::buffer::BooleanBuffer;
use arrow::compute::filter_record_batch;
use arrow::datatypes::Schema;
use evalscore_reader::{PartitionFilter, RowFilter};
use evalscore_scorers::Task;
use std::path::Path;

/// The task's `filter:` bound to `schema`, if it has one. Errors (syntax, a column missing
/// or of a type it cannot compare) name the task file's line and column of `filter`.
pub(crate) fn bind(
    task: &Task,
    schema: &Schema,
    task_path: Option<&Path>,
) -> Result<Option<RowFilter>, Error> {
    let Some(f) = &task.filter else {
        return Ok(None);
    };
    let at = f.location.map(|l| format!(", {l}")).unwrap_or_default();
    let origin = match task_path {
        Some(p) => format!("task file `{}`{at}: `filter`", p.display()),
        None => format!("the task's `filter`{at}"),
    };
    let task_error = |e| Error::from(e).kind(ErrorKind::Task);
    let parsed = PartitionFilter::parse(origin, &f.text).map_err(task_error)?;
    parsed.for_rows(schema).map(Some).map_err(task_error)
}

/// The rows of `batch` that `filter` keeps, with the mask that chose them (to name a kept
/// row's place in `batch` in a message); `None` when it keeps them all.
pub(crate) fn keep(
    filter: &RowFilter,
    batch: &RecordBatch,
) -> Result<Option<(RecordBatch, BooleanBuffer)>, Error> {
    let mask = filter.mask(batch).map_err(Error::from)?;
    if mask.count_set_bits() == batch.num_rows() {
        return Ok(None);
    }
    let kept = filter_record_batch(batch, &BooleanArray::new(mask.clone(), None))
        .map_err(|e| Error::new(format!("cannot filter a batch: {e}")).kind(ErrorKind::Internal))?;
    Ok(Some((kept, mask)))
}
