//! What several metrics of one batch would each fold again from the same columns: a suite
//! scores every batch with each of its tasks, and tasks over the same export often fold the
//! same label columns the same way (a binary classification of `label_gt` against
//! `label_pred`). The first metric to fold them counts them; the others add the same counts.
//! A memo lives for one batch; columns are recognised by their buffers
//! ([`evalscore_text::ByBuffers`]).

use crate::classification::PairCounts;
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
}
