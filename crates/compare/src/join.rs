//! Pairing two runs' rows by key, one partition at a time: equal keys fall in the same
//! partition of both runs ([`crate::runs::Layout`]), so each partition of the base run is
//! loaded alone, the new run's same partition streamed past it, and the pairs written out
//! in the base run's row order. [`PairReader`] then hands every base row back in file
//! order, merging the partitions, for the statistics.

use crate::comparison::KEYS_LISTED;
use crate::error::CompareError;
use crate::runs::Scanned;
use crate::spill::{Record, Records, SpillDir, Store, NONE, NO_ROW};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The rows of one partition, as [`crate::runs::Run::scan`] wrote them.
#[derive(Debug, Default)]
struct Rows {
    row: Vec<u64>,
    group: Vec<u32>,
    cluster: Vec<u32>,
    /// `width` values per row.
    values: Vec<f64>,
    width: usize,
    key_ends: Vec<usize>,
    keys: Vec<u8>,
}

impl Rows {
    fn load(store: &Store, width: usize) -> Result<Rows, CompareError> {
        let mut rows = Rows {
            width,
            ..Rows::default()
        };
        let mut r = store.reader()?;
        while let Some(row) = r.first_u64()? {
            rows.row.push(row);
            rows.group.push(r.u32()?);
            rows.cluster.push(r.u32()?);
            for _ in 0..width {
                rows.values.push(r.f64()?);
            }
            r.bytes(&mut rows.keys)?;
            rows.key_ends.push(rows.keys.len());
        }
        Ok(rows)
    }

    fn len(&self) -> usize {
        self.row.len()
    }

    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.key_ends[i - 1] };
        &self.keys[start..self.key_ends[i]]
    }

    fn value(&self, i: usize, col: usize) -> f64 {
        self.values[i * self.width + col]
    }
}

/// A run's first repeated key: the one whose second row comes first. (key, first row,
/// second row), rows counted from 0.
pub(crate) fn first_duplicate(
    run: &Scanned,
    width: usize,
) -> Result<Option<(Vec<u8>, u64, u64)>, CompareError> {
    let mut found: Option<(Vec<u8>, u64, u64)> = None;
    for store in &run.parts {
        let rows = Rows::load(store, width)?;
        let mut seen: HashMap<&[u8], u64> = HashMap::with_capacity(rows.len());
        for i in 0..rows.len() {
            let row = rows.row[i];
            if let Some(first) = seen.insert(rows.key(i), row) {
                if found.as_ref().is_none_or(|f| row < f.2) {
                    found = Some((rows.key(i).to_vec(), first, row));
                }
                break;
            }
        }
    }
    Ok(found)
}

/// What the join needs to know about the two runs' columns.
#[derive(Debug, Clone)]
pub(crate) struct Columns {
    /// Score columns of each run.
    pub base_width: usize,
    pub new_width: usize,
    /// The columns compared: (index among the base run's, among the new run's).
    pub common: Vec<(usize, usize)>,
    pub base_group: bool,
    pub new_group: bool,
    pub base_cluster: bool,
    pub new_cluster: bool,
}

/// The outcome of the join, besides the pairs.
#[derive(Debug)]
pub(crate) struct Joined {
    /// Per partition, one record per base row in file order: the new row ([`NO_ROW`] when
    /// only in base), the group and cluster ids, for a pair the (base, new) values of each
    /// common column, and the key.
    pub pairs: Vec<Store>,
    /// Rows only in the new run, by group id ([`NONE`]: no group).
    pub only_new: HashMap<u32, u64>,
    /// The first [`KEYS_LISTED`] rows only in the new run: their keys, by row.
    pub only_new_keys: BTreeMap<u64, Vec<u8>>,
    /// The group ids of every pair and every row in one run only.
    pub groups: HashSet<u32>,
    /// The first pair, in base order, without a cluster: (base row, new row).
    pub null_cluster: Option<(u64, u64)>,
}

