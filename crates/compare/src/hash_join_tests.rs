//! The hash join against the partitioned join: the same compare.json and compare.parquet,
//! byte for byte, for runs in different orders with rows only in one run, nulls and NaNs,
//! groups (in either run) and clusters, integer, unsigned, text and composite keys, in one
//! partition or many; every case it cannot settle (a repeated key, a null key, an infinite
//! score, a null cluster, runs beyond the memory budget) handed over to the join, whose
//! result or error stands.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::compare::{
    compare as compare_runs, compare_hashed, compare_joined, compare_within, PARTITION_ROWS,
};
use crate::{write, Comparison};
use arrow::array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, StringArray, UInt32Array,
    UInt64Array,
};
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

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.next() as usize % (i + 1));
        }
    }
}

/// How a run's keys are typed.
#[derive(Clone, Copy, Debug)]
enum Keys {
    /// `id` Int64.
    Signed,
    /// `id` UInt64.
    Unsigned,
    /// `id` Utf8, `item-N`.
    Text,
    /// (`part` Utf8, `id` Int64).
    Composite,
    /// `id` Int32 in the base run, Int64 in the new run.
    Widened,
}

/// What goes into a run besides its keys.
#[derive(Clone, Copy)]
struct Made {
    seed: u64,
    /// Whether the run has the `subject` group column.
    subject: bool,
    /// Whether the float score holds only whole numbers (kept in a byte each).
    whole: bool,
}

