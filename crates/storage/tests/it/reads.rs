//! Reads of an object are pinned to the version that was opened.

use crate::s3;
use evalscore_test_support::stores::*;

/// An object replaced between two reads (a Parquet file's footer, then its column chunks),
/// by one of the same size so that only its version tells them apart, is an error naming
/// the URL, never the new object's bytes; opened again, the new object reads as usual.
#[test]
fn an_object_replaced_between_reads_is_an_error_naming_the_url() {
    let server = moto();
    create_bucket(server.port, "evals");
    let endpoint = format!("http://127.0.0.1:{}", server.port);
    put_object(
        server.port,
        "evals",
        "in/x.parquet",
        b"first version of the object",
    );
    let url = "s3://evals/in/x.parquet";
    let object = s3(&endpoint, url).object().unwrap();
    assert_eq!(&object.get_range(0..5).unwrap()[..], b"first");
    put_object(
        server.port,
        "evals",
        "in/x.parquet",
        b"other version of the object",
    );
    let e = object.get_ranges(&[0..5, 16..27]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{url}: the object was replaced while it was being read (its ETag changed since it was opened)")
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("run again once nothing writes the input; its bytes were not mixed with the new object's")
    );
    let again = s3(&endpoint, url).object().unwrap();
    assert_eq!(&again.get_range(0..5).unwrap()[..], b"other");

    // An object found by listing a prefix is pinned to the version the listing saw.
    let listed = s3(&endpoint, "s3://evals/in/").list(".parquet").unwrap();
    assert_eq!(listed.found.len(), 1);
    assert_eq!(&listed.found[0].get_range(0..5).unwrap()[..], b"other");
    put_object(
        server.port,
        "evals",
        "in/x.parquet",
        b"third version of the object",
    );
    let e = listed.found[0].get_range(0..5).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{url}: the object was replaced while it was being read (its ETag changed since it was opened)")
    );
}
