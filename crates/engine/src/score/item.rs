//! One task's scoring of a work item: its units read in order, the kept columns a unit
//! only keeps copied as stored, and every batch scored into one encoder ([`ItemScoring`]).

use super::{score_batch, Given, Memos, RowBudget, UnitResult};
use crate::output::ScoreEncoder;
use crate::plan::Plan;
use crate::row_error::{RowErrorRecord, ROW_ERRORS_LISTED};
use crate::{EngineError, Error, ErrorExt, ErrorKind};
use arrow::array::{ArrayRef, RecordBatch};
use evalscore_reader::{Inputs, StoredChunk, Unit};
use evalscore_scorers::Task;

/// Scores a work item's units in order into one encoder, so they make one row group of
/// scores (more only past the row-group limit).
pub(crate) fn score_units(
    plan: &Plan,
    task: &Task,
    inputs: &Inputs,
    units: &[Unit],
    encoder: ScoreEncoder,
    budget: &RowBudget,
    copy_from: u64,
) -> Result<UnitResult, Error> {
    let mut item = ItemScoring::new(plan, task, budget, encoder, copy_from);
    for unit in inputs.fetching_ahead(units, &plan.columns) {
        let columns = item.start_unit(inputs, unit, &mut UnitChunks::default())?;
        // Rows of this unit done so far, for the file row number in messages.
        let mut done = 0u64;
        inputs.read_unit(unit, &columns, |batch| -> Result<(), Error> {
            crate::check_interrupt()?;
            item.score(inputs, unit, unit.first_row + done, &batch, None, None)?;
            done += batch.num_rows() as u64;
            Ok(())
        })?;
    }
    item.finish()
}

/// One task's scoring of one work item: its encoder and results, and for the unit being
/// read, the kept columns it copies. A suite drives one per task
/// over the same batches.
pub(crate) struct ItemScoring<'a> {
    plan: &'a Plan,
    task: &'a Task,
    budget: &'a RowBudget,
    encoder: ScoreEncoder,
    result: UnitResult,
    /// Per kept column, whether the encoder holds it for the current unit.
    copied: Vec<bool>,
    /// Rows from which a unit's kept columns are copied as stored ([`copy_from`]).
    copy_from: u64,
}

/// Inputs of more units than this have their small units' kept columns encoded instead of
/// copied ([`SMALL_UNIT_ROWS`]).
const MANY_UNITS: usize = 1_000;
/// Rows below which a unit of many ([`MANY_UNITS`]) is small. A unit whose kept columns are
/// copied as stored is a row group of scores.parquet of its own: thousands of small files
/// would make a file of tiny row groups (and past 32,767 row groups, one Parquet cannot
/// hold), each with a compression frame per page. Encoded, the kept columns go with the
/// scores, and successive units share row groups of up to [`crate::output::MAX_ROW_GROUP_ROWS`].
const SMALL_UNIT_ROWS: u64 = 65_536;

/// The rows from which a unit's kept columns are copied as stored, for a run of `units`
/// units: every unit's with [`MANY_UNITS`] or fewer, else only those of
/// [`SMALL_UNIT_ROWS`] or more. Decided once per run, from the whole run's units.
pub(crate) fn copy_from(units: usize) -> u64 {
    if units > MANY_UNITS {
        SMALL_UNIT_ROWS
    } else {
        0
    }
}

impl<'a> ItemScoring<'a> {
    pub fn new(
        plan: &'a Plan,
        task: &'a Task,
        budget: &'a RowBudget,
        encoder: ScoreEncoder,
        copy_from: u64,
    ) -> Self {
        ItemScoring {
            plan,
            task,
            budget,
            encoder,
            result: UnitResult {
                row_groups: Vec::new(),
                states: plan.empty_states(),
                missing: vec![0; task.scorers.len()],
                rows: 0,
                row_errors: vec![0; task.scorers.len()],
                invalid: vec![0; task.scorers.len()],
                row_error_list: Vec::new(),
            },
            copied: Vec::new(),
            copy_from,
        }
    }

    /// Starts a unit: copies the kept columns it can; gives the columns to decode (the
    /// plan's less the copied ones), which the unit's batches must hold.
    ///
    /// `chunks` holds the unit's stored chunks already read for another task of a suite, and
    /// takes those read here, so each is read once however many tasks copy it.
    pub fn start_unit(
        &mut self,
        inputs: &Inputs,
        unit: &Unit,
        chunks: &mut UnitChunks,
    ) -> Result<Vec<String>, Error> {
        let plan = self.plan;
        // A unit whose kept columns are copied is a row group of its own (the encoder
        // closes the groups around it).
        let copy = plan.keep_only.contains(&true) && unit.rows >= self.copy_from;
        self.copied = match copy {
            true => copy_kept(plan, inputs, unit, &mut self.encoder, chunks)?,
            false => vec![false; plan.keep.len()],
        };
        let copied = &self.copied;
        Ok(plan
            .columns
            .iter()
            .filter(|c| {
                !plan
                    .keep
                    .iter()
                    .zip(copied)
                    .any(|((k, _), &cp)| cp && k == *c)
            })
            .cloned()
            .collect())
    }

