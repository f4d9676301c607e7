//! Scoring a stream of record batches on several threads, in pieces, with the results taken
//! back in input order.

use crate::convert::plain;
use arrow::array::RecordBatch;
use evalscore_engine::{Error, Scorer, States, Task, UserFunctions};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Rows of one piece of work: batches are cut to this size, so that a table read as one
/// large chunk still spreads over every thread.
const PIECE_ROWS: usize = 65_536;

/// Scores a stream of batches on `threads` threads: pieces of at most [`PIECE_ROWS`] rows go
/// to the workers as they are read (a bounded number in flight), and their scores and states
/// are taken back in input order, so the result does not depend on the threads. The first
/// failing piece in input order gives the error, its rows counted from the input's start.
/// `user` compacts `python` metrics' states as they are merged.
pub(crate) fn score_stream(
    scorer: &Scorer,
    reader: impl Iterator<Item = Result<RecordBatch, arrow::error::ArrowError>>,
    threads: usize,
    want_scores: bool,
    user: Option<(&Task, &dyn UserFunctions)>,
) -> Result<(Vec<RecordBatch>, States), Error> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    // The first piece that failed: later pieces are not scored; earlier ones are, so the
    // error reported is the first in input order.
    let failed_at = AtomicUsize::new(usize::MAX);
    let (work_tx, work_rx) = mpsc::sync_channel::<(usize, u64, RecordBatch)>(threads * 2);
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Result<(RecordBatch, States), Error>)>();
    std::thread::scope(|scope| -> Result<(Vec<RecordBatch>, States), Error> {
        for _ in 0..threads {
            let (work_rx, done_tx, failed_at) = (&work_rx, done_tx.clone(), &failed_at);
            scope.spawn(move || loop {
                let next = work_rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok((idx, first_row, piece)) = next else {
                    return;
                };
                if idx > failed_at.load(Ordering::Relaxed) {
                    continue;
                }
                let r = scorer.score(&piece).map_err(|mut e| {
                    // The library counts rows within the piece; here they count in the input.
                    e.message = renumber(&e.message, first_row);
                    e
                });
                if r.is_err() {
                    failed_at.fetch_min(idx, Ordering::Relaxed);
                }
                if done_tx.send((idx, r)).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let mut total = scorer.empty_states();
        let mut out = Vec::new();
        let mut pending: BTreeMap<usize, Result<(RecordBatch, States), Error>> = BTreeMap::new();
        let mut next = 0usize;
        let mut first_error: Option<Error> = None;
        // Takes the finished pieces that come next in input order.
        let take = |pending: &mut BTreeMap<usize, _>,
                    next: &mut usize,
                    total: &mut States,
                    out: &mut Vec<RecordBatch>|
         -> Result<(), Error> {
            while let Some(r) = pending.remove(next) {
                *next += 1;
                let (scores, states) = r?;
                total.merge(&states)?;
                if let Some((task, f)) = user {
                    total.compact_user(task, f)?;
                }
                if want_scores {
                    out.push(plain(scores)?);
                }
            }
            Ok(())
        };
        let mut sent = 0usize;
        let mut row = 0u64;
        let mut read_error = None;
        'read: for batch in reader {
            let batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    read_error = Some(Error::new("cannot read the input").caused_by(e.to_string()));
                    break;
                }
            };
            let mut offset = 0;
            while offset < batch.num_rows() {
                let len = PIECE_ROWS.min(batch.num_rows() - offset);
                if work_tx.send((sent, row, batch.slice(offset, len))).is_err() {
                    break 'read;
                }
                sent += 1;
                row += len as u64;
                offset += len;
                // Results are taken as they come, so finished pieces do not pile up.
                while let Ok((idx, r)) = done_rx.try_recv() {
                    pending.insert(idx, r);
                }
                if let Err(e) = take(&mut pending, &mut next, &mut total, &mut out) {
                    first_error = Some(e);
                }
                if first_error.is_some() || failed_at.load(Ordering::Relaxed) != usize::MAX {
                    break 'read;
                }
            }
        }
        drop(work_tx);
        while next < sent && first_error.is_none() {
            match done_rx.recv() {
                Ok((idx, r)) => {
                    pending.insert(idx, r);
                }
                Err(_) => break,
            }
            if let Err(e) = take(&mut pending, &mut next, &mut total, &mut out) {
                first_error = Some(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if let Some(e) = read_error {
            return Err(e);
        }
        Ok((out, total))
    })
}

/// `row N: ...` counted within a batch, as counted from the start of the input.
fn renumber(message: &str, first_row: u64) -> String {
    if first_row == 0 {
        return message.to_owned();
    }
    let Some(rest) = message.strip_prefix("row ") else {
        return message.to_owned();
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match rest[..digits].parse::<u64>() {
        Ok(n) => format!("row {}{}", n + first_row, &rest[digits..]),
        Err(_) => message.to_owned(),
    }
}
