//! The statistics over the hash join's pairs ([`crate::hash_join`]), gathered as the
//! partitioned join's tally gathers them ([`crate::tally`]): in the base run's row order.
//! Each base row's partner is read back from its partition in turn (each partition keeps
//! its rows in row order), and the partner's scores (and group and cluster, where the base
//! run lacks them) are gathered into the base run's order first, in parallel, one stretch
//! of base rows per thread: the gather reads the new run at random, which a single thread
//! would wait on, where the sums after it read their arrays front to back. The first pass
//! then runs over the pairs in order and keeps their differences for the second
//! ([`crate::differences`]). Rows only in one run, the groups and the first keys listed are
//! counted as the join counts them, so every figure and list is the join's.

use crate::aligned::{column, KEPT_IN_MEMORY};
use crate::comparison::{CompareOptions, KEYS_LISTED};
use crate::differences::{second_pass, Block, Diffs};
use crate::hash_join::{Joined, Sides, Stop, Words};
use crate::packed::Packed;
use crate::runs::Dict;
use crate::spill::NONE;
use crate::tally::{FirstPass, Groups, Tallied};
use evalscore_error::Error;
use serde_json::Value;
use std::collections::HashMap;

/// Base rows per block of the first pass.
const BLOCK: usize = 4096;

impl Sides {
    /// The new run's rows without a partner: (row, partition, index in it).
    fn only_new<'a>(&'a self, joined: &'a Joined) -> impl Iterator<Item = (u32, usize, u32)> + 'a {
        let rows = &self.new.row;
        joined
            .only_new
            .iter()
            .enumerate()
            .flat_map(move |(p, ks)| ks.iter().map(move |k| (rows[p][*k as usize], p, *k)))
    }

    /// The groups of the comparison: of every pair (the base run's group, else the new
    /// run's), of every row only in the base run (its group) and only in the new run (its
    /// group).
    fn groups(&self, o: &CompareOptions, joined: &Joined, dict: &Dict) -> Groups {
        let mut seen = vec![false; dict.values.len()];
        let mut mark = |g: u32| {
            if g != NONE {
                seen[g as usize] = true;
            }
        };
        if self.base_has.0 {
            self.base.group.iter().for_each(|g| mark(*g));
            if self.new_has.0 {
                self.only_new(joined)
                    .for_each(|(j, _, _)| mark(self.new.group[j as usize]));
            }
        } else if self.new_has.0 {
            self.new.group.iter().for_each(|g| mark(*g));
        }
        let ids = (0..seen.len() as u32).filter(|g| seen[*g as usize]);
        Groups::of(o.group_by.is_some(), ids, dict)
    }

    /// The first [`KEYS_LISTED`] rows only in the new run, by row: their keys.
    fn only_new_keys(&self, joined: &Joined) -> Vec<Value> {
        let mut rows: Vec<(u32, usize, u32)> = self.only_new(joined).collect();
        if rows.len() > KEYS_LISTED {
            rows.select_nth_unstable(KEYS_LISTED);
            rows.truncate(KEYS_LISTED);
        }
        rows.sort_unstable();
        rows.iter()
            .map(|(j, p, k)| match self.kind {
                Words::Hashed => self.new.key_json(*j),
                kind => kind.json(self.new.words[*p][*k as usize]),
            })
            .collect()
    }

    /// The rows only in the new run, by group id ([`NONE`]: no group).
    fn only_new_by_group(&self, joined: &Joined) -> HashMap<u32, u64> {
        let mut by = HashMap::new();
        for (j, _, _) in self.only_new(joined) {
            let g = if self.new_has.0 {
                self.new.group[j as usize]
            } else {
                NONE
            };
            *by.entry(g).or_insert(0) += 1;
        }
        by
    }
}

/// Per base row, in the base run's order: its partner in the new run ([`NONE`] when only
/// in the base run), its index in its partition (integer keys: its key word's place), and
/// its partner's scores, group and cluster (the last two where the base run lacks them).
struct InBaseOrder {
    partner: Vec<u32>,
    index: Vec<u32>,
    values: Vec<Packed>,
    group: Vec<u32>,
    cluster: Vec<u32>,
}

/// One stretch of [`InBaseOrder`], written by one thread.
struct Stretch<'a> {
    start: usize,
    partner: &'a mut [u32],
    index: Option<&'a mut [u32]>,
    units: Vec<Option<&'a mut [i8]>>,
    floats: Vec<Option<&'a mut [f64]>>,
    group: Option<&'a mut [u32]>,
    cluster: Option<&'a mut [u32]>,
}

