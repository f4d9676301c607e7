//! The aligned path against the partitioned join: the same compare.json, byte for byte,
//! for runs in the same order (rising or not, integer, text and composite keys, groups,
//! clusters, nulls and NaNs, units of different sizes on the two sides, differences kept
//! in memory or in a file); and every case it cannot settle handed over to the join, whose
//! result or error stands.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::compare::{compare as compare_runs, compare_joined, open_pair, PARTITION_ROWS};
use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray, UInt32Array};
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

/// Writes `dir/scores.parquet` in row groups of `group_rows` rows.
fn write(dir: &Path, cols: Vec<(&str, ArrayRef)>, group_rows: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let f = std::fs::File::create(dir.join("scores.parquet")).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// How a run's keys look.
#[derive(Clone, Copy, Debug)]
enum Keys {
    /// 0, 1, 2, ...: rising.
    Rising,
    /// A fixed permutation of 0..n: not rising, the same in both runs.
    Shuffled,
    /// `item-N`: text, not rising.
    Text,
    /// (`part`, `n`): a composite key.
    Composite,
}

/// A run of `n` rows with the keys `keys`, scores drawn from `seed` (a float with nulls and
/// NaNs, a 0/1 boolean with nulls), a group with nulls and a cluster; `edit` changes the
/// columns before they are written.
fn run(
    dir: &Path,
    n: usize,
    keys: Keys,
    seed: u64,
    group_rows: usize,
    edit: impl FnOnce(&mut Vec<i64>, &mut Vec<Option<f64>>, &mut Vec<Option<&'static str>>),
) {
    let mut r = Lcg(seed);
    let mut ids: Vec<i64> = (0..n as i64).collect();
    if !matches!(keys, Keys::Rising) {
        // The same permutation whatever the seed.
        let mut p = Lcg(7);
        for i in (1..n).rev() {
            ids.swap(i, p.next() as usize % (i + 1));
        }
    }
    let mut score: Vec<Option<f64>> = (0..n)
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
    let mut subject: Vec<Option<&'static str>> = (0..n)
        .map(|i| match (i * 7 + 3) % 9 {
            0 => None,
            k => Some(subjects[k % 4]),
        })
        .collect();
    edit(&mut ids, &mut score, &mut subject);
    let passage: Vec<u32> = (0..n).map(|i| (i % 17) as u32).collect();
    let mut cols: Vec<(&str, ArrayRef)> = match keys {
        Keys::Text => vec![(
            "id",
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("item-{i}")),
            )),
        )],
        Keys::Composite => vec![
            (
                "part",
                Arc::new(StringArray::from_iter_values(
                    ids.iter().map(|i| format!("p{}", i % 3)),
                )),
            ),
            ("id", Arc::new(Int64Array::from(ids.clone()))),
        ],
        _ => vec![("id", Arc::new(Int64Array::from(ids.clone())))],
    };
    cols.extend([
        ("a__score", Arc::new(Float64Array::from(score)) as ArrayRef),
        ("b__is_correct", Arc::new(BooleanArray::from(correct))),
        ("subject", Arc::new(StringArray::from(subject))),
        ("passage", Arc::new(UInt32Array::from(passage))),
    ]);
    write(dir, cols, group_rows);
}

fn options(base: &Path, new: &Path, keys: Keys) -> CompareOptions {
    let mut o = CompareOptions::new(base, new);
    if matches!(keys, Keys::Composite) {
        o.key = vec!["part".to_owned(), "id".to_owned()];
    }
    o
}

/// The aligned path's comparison, if it settles it, with `kept` bytes in memory.
fn aligned(o: &CompareOptions, kept: usize) -> Option<String> {
    let pair = open_pair(o).unwrap();
    let names: Vec<String> = pair
        .common
        .iter()
        .map(|(b, _)| pair.base.scores[*b].clone())
        .collect();
    let a = compare_keeping(o, &pair, &names, kept).unwrap()?;
    let c = crate::compare::finish(o, a.tallied, Vec::new(), (a.rows, a.rows));
    Some(serde_json::to_string(&c.to_json()).unwrap())
}

fn joined(o: &CompareOptions) -> String {
    serde_json::to_string(&compare_joined(o, PARTITION_ROWS).unwrap().to_json()).unwrap()
}

const OPTIONS: [(Option<&str>, Option<&str>); 4] = [
    (None, None),
    (Some("subject"), None),
    (None, Some("passage")),
    (Some("subject"), Some("passage")),
];

#[test]
fn runs_in_the_same_order_compare_as_the_join_compares_them() {
    for keys in [Keys::Rising, Keys::Shuffled, Keys::Text, Keys::Composite] {
        let tmp = tempfile::tempdir().unwrap();
        let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
        // Units of 37 rows against 50: stretches cross the units of both sides.
        run(&b, 400, keys, 1, 37, |_, _, _| {});
        run(&n, 400, keys, 2, 50, |_, _, _| {});
        let mut o = options(&b, &n, keys);
        for (group_by, cluster) in OPTIONS {
            o.group_by = group_by.map(str::to_owned);
            o.cluster = cluster.map(str::to_owned);
            let want = joined(&o);
            assert!(want.contains("\"n_pairs\":"), "{want}");
            for kept in [KEPT_IN_MEMORY, 0, 3000] {
                assert_eq!(
                    aligned(&o, kept).as_deref(),
                    Some(want.as_str()),
                    "{keys:?} {group_by:?} {cluster:?} {kept}"
                );
            }
            assert_eq!(
                serde_json::to_string(&compare_runs(&o).unwrap().to_json()).unwrap(),
                want
            );
        }
    }
}

