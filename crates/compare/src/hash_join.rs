//! Pairing two runs' rows by key in memory, for runs whose rows are not in the same order
//! (shuffled, filtered, grown) and that fit [`MEMORY_BUDGET`]. The partitioned join
//! ([`crate::join`]) writes every row to disk and reads it back twice; here both runs are
//! decoded in parallel, only the key, compared score, group and cluster columns, and each
//! row's key word goes into one of up to 256 partitions by a hash of its key. A single
//! integer key column is its own word (two rows have one word only when they have one key),
//! so it is never hashed to bytes; other keys are a 64-bit hash, checked against the key
//! columns wherever two words are equal. A partition's words and hash table fit in a core's
//! cache, where one table over every row would miss it at every probe; partitions are joined
//! in parallel, one thread per core. The statistics then walk the base run in its row order
//! ([`crate::hash_pairs`]), so every figure is the same sum, in the same order, the
//! partitioned join's tally makes.
//!
//! Whatever this path cannot settle it leaves to the partitioned join, which then runs from
//! the start and decides: key columns of other types or of different kinds in the two runs,
//! a null key, a repeated key, an infinite score, a null cluster, a read error, or runs
//! beyond the budget (checked from the footers' row counts before any row is read, against
//! the bytes held as the rows arrive, scaled to all the rows, and once they are read).

use crate::aligned::{columns, decode, interleaved, threads, wanted};
use crate::comparison::CompareOptions;
use crate::opened::Pair;
use crate::packed::Packed;
use crate::runs::{Dict, Run};
use crate::spill::NONE;
use crate::tally::Tallied;
use crate::typed_rows::{mix, Chunk, KeyCol, KeyKind, Labels, Wanted};
use evalscore_error::Error;
use evalscore_reader::scan_ordered;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicUsize, Ordering as Atomic};

/// Bytes the join's own arrays may hold at once ([`peak`]): per base row its key word (8),
/// its partition (1) and its partner (4); per new row its key word and row number (12) and
/// 4 for a row only in the new run; per run and row its compared scores (1 byte each for
/// whole numbers from -127 to 127, else 8), 4 per group or cluster column, and for keys
/// that are not one integer column, the key columns and 4 more per row; then, while the
/// partners are gathered in the base run's order, 8 to 12 bytes per base row and its
/// partner's scores. Two runs of 10M rows with one 0/1 score and integer keys hold 310 MB
/// at most, with a float score 450 MB. Beyond the budget the partitioned join spills to
/// disk instead. Besides it: the units being decoded, at most
/// [`crate::aligned::KEPT_IN_MEMORY`] of differences, and a table of the partition being
/// joined per thread.
pub(crate) const MEMORY_BUDGET: usize = 512 << 20;

/// Rows of both runs per partition aimed at: a partition's words and its table then stay
/// in a core's cache while it is joined.
pub(crate) const TABLE_ROWS: u64 = 1 << 15;

/// At most 2^8 partitions: a base row's partition is kept in a byte.
const MAX_BITS: u32 = 8;

/// Why the hash join stopped: the partitioned join takes over, or a real error.
pub(crate) enum Stop {
    HandOver,
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Failed(e)
    }
}

/// What a row's key word is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Words {
    /// The value of the one signed integer key column, as 64 bits.
    Signed,
    /// The value of the one unsigned integer key column.
    Unsigned,
    /// A 64-bit hash of the key columns: equal words are checked against the keys.
    Hashed,
}

impl Words {
    fn of(w: &Wanted) -> Words {
        match w.key.as_slice() {
            [(_, KeyKind::Signed)] => Words::Signed,
            [(_, KeyKind::Unsigned)] => Words::Unsigned,
            _ => Words::Hashed,
        }
    }

    /// The bits a word is placed by: a hash is already spread, an integer is mixed.
    #[inline]
    fn spread(self, word: u64) -> u64 {
        match self {
            Words::Hashed => word,
            _ => mix(word),
        }
    }

    /// A word as compare.json writes its key (integer keys only).
    pub fn json(self, word: u64) -> serde_json::Value {
        match self {
            Words::Signed => serde_json::Value::from(word as i64),
            _ => serde_json::Value::from(word),
        }
    }
}

