//! Listing a prefix as a tree: every object under it with its relative key, in key order,
//! entering only the folders the caller wants.

use crate::s3;
use evalscore_test_support::stores::*;
use std::sync::Mutex;

#[test]
fn a_tree_is_listed_in_key_order_entering_the_folders_asked_for() {
    let server = moto();
    create_bucket(server.port, "lake");
    for key in [
        "t/b/c.parquet",
        "t/b-x.parquet",
        "t/a.parquet",
        "t/b/d/e.parquet",
        "t/_temporary/0/g.parquet",
        "t/_SUCCESS",
        "other/z.parquet",
    ] {
        put_object(server.port, "lake", key, key.as_bytes());
    }
    let endpoint = format!("http://127.0.0.1:{}", server.port);
    let entered = Mutex::new(Vec::new());
    let listed = s3(&endpoint, "s3://lake/t/")
        .list_tree(|rel, depth| {
            entered.lock().unwrap().push((rel.to_owned(), depth));
            rel != "_temporary"
        })
        .unwrap();
    assert!(listed.skipped.is_empty());
    let keys: Vec<(&str, &str, u64)> = listed
        .found
        .iter()
        .map(|(rel, o)| (rel.as_str(), o.url(), o.size()))
        .collect();
    assert_eq!(
        keys,
        [
            ("_SUCCESS", "s3://lake/t/_SUCCESS", 10),
            ("a.parquet", "s3://lake/t/a.parquet", 11),
            ("b-x.parquet", "s3://lake/t/b-x.parquet", 13),
            ("b/c.parquet", "s3://lake/t/b/c.parquet", 13),
            ("b/d/e.parquet", "s3://lake/t/b/d/e.parquet", 15),
        ]
    );
    let mut entered = entered.into_inner().unwrap();
    entered.sort();
    assert_eq!(
        entered,
        [
            ("_temporary".to_owned(), 1),
            ("b".to_owned(), 1),
            ("b/d".to_owned(), 2)
        ]
    );
    // A listed object reads as one opened by its URL.
    assert_eq!(&listed.found[4].1.get_range(0..5).unwrap()[..], b"t/b/d");
}

/// Keys no object path can hold (a `..`, `.` or empty part) among many others: each is
/// stepped over and reported, every other key listed, in order, in the flat listing and the
/// tree alike; a folder the caller does not enter is not reported.
#[test]
fn odd_keys_are_stepped_over_and_reported() {
    let server = moto();
    create_bucket(server.port, "lake");
    let mut good: Vec<String> = (0..30).map(|i| format!("a{i:02}.parquet")).collect();
    good.extend((0..10).map(|i| format!("z{i:02}.parquet")));
    good.push("k/y.parquet".to_owned());
    let odd = [
        "w/../x.parquet",
        "k/./x.parquet",
        "m//x.parquet",
        "n..",
        "_t/../x.parquet",
    ];
    for key in good.iter().map(String::as_str).chain(odd) {
        put_object(server.port, "lake", &format!("t/{key}"), b"x");
    }
    let endpoint = format!("http://127.0.0.1:{}", server.port);
    let tree = s3(&endpoint, "s3://lake/t/")
        .list_tree(|rel, _| rel != "_t")
        .unwrap();
    let rels: Vec<&str> = tree.found.iter().map(|(rel, _)| rel.as_str()).collect();
    let mut want: Vec<&str> = good.iter().map(String::as_str).chain(["n.."]).collect();
    want.sort();
    assert_eq!(rels, want);
    assert_eq!(tree.skipped, ["k/./", "m//", "w/../"]);
    // One level: the objects directly under the prefix; a folder is not listed, so not
    // reported either.
    let flat = s3(&endpoint, "s3://lake/t/").list(".parquet").unwrap();
    let urls: Vec<&str> = flat.found.iter().map(|o| o.url()).collect();
    let want: Vec<String> = good[..40]
        .iter()
        .map(|k| format!("s3://lake/t/{k}"))
        .collect();
    assert_eq!(urls, want);
    assert!(flat.skipped.is_empty(), "{:?}", flat.skipped);
}
