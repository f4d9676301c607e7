//! The running state of one metric, in the manner of DataFusion's `Accumulator`: a trait
//! object ([`Accumulator`]) that folds batches of the metric's inputs
//! ([`Accumulator::update_batch`]), merges another state of its type
//! ([`Accumulator::merge_batch`]), reports its figures ([`Accumulator::evaluate`]) and writes
//! itself as bytes ([`Accumulator::state`]). A metric type writes its state as a plain
//! struct implementing [`State`]; every [`State`] is an [`Accumulator`]. [`MetricState`] owns
//! one.

use crate::{Cells, Figure, FoldMemo, MetricError};
use arrow::array::Array;
use evalscore_task::MetricReads;
use std::any::Any;
use std::fmt::Debug;

/// A metric's state as its type's file writes it: typed, with serde for its bytes. Every
/// `State` is an [`Accumulator`] (the dynamic calls, the downcast of merges, the bytes).
pub trait State:
    Clone + PartialEq + Debug + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static
{
    /// The metric type it is a state of: its registry name, under which its bytes are read.
    fn metric_type(&self) -> &'static str;
    /// What merge errors call it (by default its metric type).
    fn name(&self) -> &'static str {
        self.metric_type()
    }
    /// What its inputs are read as (its type's [`crate::About::reads`]): every batch is read
    /// so ([`crate::values::prepare`]) before [`State::update`] sees it.
    fn reads(&self) -> MetricReads;
    /// Folds one batch of the metric's inputs, read as [`State::reads`] says: its field, or
    /// (ground truth, prediction).
    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError>;
    /// [`State::update`], taking from `memo` what another metric has folded from the same
    /// columns of this batch (by default, nothing).
    fn update_shared(&mut self, inputs: &[&dyn Array], memo: &FoldMemo) -> Result<(), MetricError> {
        let _ = memo;
        self.update(inputs)
    }
    /// Folds another state of the same type (and name).
    fn merge(&mut self, other: &Self);
    /// The figures of the state as it stands.
    fn figures(&self) -> Vec<Figure>;
    /// The limits on what it may hold, checked after every fold and merge.
    fn check_size(&self) -> Result<(), MetricError> {
        Ok(())
    }
    /// How many groups' states a metric of it may hold (`group_by`).
    fn group_limit(&self) -> usize {
        crate::MAX_GROUPS
    }
    /// A sentence on rows it left out, when it left out most of them.
    fn exclusion_warning(&self) -> Option<String> {
        None
    }
    /// Its confusion matrix cells, when it writes them to confusion.parquet.
    fn confusion(&self) -> Option<Cells> {
        None
    }
}

/// The running state of one metric, as the engine holds it (through [`MetricState`]).
pub trait Accumulator: Any + Debug + Send + Sync {
    /// Folds one batch: the metric's input arrays, in the order of its `inputs`.
    fn update_batch(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError>;
    /// [`Accumulator::update_batch`] with the batch's [`FoldMemo`] ([`State::update_shared`]).
    fn update_batch_shared(
        &mut self,
        inputs: &[&dyn Array],
        memo: &FoldMemo,
    ) -> Result<(), MetricError>;
    /// Folds `other`, a state of the same type; another type is an error naming both.
    fn merge_batch(&mut self, other: &dyn Accumulator) -> Result<(), MetricError>;
    /// The figures of the state as it stands.
    fn evaluate(&self) -> Vec<Figure>;
    /// The state as bytes (postcard), read back by its metric type's registry entry.
    fn state(&self) -> Result<Vec<u8>, MetricError>;
    /// [`State::metric_type`].
    fn metric_type(&self) -> &'static str;
    /// [`State::reads`].
    fn reads(&self) -> MetricReads;
    /// [`State::name`].
    fn name(&self) -> &'static str;
    /// [`State::exclusion_warning`].
    fn exclusion_warning(&self) -> Option<String>;
    /// [`State::group_limit`].
    fn group_limit(&self) -> usize;
    /// [`State::confusion`].
    fn confusion(&self) -> Option<Cells>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn box_clone(&self) -> Box<dyn Accumulator>;
    /// Whether `other` is an equal state of the same type.
    fn equals(&self, other: &dyn Accumulator) -> bool;
}

impl<S: State> Accumulator for S {
    fn update_batch(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let prepared = crate::values::prepare(State::reads(self), inputs)?;
        State::update(self, &refs(&prepared))?;
        self.check_size()
    }

    fn update_batch_shared(
        &mut self,
        inputs: &[&dyn Array],
        memo: &FoldMemo,
    ) -> Result<(), MetricError> {
        let prepared = crate::values::prepare(State::reads(self), inputs)?;
        State::update_shared(self, &refs(&prepared), memo)?;
        self.check_size()
    }

