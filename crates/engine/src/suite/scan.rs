//! Scoring a group of tasks over the inputs they share: each work item's units are read
//! once, with the union of the tasks' columns, and every batch is handed to each task's
//! scoring ([`ItemScoring`]), projected to the columns that task alone would have read. Each
//! task keeps its own scores.parquet writer, metric states and row-error budget; results
//! arrive in input order as in a run of one task.

use crate::model_output::model_output_text;
use crate::output::{Encoders, ScoresWriter};
use crate::pipeline::{self, Scored};
use crate::row_error::{RowErrorRecord, ROW_ERRORS_LISTED};
use crate::score::{ItemScoring, Memos, UnitChunks, UnitResult};
use crate::{check_interrupt, Error, ErrorKind};
use crate::{Scorer, States};
use arrow::array::{ArrayRef, RecordBatch};
use evalscore_reader::{scan_ordered, Inputs, Unit};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// One task of a group: its bound scorer and its scores.parquet.
pub(super) struct Lane<'a> {
    pub scorer: &'a Scorer,
    pub writer: ScoresWriter,
}

/// What one lane gave: `None` when the scan stopped before it finished (another task
/// failed without `--keep-going`).
pub(super) type LaneResult = Option<Result<Scored, Error>>;

/// A lane's merged results so far.
struct Sink {
    writer: Option<ScoresWriter>,
    states: States,
    row_error_list: Vec<RowErrorRecord>,
    done: u64,
    error: Option<Error>,
}

/// Scores every lane over `inputs` on `threads` workers; `progress` gets the rows read so
/// far. A lane's failure ends that lane (and, without `keep_going`, the scan); an input that
/// cannot be read fails every lane; an interruption is the `Err`.
pub(super) fn score_group(
    lanes: Vec<Lane<'_>>,
    inputs: &Inputs,
    threads: usize,
    keep_going: bool,
    progress: &dyn Fn(u64),
) -> Result<Vec<LaneResult>, Error> {
    let total = inputs.rows();
    let units = inputs.units();
    let copy_from = crate::score::copy_from(units.len());
    let work = pipeline::work_items(&units, total, threads);
    let scorers: Vec<&Scorer> = lanes.iter().map(|l| l.scorer).collect();
    let encoders: Vec<Encoders> = lanes.iter().map(|l| l.writer.encoders()).collect();
    let failed: Vec<AtomicBool> = lanes.iter().map(|_| AtomicBool::new(false)).collect();
    let mut sinks: Vec<Sink> = lanes
        .into_iter()
        .map(|l| Sink {
            writer: Some(l.writer),
            states: l.scorer.empty_states(),
            row_error_list: Vec::new(),
            done: 0,
            error: None,
        })
        .collect();
    let mut stopped = false;
    let mut read = 0u64;
    let scanned = scan_ordered(
        &work,
        threads,
        |item| {
            check_interrupt()?;
            let units = &units[item.clone()];
            let results = score_item(&scorers, &encoders, &failed, inputs, units, copy_from)?;
            Ok((results, units.iter().map(|u| u.rows).sum::<u64>()))
        },
        |(results, rows): (Vec<Option<Result<UnitResult, Error>>>, u64)| {
            for (i, result) in results.into_iter().enumerate() {
                let sink = &mut sinks[i];
                if sink.error.is_some() {
                    continue;
                }
                let merged = match result {
                    None => continue,
                    Some(r) => r.and_then(|r| merge(scorers[i], sink, r)),
                };
                if let Err(e) = merged {
                    failed[i].store(true, Ordering::Relaxed);
                    sink.error = Some(e);
                    if !keep_going {
                        stopped = true;
                        return Err(Error::new("stopped").kind(ErrorKind::Other));
                    }
                }
            }
            read += rows;
            progress(read);
            Ok(())
        },
    );
    match scanned {
        Ok(()) => {}
        Err(_) if stopped => {}
        Err(e) if e.kind == ErrorKind::Interrupted => return Err(e),
        // An input that cannot be read: every lane's error.
        Err(e) => {
            for sink in sinks.iter_mut().filter(|s| s.error.is_none()) {
                sink.error = Some(copy_error(&e));
            }
        }
    }
    check_interrupt()?;
    Ok(sinks
        .into_iter()
        .map(|mut s| {
            if let Some(e) = s.error {
                return Some(Err(e));
            }
            if stopped {
                return None;
            }
            let writer = s.writer.take()?;
            Some(
                pipeline::finish_scores(writer, s.done, total).map(|()| Scored {
                    states: s.states,
                    row_error_list: s.row_error_list,
                }),
            )
        })
        .collect())
}

/// Appends a work item's scores to the lane's file and merges its states, as a run of one
/// task does.
fn merge(scorer: &Scorer, sink: &mut Sink, mut result: UnitResult) -> Result<(), Error> {
    let (task, plan) = (&scorer.task, &scorer.plan);
    if let Some(w) = sink.writer.as_mut() {
        w.append(std::mem::take(&mut result.row_groups))?;
    }
    let room = ROW_ERRORS_LISTED.saturating_sub(sink.row_error_list.len());
    let rows = result.rows;
    sink.row_error_list.extend(
        std::mem::take(&mut result.row_error_list)
            .into_iter()
            .take(room),
    );
    sink.states
        .merge(&States::folded(task.fingerprint, result))?;
    if let Some(f) = plan.functions.as_deref() {
        sink.states.compact_user(task, f)?;
    }
    sink.done += rows;
    Ok(())
}

