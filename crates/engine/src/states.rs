//! [`States`]: the partial metric states a [`Scorer`](crate::Scorer) folds from batches. They merge in any
//! order ([`States::merge`]), travel between processes and machines as bytes
//! ([`States::to_bytes`]), and give their figures ([`States::report`]) with or without the
//! scorer that folded them.

use crate::functions::UserFunctions;
use crate::{EngineError, Error, Report, RunIdentity};
use evalscore_metrics::Grouped;
use evalscore_scorers::Task;

/// Partial metric states: what [`Scorer::score`](crate::Scorer::score) folds from a batch, mergeable with
/// [`States::merge`] in any order and across machines with [`States::to_bytes`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct States {
    /// The task's fingerprint ([`Task::fingerprint`]); in the byte form's header, not its body.
    #[serde(skip)]
    fingerprint: [u8; 32],
    /// Per scorer, per metric.
    metrics: Vec<Vec<Grouped>>,
    /// Per scorer: rows with a null value or ground truth.
    missing: Vec<u64>,
    /// Per scorer: rows that failed and scored 0.0.
    row_errors: Vec<u64>,
    rows: u64,
    /// Per scorer: judge replies that could not be read.
    invalid: Vec<u64>,
}

/// The first bytes of serialized [`States`].
pub(crate) const STATES_MAGIC: &[u8; 4] = b"ESST";
/// The layout version of serialized [`States`] this build writes and reads.
pub(crate) const STATES_FORMAT_VERSION: u16 = 6;

/// Per-scorer `counts` named by the scorers' keys, in task order.
pub(crate) fn named(task: &Task, counts: &[u64]) -> Vec<(String, u64)> {
    task.scorers
        .iter()
        .map(|s| s.key.clone())
        .zip(counts.iter().copied())
        .collect()
}

/// States folded by another task cannot be read with this one's scorers.
fn check_task(task: &Task, states: &States) -> Result<(), Error> {
    let shape: Vec<usize> = task.scorers.iter().map(|s| s.metrics.len()).collect();
    if states.fingerprint != task.fingerprint {
        return Err(EngineError::StatesOfAnotherTask {
            states: short(&states.fingerprint),
            task: short(&task.fingerprint),
        }
        .into());
    }
    if states.metrics.iter().map(Vec::len).collect::<Vec<_>>() != shape {
        return Err(EngineError::StatesDoNotFit.into());
    }
    Ok(())
}

impl States {
    /// States of `task` with nothing folded in yet, as [`Scorer::empty_states`](crate::Scorer::empty_states) gives
    /// without an input schema.
    pub fn empty(task: &Task) -> Result<States, Error> {
        Ok(States::unfolded(
            task.fingerprint,
            crate::plan::state_template(task)?,
        ))
    }

    /// States of the task with `fingerprint` holding the empty metric states `metrics` (per
    /// scorer, per metric), with nothing counted.
    pub(crate) fn unfolded(fingerprint: [u8; 32], metrics: Vec<Vec<Grouped>>) -> States {
        let n = metrics.len();
        States {
            fingerprint,
            metrics,
            missing: vec![0; n],
            row_errors: vec![0; n],
            rows: 0,
            invalid: vec![0; n],
        }
    }

    /// The figures of these states without an input schema: what [`Scorer::finish`](crate::Scorer::finish) gives
    /// for the scorer of `task` that folded them, wherever that was (a Spark executor,
    /// another process). `allow_row_errors` adds the `row_errors` rows, as a scorer bound
    /// with `max_row_errors > 0` does. `functions` finish the task's `python` metrics
    /// (required when it has any). States of another task are an error.
    pub fn report(
        &self,
        task: &Task,
        allow_row_errors: bool,
        functions: Option<&dyn UserFunctions>,
    ) -> Result<Report, Error> {
        check_task(task, self)?;
        let finished;
        let states = if self.has_user_metrics() {
            let functions = functions.ok_or(EngineError::NeedsFunctions)?;
            let mut s = self.clone();
            s.finish_user(task, functions)?;
            finished = s;
            &finished
        } else {
            self
        };
        Ok(states.figures(
            task,
            crate::plan::group_columns(task),
            allow_row_errors,
            // Merged states belong to no one run: a fresh identity, as a new scorer gets.
            RunIdentity::starting_now(),
        ))
    }