/// `v` cut into stretches of `len` (the last shorter), or `n` Nones when empty.
fn cut<T>(v: &mut [T], len: usize, n: usize) -> Vec<Option<&mut [T]>> {
    if v.is_empty() {
        return (0..n).map(|_| None).collect();
    }
    v.chunks_mut(len).map(Some).collect()
}

/// Gathers [`InBaseOrder`] with `threads` threads, each over one stretch of base rows,
/// from the per partition `partner`s: each stretch starts every partition where the
/// stretches before it left it.
fn in_base_order(
    s: &Sides,
    partner: &[Vec<u32>],
    (group, cluster): (bool, bool),
    threads: usize,
) -> InBaseOrder {
    let (base, new) = (&s.base, &s.new);
    let rows = base.rows;
    let len = rows.div_ceil(threads.max(1)).max(1);
    let n = rows.div_ceil(len);
    let parts = partner.len();
    // Where each stretch starts in each partition.
    let mut starts = Vec::with_capacity(n);
    let mut at = vec![0usize; parts];
    for stretch in base.part_of.chunks(len) {
        starts.push(at.clone());
        for p in stretch {
            at[*p as usize] += 1;
        }
    }
    let mut out = InBaseOrder {
        partner: vec![NONE; rows],
        index: vec![0; if s.kind == Words::Hashed { 0 } else { rows }],
        values: new
            .values
            .iter()
            .map(|v| match v {
                Packed::Units(_) => Packed::Units(vec![0; rows]),
                Packed::Floats(_) => Packed::Floats(vec![0.0; rows]),
            })
            .collect(),
        group: vec![0; if group { rows } else { 0 }],
        cluster: vec![0; if cluster { rows } else { 0 }],
    };
    let mut units: Vec<Vec<Option<&mut [i8]>>> = Vec::new();
    let mut floats: Vec<Vec<Option<&mut [f64]>>> = Vec::new();
    for v in out.values.iter_mut() {
        match v {
            Packed::Units(u) => {
                units.push(cut(u, len, n));
                floats.push(cut(&mut [], len, n));
            }
            Packed::Floats(f) => {
                units.push(cut(&mut [], len, n));
                floats.push(cut(f, len, n));
            }
        }
    }
    let mut index = cut(&mut out.index, len, n).into_iter();
    let mut groups = cut(&mut out.group, len, n).into_iter();
    let mut clusters = cut(&mut out.cluster, len, n).into_iter();
    let mut stretches: Vec<Stretch<'_>> = Vec::with_capacity(n);
    for (t, p) in out.partner.chunks_mut(len).enumerate() {
        stretches.push(Stretch {
            start: t * len,
            partner: p,
            index: index.next().flatten(),
            units: units.iter_mut().map(|c| c[t].take()).collect(),
            floats: floats.iter_mut().map(|c| c[t].take()).collect(),
            group: groups.next().flatten(),
            cluster: clusters.next().flatten(),
        });
    }
    let work = |mut st: Stretch<'_>, mut next: Vec<usize>| {
        for r in 0..st.partner.len() {
            let p = base.part_of[st.start + r] as usize;
            let k = next[p];
            next[p] += 1;
            let j = partner[p][k];
            st.partner[r] = j;
            if let Some(index) = &mut st.index {
                index[r] = k as u32;
            }
            if j == NONE {
                continue;
            }
            let j = j as usize;
            for (c, v) in new.values.iter().enumerate() {
                match v {
                    Packed::Units(v) => {
                        if let Some(u) = &mut st.units[c] {
                            u[r] = v[j];
                        }
                    }
                    Packed::Floats(v) => {
                        if let Some(f) = &mut st.floats[c] {
                            f[r] = v[j];
                        }
                    }
                }
            }
            if let Some(g) = &mut st.group {
                g[r] = new.group[j];
            }
            if let Some(c) = &mut st.cluster {
                c[r] = new.cluster[j];
            }
        }
    };
    std::thread::scope(|scope| {
        let mut all = stretches.into_iter().zip(starts);
        let first = all.next();
        for (st, next) in all {
            scope.spawn(move || work(st, next));
        }
        if let Some((st, next)) = first {
            work(st, next);
        }
    });
    out
}

