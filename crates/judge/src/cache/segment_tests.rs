use super::*;

fn reply(i: u64) -> CachedReply {
    CachedReply {
        content: format!("reply {i}"),
        prompt_tokens: i,
        completion_tokens: i * 2,
    }
}

fn rows(from: u64, n: u64) -> Vec<(Key, CachedReply)> {
    (from..from + n)
        .map(|i| (Key::of(i.to_string().as_bytes()), reply(i)))
        .collect()
}

fn index_of(bytes: &[u8], start: u64) -> Tail {
    let size = bytes.len() as u64;
    index(
        size,
        start,
        Bytes::copy_from_slice(&bytes[start as usize..]),
    )
    .unwrap()
}

#[test]
fn a_segment_reads_back_sorted_by_key_in_row_groups() {
    let bytes = encode(rows(0, 2500)).unwrap();
    let (index, all) = decode_all(Bytes::from(bytes)).unwrap();
    assert_eq!(
        index.groups.iter().map(|g| g.rows).collect::<Vec<_>>(),
        [1024, 1024, 452]
    );
    assert_eq!(all.len(), 2500);
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
    let mut want = rows(0, 2500);
    want.sort_by_key(|r| r.0);
    assert_eq!(all, want);
    // Each group's range is its own keys'.
    assert_eq!(index.groups[0].min, all[0].0 .0);
    assert_eq!(index.groups[0].max, all[1023].0 .0);
    assert_eq!(index.groups[1].min, all[1024].0 .0);
}

#[test]
fn equal_keys_of_a_run_keep_the_first() {
    let key = Key::of(b"x");
    let bytes = encode(vec![(key, reply(1)), (key, reply(2))]).unwrap();
    let (_, all) = decode_all(Bytes::from(bytes)).unwrap();
    assert_eq!(all, vec![(key, reply(1))]);
}

#[test]
fn the_filters_admit_every_key_and_few_others() {
    let bytes = encode(rows(0, 3000)).unwrap();
    let Tail::Index(index) = index_of(&bytes, 0) else {
        panic!("whole file given")
    };
    for (key, _) in rows(0, 3000) {
        assert_eq!(index.groups.iter().filter(|g| g.may_hold(&key)).count(), 1);
    }
    let admitted: usize = rows(1_000_000, 100_000)
        .iter()
        .map(|(k, _)| index.groups.iter().filter(|g| g.may_hold(k)).count())
        .sum();
    // Three groups' filters at 1e-5 over 100,000 absent keys: about one admitted.
    assert!(admitted <= 10, "{admitted} absent keys admitted");
}

#[test]
fn a_short_tail_asks_for_the_filters() {
    let bytes = encode(rows(0, 30_000)).unwrap();
    let size = bytes.len() as u64;
    // The footer fits in the last 64 KiB, the 30 filters of 4 KiB do not.
    let Tail::From(start) = index_of(&bytes, size - 65536) else {
        panic!("the filters are not all in the last 64 KiB")
    };
    assert!(start < size - 65536);
    let Tail::Index(index) = index_of(&bytes, start) else {
        panic!("the tail asked for is the index")
    };
    assert_eq!(index.groups.len(), 30);
    // Too short even for the footer: the footer's start is asked for.
    let Tail::From(footer) = index_of(&bytes, size - 100) else {
        panic!("100 bytes hold no footer")
    };
    assert!(footer < size - 100 && footer > start);
}

#[test]
fn a_row_group_decodes_from_its_own_bytes() {
    let bytes = encode(rows(0, 2048)).unwrap();
    let size = bytes.len() as u64;
    let Tail::Index(index) = index_of(&bytes, 0) else {
        panic!("whole file given")
    };
    let r = index.groups[1].range.clone();
    let got = decode_group(
        &index,
        size,
        1,
        Bytes::copy_from_slice(&bytes[r.start as usize..r.end as usize]),
    )
    .unwrap();
    assert_eq!(got.len(), 1024);
    assert_eq!(got[0].0 .0, index.groups[1].min);
}

#[test]
fn a_truncated_or_foreign_file_is_an_error() {
    let bytes = encode(rows(0, 10)).unwrap();
    assert!(decode_all(Bytes::copy_from_slice(&bytes[..bytes.len() / 2])).is_err());
    assert!(decode_all(Bytes::from_static(b"PAR1 not a file PAR1")).is_err());
}

#[test]
fn runs_stay_in_their_own_row_groups() {
    let mut w = SegmentWriter::new().unwrap();
    w.run(rows(0, 10)).unwrap();
    w.run(rows(10, 5)).unwrap();
    assert_eq!(w.rows(), 15);
    let (index, all) = decode_all(Bytes::from(w.finish().unwrap())).unwrap();
    assert_eq!(
        index.groups.iter().map(|g| g.rows).collect::<Vec<_>>(),
        [10, 5]
    );
    assert_eq!(all.len(), 15);
}
