//! The statistics of every score column and group, gathered in two passes over the joined
//! rows in the base run's order ([`crate::join::PairReader`]): the first sums values and
//! differences, counts missing pairs and rows in one run only, and lists the first keys that
//! went down or up; the second, once each mean difference is known, sums the squared
//! residuals (or each cluster's residuals). Memory holds one accumulator per column and
//! group, not the pairs.

use crate::comparison::{CompareRow, KEYS_LISTED};
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
        Groups::of(group_by, joined.groups.iter().copied(), dict)
    }

    /// The groups of the group ids `ids` (any order, repeats and [`NONE`] allowed).
    pub fn of(group_by: bool, ids: impl Iterator<Item = u32>, dict: &Dict) -> Groups {
        let mut names = vec![None];
        let mut slot = HashMap::new();
        if group_by {
            let mut ids: Vec<u32> = ids.filter(|g| *g != NONE).collect();
            ids.sort_unstable();
            ids.dedup();
            ids.sort_by(|a, b| dict.values[*a as usize].cmp(&dict.values[*b as usize]));
            for id in ids {
                slot.insert(id, names.len());
                names.push(Some(dict.values[id as usize].clone()));
            }
        }
        Groups { names, slot }
    }

    /// The slots: the overall one and one per group.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The slot of group id `g`, if it is a group.
    pub fn slot(&self, g: u32) -> Option<usize> {
        self.slot.get(&g).copied()
    }

    /// The slots a row of group `g` counts in: the overall one, and its group's.
    pub fn slots(&self, g: u32) -> ([usize; 2], usize) {
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

/// The first pass over the pairs, in the base run's order: per column and group, the sums,
/// the missing pairs and the first keys that went down or up; per group, the rows only in
/// the base run. Each slot (the overall one, then one per group) holds one cell per column.
#[derive(Debug)]
pub(crate) struct FirstPass {
    width: usize,
    /// Cell `s · width + c`: column `c` in slot `s`.
    first: Vec<First>,
    binary: Vec<bool>,
    only_base: Vec<u64>,
    only_base_keys: Vec<Value>,
}

impl FirstPass {
    /// A first pass over `width` columns in `slots` slots.
    pub fn new(width: usize, slots: usize) -> FirstPass {
        let mut f = FirstPass {
            width,
            first: Vec::new(),
            binary: vec![true; width],
            only_base: Vec::new(),
            only_base_keys: Vec::new(),
        };
        for _ in 0..slots {
            f.add_slot();
        }
        f
    }

    /// One more slot, the last.
    pub fn add_slot(&mut self) {
        self.first.extend((0..self.width).map(|_| First::default()));
        self.only_base.push(0);
    }

    /// The slots in a new order: slot `s` becomes slot `order[s]` (a permutation).
    pub fn reorder(&mut self, order: &[usize]) {
        let mut first: Vec<First> = (0..self.first.len()).map(|_| First::default()).collect();
        let mut only_base = vec![0; self.only_base.len()];
        for (s, to) in order.iter().enumerate() {
            for c in 0..self.width {
                first[to * self.width + c] = std::mem::take(&mut self.first[s * self.width + c]);
            }
            only_base[*to] = self.only_base[s];
        }
        self.first = first;
        self.only_base = only_base;
    }

    /// A base row without a partner, counted in the slots `at`.
    pub fn only_base(&mut self, at: &[usize], key: impl FnOnce() -> Value) {
        for s in at {
            self.only_base[*s] += 1;
        }
        if self.only_base_keys.len() < KEYS_LISTED {
            self.only_base_keys.push(key());
        }
    }

    /// Column `c` of a pair counted in the slots `at`: its base and new values. `key` holds
    /// the pair's key once made (by `make_key`), for the columns after this one.
    #[inline]
    pub fn value(
        &mut self,
        c: usize,
        at: &[usize],
        (b, n): (f64, f64),
        key: &mut Option<Value>,
        make_key: impl FnOnce() -> Value,
    ) {
        if b.is_nan() || n.is_nan() {
            for s in at {
                self.first[s * self.width + c].missing += 1;
            }
            return;
        }
        self.binary[c] &= (b == 0.0 || b == 1.0) && (n == 0.0 || n == 1.0);
        let mut make_key = Some(make_key);
        for s in at {
            let f = &mut self.first[s * self.width + c];
            f.sums.add(b, n);
            let list = if n < b {
                &mut f.down
            } else if n > b {
                &mut f.up
            } else {
                continue;
            };
            if list.len() < KEYS_LISTED {
                if key.is_none() {
                    *key = make_key.take().map(|m| m());
                }
                list.push(key.clone().unwrap_or(Value::Null));
            }
        }
    }

    /// Column `c` of `len` pairs in order: pair `k`'s base and new values are `pair(k)`, its
    /// group's slot `group(k)` (it also counts overall), its key `key(k)`; `diff` gets each
    /// pair's difference `new − base` (NaN for a missing pair). The same sums, in the same
    /// order, as [`FirstPass::value`] pair by pair; the overall ones in locals, so that they
    /// stay in registers.
    #[inline]
    pub fn column(
        &mut self,
        c: usize,
        len: usize,
        pair: impl Fn(usize) -> (f64, f64),
        group: impl Fn(usize) -> Option<usize>,
        key: impl Fn(usize) -> Value,
        mut diff: impl FnMut(f64),
    ) {
        let width = self.width;
        let mut binary = self.binary[c];
        let mut sums = self.first[c].sums.clone();
        let mut missing = 0;
        let listing = |f: &First| f.down.len() < KEYS_LISTED || f.up.len() < KEYS_LISTED;
        let mut open = listing(&self.first[c]);
        for k in 0..len {
            let (b, n) = pair(k);
            let g = group(k);
            if b.is_nan() || n.is_nan() {
                missing += 1;
                if let Some(s) = g {
                    self.first[s * width + c].missing += 1;
                }
                diff(f64::NAN);
                continue;
            }
            // Without branches: which of 0 and 1 a value is, is unpredictable.
            binary &= ((b == 0.0) | (b == 1.0)) & ((n == 0.0) | (n == 1.0));
            sums.add(b, n);
            let mut made: Option<Value> = None;
            if open && n != b {
                let f = &mut self.first[c];
                let list = if n < b { &mut f.down } else { &mut f.up };
                if list.len() < KEYS_LISTED {
                    list.push(made.get_or_insert_with(|| key(k)).clone());
                }
                open = listing(f);
            }
            if let Some(s) = g {
                let f = &mut self.first[s * width + c];
                f.sums.add(b, n);
                if n != b {
                    let list = if n < b { &mut f.down } else { &mut f.up };
                    if list.len() < KEYS_LISTED {
                        list.push(made.get_or_insert_with(|| key(k)).clone());
                    }
                }
            }
            diff(n - b);
        }
        self.first[c].sums = sums;
        self.first[c].missing += missing;
        self.binary[c] = binary;
    }

    /// The cells in the order of compare.parquet's rows: by column, then slot.
    fn cells(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let slots = self.only_base.len();
        (0..self.width).flat_map(move |c| (0..slots).map(move |s| (c, s)))
    }

    /// Ends the first pass: an overflowing sum is an error naming its column; else the
    /// second pass, about each mean difference.
    pub fn finish(self, names: &[String], clustered: bool) -> Result<SecondPass, CompareError> {
        for (c, s) in self.cells() {
            if !self.first[s * self.width + c].sums.is_finite() {
                return Err(CompareError::Overflow {
                    column: names[c].clone(),
                });
            }
        }
        let spread = self
            .first
            .iter()
            .map(|f| f.sums.mean_diff().map(|d| Spread::new(d, clustered)))
            .collect();
        Ok(SecondPass {
            first: self,
            spread,
        })
    }
}

/// The second pass over the pairs, in the same order: the residuals about each mean
/// difference.
#[derive(Debug)]
pub(crate) struct SecondPass {
    first: FirstPass,
    /// Laid out as [`FirstPass`]'s cells.
    spread: Vec<Option<Spread>>,
}

impl SecondPass {
    /// Column `c` of a pair counted in the slots `at`: its difference `new − base` (NaN for a
    /// missing pair, which is skipped) and its cluster.
    #[inline]
    pub fn diff(&mut self, c: usize, at: &[usize], d: f64, cluster: u32) {
        if d.is_nan() {
            return;
        }
        let width = self.first.width;
        for s in at {
            if let Some(sp) = &mut self.spread[s * width + c] {
                sp.add_diff(d, cluster);
            }
        }
    }

    /// Column `c` of pairs counted overall only, in a comparison without clusters: their
    /// differences in order (NaN for a missing pair, skipped).
    #[inline]
    pub fn overall(&mut self, c: usize, d: impl Iterator<Item = f64>) {
        if let Some(sp) = &mut self.spread[c] {
            sp.add_unclustered(d);
        }
    }

    /// The rows of compare.parquet: an overflowing sum of squares is an error naming its
    /// column. `only_new_by_group` holds the rows only in the new run per group id.
    pub fn finish(
        self,
        names: &[String],
        groups: &Groups,
        only_new_by_group: &HashMap<u32, u64>,
        clustered: bool,
        confidence: f64,
    ) -> Result<Tallied, CompareError> {
        let SecondPass { mut first, spread } = self;
        let width = first.width;
        for (c, s) in first.cells() {
            if spread[s * width + c]
                .as_ref()
                .is_some_and(|s| !s.is_finite())
            {
                return Err(CompareError::Overflow {
                    column: names[c].clone(),
                });
            }
        }
        let slots = first.only_base.len();
        let only_new_total: u64 = only_new_by_group.values().sum();
        let mut only_new = vec![0u64; slots];
        only_new[0] = only_new_total;
        for (g, count) in only_new_by_group {
            if let Some(s) = groups.slot.get(g) {
                only_new[*s] += count;
            }
        }
        let cells: Vec<(usize, usize)> = first.cells().collect();
        let mut rows = Vec::with_capacity(cells.len());
        for (c, s) in cells {
            let i = s * width + c;
            let f = std::mem::take(&mut first.first[i]);
            let p = stats::finish(
                &f.sums,
                spread[i].as_ref(),
                confidence,
                Test::pick(clustered, first.binary[c]),
            );
            rows.push(CompareRow {
                column: names[c].clone(),
                group: groups.names[s].clone(),
                test: p.test.name(),
                n_pairs: p.n_pairs,
                missing_pairs: f.missing,
                only_base: first.only_base[s],
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
            only_base_keys: first.only_base_keys,
        })
    }
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
    let mut first = FirstPass::new(width, groups.len());
    let mut pair = Pair::default();
    let mut reader = PairReader::new(joined, base, width)?;
    while reader.next_into(&mut pair)? {
        let (at, n_at) = groups.slots(pair.group);
        let at = &at[..n_at];
        if pair.new_row == NO_ROW {
            first.only_base(at, || key_json(&pair.key, key_int));
            continue;
        }
        let mut key: Option<Value> = None;
        for (c, &(b, n)) in pair.values.iter().enumerate() {
            first.value(c, at, (b, n), &mut key, || key_json(&pair.key, key_int));
        }
    }
    let mut second = first.finish(names, clustered)?;
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
            second.diff(c, &at[..n_at], n - b, pair.cluster);
        }
    }
    second.finish(names, groups, &joined.only_new, clustered, confidence)
}
