//! The statistics of every score column and group, gathered in two passes over the joined
//! rows in the base run's order ([`crate::join::PairReader`]): the first sums values and
//! differences, counts missing pairs and rows in one run only, and lists the first keys that
//! went down or up; the second, once each mean difference is known, sums the squared
//! residuals (or each cluster's residuals). Memory holds one accumulator per column and
//! group, not the pairs.

use crate::compare::{CompareRow, KEYS_LISTED};
use crate::error::CompareError;
use crate::join::{Joined, Pair, PairReader};
use crate::runs::{key_json, Dict, Scanned};
use crate::spill::{NONE, NO_ROW};
use crate::stats::{self, Spread, Sums, Test};
use serde_json::Value;
use std::collections::HashMap;

/// The groups of a comparison: the overall one (slot 0), then each `--group-by` value in
/// byte order.
#[derive(Debug)]
pub(crate) struct Groups {
    names: Vec<Option<String>>,
    slot: HashMap<u32, usize>,
}

impl Groups {
    pub fn new(group_by: bool, joined: &Joined, dict: &Dict) -> Groups {
        let mut names = vec![None];
        let mut slot = HashMap::new();
        if group_by {
            let mut ids: Vec<u32> = joined
                .groups
                .iter()
                .copied()
                .filter(|g| *g != NONE)
                .collect();
            ids.sort_by(|a, b| dict.values[*a as usize].cmp(&dict.values[*b as usize]));
            for id in ids {
                slot.insert(id, names.len());
                names.push(Some(dict.values[id as usize].clone()));
            }
        }
        Groups { names, slot }
    }

    /// The slots a row of group `g` counts in: the overall one, and its group's.
    fn slots(&self, g: u32) -> ([usize; 2], usize) {
        match self.slot.get(&g) {
            Some(s) => ([0, *s], 2),
            None => ([0, 0], 1),
        }
    }
}

/// The rows of compare.parquet (before Holm and the verdicts) and the first keys only in
/// the base run.
#[derive(Debug)]
pub(crate) struct Tallied {
    pub rows: Vec<CompareRow>,
    pub only_base_keys: Vec<Value>,
}

/// The first pass's figures of one column in one group.
#[derive(Debug, Default)]
struct First {
    sums: Sums,
    missing: u64,
    down: Vec<Value>,
    up: Vec<Value>,
}

/// Compares the columns `names` (the joined pairs' values, in order) in every group.
pub(crate) fn tally(
    joined: &Joined,
    base: &Scanned,
    names: &[String],
    groups: &Groups,
    clustered: bool,
    confidence: f64,
    key_int: &[bool],
) -> Result<Tallied, CompareError> {
    let width = names.len();
    let slots = groups.names.len();
    let mut first: Vec<First> = (0..width * slots).map(|_| First::default()).collect();
    let mut binary = vec![true; width];
    let mut only_base = vec![0u64; slots];
    let mut only_base_keys = Vec::new();
    let mut pair = Pair::default();
    let mut reader = PairReader::new(joined, base, width)?;
    while reader.next_into(&mut pair)? {
        let (at, n_at) = groups.slots(pair.group);
        let at = &at[..n_at];
        let mut key: Option<Value> = None;
        if pair.new_row == NO_ROW {
            for s in at {
                only_base[*s] += 1;
            }
            if only_base_keys.len() < KEYS_LISTED {
                only_base_keys.push(key_json(&pair.key, key_int));
            }
            continue;
        }
        for (c, &(b, n)) in pair.values.iter().enumerate() {
            let cells = &mut first[c * slots..(c + 1) * slots];
            if b.is_nan() || n.is_nan() {
                for s in at {
                    cells[*s].missing += 1;
                }
                continue;
            }
            binary[c] &= (b == 0.0 || b == 1.0) && (n == 0.0 || n == 1.0);
            for s in at {
                let f = &mut cells[*s];
                f.sums.add(b, n);
                let list = if n < b {
                    &mut f.down
                } else if n > b {
                    &mut f.up
                } else {
                    continue;
                };
                if list.len() < KEYS_LISTED {
                    list.push(
                        key.get_or_insert_with(|| key_json(&pair.key, key_int))
                            .clone(),
                    );
                }
            }
        }
    }
    for (i, f) in first.iter().enumerate() {
        if !f.sums.is_finite() {
            return Err(CompareError::Overflow {
                column: names[i / slots].clone(),
            });
        }
    }

    let mut spread: Vec<Option<Spread>> = first
        .iter()
        .map(|f| f.sums.mean_diff().map(|d| Spread::new(d, clustered)))
        .collect();
    let mut reader = PairReader::new(joined, base, width)?;
    while reader.next_into(&mut pair)? {
        if pair.new_row == NO_ROW {
            continue;
        }
        let (at, n_at) = groups.slots(pair.group);
        for (c, &(b, n)) in pair.values.iter().enumerate() {
            if b.is_nan() || n.is_nan() {
                continue;
            }
            for s in &at[..n_at] {
                if let Some(sp) = &mut spread[c * slots + s] {
                    sp.add(b, n, pair.cluster);
                }
            }
        }
    }
    for (i, s) in spread.iter().enumerate() {
        if s.as_ref().is_some_and(|s| !s.is_finite()) {
            return Err(CompareError::Overflow {
                column: names[i / slots].clone(),
            });
        }
    }

    let only_new_total: u64 = joined.only_new.values().sum();
    let mut only_new = vec![0u64; slots];
    only_new[0] = only_new_total;
    for (g, count) in &joined.only_new {
        if let Some(s) = groups.slot.get(g) {
            only_new[*s] += count;
        }
    }
    let mut rows = Vec::with_capacity(width * slots);
    for (i, (f, sp)) in first.into_iter().zip(spread).enumerate() {
        let (c, s) = (i / slots, i % slots);
        let p = stats::finish(
            &f.sums,
            sp.as_ref(),
            confidence,
            Test::pick(clustered, binary[c]),
        );
        rows.push(CompareRow {
            column: names[c].clone(),
            group: groups.names[s].clone(),
            test: p.test.name(),
            n_pairs: p.n_pairs,
            missing_pairs: f.missing,
            only_base: only_base[s],
            only_new: only_new[s],
            n_clusters: p.n_clusters,
            base_mean: p.base_mean,
            new_mean: p.new_mean,
            diff: p.diff,
            diff_se: p.diff_se,
            ci_low: p.ci_low,
            ci_high: p.ci_high,
            p_value: p.p_value,
            p_value_holm: None,
            pass_to_fail: p.pass_to_fail,
            fail_to_pass: p.fail_to_pass,
            min_detectable_diff: p.min_detectable_diff,
            verdict: "tied",
            pass_to_fail_keys: f.down,
            fail_to_pass_keys: f.up,
        });
    }
    Ok(Tallied {
        rows,
        only_base_keys,
    })
}