/// Writes `dir/scores.parquet` with the ids `ids`, in row groups of 100 rows: a float score
/// with nulls and NaNs, a 0/1 boolean with nulls, a group with nulls and a cluster.
fn write_run(dir: &Path, ids: &[i64], keys: Keys, is_base: bool, m: Made) {
    let mut r = Lcg(m.seed);
    let n = ids.len();
    let score: Vec<Option<f64>> = (0..n)
        .map(|_| match r.next() % 13 {
            0 => None,
            1 => Some(f64::NAN),
            k if m.whole => Some((k % 3) as f64),
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
    // Ids from 1200 on are the new run's own: some in a group of their own.
    let subject: Vec<Option<&str>> = ids
        .iter()
        .map(|i| match (i * 7 + 3) % 9 {
            _ if *i >= 1200 && i % 5 == 0 => Some("physics"),
            0 => None,
            k => Some(subjects[k as usize % 4]),
        })
        .collect();
    let passage: Vec<u32> = ids.iter().map(|i| (i % 17) as u32).collect();
    let mut cols: Vec<(&str, ArrayRef)> = match keys {
        Keys::Signed => vec![("id", Arc::new(Int64Array::from(ids.to_vec())))],
        Keys::Widened if is_base => vec![(
            "id",
            Arc::new(Int32Array::from_iter_values(ids.iter().map(|i| *i as i32))),
        )],
        Keys::Widened => vec![("id", Arc::new(Int64Array::from(ids.to_vec())))],
        Keys::Unsigned => vec![(
            "id",
            Arc::new(UInt64Array::from_iter_values(ids.iter().map(|i| *i as u64))),
        )],
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
            ("id", Arc::new(Int64Array::from(ids.to_vec()))),
        ],
    };
    cols.extend([
        ("a__score", Arc::new(Float64Array::from(score)) as ArrayRef),
        ("b__is_correct", Arc::new(BooleanArray::from(correct))),
        ("passage", Arc::new(UInt32Array::from(passage))),
    ]);
    if m.subject {
        cols.push(("subject", Arc::new(StringArray::from(subject))));
    }
    std::fs::create_dir_all(dir).unwrap();
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let f = std::fs::File::create(dir.join("scores.parquet")).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(100))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// The ids of two runs of `n` rows in different orders: the base run's a shuffle of 0..n,
/// the new run's another shuffle without the ids `i % 7 == 3` and with `n / 8` ids of its own.
fn shuffled_ids(n: usize) -> (Vec<i64>, Vec<i64>) {
    let mut r = Lcg(11);
    let mut base: Vec<i64> = (0..n as i64).collect();
    r.shuffle(&mut base);
    let mut new: Vec<i64> = (0..n as i64)
        .filter(|i| i % 7 != 3)
        .chain(n as i64..(n + n / 8) as i64)
        .collect();
    r.shuffle(&mut new);
    (base, new)
}

fn options(base: &Path, new: &Path, keys: Keys) -> CompareOptions {
    let mut o = CompareOptions::new(base, new);
    if matches!(keys, Keys::Composite) {
        o.key = vec!["part".to_owned(), "id".to_owned()];
    }
    o
}

/// Everything a comparison puts out: its Debug text, compare.json and compare.parquet.
fn outputs(c: &Comparison, dir: &Path) -> (String, Vec<u8>, Vec<u8>) {
    write(c, dir, true).unwrap();
    (
        format!("{c:?}"),
        std::fs::read(dir.join("compare.json")).unwrap(),
        std::fs::read(dir.join("compare.parquet")).unwrap(),
    )
}

const OPTIONS: [(Option<&str>, Option<&str>); 4] = [
    (None, None),
    (Some("subject"), None),
    (None, Some("passage")),
    (Some("subject"), Some("passage")),
];

#[test]
fn shuffled_runs_compare_as_the_join_compares_them() {
    let (bids, nids) = shuffled_ids(1200);
    for keys in [
        Keys::Signed,
        Keys::Unsigned,
        Keys::Text,
        Keys::Composite,
        Keys::Widened,
    ] {
        // The group column in both runs, only in the base run, only in the new run.
        for (bsubject, nsubject) in [(true, true), (true, false), (false, true)] {
            let tmp = tempfile::tempdir().unwrap();
            let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
            let made = |seed, subject| Made {
                seed,
                subject,
                whole: false,
            };
            write_run(&b, &bids, keys, true, made(1, bsubject));
            write_run(&n, &nids, keys, false, made(2, nsubject));
            let mut o = options(&b, &n, keys);
            for (group_by, cluster) in OPTIONS {
                o.group_by = group_by.map(str::to_owned);
                o.cluster = cluster.map(str::to_owned);
                let what = format!("{keys:?} {bsubject} {nsubject} {group_by:?} {cluster:?}");
                let joined = compare_joined(&o, PARTITION_ROWS).unwrap();
                let want = outputs(&joined, &tmp.path().join("j"));
                let json = String::from_utf8(want.1.clone()).unwrap();
                assert!(json.contains("\"only_new_keys\": [\n"), "{what}");
                assert!(want.0.contains("only_base: 171, only_new: 150,"), "{what}");
                if nsubject && group_by.is_some() {
                    assert!(want.0.contains("group: Some(\"physics\")"), "{what}");
                }
                // One partition, 64 and 256 (the most).
                for rows in [TABLE_ROWS, 50, 1] {
                    let got = compare_hashed(&o, MEMORY_BUDGET, rows).unwrap();
                    let got = got.unwrap_or_else(|| panic!("handed over: {what} {rows}"));
                    assert_eq!(outputs(&got, &tmp.path().join("h")), want, "{what} {rows}");
                }
                let all = compare_runs(&o).unwrap();
                assert_eq!(outputs(&all, &tmp.path().join("c")), want, "{what}");
            }
        }
    }
}

/// Two runs in different orders (`shuffled_ids(300)`, integer keys) with `edit` applied to
/// the new run's ids and scores: the hash join hands over, and `compare` gives the join's
/// outcome (here an error).
fn handed_over(
    edit: impl FnOnce(&mut Vec<i64>),
    scores: impl FnOnce(&Path),
    o: impl Fn(&mut CompareOptions),
) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
    let (bids, mut nids) = shuffled_ids(300);
    edit(&mut nids);
    let made = |seed| Made {
        seed,
        subject: true,
        whole: false,
    };
    write_run(&b, &bids, Keys::Signed, true, made(1));
    write_run(&n, &nids, Keys::Signed, false, made(2));
    scores(&n);
    let mut opts = options(&b, &n, Keys::Signed);
    o(&mut opts);
    assert!(compare_hashed(&opts, MEMORY_BUDGET, 50).unwrap().is_none());
    let got = compare_runs(&opts).unwrap_err().message;
    assert_eq!(
        got,
        compare_joined(&opts, PARTITION_ROWS).unwrap_err().message
    );
    got
}