/// One run as the join holds it.
#[derive(Debug, Default)]
pub(crate) struct Side {
    pub rows: usize,
    /// Per partition, its rows' key words, in row order.
    pub words: Vec<Vec<u64>>,
    /// Per partition, its rows' numbers, in row order (the new run; the base run with
    /// hashed keys, to check equal words against the keys).
    pub row: Vec<Vec<u32>>,
    /// Each row's partition (the base run).
    pub part_of: Vec<u8>,
    /// Per compared column, each row's value (NaN for null).
    pub values: Vec<Packed>,
    /// Each row's group id and cluster id ([`NONE`] for null); empty without the column.
    pub group: Vec<u32>,
    pub cluster: Vec<u32>,
    /// With hashed keys, every row's key columns.
    pub keys: Vec<KeyCol>,
    /// The bytes of all the above.
    pub bytes: usize,
}

impl Side {
    fn new(parts: usize, rows: u64, width: usize, keep_rows: bool) -> Side {
        // Room for a partition's expected rows and six standard deviations more: filled
        // without growing, and pages never written are never resident.
        let mean = rows as f64 / parts as f64;
        let room = (mean + 6.0 * mean.sqrt()) as usize + 64;
        Side {
            words: (0..parts).map(|_| Vec::with_capacity(room)).collect(),
            row: (0..parts)
                .map(|_| Vec::with_capacity(if keep_rows { room } else { 0 }))
                .collect(),
            values: (0..width).map(|_| Packed::Units(Vec::new())).collect(),
            ..Side::default()
        }
    }

    /// Whether the key columns of row `i` and of `other`'s row `j` hold one key.
    pub fn same_key(&self, i: u32, other: &Side, j: u32) -> bool {
        self.keys
            .iter()
            .zip(&other.keys)
            .all(|(a, b)| a.cmp(i as usize, b, j as usize) == Ordering::Equal)
    }

    /// Row `i`'s key as compare.json writes it (hashed keys only).
    pub fn key_json(&self, i: u32) -> serde_json::Value {
        match self.keys.as_slice() {
            [one] => one.json(i as usize),
            keys => serde_json::Value::Array(keys.iter().map(|k| k.json(i as usize)).collect()),
        }
    }
}

/// One decoded unit, its rows placed in partitions by the worker that decoded it.
struct Split {
    is_base: bool,
    chunk: Chunk,
    /// The unit's key words and row numbers (within the unit), partition by partition,
    /// each partition's in row order; partition p's end at `ends[p]`.
    words: Vec<u64>,
    row: Vec<u32>,
    ends: Vec<usize>,
    /// Each row's partition.
    part: Vec<u8>,
}

/// Places `chunk`'s rows in `2^bits` partitions.
fn split(is_base: bool, mut chunk: Chunk, bits: u32, kind: Words) -> Split {
    let n = chunk.rows;
    let word: Vec<u64> = match (kind, chunk.keys.as_slice()) {
        (Words::Signed, [KeyCol::Signed(v)]) => v.iter().map(|x| *x as u64).collect(),
        (Words::Unsigned, [KeyCol::Unsigned(v)]) => v.clone(),
        _ => (0..n).map(|i| chunk.key_hash(i)).collect(),
    };
    if kind != Words::Hashed {
        chunk.keys.clear();
    }
    let part: Vec<u8> = if bits == 0 {
        vec![0; n]
    } else {
        word.iter()
            .map(|w| (kind.spread(*w) >> (64 - bits)) as u8)
            .collect()
    };
    let mut ends = vec![0usize; 1 << bits];
    for p in &part {
        ends[*p as usize] += 1;
    }
    let mut next = Vec::with_capacity(ends.len());
    let mut sum = 0;
    for e in ends.iter_mut() {
        next.push(sum);
        sum += *e;
        *e = sum;
    }
    let mut words = vec![0u64; n];
    let mut row = vec![0u32; n];
    for (i, (w, p)) in word.iter().zip(&part).enumerate() {
        let at = &mut next[*p as usize];
        words[*at] = *w;
        row[*at] = i as u32;
        *at += 1;
    }
    Split {
        is_base,
        chunk,
        words,
        row,
        ends,
        part,
    }
}

/// The global ids of a unit's labels, per row.
fn label_ids(labels: &Labels, dict: &mut Dict) -> Vec<u32> {
    let ids: Vec<u32> = labels.texts.iter().map(|t| dict.id(t)).collect();
    labels
        .ids
        .iter()
        .map(|l| if *l == NONE { NONE } else { ids[*l as usize] })
        .collect()
}