/// Joins `base` and `new` partition by partition.
pub(crate) fn join(
    base: &Scanned,
    new: &Scanned,
    cols: &Columns,
    spill: &SpillDir,
) -> Result<Joined, CompareError> {
    let mut out = Joined {
        pairs: Vec::with_capacity(base.parts.len()),
        only_new: HashMap::new(),
        only_new_keys: BTreeMap::new(),
        groups: HashSet::new(),
        null_cluster: None,
    };
    let width = cols.common.len();
    let mut rec = Record::default();
    let mut key = Vec::new();
    let mut values = vec![0.0; cols.new_width];
    for (p, (bstore, nstore)) in base.parts.iter().zip(&new.parts).enumerate() {
        let rows = Rows::load(bstore, cols.base_width)?;
        let index: HashMap<&[u8], u32> = (0..rows.len()).map(|i| (rows.key(i), i as u32)).collect();
        // Per base row: its partner's index in `partners`, or NONE.
        let mut partner = vec![NONE; rows.len()];
        // (new row, group, cluster), and the new values of the common columns.
        let mut partners: Vec<(u64, u32, u32)> = Vec::new();
        let mut partner_values: Vec<f64> = Vec::new();
        let mut r = nstore.reader()?;
        while let Some(j) = r.first_u64()? {
            let (g, c) = (r.u32()?, r.u32()?);
            for v in values.iter_mut() {
                *v = r.f64()?;
            }
            key.clear();
            r.bytes(&mut key)?;
            match index.get(key.as_slice()) {
                Some(&i) => {
                    partner[i as usize] = partners.len() as u32;
                    partners.push((j, g, c));
                    partner_values.extend(cols.common.iter().map(|(_, n)| values[*n]));
                }
                None => {
                    let g = if cols.new_group { g } else { NONE };
                    *out.only_new.entry(g).or_insert(0) += 1;
                    out.groups.insert(g);
                    list_first(&mut out.only_new_keys, j, &key);
                }
            }
        }
        let mut pairs = spill.store(&format!("pairs-{p}"))?;
        for (i, k) in partner.iter().enumerate() {
            rec.clear();
            let (bg, bc) = (rows.group[i], rows.cluster[i]);
            match *k {
                NONE => {
                    rec.u64(NO_ROW);
                    let g = if cols.base_group { bg } else { NONE };
                    out.groups.insert(g);
                    rec.u32(g);
                    rec.u32(NONE);
                }
                k => {
                    let (j, ng, nc) = partners[k as usize];
                    // The base run's group and cluster, else the new run's.
                    let g = if cols.base_group { bg } else { ng };
                    let c = if cols.base_cluster { bc } else { nc };
                    out.groups.insert(g);
                    if c == NONE
                        && (cols.base_cluster || cols.new_cluster)
                        && out.null_cluster.is_none_or(|(b, _)| rows.row[i] < b)
                    {
                        out.null_cluster = Some((rows.row[i], j));
                    }
                    rec.u64(j);
                    rec.u32(g);
                    rec.u32(c);
                    let nv = &partner_values[k as usize * width..(k as usize + 1) * width];
                    for ((b, _), n) in cols.common.iter().zip(nv) {
                        rec.f64(rows.value(i, *b));
                        rec.f64(*n);
                    }
                }
            }
            rec.bytes(rows.key(i));
            pairs.write(&rec.0)?;
        }
        pairs.finish()?;
        out.pairs.push(pairs);
    }
    Ok(out)
}

/// Keeps the [`KEYS_LISTED`] smallest rows.
fn list_first(list: &mut BTreeMap<u64, Vec<u8>>, row: u64, key: &[u8]) {
    if list.len() == KEYS_LISTED {
        match list.last_key_value() {
            Some((last, _)) if *last > row => {
                list.pop_last();
            }
            _ => return,
        }
    }
    list.insert(row, key.to_vec());
}

/// One base row of the join, read back in file order.
#[derive(Debug, Default)]
pub(crate) struct Pair {
    /// The new run's row, or [`NO_ROW`].
    pub new_row: u64,
    pub group: u32,
    pub cluster: u32,
    /// (base, new) per common column; empty when only in base.
    pub values: Vec<(f64, f64)>,
    pub key: Vec<u8>,
}

/// Every base row's [`Pair`], in the base run's file order.
pub(crate) struct PairReader<'a> {
    readers: Vec<Records<'a>>,
    part_of: &'a [u8],
    next: usize,
    rows: usize,
    width: usize,
}