    /// metrics.json's content for `report`, the figures of these states for `task` (see
    /// [`States::report`]).
    pub fn metrics_json(
        &self,
        task: &Task,
        report: &Report,
        allow_row_errors: bool,
    ) -> Result<serde_json::Value, Error> {
        check_task(task, self)?;
        let row_errors = named(task, &self.row_errors);
        Ok(crate::output::tables::metrics_json(
            task,
            &report.metrics,
            &report.confusion,
            &report.group_columns,
            &named(task, &self.missing),
            allow_row_errors.then_some(row_errors.as_slice()),
            self.rows,
            &report.run,
        ))
    }

    /// The figures of these (finished) states over `group_columns`, carrying `run`.
    pub(crate) fn figures(
        &self,
        task: &Task,
        group_columns: Vec<String>,
        allow_row_errors: bool,
        run: RunIdentity,
    ) -> Report {
        Report {
            metrics: crate::plan::metric_rows(
                &group_columns,
                task,
                &self.metrics,
                &self.missing,
                &self.invalid,
                allow_row_errors.then_some(self.row_errors.as_slice()),
                self.rows,
            ),
            confusion: crate::plan::confusion_rows(&group_columns, task, &self.metrics),
            group_columns,
            rows: self.rows,
            run,
        }
    }

    /// Whether any metric is a `python` metric (folded by user functions).
    pub fn has_user_metrics(&self) -> bool {
        self.metrics.iter().flatten().any(Grouped::is_user)
    }

