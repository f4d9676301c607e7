//! Comparing two runs whose rows are in the same order, without a join. Two runs of one
//! export usually list their keys in the same order; then row i of the base run pairs with
//! row i of the new run, which is checked as the rows stream in (the key columns compared
//! chunk by chunk, in wide compares). Both runs' units are decoded in parallel, only the key,
//! compared score, group and cluster columns; the first pass of the statistics runs as the
//! pairs arrive, in the base run's order; the differences are kept (in memory, beyond a
//! budget in a temporary file) for the second pass.
//!
//! Whatever this path cannot settle, it leaves to the partitioned join, which then runs from
//! the start: keys that differ at some row, different row counts, key types other than
//! integers and text, a null key, an infinite score, a null cluster, a read error, or keys
//! that may repeat. Keys that rise strictly from row to row are unique; others are hashed
//! (read again, key columns only) and any repeated hash hands over. So every error is the
//! join's, and every figure the same sums in the same order the join's tally makes.

use crate::comparison::CompareOptions;
use crate::differences::{second_pass, Block, Diffs};
use crate::opened::Pair;
use crate::packed::Packed;
use crate::runs::{Dict, Run};
use crate::spill::NONE;
use crate::tally::{FirstPass, Groups, Tallied};
use crate::typed_rows::{Chunk, KeyKind, Wanted};
use evalscore_error::Error;
use evalscore_reader::{scan_ordered, Unit};
use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};

/// Bytes of differences (8 per compared column and pair, 4 more each for a group and a
/// cluster) kept in memory for the second pass; the rest go to a temporary file.
pub(crate) const KEPT_IN_MEMORY: usize = 32 << 20;

/// Hash buckets of the uniqueness check: each small enough to sort in cache.
const BUCKET_BITS: u32 = 10;

/// Why the aligned path stopped: the partitioned join takes over, or a real error.
enum Stop {
    HandOver,
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Failed(e)
    }
}

/// The comparison of two runs in the same row order: the tallies, and the rows of each.
#[derive(Debug)]
pub(crate) struct Aligned {
    pub tallied: Tallied,
    pub rows: u64,
}

/// What to read of each run; `None` when a key column's type is not one this path reads, or
/// the two runs' types of a key column differ in kind.
pub(crate) fn wanted(o: &CompareOptions, pair: &Pair) -> Option<(Wanted, Wanted)> {
    let (base, new) = (&pair.base, &pair.new);
    let mut key = Vec::new();
    for k in &o.key {
        let kind = |r: &Run| {
            r.inputs
                .schema
                .field_with_name(k)
                .ok()
                .and_then(|f| KeyKind::of(f.data_type()))
        };
        let (b, n) = (kind(base)?, kind(new)?);
        if b != n {
            return None;
        }
        key.push((k.clone(), b));
    }
    let side = |r: &Run, scores: Vec<String>| Wanted {
        key: key.clone(),
        scores,
        group: r.group.clone(),
        cluster: r.cluster.clone(),
    };
    Some((
        side(
            base,
            pair.common
                .iter()
                .map(|(b, _)| base.scores[*b].clone())
                .collect(),
        ),
        side(
            new,
            pair.common
                .iter()
                .map(|(_, n)| new.scores[*n].clone())
                .collect(),
        ),
    ))
}

/// The columns of `w` in `run`'s schema order, as the reader takes them.
pub(crate) fn columns(run: &Run, w: &Wanted) -> Vec<String> {
    let mut names: Vec<&String> = w.key.iter().map(|(k, _)| k).collect();
    names.extend(&w.scores);
    names.extend(w.group.iter().chain(&w.cluster));
    run.inputs
        .schema
        .fields()
        .iter()
        .map(|f| f.name())
        .filter(|n| names.contains(n))
        .cloned()
        .collect()
}

/// Decodes one unit of `run`; `None` on a read error or an unexpected batch (the
/// partitioned join reports what it finds).
pub(crate) fn decode(run: &Run, unit: &Unit, w: &Wanted, columns: &[String]) -> Option<Chunk> {
    let mut chunk = Chunk::new(w, unit.rows as usize);
    for batch in run.inputs.unit_batches(unit, columns).ok()? {
        chunk.extend(w, &batch.ok()?).ok()??;
        if chunk.null_key {
            break;
        }
    }
    Some(chunk)
}

pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Compares the runs of `pair` if their rows are in the same order; `None` hands over to
/// the partitioned join.
pub(crate) fn compare(
    o: &CompareOptions,
    pair: &Pair,
    names: &[String],
) -> Result<Option<Aligned>, Error> {
    compare_keeping(o, pair, names, KEPT_IN_MEMORY)
}