/// The decoded units' sink: both runs filled in row order, within the budget.
struct Fill {
    base: Side,
    new: Side,
    dict: Dict,
    kind: Words,
    budget: usize,
    /// Bytes the join's results will take (partners, rows only in the new run).
    reserved: usize,
    /// The rows of each run (the footers').
    totals: (usize, usize),
}

impl Fill {
    fn add(&mut self, s: Split) -> Result<(), Stop> {
        let Split {
            is_base,
            chunk,
            words,
            row,
            ends,
            part,
        } = s;
        let keep_rows = !is_base || self.kind == Words::Hashed;
        let side = if is_base {
            &mut self.base
        } else {
            &mut self.new
        };
        let offset = u32::try_from(side.rows).map_err(|_| Stop::HandOver)?;
        let mut start = 0;
        for (p, end) in ends.iter().enumerate() {
            side.words[p].extend_from_slice(&words[start..*end]);
            if keep_rows {
                side.row[p].extend(row[start..*end].iter().map(|r| r + offset));
            }
            start = *end;
        }
        side.bytes += words.len() * if keep_rows { 12 } else { 8 };
        if is_base {
            side.part_of.extend_from_slice(&part);
            side.bytes += part.len();
        }
        for (all, unit) in side.values.iter_mut().zip(&chunk.values) {
            side.bytes -= all.bytes();
            all.append(unit);
            side.bytes += all.bytes();
        }
        for (all, labels) in [
            (&mut side.group, &chunk.group),
            (&mut side.cluster, &chunk.cluster),
        ] {
            if let Some(l) = labels {
                all.extend(label_ids(l, &mut self.dict));
                side.bytes += l.ids.len() * 4;
            }
        }
        if side.keys.is_empty() {
            side.keys = chunk.keys.iter().map(KeyCol::empty_like).collect();
        }
        for (all, unit) in side.keys.iter_mut().zip(&chunk.keys) {
            side.bytes -= all.bytes();
            if !all.append(unit) {
                return Err(Stop::HandOver);
            }
            side.bytes += all.bytes();
        }
        side.rows += chunk.rows;
        // Each run's bytes so far, scaled to all its rows: keys of text and scores that
        // are not whole numbers over the budget are found in the first units, not the last.
        let whole = |s: &Side, total: usize| {
            let scaled = s.bytes as u128 * total as u128 / s.rows.max(1) as u128;
            scaled.max(s.bytes as u128)
        };
        let (b, n) = self.totals;
        if whole(&self.base, b) + whole(&self.new, n) + self.reserved as u128 > self.budget as u128
        {
            return Err(Stop::HandOver);
        }
        Ok(())
    }
}

/// The most bytes the join holds at once ([`MEMORY_BUDGET`]), for runs of `b` and `n` rows
/// that hold `held` bytes once read. While partitions are joined: those, and 4 per base row
/// (its partner) and per new row (room for a row only in the new run). While the partners
/// are gathered in the base run's order ([`crate::hash_pairs`]): those less `freed` (the new
/// run's key words, row numbers and keys), the partners, and per base row its partner, its
/// place in its partition (integer keys) and `gathered` bytes of its partner's values.
fn peak(b: u64, n: u64, held: u64, freed: u64, gathered: u64, kind: Words) -> u64 {
    let joining = held + 4 * (b + n);
    let index = if kind == Words::Hashed { 0 } else { 4 };
    let gathering = held.saturating_sub(freed) + b * (4 + 4 + index + gathered);
    joining.max(gathering)
}

/// [`peak`] at its least, before a row is read: one byte per score, 4 per key of text.
fn least_bytes(b: u64, n: u64, width: u64, labels: [u64; 3], kind: Words) -> u64 {
    let [base_labels, new_labels, from_new] = labels;
    let key = if kind == Words::Hashed { 4 } else { 0 };
    let held =
        b * (8 + 1 + width + 4 * base_labels + 2 * key) + n * (12 + width + 4 * new_labels + key);
    let freed = n * (12 + key);
    peak(b, n, held, freed, width + 4 * from_new, kind)
}

/// The outcome of the join: per partition, each base row's partner (the new row, or
/// [`NONE`]), and the new run's rows without a partner (their index in the partition).
#[derive(Debug)]
pub(crate) struct Joined {
    pub partner: Vec<Vec<u32>>,
    pub only_new: Vec<Vec<u32>>,
}