    /// Calls `f` with each `python` metric's state and its functions' spec.
    fn each_user(
        &mut self,
        task: &Task,
        mut f: impl FnMut(
            &mut Grouped,
            &evalscore_task::PythonMetric,
        ) -> Result<(), evalscore_metrics::MetricError>,
    ) -> Result<(), Error> {
        for (scorer, states) in task.scorers.iter().zip(self.metrics.iter_mut()) {
            for (m, state) in scorer.metrics.iter().zip(states.iter_mut()) {
                if let Some(spec) = &m.python {
                    f(state, spec).map_err(|source| EngineError::UserMetric {
                        scorer: scorer.key.clone(),
                        metric: m.name.clone(),
                        source,
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Merges the pending partial states of `task`'s `python` metrics with their `merge`
    /// function once more than [`evalscore_metrics::USER_PARTS_PENDING`] are pending, so
    /// that states merged from many batches stay small.
    pub fn compact_user(
        &mut self,
        task: &Task,
        functions: &dyn UserFunctions,
    ) -> Result<(), Error> {
        self.each_user(task, |state, spec| {
            state.compact_user(
                evalscore_metrics::USER_PARTS_PENDING,
                &crate::functions::Fold { functions, spec },
            )
        })
    }

    /// Runs the `finish` function of each of `task`'s `python` metrics.
    pub(crate) fn finish_user(
        &mut self,
        task: &Task,
        functions: &dyn UserFunctions,
    ) -> Result<(), Error> {
        self.each_user(task, |state, spec| {
            state.finish_user(&crate::functions::Fold { functions, spec })
        })
    }

    /// Folds `other` (states of the same scorer, from any batch, thread or machine) into
    /// these. The result does not depend on the order of merges.
    pub fn merge(&mut self, other: &States) -> Result<(), Error> {
        if self.fingerprint != other.fingerprint {
            return Err(EngineError::MergeAnotherTask {
                other: short(&other.fingerprint),
                these: short(&self.fingerprint),
            }
            .into());
        }
        let shape = |s: &States| -> Vec<usize> { s.metrics.iter().map(Vec::len).collect() };
        if shape(self) != shape(other) || self.missing.len() != other.missing.len() {
            return Err(EngineError::MergeDifferentTasks.into());
        }
        for (a, b) in self.metrics.iter_mut().zip(&other.metrics) {
            for (x, y) in a.iter_mut().zip(b) {
                x.merge(y).map_err(EngineError::MergeMetric)?;
            }
        }
        for (a, b) in self.missing.iter_mut().zip(&other.missing) {
            *a += b;
        }
        for (a, b) in self.row_errors.iter_mut().zip(&other.row_errors) {
            *a += b;
        }
        for (a, b) in self.invalid.iter_mut().zip(&other.invalid) {
            *a += b;
        }
        self.rows += other.rows;
        Ok(())
    }

    /// Rows folded in.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Per scorer, rows with a null value or ground truth.
    pub fn missing(&self) -> &[u64] {
        &self.missing
    }

    /// Per scorer, rows that failed and scored 0.0.
    pub fn row_errors(&self) -> &[u64] {
        &self.row_errors
    }

    /// A warning per classification metric that excluded more than half of its rows:
    /// `scorer `KEY`: metric `NAME` excluded ...`, in task order.
    pub fn exclusion_warnings(&self, task: &Task) -> Vec<String> {
        let mut out = Vec::new();
        for (spec, states) in task.scorers.iter().zip(&self.metrics) {
            for (m, state) in spec.metrics.iter().zip(states) {
                if let Some(w) = state.exclusion_warning() {
                    out.push(format!("scorer `{}`: metric `{}` {w}", spec.key, m.name));
                }
            }
        }
        out
    }

    /// Per scorer, judge replies that could not be read (0 for other scorers).
    pub fn invalid(&self) -> &[u64] {
        &self.invalid
    }

    /// States as the pipeline and a scorer fold them from one work item or batch.
    pub(crate) fn folded(fingerprint: [u8; 32], r: crate::score::UnitResult) -> States {
        States {
            fingerprint,
            metrics: r.states,
            missing: r.missing,
            row_errors: r.row_errors,
            rows: r.rows,
            invalid: r.invalid,
        }
    }

    /// The task fingerprint these states belong to.
    pub fn fingerprint(&self) -> [u8; 32] {
        self.fingerprint
    }

    /// The states as bytes. Layout, version 6: `ESST`; the format version as a little-endian
    /// `u16` ([`STATES_FORMAT_VERSION`]); the task's 32-byte fingerprint (SHA-256 of the task
    /// text after placeholder substitution); then, in postcard's wire format, per scorer its
    /// metric states (see `evalscore_metrics::bytes`: each names its metric type and holds
    /// its type's own bytes), per scorer the missing and the row-error counts, the rows
    /// folded, and per scorer the invalid judge replies. Versions 1 to 3, whose metric states
    /// were of a closed set of types, and 4, whose `mean` and `win_rate` had no bootstrap,
    /// are refused with an error naming the version. Equal
    /// states give equal bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(128);
        out.extend_from_slice(STATES_MAGIC);
        out.extend_from_slice(&STATES_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&self.fingerprint);
        Ok(postcard::to_extend(self, out).map_err(EngineError::SerializeStates)?)
    }

    /// States from [`States::to_bytes`]; other magic bytes, another version or damaged
    /// bytes are an error saying which.
    pub fn from_bytes(bytes: &[u8]) -> Result<States, Error> {
        let Some(rest) = bytes.strip_prefix(STATES_MAGIC.as_slice()) else {
            return Err(EngineError::NotStates.into());
        };
        let Some((version, body)) = rest.split_first_chunk::<2>() else {
            return Err(EngineError::StatesEndBeforeVersion.into());
        };
        let version = u16::from_le_bytes(*version);
        if version != STATES_FORMAT_VERSION {
            return Err(EngineError::StatesVersion {
                version,
                newest: STATES_FORMAT_VERSION,
            }
            .into());
        }
        let Some((fingerprint, body)) = body.split_first_chunk::<32>() else {
            return Err(EngineError::StatesEndBeforeFingerprint.into());
        };
        let read = postcard::take_from_bytes::<States>(body);
        match read {
            Ok((s, [])) => Ok(States {
                fingerprint: *fingerprint,
                ..s
            }),
            Ok((_, extra)) => Err(EngineError::StatesTrailing(extra.len()).into()),
            Err(e) => Err(EngineError::DamagedStates(e).into()),
        }
    }
}

/// The first 12 hex digits of a fingerprint (a SHA-256), for messages.
fn short(f: &[u8; 32]) -> String {
    format!(
        "{:.12x}",
        sha2::digest::Output::<sha2::Sha256>::from_slice(f)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_is_the_first_twelve_hex_digits() {
        let mut f = [0u8; 32];
        f[..7].copy_from_slice(&[0x01, 0xab, 0x00, 0xff, 0x10, 0x0c, 0xee]);
        assert_eq!(super::short(&f), "01ab00ff100c");
    }
}
