//! Metrics whose fold is user code (the Python package's `python` metric): this crate keeps
//! their partial states as opaque bytes and calls a [`UserFold`] to make, merge and finish
//! them, so the states still merge in any order and travel as bytes like the others.

use crate::{Figure, MetricError};
use arrow::array::Array;

/// Partial states pending beyond this many are merged by the user's `merge` as soon as the
/// code holding them can call it, so a long run holds a bounded number of them.
pub const USER_PARTS_PENDING: usize = 16;

/// What user code does for a metric: fold one batch's values into a partial state, merge
/// partial states, finish a merged state into figures. States are the user's own bytes
/// (for the Python package, pickles).
pub trait UserFold {
    /// The partial state of one batch's values.
    fn update(&self, values: &dyn Array) -> Result<Vec<u8>, MetricError>;
    /// One state holding every state of `parts` (at least two), merged in order.
    fn merge(&self, parts: &[Vec<u8>]) -> Result<Vec<u8>, MetricError>;
    /// The figures of a merged state: (label, value), one unlabeled figure for a single
    /// number, one per label for a mapping of numbers.
    #[allow(clippy::type_complexity)]
    fn finish(&self, state: &[u8]) -> Result<Vec<(Option<String>, Option<f64>)>, MetricError>;
}

/// A user metric's state: partial states not yet merged, the values folded, and the figures
/// once the user's `finish` has run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UserState {
    /// Partial states, in the order they were folded and merged.
    pub parts: Vec<Vec<u8>>,
    /// Non-null values folded.
    pub n: u64,
    /// Set by [`UserState::finish_with`]; cleared by any later fold or merge.
    pub figures: Option<Vec<(Option<String>, Option<f64>)>>,
}

impl UserState {
    /// Folds one batch's values with `fold`.
    pub fn update_with(
        &mut self,
        values: &dyn Array,
        fold: &dyn UserFold,
    ) -> Result<(), MetricError> {
        self.parts.push(fold.update(values)?);
        self.n += (values.len() - values.logical_null_count()) as u64;
        self.figures = None;
        self.compact_over(USER_PARTS_PENDING, fold)
    }

    /// Takes in `other`'s partial states, after this one's (no user code runs).
    pub fn merge(&mut self, other: &UserState) {
        self.parts.extend(other.parts.iter().cloned());
        self.n += other.n;
        self.figures = None;
    }

    /// Merges the partial states into one when more than `limit` are pending.
    pub fn compact_over(&mut self, limit: usize, fold: &dyn UserFold) -> Result<(), MetricError> {
        if self.parts.len() > limit.max(1) {
            let merged = fold.merge(&self.parts)?;
            self.parts = vec![merged];
        }
        Ok(())
    }

    /// Merges every partial state and runs the user's `finish`; a state that folded nothing
    /// has no value to finish and gives one null figure.
    pub fn finish_with(&mut self, fold: &dyn UserFold) -> Result<(), MetricError> {
        self.compact_over(1, fold)?;
        self.figures = Some(match self.parts.first() {
            Some(state) => fold.finish(state)?,
            None => vec![(None, None)],
        });
        Ok(())
    }

    /// The figures [`UserState::finish_with`] set (none before).
    pub fn figures(&self) -> Vec<Figure> {
        self.figures
            .iter()
            .flatten()
            .map(|(label, value)| Figure::new("value", label.clone(), *value, self.n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{AsArray, Float64Array};
    use arrow::datatypes::Float64Type;

    /// A fold of sums as decimal text, which counts its merges.
    struct Sum(std::cell::Cell<usize>);

    impl UserFold for Sum {
        fn update(&self, values: &dyn Array) -> Result<Vec<u8>, MetricError> {
            let a = values.as_primitive::<Float64Type>();
            Ok(a.iter().flatten().sum::<f64>().to_string().into_bytes())
        }
        fn merge(&self, parts: &[Vec<u8>]) -> Result<Vec<u8>, MetricError> {
            self.0.set(self.0.get() + 1);
            let mut total = 0.0;
            for p in parts {
                total += String::from_utf8_lossy(p)
                    .parse::<f64>()
                    .map_err(|e| MetricError::Invalid(e.to_string()))?;
            }
            Ok(total.to_string().into_bytes())
        }
        fn finish(&self, state: &[u8]) -> Result<Vec<(Option<String>, Option<f64>)>, MetricError> {
            let v = String::from_utf8_lossy(state).parse::<f64>().ok();
            Ok(vec![
                (None, v),
                (Some("twice".to_owned()), v.map(|v| v * 2.0)),
            ])
        }
    }

    #[test]
    fn parts_merge_in_order_and_compact_past_the_limit() {
        let fold = Sum(Default::default());
        let mut a = UserState::default();
        for i in 0..USER_PARTS_PENDING {
            a.update_with(&Float64Array::from(vec![Some(i as f64), None]), &fold)
                .unwrap();
        }
        assert_eq!(a.parts.len(), USER_PARTS_PENDING);
        assert_eq!(fold.0.get(), 0);
        a.update_with(&Float64Array::from(vec![1.0]), &fold)
            .unwrap();
        assert_eq!(a.parts, vec![b"121".to_vec()]);
        assert_eq!(fold.0.get(), 1);
        assert_eq!(a.n, USER_PARTS_PENDING as u64 + 1);

        let mut b = UserState::default();
        b.update_with(&Float64Array::from(vec![4.0, 5.0]), &fold)
            .unwrap();
        a.merge(&b);
        assert_eq!(a.parts.len(), 2);
        a.finish_with(&fold).unwrap();
        assert_eq!(
            a.figures(),
            vec![
                Figure::new("value", None, Some(130.0), 19),
                Figure::new("value", Some("twice".to_owned()), Some(260.0), 19),
            ]
        );
        // A later merge clears the figures: they must be finished again.
        a.merge(&UserState::default());
        assert!(a.figures().is_empty());
    }

    #[test]
    fn an_empty_state_finishes_as_one_null_figure() {
        let mut s = UserState::default();
        s.finish_with(&Sum(Default::default())).unwrap();
        assert_eq!(s.figures(), vec![Figure::new("value", None, None, 0)]);
    }
}
