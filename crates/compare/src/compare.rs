//! Pairing two runs' rows by key and comparing every common score column, overall and per
//! group. Runs whose keys arrive in the same order are paired row by row
//! ([`crate::aligned`]); others that fit a memory budget by a hash join in memory
//! ([`crate::hash_join`]); the rest, and whatever those paths cannot settle, are read into
//! partitions by key ([`crate::runs`]) and joined one partition at a time ([`crate::join`]),
//! spilled to disk, so that memory does not grow with the rows. The statistics are gathered
//! in two passes over the pairs in the base run's order ([`crate::tally`]), so every figure
//! is the sum, in that order, the in-memory computation gives, whichever path paired the
//! rows.

use crate::aligned;
use crate::error::CompareError;
use crate::hash_join::{self, MEMORY_BUDGET};
use crate::hash_pairs;
use crate::join::{self, Columns};
pub(crate) use crate::opened::{open_pair, Pair};
use crate::runs::{self, key_json, Dict, Layout};
use crate::stats;
use crate::tally::{self, Groups, Tallied};
use evalscore_error::Error;

pub use crate::comparison::{
    verdict, CompareOptions, CompareRow, Comparison, COMPARE_FILES, KEYS_LISTED, PARTITION_ROWS,
};

pub use crate::output::{p_text, write};

/// Compares the two runs (reads only; see [`write`] for the outputs).
pub fn compare(options: &CompareOptions) -> Result<Comparison, Error> {
    check_options(options)?;
    let pair = open_pair(options)?;
    compare_pair(options, pair, PARTITION_ROWS)
}

/// [`compare`] by the partitioned join alone, with partitions of `partition_rows` rows
/// (runs in the same order are otherwise paired without it, [`crate::aligned`]).
#[cfg(test)]
pub(crate) fn compare_joined(o: &CompareOptions, partition_rows: u64) -> Result<Comparison, Error> {
    check_options(o)?;
    let pair = open_pair(o)?;
    compare_by_join(o, pair, partition_rows)
}

/// The checks of the options that need no file: `--confidence`, `--max-drop`, `--key`.
pub(crate) fn check_options(o: &CompareOptions) -> Result<(), Error> {
    if !(o.confidence > 0.0 && o.confidence < 1.0) {
        return Err(CompareError::Option(format!(
            "--confidence {} is not strictly between 0 and 1",
            o.confidence
        ))
        .into());
    }
    if let Some(x) = o.max_drop {
        if !(x.is_finite() && x >= 0.0) {
            return Err(CompareError::Option(format!("--max-drop {x} is not a number ≥ 0")).into());
        }
    }
    if o.key.is_empty() || o.key.iter().any(|k| k.is_empty()) {
        return Err(CompareError::Option("--key needs at least one column name".to_owned()).into());
    }
    Ok(())
}

/// Reads the rows of an opened [`Pair`] and compares them: aligned when the runs' rows are
/// in the same order, else by the hash join in memory when they fit its budget, else by the
/// partitioned join.
pub(crate) fn compare_pair(
    o: &CompareOptions,
    pair: Pair,
    partition_rows: u64,
) -> Result<Comparison, Error> {
    compare_pair_within(o, pair, partition_rows, MEMORY_BUDGET)
}

/// [`compare_pair`] with a memory budget of `budget` bytes for the hash join.
fn compare_pair_within(
    o: &CompareOptions,
    pair: Pair,
    partition_rows: u64,
    budget: usize,
) -> Result<Comparison, Error> {
    let names: Vec<String> = pair
        .common
        .iter()
        .map(|(b, _)| pair.base.scores[*b].clone())
        .collect();
    if let Some(a) = aligned::compare(o, &pair, &names)? {
        return Ok(finish(o, a.tallied, Vec::new(), (a.rows, a.rows)));
    }
    if let Some(h) = hash_join::compare(
        o,
        &pair,
        &names,
        budget,
        hash_join::TABLE_ROWS,
        hash_pairs::tally,
    )? {
        return Ok(finish(o, h.tallied, h.only_new_keys, h.rows));
    }
    compare_by_join(o, pair, partition_rows)
}

/// [`compare`] with a memory budget of `budget` bytes for the hash join.
#[cfg(test)]
pub(crate) fn compare_within(o: &CompareOptions, budget: usize) -> Result<Comparison, Error> {
    check_options(o)?;
    let pair = open_pair(o)?;
    compare_pair_within(o, pair, PARTITION_ROWS, budget)
}

