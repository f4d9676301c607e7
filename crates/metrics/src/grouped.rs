//! Per-group metric states for `group_by`.

use crate::metric_type::Setup;
use crate::{registry, Figure, FoldMemo, MetricError, MetricState, UserFold, UserState};
use arrow::array::{Array, ArrayRef, UInt32Array};
use arrow::compute::take;
use evalscore_text::TextColumn;
use std::collections::HashMap;

/// The groups of one batch: which rows belong to which group-by key.
///
/// A row whose group-by value is null belongs to no group (it still counts in the overall
/// figures), because a null group value could not be told apart from the overall rows.
#[derive(Debug, Clone, Default)]
pub struct GroupKeys {
    /// Distinct keys of the batch, in first-seen order.
    pub keys: Vec<Vec<String>>,
    /// Row indices of each key.
    pub rows: Vec<Vec<u32>>,
}

impl GroupKeys {
    /// Groups the rows of a batch by the text of `columns` ([`crate::values::key_text`]).
    pub fn compute(columns: &[ArrayRef]) -> Result<GroupKeys, MetricError> {
        let text: Vec<ArrayRef> = columns
            .iter()
            .map(|c| {
                crate::values::key_text(c.as_ref()).map_err(|e| {
                    MetricError::Invalid(format!(
                        "cannot group by a column of type {}: {e}",
                        c.data_type()
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let cols: Vec<TextColumn<'_>> = text
            .iter()
            .map(crate::values::column)
            .collect::<Result<_, _>>()?;
        let len = text.first().map_or(0, |c| c.len());
        let mut index: HashMap<Vec<&str>, usize> = HashMap::new();
        let mut out = GroupKeys::default();
        let mut key: Vec<&str> = Vec::with_capacity(cols.len());
        for row in 0..len {
            key.clear();
            for c in &cols {
                match c.get(row) {
                    Some(v) => key.push(v),
                    None => break,
                }
            }
            if key.len() < cols.len() {
                continue;
            }
            let g = match index.get(&key) {
                Some(&g) => g,
                None => {
                    let g = out.keys.len();
                    index.insert(key.clone(), g);
                    out.keys.push(key.iter().map(|s| (*s).to_owned()).collect());
                    out.rows.push(Vec::new());
                    g
                }
            };
            out.rows[g].push(row as u32);
        }
        Ok(out)
    }
}

/// Confusion cells, (actual, predicted, count).
pub type Cells = Vec<(String, String, u64)>;
/// A group key; `None` for the overall figures.
pub type GroupKey = Option<Vec<String>>;

/// The overall state of a metric and, with `group_by`, one state per group key.
#[derive(Debug, Clone, PartialEq)]
pub struct Grouped {
    /// The metric's empty state: what a new group starts from, and what tells states of
    /// another metric (another type or other options) apart.
    empty: MetricState,
    pub overall: MetricState,
    pub groups: HashMap<Vec<String>, MetricState>,
}

impl Grouped {
    /// The states of a metric whose empty state is `empty`.
    pub fn new(empty: &MetricState) -> Self {
        Grouped {
            empty: empty.clone(),
            overall: empty.clone(),
            groups: HashMap::new(),
        }
    }

    /// The empty states of the metric `m`, made by its type's registry entry.
    pub fn for_metric(m: &evalscore_task::MetricSpec, setup: &Setup) -> Result<Self, MetricError> {
        let ty = registry::find(&m.metric_type).ok_or_else(|| {
            MetricError::Invalid(format!("unknown metric type `{}`", m.metric_type))
        })?;
        Ok(Grouped::new(&ty.state(&m.options, setup)?))
    }

    /// The empty state of the metric.
    pub fn empty(&self) -> &MetricState {
        &self.empty
    }

    /// The parts of the state, for its byte form.
    pub(crate) fn parts(
        &self,
    ) -> (
        &MetricState,
        &MetricState,
        &HashMap<Vec<String>, MetricState>,
    ) {
        (&self.empty, &self.overall, &self.groups)
    }

    /// A state from its parts, as read from its byte form.
    pub(crate) fn from_parts(
        empty: MetricState,
        overall: MetricState,
        groups: HashMap<Vec<String>, MetricState>,
    ) -> Self {
        Grouped {
            empty,
            overall,
            groups,
        }
    }

    /// Folds a batch into the overall state and, when `keys` is given, into each group's.
    pub fn update(
        &mut self,
        inputs: &[&dyn Array],
        keys: Option<&GroupKeys>,
    ) -> Result<(), MetricError> {
        self.update_shared(inputs, keys, None)
    }

    /// [`Grouped::update`], the overall state taking from `memo` what another metric has
    /// folded from the same columns (a group's rows are its own arrays: nothing to share).
    pub fn update_shared(
        &mut self,
        inputs: &[&dyn Array],
        keys: Option<&GroupKeys>,
        memo: Option<&FoldMemo>,
    ) -> Result<(), MetricError> {
        match memo {
            Some(memo) => self.overall.update_shared(inputs, memo)?,
            None => self.overall.update(inputs)?,
        }
        let Some(keys) = keys else { return Ok(()) };
        for (key, rows) in keys.keys.iter().zip(&keys.rows) {
            let idx = UInt32Array::from(rows.clone());
            let taken: Vec<ArrayRef> = inputs
                .iter()
                .map(|a| take(*a, &idx, None).map_err(MetricError::Arrow))
                .collect::<Result<_, _>>()?;
            let refs: Vec<&dyn Array> = taken.iter().map(|a| a.as_ref()).collect();
            match self.groups.get_mut(key) {
                Some(s) => s.update(&refs)?,
                None => {
                    self.room_for_a_group()?;
                    let mut s = self.empty.clone();
                    s.update(&refs)?;
                    self.groups.insert(key.clone(), s);
                }
            }
        }
        Ok(())
    }

    /// [`Grouped::update`] for a user metric: `fold` makes each partial state, of the whole
    /// batch and of each group's rows.
    pub fn update_user(
        &mut self,
        values: &dyn Array,
        keys: Option<&GroupKeys>,
        fold: &dyn UserFold,
    ) -> Result<(), MetricError> {
        let Some(u) = self.overall.get_mut::<UserState>() else {
            return Err(MetricError::Invalid("not a user metric".to_owned()));
        };
        u.update_with(values, fold)?;
        let Some(keys) = keys else { return Ok(()) };
        for (key, rows) in keys.keys.iter().zip(&keys.rows) {
            let idx = UInt32Array::from(rows.clone());
            let taken = take(values, &idx, None).map_err(MetricError::Arrow)?;
            if !self.groups.contains_key(key) {
                self.room_for_a_group()?;
                self.groups.insert(key.clone(), self.empty.clone());
            }
            if let Some(u) = self
                .groups
                .get_mut(key)
                .and_then(MetricState::get_mut::<UserState>)
            {
                u.update_with(taken.as_ref(), fold)?;
            }
        }
        Ok(())
    }

    /// Merges a user metric's pending partial states (overall and per group) once more than
    /// `limit` are pending; other metrics are left as they are.
    pub fn compact_user(&mut self, limit: usize, fold: &dyn UserFold) -> Result<(), MetricError> {
        for s in std::iter::once(&mut self.overall).chain(self.groups.values_mut()) {
            if let Some(u) = s.get_mut::<UserState>() {
                u.compact_over(limit, fold)?;
            }
        }
        Ok(())
    }

    /// Runs a user metric's `finish` (overall and per group), so that [`Grouped::finish`]
    /// gives its figures.
    pub fn finish_user(&mut self, fold: &dyn UserFold) -> Result<(), MetricError> {
        for s in std::iter::once(&mut self.overall).chain(self.groups.values_mut()) {
            if let Some(u) = s.get_mut::<UserState>() {
                u.finish_with(fold)?;
            }
        }
        Ok(())
    }

    /// Whether this is a user metric's state.
    pub fn is_user(&self) -> bool {
        self.overall.get::<UserState>().is_some()
    }

    /// Folds `other`, a state of the same metric (the same type and options), into this one.
    pub fn merge(&mut self, other: &Grouped) -> Result<(), MetricError> {
        if self.empty != other.empty {
            return Err(MetricError::Invalid(format!(
                "cannot merge a state of {:?} into a state of {:?}",
                other.empty.accumulator(),
                self.empty.accumulator()
            )));
        }
        self.overall.merge(&other.overall)?;
        for (k, s) in &other.groups {
            match self.groups.get_mut(k) {
                Some(mine) => mine.merge(s)?,
                None => {
                    self.room_for_a_group()?;
                    self.groups.insert(k.clone(), s.clone());
                }
            }
        }
        Ok(())
    }

    /// The groups in key order (byte order of the key's texts).
    fn sorted_groups(&self) -> Vec<(&Vec<String>, &MetricState)> {
        let mut g: Vec<_> = self.groups.iter().collect();
        g.sort_by(|a, b| a.0.cmp(b.0));
        g
    }

    /// Overall figures (key `None`) first, then each group's.
    pub fn finish(&self) -> Vec<(GroupKey, Figure)> {
        let mut out: Vec<(GroupKey, Figure)> = self
            .overall
            .finish()
            .into_iter()
            .map(|f| (None, f))
            .collect();
        for (k, s) in self.sorted_groups() {
            out.extend(s.finish().into_iter().map(|f| (Some(k.clone()), f)));
        }
        out
    }

    /// The overall state's [`MetricState::exclusion_warning`].
    pub fn exclusion_warning(&self) -> Option<String> {
        self.overall.exclusion_warning()
    }

    /// Confusion cells, overall first, then per group.
    pub fn confusion(&self) -> Vec<(GroupKey, Cells)> {
        let mut out = Vec::new();
        if let Some(c) = self.overall.confusion() {
            out.push((None, c));
            for (k, s) in self.sorted_groups() {
                if let Some(c) = s.confusion() {
                    out.push((Some(k.clone()), c));
                }
            }
        }
        out
    }
}

impl Grouped {
    /// Whether one more group may be added: an error at the metric's group limit.
    fn room_for_a_group(&self) -> Result<(), MetricError> {
        let limit = self.empty.group_limit();
        if self.groups.len() >= limit {
            return Err(too_many_groups(limit));
        }
        Ok(())
    }
}

fn too_many_groups(limit: usize) -> MetricError {
    let why = if limit < crate::MAX_GROUPS {
        format!(
            " with its bootstrap replicates (groups × replicates at most {})",
            crate::bootstrap::MAX_CELLS
        )
    } else {
        String::new()
    };
    MetricError::Invalid(format!(
        "the group-by columns have more than {limit} distinct groups, the limit of a metric{why}"
    ))
}
