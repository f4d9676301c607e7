//! One batch as a scorer reads it, and the columns it gives back.

use crate::functions::UserFunctions;
use crate::judge::runtime::JudgeCtx;
use arrow::array::ArrayRef;
use evalscore_kernels::BatchMemo;
use evalscore_task::RowContext;
use std::collections::{BTreeMap, BTreeSet};

/// One batch as a scorer reads it.
#[derive(Clone, Copy)]
pub struct BatchInput<'a> {
    pub ctx: &'a RowContext<'a>,
    pub rows: usize,
    /// The fields to build: the written ones and those metrics read, so that an unused
    /// `value` or `expected` text costs nothing.
    pub needed: &'a BTreeSet<&'static str>,
    /// The model endpoints and this batch's replies, for scorers with a model.
    pub judge: Option<&'a JudgeCtx<'a>>,
    /// The user functions, for `custom` with `function:`.
    pub functions: Option<&'a dyn UserFunctions>,
    /// What the batch's other scorers (a suite's other tasks) derive from its columns too.
    pub memo: Option<&'a BatchMemo>,
}

impl BatchInput<'_> {
    /// Whether field `name` is to be built.
    pub fn want(&self, name: &str) -> bool {
        self.needed.contains(name)
    }
}

/// A scorer's fields by name.
pub type Fields = BTreeMap<&'static str, ArrayRef>;

/// One scorer's fields for one batch.
#[derive(Debug, Default)]
pub struct ScoreColumns {
    pub fields: Fields,
    /// Rows with a null value (or ground truth): scored 0.0 and counted as missing.
    pub missing: u64,
    /// Judge replies that could not be read (`judge_status = invalid`).
    pub invalid: u64,
}