/// Joins partition `p`; `None` at a repeated key.
fn join_part(base: &Side, new: &Side, p: usize, kind: Words) -> Option<(Vec<u32>, Vec<u32>)> {
    let (bw, nw) = (&base.words[p], &new.words[p]);
    let (nb, nn) = (bw.len(), nw.len());
    let hashed = kind == Words::Hashed;
    let (br, nr) = (&base.row[p], &new.row[p]);
    let cap = (nb + nn + (nb + nn) / 2).next_power_of_two().max(16);
    let mask = cap - 1;
    // 0: empty; 1..=nb: base row k + 1; beyond: new row nb + k + 1.
    let mut slots = vec![0u32; cap];
    for (k, w) in bw.iter().enumerate() {
        let mut at = kind.spread(*w) as usize & mask;
        loop {
            let s = slots[at] as usize;
            if s == 0 {
                slots[at] = k as u32 + 1;
                break;
            }
            if bw[s - 1] == *w && (!hashed || base.same_key(br[s - 1], base, br[k])) {
                return None;
            }
            at = (at + 1) & mask;
        }
    }
    let mut partner = vec![NONE; nb];
    let mut only_new = Vec::new();
    for (k, w) in nw.iter().enumerate() {
        let mut at = kind.spread(*w) as usize & mask;
        loop {
            let s = slots[at] as usize;
            if s == 0 {
                slots[at] = (nb + k + 1) as u32;
                only_new.push(k as u32);
                break;
            }
            if s <= nb {
                let b = s - 1;
                if bw[b] == *w && (!hashed || base.same_key(br[b], new, nr[k])) {
                    if partner[b] != NONE {
                        return None;
                    }
                    partner[b] = nr[k];
                    break;
                }
            } else {
                let m = s - 1 - nb;
                if nw[m] == *w && (!hashed || new.same_key(nr[m], new, nr[k])) {
                    return None;
                }
            }
            at = (at + 1) & mask;
        }
    }
    Some((partner, only_new))
}

/// Joins every partition, `threads` at a time; `None` at a repeated key.
fn join(base: &Side, new: &Side, kind: Words, threads: usize) -> Option<Joined> {
    let parts = base.words.len();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let p = next.fetch_add(1, Atomic::Relaxed);
            if p >= parts {
                return Some(done);
            }
            done.push((p, join_part(base, new, p, kind)?));
        }
    };
    let results: Vec<Option<Vec<_>>> = std::thread::scope(|s| {
        let workers: Vec<_> = (1..threads.clamp(1, parts))
            .map(|_| s.spawn(work))
            .collect();
        let mut all = vec![work()];
        all.extend(workers.into_iter().map(|w| w.join().ok().flatten()));
        all
    });
    let mut out = Joined {
        partner: vec![Vec::new(); parts],
        only_new: vec![Vec::new(); parts],
    };
    for done in results {
        for (p, (partner, only_new)) in done? {
            out.partner[p] = partner;
            out.only_new[p] = only_new;
        }
    }
    Some(out)
}

/// The two runs as the join holds them, and which of them has a group and a cluster column.
#[derive(Debug)]
pub(crate) struct Sides {
    pub base: Side,
    pub new: Side,
    pub base_has: (bool, bool),
    pub new_has: (bool, bool),
    /// Whether a pair's group and its cluster are the new run's ([`crate::hash_join`]).
    pub from_new: (bool, bool),
    pub kind: Words,
}

/// What tallies the joined runs (`hash_pairs::tally`), handed in by the caller: the join
/// knows nothing of the statistics.
pub(crate) type Tally = fn(
    &CompareOptions,
    &[String],
    Sides,
    Joined,
    &Dict,
    usize,
) -> Result<(Tallied, Vec<serde_json::Value>), Stop>;

/// The comparison by the hash join: the tallies, the first keys only in the new run, and
/// the rows of each run.
#[derive(Debug)]
pub(crate) struct Hashed {
    pub tallied: Tallied,
    pub only_new_keys: Vec<serde_json::Value>,
    pub rows: (u64, u64),
}