#[test]
fn whatever_the_hash_join_cannot_settle_the_join_does() {
    // A key of both runs twice in the new run; a key of the new run alone twice in it.
    let e = handed_over(|ids| ids[250] = ids[7], |_| {}, |_| {});
    assert!(e.contains("the key `id` is not unique"), "{e}");
    let e = handed_over(
        |ids| {
            let only = ids.iter().position(|i| *i >= 300).unwrap();
            ids[usize::from(only == 0)] = ids[only];
        },
        |_| {},
        |_| {},
    );
    assert!(e.contains("the key `id` is not unique"), "{e}");
    // A null cluster on a pair.
    let e = handed_over(|_| {}, |_| {}, |o| o.cluster = Some("subject".to_owned()));
    assert!(e.ends_with(": the cluster column `subject` is null"), "{e}");
    // A null key and an infinite score.
    let rewrite = |dir: &Path, id: ArrayRef, score: ArrayRef| {
        let n = id.len();
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("id", id),
            ("a__score", score),
            ("b__is_correct", Arc::new(BooleanArray::from(vec![true; n]))),
        ];
        let batch = RecordBatch::try_from_iter(cols).unwrap();
        let f = std::fs::File::create(dir.join("scores.parquet")).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(f, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    };
    let ids = || -> Vec<i64> { (0..300).rev().collect() };
    let e = handed_over(
        |_| {},
        |dir| {
            let id: Int64Array = ids().into_iter().map(|i| (i != 40).then_some(i)).collect();
            rewrite(
                dir,
                Arc::new(id),
                Arc::new(Float64Array::from(vec![0.5; 300])),
            );
        },
        |_| {},
    );
    assert!(e.ends_with("row 260: the key column `id` is null"), "{e}");
    let e = handed_over(
        |_| {},
        |dir| {
            let mut score = vec![0.5; 300];
            score[150] = f64::NEG_INFINITY;
            rewrite(
                dir,
                Arc::new(Int64Array::from(ids())),
                Arc::new(Float64Array::from(score)),
            );
        },
        |_| {},
    );
    assert!(
        e.ends_with("row 151: the score column `a__score` holds -inf"),
        "{e}"
    );
    // A repeated key in the base run.
    let tmp = tempfile::tempdir().unwrap();
    let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
    let (mut bids, nids) = shuffled_ids(300);
    bids[299] = bids[5];
    let made = |seed| Made {
        seed,
        subject: true,
        whole: true,
    };
    write_run(&b, &bids, Keys::Text, true, made(1));
    write_run(&n, &nids, Keys::Text, false, made(2));
    let o = options(&b, &n, Keys::Text);
    assert!(compare_hashed(&o, MEMORY_BUDGET, 50).unwrap().is_none());
    let e = compare_runs(&o).unwrap_err().message;
    assert_eq!(e, compare_joined(&o, PARTITION_ROWS).unwrap_err().message);
    assert!(e.contains("is not unique"), "{e}");
}