impl std::fmt::Debug for PairReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairReader")
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl<'a> PairReader<'a> {
    pub fn new(
        joined: &'a Joined,
        base: &'a Scanned,
        width: usize,
    ) -> Result<PairReader<'a>, CompareError> {
        Ok(PairReader {
            readers: joined
                .pairs
                .iter()
                .map(Store::reader)
                .collect::<Result<_, _>>()?,
            part_of: &base.part_of,
            next: 0,
            rows: base.rows as usize,
            width,
        })
    }

    /// Reads the next base row into `pair`; false after the last.
    pub fn next_into(&mut self, pair: &mut Pair) -> Result<bool, CompareError> {
        if self.next == self.rows {
            return Ok(false);
        }
        let p = self.part_of.get(self.next).map_or(0, |p| *p as usize);
        self.next += 1;
        let r = &mut self.readers[p];
        let Some(j) = r.first_u64()? else {
            return Err(CompareError::Internal(
                "a partition of the join ended early".to_owned(),
            ));
        };
        pair.new_row = j;
        pair.group = r.u32()?;
        pair.cluster = r.u32()?;
        pair.values.clear();
        if j != NO_ROW {
            for _ in 0..self.width {
                let b = r.f64()?;
                let n = r.f64()?;
                pair.values.push((b, n));
            }
        }
        pair.key.clear();
        r.bytes(&mut pair.key)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::compare::{compare_joined, CompareOptions, PARTITION_ROWS};
    use crate::runs::{self, Dict, Layout};
    use crate::stats;
    use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray};
    use arrow::record_batch::RecordBatch;
    use std::path::Path;
    use std::sync::Arc;

    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
    }

    /// One run's rows as the test made them.
    struct Made {
        ids: Vec<i64>,
        score: Vec<Option<f64>>,
    }

    fn write(dir: &Path, cols: Vec<(&str, ArrayRef)>) {
        std::fs::create_dir_all(dir).unwrap();
        let batch = RecordBatch::try_from_iter(cols).unwrap();
        let f = std::fs::File::create(dir.join("scores.parquet")).unwrap();
        // Small row groups: several units per run.
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(50))
            .build();
        let mut w = parquet::arrow::ArrowWriter::try_new(f, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    /// A run of `n` rows with ids `(i · step + shift) mod m` (distinct), a float score with
    /// nulls and NaNs, a 0/1 score with nulls, a group with nulls and a cluster; the base
    /// run also has a column the new run lacks, and the new run its columns in another order.
    fn make(dir: &Path, n: usize, step: i64, shift: i64, m: i64, seed: u64, base: bool) -> Made {
        let mut r = Lcg(seed);
        let ids: Vec<i64> = (0..n as i64).map(|i| (i * step + shift) % m).collect();
        let score: Vec<Option<f64>> = (0..n)
            .map(|_| match r.next() % 13 {
                0 => None,
                1 => Some(f64::NAN),
                k => Some((k % 5) as f64 / 4.0),
            })
            .collect();
        let correct: Vec<Option<bool>> = (0..n)
            .map(|_| match r.next() % 7 {
                0 => None,
                k => Some(k % 2 == 0),
            })
            .collect();
        let subjects = ["algebra", "biology", "chemistry", "Zoology"];
        let subject: Vec<Option<&str>> = (0..n)
            .map(|_| match r.next() % 9 {
                0 => None,
                k => Some(subjects[k as usize % 4]),
            })
            .collect();
        let passage: Vec<String> = (0..n).map(|_| format!("p{}", r.next() % 17)).collect();
        let id: ArrayRef = Arc::new(Int64Array::from(ids.clone()));
        let a: ArrayRef = Arc::new(Float64Array::from(score.clone()));
        let b: ArrayRef = Arc::new(BooleanArray::from(correct));
        let s: ArrayRef = Arc::new(StringArray::from(subject));
        let p: ArrayRef = Arc::new(StringArray::from(passage));
        let cols = if base {
            let only: ArrayRef = Arc::new(Float64Array::from(vec![1.0; n]));
            vec![
                ("id", id),
                ("a__score", a),
                ("b__is_correct", b),
                ("c__only_base", only),
                ("subject", s),
                ("passage", p),
            ]
        } else {
            vec![
                ("passage", p),
                ("b__is_correct", b),
                ("id", id),
                ("subject", s),
                ("a__score", a),
            ]
        };
        write(dir, cols);
        Made { ids, score }
    }

    /// The partitioned join, spilled in partitions of a few rows, pairs exactly the rows an
    /// in-memory join by key pairs, hands them back in the base run's order, and every
    /// figure of the comparison (sums in the same order) is the in-memory one, bit for bit.
    #[test]
    fn the_partitioned_join_matches_the_in_memory_join() {
        let tmp = tempfile::tempdir().unwrap();
        let (bdir, ndir) = (tmp.path().join("base"), tmp.path().join("new"));
        let base = make(&bdir, 200, 7919, 0, 211, 1, true);
        let new = make(&ndir, 190, 4001, 13, 223, 2, false);

        // The in-memory join: a map of the new run's keys.
        let by_id: HashMap<i64, usize> =
            new.ids.iter().enumerate().map(|(j, id)| (*id, j)).collect();
        let expected: Vec<Option<usize>> =
            base.ids.iter().map(|id| by_id.get(id).copied()).collect();
        assert!(expected.iter().filter(|e| e.is_some()).count() > 100);
        assert!(expected.iter().any(|e| e.is_none()));

        let key = vec!["id".to_owned()];
        let b = runs::open(&bdir, "base", &key, None, None).unwrap();
        let n = runs::open(&ndir, "new", &key, None, None).unwrap();
        let layout = Layout::new(200, 7).unwrap();
        assert_eq!(layout.partitions, 29);
        let mut dict = Dict::default();
        let bs = b.scan(&layout, &mut dict, true, "base").unwrap();
        let ns = n.scan(&layout, &mut dict, false, "new").unwrap();
        assert!(
            matches!(bs.parts[0], Store::File { .. }),
            "spilled to files"
        );
        assert_eq!(first_duplicate(&bs, b.scores.len()).unwrap(), None);
        let cols = Columns {
            base_width: 3,
            new_width: 2,
            // a__score is the base's 0 and the new's 1.
            common: vec![(0, 1), (1, 0)],
            base_group: false,
            new_group: false,
            base_cluster: false,
            new_cluster: false,
        };
        let joined = join(&bs, &ns, &cols, &layout.spill).unwrap();
        let mut reader = PairReader::new(&joined, &bs, 2).unwrap();
        let mut pair = Pair::default();
        let mut got = Vec::new();
        while reader.next_into(&mut pair).unwrap() {
            assert_eq!(
                crate::runs::key_json(&pair.key, &[true]),
                base.ids[got.len()]
            );
            got.push((pair.new_row != NO_ROW).then_some(pair.new_row as usize));
            if let Some(j) = got.last().copied().flatten() {
                let i = got.len() - 1;
                let (bv, nv) = pair.values[0];
                let want = |v: Option<f64>| v.unwrap_or(f64::NAN);
                assert_eq!(bv.to_bits(), want(base.score[i]).to_bits());
                assert_eq!(nv.to_bits(), want(new.score[j]).to_bits());
            }
        }
        assert_eq!(got, expected);
        let only_new: Vec<u64> = joined.only_new_keys.keys().copied().collect();
        let want_only_new: Vec<u64> = (0..new.ids.len() as u64)
            .filter(|j| !base.ids.contains(&new.ids[*j as usize]))
            .take(KEYS_LISTED)
            .collect();
        assert_eq!(only_new, want_only_new);

        // The whole comparison: in memory, and in partitions of 1, 7 and 64 rows.
        let mut o = CompareOptions::new(&bdir, &ndir);
        let (mut bv, mut nv) = (Vec::new(), Vec::new());
        for (i, j) in expected.iter().enumerate() {
            let (Some(j), Some(x)) = (j, base.score[i]) else {
                continue;
            };
            if let Some(y) = new.score[*j].filter(|y| !y.is_nan()) {
                if !x.is_nan() {
                    bv.push(x);
                    nv.push(y);
                }
            }
        }
        let want = stats::paired(&bv, &nv, None, 0.95, false);
        for (group_by, cluster) in [
            (None, None),
            (Some("subject"), None),
            (Some("subject"), Some("passage")),
        ] {
            o.group_by = group_by.map(str::to_owned);
            o.cluster = cluster.map(str::to_owned);
            let memory = compare_joined(&o, PARTITION_ROWS).unwrap();
            if cluster.is_none() {
                let a = &memory.rows[0];
                assert_eq!((a.column.as_str(), a.group.as_deref()), ("a__score", None));
                assert_eq!(
                    (a.n_pairs, a.base_mean, a.diff, a.diff_se, a.p_value),
                    (
                        want.n_pairs,
                        want.base_mean,
                        want.diff,
                        want.diff_se,
                        want.p_value
                    )
                );
            }
            let groups = if group_by.is_some() { 5 } else { 1 };
            assert_eq!(memory.rows.len(), 2 * groups);
            let json = serde_json::to_string(&memory.to_json()).unwrap();
            for rows in [1, 7, 64] {
                let spilled = compare_joined(&o, rows).unwrap();
                assert_eq!(
                    serde_json::to_string(&spilled.to_json()).unwrap(),
                    json,
                    "{rows}"
                );
            }
        }
    }
}