/// [`compare`], keeping `kept` bytes of differences in memory.
fn compare_keeping(
    o: &CompareOptions,
    pair: &Pair,
    names: &[String],
    kept: usize,
) -> Result<Option<Aligned>, Error> {
    let rows = pair.base.rows();
    if rows != pair.new.rows() {
        return Ok(None);
    }
    let Some((bw, nw)) = wanted(o, pair) else {
        return Ok(None);
    };
    match run(o, pair, names, (&bw, &nw), kept) {
        Ok(tallied) => Ok(Some(Aligned { tallied, rows })),
        Err(Stop::HandOver) => Ok(None),
        Err(Stop::Failed(e)) => Err(e),
    }
}

/// A decoded unit waiting in the sink, and how far it is consumed.
struct Pending {
    chunk: Chunk,
    at: usize,
    /// The global ids of its group and cluster texts.
    group_ids: Vec<u32>,
    cluster_ids: Vec<u32>,
}

impl Pending {
    fn new(chunk: Chunk, dict: &mut Dict) -> Pending {
        let ids = |l: &Option<crate::typed_rows::Labels>, dict: &mut Dict| {
            l.as_ref()
                .map(|l| l.texts.iter().map(|t| dict.id(t)).collect())
                .unwrap_or_default()
        };
        let group_ids = ids(&chunk.group, dict);
        let cluster_ids = ids(&chunk.cluster, dict);
        Pending {
            chunk,
            at: 0,
            group_ids,
            cluster_ids,
        }
    }

    fn left(&self) -> usize {
        self.chunk.rows - self.at
    }

    /// Row `i`'s global group (or cluster) id; [`NONE`] when null or without the column.
    fn label(labels: &Option<crate::typed_rows::Labels>, ids: &[u32], i: usize) -> u32 {
        match labels {
            Some(l) => match l.ids[i] {
                NONE => NONE,
                local => ids[local as usize],
            },
            None => NONE,
        }
    }
}

/// The streaming state: the units waiting on each side, the first pass, the differences.
struct Sink<'a> {
    o: &'a CompareOptions,
    base_has: (bool, bool),
    new_has: (bool, bool),
    width: usize,
    base: VecDeque<Pending>,
    new: VecDeque<Pending>,
    dict: Dict,
    first: FirstPass,
    slots: Slots,
    diffs: Diffs,
    /// Whether every base key so far is above the one before it.
    rising: bool,
    /// The last base key seen: its unit and row.
    last: Option<(Chunk, usize)>,
}

