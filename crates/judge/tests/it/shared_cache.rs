//! A shared cache in a folder (object storage is tested through the CLI, on moto): what a
//! fresh machine reads, what a killed run leaves, compaction under a reader, damaged
//! segments.
#![allow(clippy::unwrap_used)]

use evalscore_judge::{compact_shared, shared_cache_stats, Cache, CachedReply, Key};
use evalscore_storage::StorePath;
use std::path::Path;
use std::sync::atomic::Ordering;

fn reply(i: u64) -> CachedReply {
    CachedReply {
        content: format!("reply number {i}"),
        prompt_tokens: 100 + i,
        completion_tokens: i % 7,
    }
}

fn key(i: u64) -> Key {
    Key::of(format!("request {i}").as_bytes())
}

fn shared(dir: &Path) -> StorePath {
    StorePath::local_folder(&dir.join("shared")).unwrap()
}

/// A cache whose local layer is `local` (a fresh machine: a new file).
fn open(dir: &Path, local: &str) -> Cache {
    Cache::open_shared(&dir.join(local).join("judge.sqlite"), shared(dir)).unwrap()
}

fn segments(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("shared"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Stores replies `from..to` through a machine of its own, and uploads them: one segment.
fn write_night(dir: &Path, machine: &str, from: u64, to: u64) {
    let c = open(dir, machine);
    c.put_many((from..to).map(|i| (key(i), reply(i)))).unwrap();
    assert_eq!(c.pending().unwrap(), to - from);
    c.flush().unwrap();
    assert_eq!(c.pending().unwrap(), 0);
}

#[test]
fn a_fresh_machine_reads_what_another_uploaded_and_keeps_it_locally() {
    let dir = tempfile::tempdir().unwrap();
    write_night(dir.path(), "a", 0, 3000);
    assert_eq!(segments(dir.path()).len(), 1);
    let seg = &segments(dir.path())[0];
    assert!(
        seg.starts_with("seg-") && seg.ends_with(".parquet") && seg.len() == 42,
        "{seg}"
    );

    let b = open(dir.path(), "b");
    let keys: Vec<Key> = (0..3000).map(key).collect();
    let got = b.get_many(&keys).unwrap();
    assert_eq!(got, (0..3000).map(|i| Some(reply(i))).collect::<Vec<_>>());
    let s = b.shared_stats().unwrap();
    assert_eq!(s.segments_listed.load(Ordering::Relaxed), 1);
    assert_eq!(s.segments_indexed.load(Ordering::Relaxed), 1);
    // 3000 replies in row groups of 1024: three, each fetched once.
    assert_eq!(s.row_groups_fetched.load(Ordering::Relaxed), 3);
    assert_eq!(s.replies_fetched.load(Ordering::Relaxed), 3000);
    // Kept locally: a second lookup reads nothing more.
    let read = s.bytes_read.load(Ordering::Relaxed);
    assert_eq!(b.get_many(&keys).unwrap().len(), 3000);
    assert_eq!(s.bytes_read.load(Ordering::Relaxed), read);
    drop(b);
    let local = Cache::open(&dir.path().join("b/judge.sqlite")).unwrap();
    assert_eq!(local.len().unwrap(), 3000);
    // A key nobody stored is a miss, and costs no row group.
    let b = open(dir.path(), "b2");
    assert_eq!(b.get_many(&[key(99_999)]).unwrap(), vec![None]);
    let s = b.shared_stats().unwrap();
    assert_eq!(s.row_groups_fetched.load(Ordering::Relaxed), 0);
}

#[test]
fn a_run_reads_the_row_groups_it_needs_and_the_indexes_not_the_whole_cache() {
    let dir = tempfile::tempdir().unwrap();
    // Twenty nights of 2,000 replies each.
    for night in 0..20u64 {
        write_night(
            dir.path(),
            &format!("w{night}"),
            night * 2000,
            night * 2000 + 2000,
        );
    }
    let total: u64 = segments(dir.path())
        .iter()
        .map(|n| {
            std::fs::metadata(dir.path().join("shared").join(n))
                .unwrap()
                .len()
        })
        .sum();
    // A run that needs night 7's replies.
    let c = open(dir.path(), "fresh");
    let keys: Vec<Key> = (14_000..16_000).map(key).collect();
    let got = c.get_many(&keys).unwrap();
    assert!(got.iter().all(Option::is_some));
    let s = c.shared_stats().unwrap();
    // Night 7's two row groups (1,024 and 976 replies), and at most two that a filter admitted wrongly:
    // the filters admit about 3e-5 of absent keys, and the 2,000 keys are checked against
    // one row group of each of the 12 newer nights (24,000 checks).
    let fetched = s.row_groups_fetched.load(Ordering::Relaxed);
    assert!((2..=4).contains(&fetched), "{fetched} row groups fetched");
    let replies = s.replies_fetched.load(Ordering::Relaxed);
    assert!(
        replies >= 2000 && replies <= 2000 + (fetched - 2) * 1024,
        "{replies} replies in {fetched} row groups"
    );
    // The 12 newer nights' indexes, night 7's, and three older ones read beside it.
    assert_eq!(s.segments_indexed.load(Ordering::Relaxed), 16);
    let read = s.bytes_read.load(Ordering::Relaxed);
    assert!(read * 4 < total, "read {read} of {total} bytes");
}

#[test]
fn replies_of_a_killed_run_are_uploaded_by_the_next_run_on_that_machine() {
    let dir = tempfile::tempdir().unwrap();
    {
        let c = open(dir.path(), "m");
        c.put_many((0..5).map(|i| (key(i), reply(i)))).unwrap();
        for i in 5..10 {
            c.put_key(&key(i), &reply(i)).unwrap();
        }
        assert_eq!(c.pending().unwrap(), 10);
        // Killed: no flush.
    }
    assert!(segments(dir.path()).is_empty());
    let c = open(dir.path(), "m");
    assert_eq!(c.pending().unwrap(), 10);
    c.flush().unwrap();
    assert_eq!(c.pending().unwrap(), 0);
    assert_eq!(segments(dir.path()).len(), 1);
    let other = open(dir.path(), "other");
    assert_eq!(other.get_many(&[key(3)]).unwrap(), vec![Some(reply(3))]);
}

#[test]
fn compaction_under_a_reader_leaves_every_reply_reachable() {
    let dir = tempfile::tempdir().unwrap();
    for night in 0..5u64 {
        write_night(
            dir.path(),
            &format!("w{night}"),
            night * 100,
            night * 100 + 100,
        );
    }
    // The reader lists the five segments now...
    let reader = open(dir.path(), "reader");
    let before = shared_cache_stats(shared(dir.path())).unwrap();
    assert_eq!((before.segments, before.entries), (5, 500));
    // ... and they are merged (and removed) before it reads any.
    let c = compact_shared(shared(dir.path())).unwrap();
    assert_eq!(
        (c.merged, c.written, c.entries, c.duplicates),
        (5, 1, 500, 0)
    );
    let after = shared_cache_stats(shared(dir.path())).unwrap();
    assert_eq!((after.segments, after.entries), (1, 500));
    // The five replies' row groups (100 each, merged runs of at least 1024 rows... here all
    // 500 in one run) are found in the merged segment after one more listing.
    let keys: Vec<Key> = (0..500).map(key).collect();
    let got = reader.get_many(&keys).unwrap();
    assert_eq!(got, (0..500).map(|i| Some(reply(i))).collect::<Vec<_>>());
    let s = reader.shared_stats().unwrap();
    assert_eq!(s.segments_listed.load(Ordering::Relaxed), 6);
    // A second compaction has nothing to merge.
    let again = compact_shared(shared(dir.path())).unwrap();
    assert_eq!((again.merged, again.written, again.kept), (0, 0, 1));
}

#[test]
fn an_unreadable_segment_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    write_night(dir.path(), "w", 0, 10);
    let good = segments(dir.path())[0].clone();
    // A partial upload: the first half of a real segment, under a newer name.
    let bytes = std::fs::read(dir.path().join("shared").join(&good)).unwrap();
    let partial = "seg-9999999999999-0000000000000000.parquet";
    std::fs::write(
        dir.path().join("shared").join(partial),
        &bytes[..bytes.len() / 2],
    )
    .unwrap();
    let c = open(dir.path(), "fresh");
    assert_eq!(c.get_many(&[key(4)]).unwrap(), vec![Some(reply(4))]);
    let warnings = c.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let shown = format!("{}/shared/{partial}", dir.path().display());
    assert!(
        warnings[0].starts_with(&format!("judge cache segment `{shown}` is not readable (")),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].ends_with("); skipped"), "{}", warnings[0]);
    let stats = shared_cache_stats(shared(dir.path())).unwrap();
    assert_eq!((stats.segments, stats.entries), (1, 10));
    assert_eq!(stats.unreadable.len(), 1);
    assert_eq!(stats.unreadable[0].0, shown);
    // Compaction leaves it alone.
    let c = compact_shared(shared(dir.path())).unwrap();
    assert_eq!((c.merged, c.kept), (0, 2));
}
