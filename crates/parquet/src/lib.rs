//! Every piece of Parquet that evalscore reads or writes itself, beside parquet-rs: the one
//! place that decides whether bytes are a sound Parquet page.
//!
//! - [`pages`]: checks of a file's footer (its element counts, and its fields as the C++
//!   reader reads them: required fields, wire types, each column chunk's own physical type,
//!   statistics widths, level histograms) and of every page header of a column chunk, by a
//!   strict Thrift reader of their own, before parquet-rs's decoder sees them; and a zstd
//!   column chunk rewritten uncompressed (with [`decompress_unit`]), so that the decoder
//!   makes no codec for it.
//! - [`check_page`]: a decompressed page's levels, dictionary indices, dictionary entries and
//!   delta-encoded lengths checked before it is decoded or copied, behind parquet-rs's page
//!   readers ([`CheckedPages`], [`CheckedRowGroup`]).
//! - [`StringLists`]: a `list<string>` column decoded straight from its pages (levels and
//!   dictionary indices through the RLE/bit-packed hybrid decoder, module `hybrid`).
//! - [`stored`]: a column chunk handed out as stored, for a writer that copies it, proven
//!   sound first (its pages decompressed, a string column's values UTF-8).
//! - [`BitScores`] and [`DeltaInts`]: two column encoders of `scores.parquet` (0/1 scores
//!   and two-label columns as 1-bit dictionary indices; Int64 ids DELTA_BINARY_PACKED).
//! - [`Sparse`] (a file of which some byte ranges are in memory) and [`guarded`] (a panic
//!   guard around every call into parquet-rs on a file's bytes).
//!
//! The varint and zigzag helpers (module `varint`) and the hybrid encoding's reader and
//! writer (module `hybrid`) exist here once.
//!
//! # The parquet-rs it mirrors
//!
//! This code mirrors parquet-rs **[`MIRRORS`]** (59.x): what it reads must be read exactly as
//! parquet-rs reads it, and what it writes must be what parquet-rs writes. It builds only on
//! parquet's public API: `file::metadata` (`ParquetMetaData`, `FileMetaData`,
//! `ColumnChunkMetaData` and its builder, `OffsetIndexBuilder`, `ColumnIndexBuilder`,
//! `PageEncodingStats`), `arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions}`,
//! `column::page::{Page, PageReader, CompressedPage, PageWriter}`,
//! `column::writer::ColumnCloseResult`, `file::writer::{SerializedPageWriter, TrackedWrite}`,
//! `file::reader::{ChunkReader, Length}`, `file::statistics`, `basic` and `schema::types`.
//! What it mirrors beyond the API's types:
//!
//! - the `PageHeader` fields parquet-rs reads, with their Thrift types (`pages/header.rs`),
//!   and how its Thrift reader skips what it does not read (`pages/thrift.rs`);
//! - how it decompresses a data page v2 (levels never compressed; a page with nothing after
//!   its levels is not decompressed: `pages/decompress.rs`);
//! - where it places a chunk (`ColumnChunkMetaData::byte_range`: `pages::checked_range`);
//! - the arrays its Arrow reader gives a `list<string>` column read as `List<Utf8View>`
//!   (`string_lists.rs`);
//! - what its writer writes for a column of 0/1 doubles, two labels or Int64 ids: the
//!   default zstd level, bit-packed runs of at most 63 groups, 20,000 rows a page
//!   (`DEFAULT_DATA_PAGE_ROW_COUNT_LIMIT`), delta blocks of 128 values in 4 miniblocks,
//!   statistics, column and offset indexes (`bitscores.rs`, `delta_ints.rs`).
//!
//! Each way around parquet-rs has an upstream proposal written out in
//! `crates/parquet/UPSTREAM-PROPOSALS.md`, so that it can be deleted when upstream moves.
//!
//! # Upgrade checklist
//!
//! When the parquet dependency moves (`Cargo.lock`), the test `mirrors_the_locked_parquet`
//! fails until this list has been gone through and [`MIRRORS`] set to the new version:
//!
//! 1. Read parquet's changelog between the two versions for: the page header and its Thrift
//!    reader, `SerializedPageReader`, the codecs (a zstd codec that reuses its contexts makes
//!    `pages/decompress.rs` and `decompressed.rs` unneeded), the Arrow list reader, and the
//!    writer's defaults (page row limit, zstd level, statistics, run lengths).
//! 2. For each entry of `UPSTREAM-PROPOSALS.md`, check whether upstream now does it; if so,
//!    delete the workaround and its entry.
//! 3. Run `cargo test -p evalscore-parquet` (the list decoder, the rewritten chunks and both
//!    encoders against parquet-rs's own reading), `cargo test -p evalscore-reader --test it`
//!    and the CLI's golden tests (`cargo test -p evalscore-cli --test it golden`): outputs
//!    must stay byte-identical.
//! 4. Set [`MIRRORS`] to the new version.

mod bitscores;
mod checked_pages;
mod data_pages;
mod decompressed;
mod delta_ints;
mod delta_lengths;
mod guard;
mod hybrid;
pub mod pages;
mod sparse;
pub mod stored;
mod string_lists;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod varint;

pub use bitscores::{BitKind, BitScores};
pub use checked_pages::{CheckedPages, CheckedRowGroup};
pub use data_pages::{check_page, PageRules};
pub use decompressed::{decompress_unit, DECOMPRESSED_UNIT, SMALL_CHUNKS};
pub use delta_ints::DeltaInts;
pub use guard::guarded;
pub use pages::{chunk_pages, DataPageSpan, StoredPage};
pub use sparse::Sparse;
pub use stored::{portable_codec, StoredChunk};
pub use string_lists::{Shape, StringLists};

/// The parquet-rs release this crate was last checked against (see the upgrade checklist).
pub const MIRRORS: &str = "59.3.2";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// The parquet version `Cargo.lock` resolves: the `version` line after `name = "parquet"`.
    fn locked_parquet() -> String {
        let lock = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
        let text = std::fs::read_to_string(&lock).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line == "name = \"parquet\"" {
                let version = lines.next().unwrap();
                return version
                    .strip_prefix("version = \"")
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap()
                    .to_owned();
            }
        }
        panic!("no parquet package in {}", lock.display());
    }

    #[test]
    fn mirrors_the_locked_parquet() {
        let locked = locked_parquet();
        assert_eq!(
            locked,
            super::MIRRORS,
            "Cargo.lock resolves parquet {locked}, but crates/parquet was checked against {}: \
             go through the upgrade checklist in crates/parquet/src/lib.rs (the page header \
             fields and Thrift skips, v2 page decompression, the list reader's arrays, the \
             writer's defaults, each entry of crates/parquet/UPSTREAM-PROPOSALS.md), then set \
             MIRRORS to {locked}",
            super::MIRRORS
        );
    }
}