/// `base` then `new` with `edit` applied to the new run, compared both ways: the aligned
/// path hands over, and `compare` gives the join's outcome.
fn handed_over(
    keys: Keys,
    edit: impl FnOnce(&mut Vec<i64>, &mut Vec<Option<f64>>, &mut Vec<Option<&'static str>>),
    new_rows: usize,
    o: impl Fn(&mut CompareOptions),
) -> Result<String, String> {
    let tmp = tempfile::tempdir().unwrap();
    let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
    run(&b, 300, keys, 1, 64, |_, _, _| {});
    run(&n, new_rows, keys, 2, 64, edit);
    let mut opts = options(&b, &n, keys);
    o(&mut opts);
    if let Ok(pair) = open_pair(&opts) {
        let names: Vec<String> = pair
            .common
            .iter()
            .map(|(b, _)| pair.base.scores[*b].clone())
            .collect();
        assert!(compare_keeping(&opts, &pair, &names, KEPT_IN_MEMORY)
            .unwrap()
            .is_none());
    }
    let json = |c: crate::Comparison| serde_json::to_string(&c.to_json()).unwrap();
    let got = compare_runs(&opts).map(json).map_err(|e| e.message);
    let want = compare_joined(&opts, PARTITION_ROWS)
        .map(json)
        .map_err(|e| e.message);
    assert_eq!(got, want);
    got
}

#[test]
fn whatever_the_aligned_path_cannot_settle_the_join_does() {
    // A key that differs in the last unit, and rows only in one run.
    let got = handed_over(Keys::Rising, |ids, _, _| ids[290] = 10_000, 300, |_| {}).unwrap();
    assert!(got.contains("\"only_new_keys\":[10000]"), "{got}");
    handed_over(Keys::Text, |_, _, _| {}, 299, |_| {}).unwrap();
    // A repeated key, found by the hashes of keys that do not rise; an infinite score; a
    // null cluster on a pair.
    let repeated = |ids: &mut Vec<i64>, _: &mut Vec<Option<f64>>, _: &mut Vec<_>| {
        ids[200] = ids[3];
    };
    let e = handed_over(Keys::Shuffled, repeated, 300, |_| {}).unwrap_err();
    assert!(e.contains("the key `id` is not unique"), "{e}");
    // The same repeated key in both runs, so that every row pairs with its row.
    for keys in [Keys::Shuffled, Keys::Text, Keys::Rising] {
        let tmp = tempfile::tempdir().unwrap();
        let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
        run(&b, 300, keys, 1, 64, repeated);
        run(&n, 300, keys, 2, 64, repeated);
        let o = options(&b, &n, keys);
        assert_eq!(aligned(&o, KEPT_IN_MEMORY), None, "{keys:?}");
        let e = compare_runs(&o).unwrap_err().message;
        assert_eq!(e, compare_joined(&o, PARTITION_ROWS).unwrap_err().message);
        assert!(e.contains("is not unique"), "{e}");
    }
    let e = handed_over(
        Keys::Rising,
        |_, s, _| s[150] = Some(f64::INFINITY),
        300,
        |_| {},
    )
    .unwrap_err();
    assert!(
        e.ends_with("row 151: the score column `a__score` holds inf"),
        "{e}"
    );
    let e = handed_over(
        Keys::Rising,
        |_, _, _| {},
        300,
        |o| o.cluster = Some("subject".to_owned()),
    )
    .unwrap_err();
    assert!(e.ends_with(": the cluster column `subject` is null"), "{e}");
}

#[test]
fn keys_of_other_types_and_null_keys_are_left_to_the_join() {
    let tmp = tempfile::tempdir().unwrap();
    let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
    let ids = |dir: &Path, ids: ArrayRef| {
        let len = ids.len();
        write(
            dir,
            vec![
                ("id", ids),
                ("a__score", Arc::new(Float64Array::from(vec![0.5; len]))),
            ],
            64,
        )
    };
    let floats: Vec<f64> = (0..100).map(f64::from).collect();
    ids(&b, Arc::new(Float64Array::from(floats.clone())));
    ids(&n, Arc::new(Float64Array::from(floats)));
    let o = CompareOptions::new(&b, &n);
    assert_eq!(aligned(&o, KEPT_IN_MEMORY), None);
    assert_eq!(
        serde_json::to_string(&compare_runs(&o).unwrap().to_json()).unwrap(),
        joined(&o)
    );
    ids(&b, Arc::new(Int64Array::from_iter_values(0..100)));
    let with_null: Int64Array = (0..100).map(|i| (i != 40).then_some(i)).collect();
    ids(&n, Arc::new(with_null));
    let pair = open_pair(&o).unwrap();
    let names = vec!["a__score".to_owned()];
    assert!(compare_keeping(&o, &pair, &names, KEPT_IN_MEMORY)
        .unwrap()
        .is_none());
    let e = compare_runs(&o).unwrap_err().message;
    assert!(e.ends_with("row 41: the key column `id` is null"), "{e}");
}