impl Sink<'_> {
    /// Pairs the rows both sides have decoded.
    fn drain(&mut self) -> Result<(), Stop> {
        while let (Some(b), Some(n)) = (self.base.front(), self.new.front()) {
            let len = b.left().min(n.left());
            if b.chunk.null_key || n.chunk.null_key || b.chunk.infinite || n.chunk.infinite {
                return Err(Stop::HandOver);
            }
            for (kb, kn) in b.chunk.keys.iter().zip(&n.chunk.keys) {
                if kb.first_difference(b.at, kn, n.at, len).is_some() {
                    return Err(Stop::HandOver);
                }
            }
            self.pairs(len)?;
            let b = self.base.front_mut().ok_or(Stop::HandOver)?;
            b.at += len;
            if b.left() == 0 {
                if let Some(done) = self.base.pop_front() {
                    if done.chunk.rows > 0 {
                        let row = done.chunk.rows - 1;
                        self.last = Some((done.chunk, row));
                    }
                }
            }
            let n = self.new.front_mut().ok_or(Stop::HandOver)?;
            n.at += len;
            if n.left() == 0 {
                self.new.pop_front();
            }
        }
        Ok(())
    }

    /// The first pass over the next `len` pairs of the two front units, and their block of
    /// differences.
    fn pairs(&mut self, len: usize) -> Result<(), Stop> {
        let Sink {
            o,
            base_has,
            new_has,
            width,
            base,
            new,
            first,
            slots,
            diffs,
            rising,
            last,
            ..
        } = self;
        let (Some(b), Some(n)) = (base.front(), new.front()) else {
            return Ok(());
        };
        let (bc, nc) = (&b.chunk, &n.chunk);
        let (i0, j0) = (b.at, n.at);
        if *rising {
            let before = match last {
                Some((c, r)) if i0 == 0 => Some((&*c, *r)),
                _ if i0 > 0 => Some((bc, i0 - 1)),
                _ => None,
            };
            if let Some((c, r)) = before {
                *rising = c.cmp_key(r, bc, i0) == Ordering::Less;
            }
            *rising = *rising && bc.rising(i0, len);
        }
        // The base run's group and cluster, else the new run's.
        let labels = |(in_base, in_new): (bool, bool), cluster: bool| -> Vec<u32> {
            let pick = |p: &Pending, at: usize, has: bool| -> Option<Vec<u32>> {
                let l = if cluster {
                    &p.chunk.cluster
                } else {
                    &p.chunk.group
                };
                let ids = if cluster {
                    &p.cluster_ids
                } else {
                    &p.group_ids
                };
                has.then(|| (0..len).map(|k| Pending::label(l, ids, at + k)).collect())
            };
            pick(b, i0, in_base)
                .or_else(|| pick(n, j0, in_new))
                .unwrap_or_else(|| vec![NONE; len])
        };
        let mut block = Block::default();
        if o.group_by.is_some() {
            block.group = labels((base_has.0, new_has.0), false);
        }
        if o.cluster.is_some() {
            block.cluster = labels((base_has.1, new_has.1), true);
            if block.cluster.contains(&NONE) {
                return Err(Stop::HandOver);
            }
        }
        let slot: Vec<Option<usize>> = block
            .group
            .iter()
            .map(|g| (*g != NONE).then(|| slots.of(*g, first)))
            .collect();
        for col in 0..*width {
            let key = |k: usize| bc.key_json(i0 + k);
            let d = match (&bc.values[col], &nc.values[col]) {
                (Packed::Units(x), Packed::Units(y)) => column(
                    first,
                    col,
                    (len, &slot, key),
                    |k| Packed::unit(x[i0 + k]),
                    |k| Packed::unit(y[j0 + k]),
                ),
                (Packed::Units(x), Packed::Floats(y)) => column(
                    first,
                    col,
                    (len, &slot, key),
                    |k| Packed::unit(x[i0 + k]),
                    |k| y[j0 + k],
                ),
                (Packed::Floats(x), Packed::Units(y)) => column(
                    first,
                    col,
                    (len, &slot, key),
                    |k| x[i0 + k],
                    |k| Packed::unit(y[j0 + k]),
                ),
                (Packed::Floats(x), Packed::Floats(y)) => {
                    column(first, col, (len, &slot, key), |k| x[i0 + k], |k| y[j0 + k])
                }
            };
            block.d.push(Packed::pack(d));
        }
        diffs.push(block).map_err(Error::from)?;
        Ok(())
    }
}

/// The first pass over column `col` of `len` pairs: base values `x(k)`, new values `y(k)`,
/// group slots `slot` (empty without groups), keys `key(k)`; their differences.
pub(crate) fn column(
    first: &mut FirstPass,
    col: usize,
    (len, slot, key): (usize, &[Option<usize>], impl Fn(usize) -> serde_json::Value),
    x: impl Fn(usize) -> f64,
    y: impl Fn(usize) -> f64,
) -> Vec<f64> {
    let mut d = Vec::with_capacity(len);
    if slot.is_empty() {
        first.column(col, len, |k| (x(k), y(k)), |_| None, key, |v| d.push(v));
    } else {
        first.column(col, len, |k| (x(k), y(k)), |k| slot[k], key, |v| d.push(v));
    }
    d
}

/// The first pass's slots of the groups, in order of first appearance.
#[derive(Default)]
struct Slots {
    /// Per group id, its slot ([`NONE`] before its first pair).
    of: Vec<u32>,
    /// Per slot after the overall one, its group id.
    group: Vec<u32>,
}

impl Slots {
    /// The slot of group id `g`, added to `first` at its first pair.
    fn of(&mut self, g: u32, first: &mut FirstPass) -> usize {
        let g = g as usize;
        if self.of.len() <= g {
            self.of.resize(g + 1, NONE);
        }
        if self.of[g] == NONE {
            first.add_slot();
            self.group.push(g as u32);
            self.of[g] = self.group.len() as u32;
        }
        self.of[g] as usize
    }
}