#[test]
fn runs_beyond_the_memory_budget_go_to_the_partitioned_join() {
    let tmp = tempfile::tempdir().unwrap();
    let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
    let (bids, nids) = shuffled_ids(1000);
    // Scores of quarters: 8 bytes a value where the budget's least counts 1.
    let made = |seed| Made {
        seed,
        subject: true,
        whole: false,
    };
    write_run(&b, &bids, Keys::Signed, true, made(1));
    write_run(&n, &nids, Keys::Signed, false, made(2));
    let mut o = options(&b, &n, Keys::Signed);
    o.group_by = Some("subject".to_owned());
    let least = least_bytes(1000, nids.len() as u64, 2, [1, 1, 0], Words::Signed) as usize;
    // Held once read: per base row 8 + 1 + 2 + 4, per new row 12 + 2 + 4; 4 more per row of
    // either while joining.
    assert_eq!(least, 1000 * (15 + 4) + 982 * (18 + 4));
    let want = outputs(
        &compare_joined(&o, PARTITION_ROWS).unwrap(),
        &tmp.path().join("j"),
    );
    // Held once read: per base row 8 + 1 + 9 + 4, per new row 12 + 9 + 4. The most at once:
    // gathering the partners in the base order, less the new run's words and row numbers,
    // plus per base row 4 + 4 + 4 and its partner's 9 bytes of scores.
    let held = 1000 * 22 + 982 * 25;
    assert_eq!(held + 4 * (1000 + 982), 54_478);
    let most = held - 982 * 12 + 1000 * (12 + 9);
    assert_eq!(most, 55_766);
    // Within the budget; beyond it before a row is read, as the rows arrive, once read.
    let within = compare_hashed(&o, most, 50).unwrap().unwrap();
    assert_eq!(outputs(&within, &tmp.path().join("h")), want);
    for budget in [least - 1, 54_477, most - 1] {
        assert!(
            compare_hashed(&o, budget, 50).unwrap().is_none(),
            "{budget}"
        );
    }
    for budget in [least - 1, 54_477, most - 1, most] {
        let all = compare_within(&o, budget).unwrap();
        assert_eq!(outputs(&all, &tmp.path().join("c")), want, "{budget}");
    }
}

/// One partition of a run keyed by text, every key with the word `word`.
fn one_word(keys: &[&str], word: u64) -> Side {
    let mut offsets = vec![0u32];
    let mut bytes = Vec::new();
    for k in keys {
        bytes.extend_from_slice(k.as_bytes());
        offsets.push(bytes.len() as u32);
    }
    Side {
        rows: keys.len(),
        words: vec![vec![word; keys.len()]],
        row: vec![(0..keys.len() as u32).collect()],
        part_of: vec![0; keys.len()],
        keys: vec![KeyCol::Text { offsets, bytes }],
        ..Side::default()
    }
}

#[test]
fn keys_with_one_hash_are_told_apart_by_their_text() {
    // Four keys, one hash: two pairs, a row only in the base run, one only in the new run.
    let base = one_word(&["a", "b", "c"], 5);
    let new = one_word(&["c", "d", "a"], 5);
    let (partner, only_new) = join_part(&base, &new, 0, Words::Hashed).unwrap();
    assert_eq!(partner, [2, NONE, 0]);
    assert_eq!(only_new, [1]);
    // A key repeated in either run, among keys of one hash.
    let twice = one_word(&["a", "b", "a"], 5);
    assert!(join_part(&twice, &new, 0, Words::Hashed).is_none());
    assert!(join_part(&base, &one_word(&["d", "b", "d"], 5), 0, Words::Hashed).is_none());
    // Integer keys are their words: one word, one key.
    let ints = |n: usize| Side {
        words: vec![vec![9; n]],
        row: vec![(0..n as u32).collect()],
        ..Side::default()
    };
    assert_eq!(
        join_part(&ints(1), &ints(1), 0, Words::Signed).unwrap(),
        (vec![0], vec![])
    );
    assert!(join_part(&ints(1), &ints(2), 0, Words::Signed).is_none());
}

#[test]
fn an_empty_run_compares_as_the_join_compares_it() {
    let (ids, _) = shuffled_ids(300);
    for (bids, nids) in [(&ids[..0], &ids[..]), (&ids[..], &ids[..0])] {
        let tmp = tempfile::tempdir().unwrap();
        let (b, n) = (tmp.path().join("base"), tmp.path().join("new"));
        let made = |seed| Made {
            seed,
            subject: true,
            whole: true,
        };
        write_run(&b, bids, Keys::Signed, true, made(1));
        write_run(&n, nids, Keys::Signed, false, made(2));
        let mut o = options(&b, &n, Keys::Signed);
        o.group_by = Some("subject".to_owned());
        let want = outputs(
            &compare_joined(&o, PARTITION_ROWS).unwrap(),
            &tmp.path().join("j"),
        );
        let got = compare_hashed(&o, MEMORY_BUDGET, 50).unwrap().unwrap();
        assert_eq!(outputs(&got, &tmp.path().join("h")), want);
    }
}