/// The statistics of the joined runs, and the first keys only in the new run.
pub(crate) fn tally(
    o: &CompareOptions,
    names: &[String],
    mut s: Sides,
    mut joined: Joined,
    dict: &Dict,
    threads: usize,
) -> Result<(Tallied, Vec<Value>), Stop> {
    let groups = s.groups(o, &joined, dict);
    let only_new_by_group = s.only_new_by_group(&joined);
    let only_new_keys = s.only_new_keys(&joined);
    // What the rest no longer needs goes before the rows are gathered in the base order.
    s.new.words = Vec::new();
    s.new.row = Vec::new();
    s.new.keys = Vec::new();
    joined.only_new = Vec::new();
    let clustered = o.cluster.is_some();
    let a = in_base_order(&s, &joined.partner, s.from_new, threads);
    drop(joined);
    let base = &s.base;
    let slot_of: Vec<Option<usize>> = (0..dict.values.len() as u32)
        .map(|g| groups.slot(g))
        .collect();
    let width = names.len();
    let mut first = FirstPass::new(width, groups.len());
    let mut diffs = Diffs::new(KEPT_IN_MEMORY);
    let mut pairs: Vec<u32> = Vec::with_capacity(BLOCK);
    let key = |i: u32| match s.kind {
        Words::Hashed => base.key_json(i),
        kind => {
            let i = i as usize;
            kind.json(base.words[base.part_of[i] as usize][a.index[i] as usize])
        }
    };
    // A pair's group or cluster: the base run's, else the new run's.
    let label = |in_base: bool, b: &[u32], n: &[u32], pairs: &[u32]| -> Vec<u32> {
        let from = if in_base { b } else { n };
        if from.is_empty() {
            return vec![NONE; pairs.len()];
        }
        pairs.iter().map(|i| from[*i as usize]).collect()
    };
    for start in (0..base.rows).step_by(BLOCK) {
        pairs.clear();
        for i in start..(start + BLOCK).min(base.rows) {
            if a.partner[i] != NONE {
                pairs.push(i as u32);
                continue;
            }
            let g = if s.base_has.0 { base.group[i] } else { NONE };
            let (at, n_at) = groups.slots(g);
            first.only_base(&at[..n_at], || key(i as u32));
        }
        let len = pairs.len();
        let mut block = Block::default();
        if o.group_by.is_some() {
            block.group = label(s.base_has.0, &base.group, &a.group, &pairs);
        }
        if clustered {
            block.cluster = label(s.base_has.1, &base.cluster, &a.cluster, &pairs);
            if block.cluster.contains(&NONE) {
                return Err(Stop::HandOver);
            }
        }
        let slot: Vec<Option<usize>> = block
            .group
            .iter()
            .map(|g| slot_of.get(*g as usize).copied().flatten())
            .collect();
        let pi = &pairs;
        let key = |k: usize| key(pi[k]);
        for col in 0..width {
            let at = (len, slot.as_slice(), &key);
            let row = |k: usize| pi[k] as usize;
            let d = match (&base.values[col], &a.values[col]) {
                (Packed::Units(x), Packed::Units(y)) => column(
                    &mut first,
                    col,
                    at,
                    |k| Packed::unit(x[row(k)]),
                    |k| Packed::unit(y[row(k)]),
                ),
                (Packed::Units(x), Packed::Floats(y)) => column(
                    &mut first,
                    col,
                    at,
                    |k| Packed::unit(x[row(k)]),
                    |k| y[row(k)],
                ),
                (Packed::Floats(x), Packed::Units(y)) => column(
                    &mut first,
                    col,
                    at,
                    |k| x[row(k)],
                    |k| Packed::unit(y[row(k)]),
                ),
                (Packed::Floats(x), Packed::Floats(y)) => {
                    column(&mut first, col, at, |k| x[row(k)], |k| y[row(k)])
                }
            };
            block.d.push(Packed::pack(d));
        }
        diffs.push(block).map_err(Error::from)?;
    }
    let mut second = first.finish(names, clustered).map_err(Error::from)?;
    second_pass(&mut diffs, &mut second, &groups, clustered).map_err(Error::from)?;
    let tallied = second
        .finish(names, &groups, &only_new_by_group, clustered, o.confidence)
        .map_err(Error::from)?;
    Ok((tallied, only_new_keys))
}