/// The aligned comparison proper; [`Stop::HandOver`] wherever the join must decide.
/// Both runs' units (`true` for the base run's) by their first row, the base run's first on a
/// tie, so that the two sides of every stretch of rows arrive close together and memory holds
/// a few of each at a time.
pub(crate) fn interleaved(base: &Run, new: &Run) -> Vec<(bool, Unit)> {
    let mut units: Vec<(bool, Unit)> = base
        .inputs
        .units()
        .into_iter()
        .map(|u| (true, u))
        .chain(new.inputs.units().into_iter().map(|u| (false, u)))
        .collect();
    units.sort_by_key(|(is_base, u)| (u.first_row, !*is_base));
    units
}

fn run(
    o: &CompareOptions,
    pair: &Pair,
    names: &[String],
    (bw, nw): (&Wanted, &Wanted),
    kept: usize,
) -> Result<Tallied, Stop> {
    let (base, new) = (&pair.base, &pair.new);
    let (bcols, ncols) = (columns(base, bw), columns(new, nw));
    let units = interleaved(base, new);
    let width = names.len();
    let mut sink = Sink {
        o,
        base_has: (base.group.is_some(), base.cluster.is_some()),
        new_has: (new.group.is_some(), new.cluster.is_some()),
        width,
        base: VecDeque::new(),
        new: VecDeque::new(),
        dict: Dict::default(),
        first: FirstPass::new(width, 1),
        slots: Slots::default(),
        diffs: Diffs::new(kept),
        rising: true,
        last: None,
    };
    scan_ordered(
        &units,
        threads(),
        |(is_base, unit)| {
            let chunk = if *is_base {
                decode(base, unit, bw, &bcols)
            } else {
                decode(new, unit, nw, &ncols)
            };
            chunk.map(|c| (*is_base, c)).ok_or(Stop::HandOver)
        },
        |(is_base, chunk)| {
            let p = Pending::new(chunk, &mut sink.dict);
            if is_base {
                sink.base.push_back(p);
            } else {
                sink.new.push_back(p);
            }
            sink.drain()
        },
    )?;
    if !sink.base.is_empty() || !sink.new.is_empty() {
        return Err(Stop::HandOver);
    }
    if !sink.rising && repeats(base, bw, &bcols)? {
        return Err(Stop::HandOver);
    }
    let Sink {
        mut first,
        slots,
        dict,
        mut diffs,
        ..
    } = sink;
    let groups = Groups::of(o.group_by.is_some(), slots.group.iter().copied(), &dict);
    let order: Vec<usize> = std::iter::once(0)
        .chain(slots.group.iter().map(|g| groups.slot(*g).unwrap_or(0)))
        .collect();
    first.reorder(&order);
    let mut second = first
        .finish(names, o.cluster.is_some())
        .map_err(Error::from)?;
    second_pass(&mut diffs, &mut second, &groups, o.cluster.is_some()).map_err(Error::from)?;
    Ok(second
        .finish(
            names,
            &groups,
            &HashMap::new(),
            o.cluster.is_some(),
            o.confidence,
        )
        .map_err(Error::from)?)
}

/// Whether some base key may repeat: the keys read again (key columns only), hashed into
/// buckets, each sorted. A repeated hash is either a repeated key or two keys with one
/// hash; either way the join decides.
fn repeats(base: &Run, w: &Wanted, columns: &[String]) -> Result<bool, Stop> {
    let keys_only = Wanted {
        key: w.key.clone(),
        scores: Vec::new(),
        group: None,
        cluster: None,
    };
    let key_columns: Vec<String> = columns
        .iter()
        .filter(|c| w.key.iter().any(|(k, _)| k == *c))
        .cloned()
        .collect();
    let units = base.inputs.units();
    // Room for the mean and an eighth more, so that buckets seldom grow.
    let room = (base.rows() >> BUCKET_BITS) as usize;
    let mut buckets: Vec<Vec<u64>> = (0..1 << BUCKET_BITS)
        .map(|_| Vec::with_capacity(room + room / 8 + 16))
        .collect();
    scan_ordered(
        &units,
        threads(),
        |unit| {
            let chunk = decode(base, unit, &keys_only, &key_columns).ok_or(Stop::HandOver)?;
            Ok::<_, Stop>(
                (0..chunk.rows)
                    .map(|i| chunk.key_hash(i))
                    .collect::<Vec<u64>>(),
            )
        },
        |hashes: Vec<u64>| {
            for h in hashes {
                buckets[(h >> (64 - BUCKET_BITS)) as usize].push(h);
            }
            Ok(())
        },
    )?;
    Ok(buckets.iter_mut().any(|b| {
        b.sort_unstable();
        b.windows(2).any(|w| w[0] == w[1])
    }))
}

#[cfg(test)]
#[path = "aligned_tests.rs"]
mod tests;
