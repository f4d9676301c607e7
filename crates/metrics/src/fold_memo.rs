//! What several metrics of one batch would each fold again from the same columns: a suite
//! scores every batch with each of its tasks, and tasks over the same export often fold the
//! same label columns the same way (a binary classification of `label_gt` against
//! `label_pred`). The first metric to fold them counts them; the others add the same counts.
//! A memo lives for one batch; columns are recognised by their buffers
//! ([`evalscore_text::ByBuffers`]).

use crate::classification::PairCounts;
use arrow::array::Array;
use evalscore_text::ByBuffers;
use std::sync::Arc;

/// Counts made from one batch's columns, shared by the metrics that fold it.
#[derive(Debug, Default)]
pub struct FoldMemo {
    /// A binary classification's 2x2 counts of two label columns, by columns and labels
    /// (`None`: they could not be counted, and each metric reports why).
    pub(crate) pair_counts: ByBuffers<Option<Arc<PairCounts>>>,
}

impl FoldMemo {
    pub fn new() -> Self {
        Self::default()
    }

    /// The counts `make()` gives of the label columns `gt` and `pred` under `tag` (the
    /// classes and the form they are compared in), made once for all who ask; `None` when
    /// they could not be counted.
    pub(crate) fn pair_counts(
        &self,
        gt: &dyn Array,
        pred: &dyn Array,
        tag: &str,
        make: impl FnOnce() -> Option<PairCounts>,
    ) -> Option<Arc<PairCounts>> {
        self.pair_counts
            .cell_of(&[gt, pred], tag)
            .get_or_init(|| make().map(Arc::new))
            .clone()
    }
}
