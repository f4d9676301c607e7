//! The storage crate's integration tests, in one test binary: a module per area, against
//! real servers started here (moto for S3; a fault-injecting proxy where a test needs a
//! reply lost). `cargo test -p evalscore-storage --test it reads::` runs one module's tests.
#![allow(clippy::unwrap_used)]

mod lists;
mod puts;
mod reads;
mod setup;

use evalscore_storage::{StorePath, StoreUrl};

/// `url` on the S3 server at `endpoint`, with the tests' credentials as options.
pub fn s3(endpoint: &str, url: &str) -> StorePath {
    let options: Vec<(String, String)> = [
        ("aws_endpoint", endpoint),
        ("aws_allow_http", "true"),
        ("aws_access_key_id", "testing"),
        ("aws_secret_access_key", "s3-secret-never-printed"),
        ("aws_region", "us-east-1"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    StoreUrl::parse(url).unwrap().connect(&options).unwrap()
}