    fn merge_batch(&mut self, other: &dyn Accumulator) -> Result<(), MetricError> {
        match other.as_any().downcast_ref::<S>() {
            Some(o) if o.name() == State::name(self) => {
                State::merge(self, o);
                self.check_size()
            }
            _ => Err(MetricError::Invalid(format!(
                "cannot merge {} state into {} state",
                other.name(),
                State::name(self)
            ))),
        }
    }

    fn evaluate(&self) -> Vec<Figure> {
        self.figures()
    }

    fn state(&self) -> Result<Vec<u8>, MetricError> {
        postcard::to_allocvec(self).map_err(|source| MetricError::Bytes {
            what: "cannot serialize a metric state",
            source,
        })
    }

    fn metric_type(&self) -> &'static str {
        State::metric_type(self)
    }

    fn reads(&self) -> MetricReads {
        State::reads(self)
    }

    fn name(&self) -> &'static str {
        State::name(self)
    }

    fn exclusion_warning(&self) -> Option<String> {
        State::exclusion_warning(self)
    }

    fn confusion(&self) -> Option<Cells> {
        State::confusion(self)
    }

    fn group_limit(&self) -> usize {
        State::group_limit(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn box_clone(&self) -> Box<dyn Accumulator> {
        Box::new(self.clone())
    }

    fn equals(&self, other: &dyn Accumulator) -> bool {
        other.as_any().downcast_ref::<S>() == Some(self)
    }
}

/// Reads a state of type `S` from [`Accumulator::state`]'s bytes.
pub fn read_state<S: State>(bytes: &[u8]) -> Result<MetricState, MetricError> {
    take_all::<S>(bytes).map(MetricState::new)
}

/// A value that is all of `bytes` (postcard); trailing or damaged bytes are an error.
pub(crate) fn take_all<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, MetricError> {
    match postcard::take_from_bytes::<T>(bytes) {
        Ok((v, [])) => Ok(v),
        Ok((_, extra)) => Err(MetricError::Invalid(format!(
            "a metric state has {} bytes after its end",
            extra.len()
        ))),
        Err(source) => Err(MetricError::Bytes {
            what: "a damaged metric state",
            source,
        }),
    }
}

/// One metric's running state: an [`Accumulator`] of its type.
#[derive(Debug)]
pub struct MetricState(Box<dyn Accumulator>);

impl MetricState {
    pub fn new(state: impl Accumulator) -> Self {
        MetricState(Box::new(state))
    }

    /// Folds one batch: the metric's field, or (ground truth, prediction) for classification.
    pub fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        self.0.update_batch(inputs)
    }

    /// [`MetricState::update`] with the batch's [`FoldMemo`].
    pub fn update_shared(
        &mut self,
        inputs: &[&dyn Array],
        memo: &FoldMemo,
    ) -> Result<(), MetricError> {
        self.0.update_batch_shared(inputs, memo)
    }

    /// Folds another state of the same type into this one.
    pub fn merge(&mut self, other: &MetricState) -> Result<(), MetricError> {
        self.0.merge_batch(other.0.as_ref())
    }

    /// The figures of the state as it stands.
    pub fn finish(&self) -> Vec<Figure> {
        self.0.evaluate()
    }

    /// [`Accumulator::exclusion_warning`].
    pub fn exclusion_warning(&self) -> Option<String> {
        self.0.exclusion_warning()
    }

    /// [`Accumulator::confusion`].
    pub fn confusion(&self) -> Option<Cells> {
        self.0.confusion()
    }

    /// [`Accumulator::group_limit`].
    pub fn group_limit(&self) -> usize {
        self.0.group_limit()
    }

    /// The state, when it is of type `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        (*self.0).as_any().downcast_ref()
    }

    /// The state, when it is of type `T`.
    pub fn get_mut<T: Any>(&mut self) -> Option<&mut T> {
        (*self.0).as_any_mut().downcast_mut()
    }

    /// The accumulator.
    pub fn accumulator(&self) -> &dyn Accumulator {
        self.0.as_ref()
    }
}

impl Clone for MetricState {
    fn clone(&self) -> Self {
        MetricState(self.0.box_clone())
    }
}

impl PartialEq for MetricState {
    fn eq(&self, other: &Self) -> bool {
        self.0.equals(other.0.as_ref())
    }
}

/// Borrowed views of prepared inputs.
fn refs(prepared: &[arrow::array::ArrayRef]) -> Vec<&dyn Array> {
    prepared.iter().map(|a| a.as_ref()).collect()
}

/// The first of a metric's inputs.
pub(crate) fn first<'a>(inputs: &[&'a dyn Array]) -> Result<&'a dyn Array, MetricError> {
    inputs
        .first()
        .copied()
        .ok_or_else(|| MetricError::Invalid("a metric needs an input".to_owned()))
}