/// Compares the runs of `pair` in memory if they fit `budget` bytes ([`MEMORY_BUDGET`]),
/// in partitions of about `partition_rows` rows of both runs ([`TABLE_ROWS`]); `None`
/// hands over to the partitioned join.
pub(crate) fn compare(
    o: &CompareOptions,
    pair: &Pair,
    names: &[String],
    budget: usize,
    partition_rows: u64,
    tally: Tally,
) -> Result<Option<Hashed>, Error> {
    let Some((bw, nw)) = wanted(o, pair) else {
        return Ok(None);
    };
    let (b, n) = (pair.base.rows(), pair.new.rows());
    let kind = Words::of(&bw);
    let labels = |r: &Run| u64::from(r.group.is_some()) + u64::from(r.cluster.is_some());
    let from_new = from_new(o, pair);
    let least = least_bytes(
        b,
        n,
        names.len() as u64,
        [
            labels(&pair.base),
            labels(&pair.new),
            u64::from(from_new.0) + u64::from(from_new.1),
        ],
        kind,
    );
    if b + n >= u64::from(u32::MAX) || least > budget as u64 {
        return Ok(None);
    }
    match run(o, pair, names, (&bw, &nw), (budget, partition_rows), tally) {
        Ok(h) => Ok(Some(h)),
        Err(Stop::HandOver) => Ok(None),
        Err(Stop::Failed(e)) => Err(e),
    }
}

/// Whether a pair's group and its cluster are the new run's (the base run lacks the column).
fn from_new(o: &CompareOptions, pair: &Pair) -> (bool, bool) {
    let (base, new) = (&pair.base, &pair.new);
    (
        o.group_by.is_some() && base.group.is_none() && new.group.is_some(),
        o.cluster.is_some() && base.cluster.is_none() && new.cluster.is_some(),
    )
}

/// The hash join proper; [`Stop::HandOver`] wherever the partitioned join must decide.
fn run(
    o: &CompareOptions,
    pair: &Pair,
    names: &[String],
    (bw, nw): (&Wanted, &Wanted),
    (budget, partition_rows): (usize, u64),
    tally: Tally,
) -> Result<Hashed, Stop> {
    let (base, new) = (&pair.base, &pair.new);
    let (bcols, ncols) = (columns(base, bw), columns(new, nw));
    let kind = Words::of(bw);
    let (b, n) = (base.rows(), new.rows());
    let bits = (b + n)
        .div_ceil(partition_rows.max(1))
        .next_power_of_two()
        .trailing_zeros()
        .min(MAX_BITS);
    let parts = 1usize << bits;
    let width = names.len();
    let units = interleaved(base, new);
    let mut fill = Fill {
        base: Side::new(parts, b, width, kind == Words::Hashed),
        new: Side::new(parts, n, width, true),
        dict: Dict::default(),
        kind,
        budget,
        reserved: (b + n) as usize * 4,
        totals: (b as usize, n as usize),
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
            let chunk = chunk.ok_or(Stop::HandOver)?;
            if chunk.null_key || chunk.infinite {
                return Err(Stop::HandOver);
            }
            Ok(split(*is_base, chunk, bits, kind))
        },
        |s| fill.add(s),
    )?;
    if fill.base.rows as u64 != b || fill.new.rows as u64 != n {
        return Err(Stop::HandOver);
    }
    let Fill {
        base: bside,
        new: nside,
        dict,
        ..
    } = fill;
    let (group, cluster) = from_new(o, pair);
    let gathered = nside
        .values
        .iter()
        .map(|v| v.bytes() / n.max(1) as usize)
        .sum::<usize>()
        + 4 * (usize::from(group) + usize::from(cluster));
    let freed = nside.words.iter().map(Vec::len).sum::<usize>() * 12
        + nside.keys.iter().map(KeyCol::bytes).sum::<usize>();
    let held = (bside.bytes + nside.bytes) as u64;
    if peak(b, n, held, freed as u64, gathered as u64, kind) > budget as u64 {
        return Err(Stop::HandOver);
    }
    let joined = join(&bside, &nside, kind, threads()).ok_or(Stop::HandOver)?;
    let sides = Sides {
        base: bside,
        new: nside,
        base_has: (base.group.is_some(), base.cluster.is_some()),
        new_has: (new.group.is_some(), new.cluster.is_some()),
        from_new: (group, cluster),
        kind,
    };
    let (tallied, only_new_keys) = tally(o, names, sides, joined, &dict, threads())?;
    Ok(Hashed {
        tallied,
        only_new_keys,
        rows: (b, n),
    })
}

#[cfg(test)]
#[path = "hash_join_tests.rs"]
mod tests;