/// [`compare`] by the hash join alone, within `budget` bytes, in partitions of about
/// `partition_rows` rows of both runs; `None` when it hands over to the partitioned join.
#[cfg(test)]
pub(crate) fn compare_hashed(
    o: &CompareOptions,
    budget: usize,
    partition_rows: u64,
) -> Result<Option<Comparison>, Error> {
    check_options(o)?;
    let pair = open_pair(o)?;
    let names: Vec<String> = pair
        .common
        .iter()
        .map(|(b, _)| pair.base.scores[*b].clone())
        .collect();
    Ok(
        hash_join::compare(o, &pair, &names, budget, partition_rows, hash_pairs::tally)?
            .map(|h| finish(o, h.tallied, h.only_new_keys, h.rows)),
    )
}

/// [`compare_pair`] by the partitioned join.
fn compare_by_join(
    o: &CompareOptions,
    pair: Pair,
    partition_rows: u64,
) -> Result<Comparison, Error> {
    let Pair { base, new, common } = pair;
    let layout = Layout::new(base.rows().max(new.rows()), partition_rows)?;
    let mut dict = Dict::default();
    let base_rows = base.scan(&layout, &mut dict, true, "base")?;
    let duplicate = |run: &runs::Run, rows: &runs::Scanned| -> Result<(), Error> {
        match join::first_duplicate(rows, run.scores.len())? {
            None => Ok(()),
            Some((key, first, second)) => Err(CompareError::DuplicateKey {
                path: run.path.clone(),
                key: o.key.join(","),
                value: key_json(&key, &run.key_int),
                first: first + 1,
                second: second + 1,
            }
            .into()),
        }
    };
    duplicate(&base, &base_rows)?;
    let new_rows = new.scan(&layout, &mut dict, false, "new")?;
    duplicate(&new, &new_rows)?;
    for (b, n) in &common {
        for (run, rows, col) in [(&base, &base_rows, *b), (&new, &new_rows, *n)] {
            if let Some((row, value)) = rows.first_infinite[col] {
                return Err(CompareError::NotFinite {
                    path: run.path.clone(),
                    row: row + 1,
                    column: run.scores[col].clone(),
                    value,
                }
                .into());
            }
        }
    }
    let cols = Columns {
        base_width: base.scores.len(),
        new_width: new.scores.len(),
        common: common.clone(),
        base_group: base.group.is_some(),
        new_group: new.group.is_some(),
        base_cluster: base.cluster.is_some(),
        new_cluster: new.cluster.is_some(),
    };
    let joined = join::join(&base_rows, &new_rows, &cols, &layout.spill)?;
    if let (Some(name), Some((i, j))) = (&o.cluster, joined.null_cluster) {
        let (path, row) = if base.cluster.is_some() {
            (&base.path, i)
        } else {
            (&new.path, j)
        };
        return Err(CompareError::NullCluster {
            path: path.clone(),
            row: row + 1,
            name: name.clone(),
        }
        .into());
    }
    let names: Vec<String> = common
        .iter()
        .map(|(b, _)| base.scores[*b].clone())
        .collect();
    let groups = Groups::new(o.group_by.is_some(), &joined, &dict);
    let tallied = tally::tally(
        &joined,
        &base_rows,
        &names,
        &groups,
        o.cluster.is_some(),
        o.confidence,
        &base.key_int,
    )?;
    let only_new_keys = joined
        .only_new_keys
        .values()
        .map(|k| key_json(k, &new.key_int))
        .collect();
    Ok(finish(
        o,
        tallied,
        only_new_keys,
        (base_rows.rows, new_rows.rows),
    ))
}

/// The comparison of the tallies: Holm's adjustment and the verdicts.
pub(crate) fn finish(
    o: &CompareOptions,
    tallied: Tallied,
    only_new_keys: Vec<serde_json::Value>,
    (base_rows, new_rows): (u64, u64),
) -> Comparison {
    let mut rows = tallied.rows;
    let holm = stats::holm(&rows.iter().map(|r| r.p_value).collect::<Vec<_>>());
    for (r, h) in rows.iter_mut().zip(holm) {
        r.p_value_holm = h;
        r.verdict = verdict(r.p_value, r.diff, o.confidence, o.max_drop.unwrap_or(0.0));
    }
    Comparison {
        options: o.clone(),
        only_base_keys: tallied.only_base_keys,
        only_new_keys,
        base_rows,
        new_rows,
        rows,
    }
}