    /// The input column this task reads the model output from, if any.
    pub fn output_column(&self) -> Option<&'a str> {
        self.plan.output_column.as_deref()
    }

    /// Scores one batch of the current unit (holding the columns [`ItemScoring::start_unit`]
    /// gave, in schema order) whose first row is row `first_row` of its file (0-based);
    /// `output_text` is the model output's text when the caller has made it already, and
    /// `memo` what the caller's other tasks derive from the batch.
    pub fn score(
        &mut self,
        inputs: &Inputs,
        unit: &Unit,
        first_row: u64,
        batch: &RecordBatch,
        output_text: Option<&ArrayRef>,
        memo: Option<&Memos>,
    ) -> Result<(), Error> {
        let (plan, task, budget) = (self.plan, self.task, self.budget);
        let result = &mut self.result;
        let path = &inputs.files[unit.file].path;
        let mut bad = Vec::new();
        let given = Given {
            copied: &self.copied,
            output_text,
            memo,
            judge: None,
        };
        let scored = score_batch(plan, task, batch, given, result, budget, &mut bad);
        for (scorer, row, e) in bad {
            if result.row_error_list.len() < ROW_ERRORS_LISTED {
                let cell = e.cell.map(|c| *c).unwrap_or_default();
                result.row_error_list.push(RowErrorRecord {
                    file: unit.file,
                    row: first_row + row as u64 + 1,
                    scorer: task.scorers[scorer].key.clone(),
                    column: cell.column,
                    value: cell.value,
                    message: e.message,
                });
            }
        }
        let out = scored.map_err(|e| {
            let at = if e.whole_file {
                path.display().to_string()
            } else {
                format!("{}, row {}", path.display(), first_row + e.row as u64 + 1)
            };
            let mut message = e.message;
            if let Some(n) = e.over_limit.filter(|_| budget.limit > 0) {
                message.push_str(&format!(
                    " ({n} row errors, more than the {} that --max-row-errors allows)",
                    budget.limit
                ));
            }
            let hint = match e.hint {
                Some(h) => Some(h),
                None if e.per_row && budget.limit == 0 => Some("no output was written; `--max-row-errors N` (or `N%`) scores up to N such rows 0.0 and lists them in run.json".to_owned()),
                None => None,
            };
            EngineError::Row {
                at,
                message,
                kind: if e.per_row {
                    ErrorKind::Data
                } else {
                    ErrorKind::Input
                },
                hint,
            }
        })?;
        self.encoder.write(&out, batch.num_rows())?;
        result.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// The item's results, its scores encoded.
    pub fn finish(mut self) -> Result<UnitResult, Error> {
        self.result.row_groups = self.encoder.finish()?;
        Ok(self.result)
    }
}

/// A unit (one whole Parquet row group) copies the stored chunks of the columns it only
/// keeps (`id`) into its own row group of scores, instead of decoding and re-encoding them:
/// the same values, in the input's encoding and compression. Returns, per kept column,
/// whether it was copied. Nothing is copied when no other column would be left to
/// decode (the decoder then gives the row count), or when a chunk does not fit
/// ([`ScoreEncoder::copy_stored`]).
fn copy_kept(
    plan: &Plan,
    inputs: &Inputs,
    unit: &Unit,
    encoder: &mut ScoreEncoder,
    chunks: &mut UnitChunks,
) -> Result<Vec<bool>, Error> {
    let mut copied = vec![false; plan.keep.len()];
    if plan.columns.len() <= plan.keep_only.iter().filter(|&&o| o).count() {
        return Ok(copied);
    }
    for (j, ((name, _), &only)) in plan.keep.iter().zip(&plan.keep_only).enumerate() {
        if !only {
            continue;
        }
        if let Some(chunk) = chunks.get(inputs, unit, name).map_err(Error::read)? {
            copied[j] = encoder.copy_stored(j, chunk)?;
        }
    }
    Ok(copied)
}

/// The stored chunks of one unit's kept columns read so far (by name; `None`: the column
/// cannot be copied as stored), shared by the tasks of a suite that score the unit.
#[derive(Default)]
pub(crate) struct UnitChunks {
    held: Vec<(String, Option<StoredChunk>)>,
}

impl UnitChunks {
    /// Column `name`'s stored chunk in `unit`, read on first asking.
    fn get(
        &mut self,
        inputs: &Inputs,
        unit: &Unit,
        name: &str,
    ) -> Result<Option<StoredChunk>, evalscore_reader::ReadError> {
        if let Some((_, chunk)) = self.held.iter().find(|(n, _)| n == name) {
            return Ok(chunk.clone());
        }
        let chunk = inputs.stored_chunk(unit, name)?;
        self.held.push((name.to_owned(), chunk.clone()));
        Ok(chunk)
    }
}