/// Scores one work item for every lane that has not failed: each unit read once with the
/// union of the lanes' columns. `Err` is an input that cannot be read (or an interruption);
/// a lane's own failure is its result.
fn score_item(
    scorers: &[&Scorer],
    encoders: &[Encoders],
    failed: &[AtomicBool],
    inputs: &Inputs,
    units: &[Unit],
    copy_from: u64,
) -> Result<Vec<Option<Result<UnitResult, Error>>>, Error> {
    let n = scorers.len();
    let mut items: Vec<Option<ItemScoring<'_>>> = (0..n)
        .map(|i| {
            let s = scorers[i];
            (!failed[i].load(Ordering::Relaxed)).then(|| {
                ItemScoring::new(
                    &s.plan,
                    &s.task,
                    &s.budget,
                    encoders[i].encoder(),
                    copy_from,
                )
            })
        })
        .collect();
    let mut out: Vec<Option<Result<UnitResult, Error>>> = (0..n).map(|_| None).collect();
    // Every column some task reads, for fetching remote units ahead.
    let mut wanted: Vec<String> = Vec::new();
    for s in scorers {
        for c in &s.plan.columns {
            if !wanted.contains(c) {
                wanted.push(c.clone());
            }
        }
    }
    for unit in inputs.fetching_ahead(units, &wanted) {
        let mut columns: Vec<Option<Vec<String>>> = vec![None; n];
        // A kept column's stored chunk, read once for all the tasks that copy it.
        let mut chunks = UnitChunks::default();
        for i in 0..n {
            if let Some(item) = items[i].as_mut() {
                match item.start_unit(inputs, unit, &mut chunks) {
                    Ok(c) => columns[i] = Some(c),
                    Err(e) => {
                        items[i] = None;
                        out[i] = Some(Err(e));
                    }
                }
            }
        }
        if items.iter().all(Option::is_none) {
            break;
        }
        // In schema order, as the reader gives them.
        let union: Vec<String> = inputs
            .schema
            .fields()
            .iter()
            .map(|f| f.name())
            .filter(|name| columns.iter().flatten().any(|c| c.contains(name)))
            .cloned()
            .collect();
        // Rows of this unit done so far, for the file row number in messages.
        let mut done = 0u64;
        inputs.read_unit(unit, &union, |batch| -> Result<(), Error> {
            check_interrupt()?;
            let row = unit.first_row + done;
            // The model output's text, made once for every task that reads it from the same
            // column (a cell that cannot be read is left to each task to report).
            let mut texts: Vec<(&str, ArrayRef)> = Vec::new();
            for item in items.iter().flatten() {
                let Some(name) = item.output_column() else {
                    continue;
                };
                if texts.iter().any(|(n, _)| *n == name) {
                    continue;
                }
                if let Some(text) = batch
                    .column_by_name(name)
                    .and_then(|col| model_output_text(col, name).ok())
                {
                    texts.push((name, text));
                }
            }
            let memo = Memos::default();
            // The tasks score the batch independently, as jobs of the scan's pool: a worker
            // with no work item of its own left (at the end of the scan) takes some of them
            // instead of idling. Each task's results are the same whichever thread runs it.
            items
                .par_iter_mut()
                .zip(out.par_iter_mut())
                .zip(columns.par_iter())
                .for_each(|((slot, result), cols)| {
                    let (Some(item), Some(cols)) = (slot.as_mut(), cols.as_ref()) else {
                        return;
                    };
                    let text = item
                        .output_column()
                        .and_then(|name| texts.iter().find(|(n, _)| *n == name))
                        .map(|(_, t)| t);
                    let scored = project(&batch, cols)
                        .and_then(|b| item.score(inputs, unit, row, &b, text, Some(&memo)));
                    if let Err(e) = scored {
                        *slot = None;
                        *result = Some(Err(e));
                    }
                });
            done += batch.num_rows() as u64;
            Ok(())
        })?;
    }
    for (slot, item) in out.iter_mut().zip(items) {
        if let Some(item) = item {
            *slot = Some(item.finish());
        }
    }
    Ok(out)
}

/// The batch's columns among `columns`, in the batch's order: what reading `columns` alone
/// gives.
fn project(batch: &RecordBatch, columns: &[String]) -> Result<RecordBatch, Error> {
    let schema = batch.schema();
    let indices: Vec<usize> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| columns.contains(f.name()))
        .map(|(i, _)| i)
        .collect();
    if indices.len() == batch.num_columns() {
        return Ok(batch.clone());
    }
    batch
        .project(&indices)
        .map_err(|e| Error::new(format!("cannot project a batch: {e}")).kind(ErrorKind::Internal))
}

/// The same error again, for each task it fails: its message, kind, causes and hint.
pub(super) fn copy_error(e: &Error) -> Error {
    let mut copy = Error::new(e.message.clone()).kind(e.kind);
    for c in e.causes() {
        copy = copy.caused_by(c);
    }
    match &e.hint {
        Some(h) => copy.with_hint(h.clone()),
        None => copy,
    }
}
