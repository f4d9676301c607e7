//! The reader crate's integration tests, in one test binary: a module per area.
//! `cargo test -p evalscore-reader --test it remote::` runs one module's tests.
#![allow(clippy::unwrap_used)]

mod damaged_pages;
mod footer;
mod hive;
mod input_names;
mod many;
mod partition_filter;
mod remote;
mod string_lists;
mod trees;
mod union;
