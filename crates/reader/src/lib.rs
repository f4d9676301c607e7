//! Columnar input for evalscore: files in, streams of Arrow `RecordBatch`es out.
//!
//! [`Inputs::open`] expands the `--input` paths (Parquet files, JSONL files, directories of
//! Parquet files, object storage URLs and prefixes, trees and globs), reads every footer
//! (concurrently, with bounded memory per file: module `opening`), and
//! checks that all files share one schema (modules `inputs`, `local`, `remote`, `tree`,
//! `schema`; or reads them as the union of their columns by name, module `union`), with the
//! `key=value` folders of trees and globs as Hive partition columns (module `hive`), which a
//! partition filter (`--where`, a task's `filter:`; module `partition_filter`) prunes before
//! any file is opened. Each path is told apart once, where it enters, as an [`InputSource`]: an
//! [`evalscore_storage::Location`] and how it is read (as given, as a tree, or a glob). The work is split into
//! [`Unit`]s (a Parquet row group, or a chunk of lines of a JSONL file; module `units`);
//! [`Inputs::read_unit`] decodes one unit, reading only the projected columns (module
//! `batches`; lists of strings, such as MCQA choices, straight from their pages by
//! [`evalscore_parquet::StringLists`]), and [`scan_ordered`] runs a function over all units on a rayon pool while
//! handing results back in input order, with a bounded number of units in flight so memory
//! does not grow with the input. [`Inputs::fetching_ahead`] hands out units with the next
//! remote ones of small objects fetched concurrently (module `prefetch`), so a worker does not
//! wait a round trip per object.
//!
//! Damaged Parquet metadata is caught before the decoder runs ([`evalscore_parquet::pages`],
//! where every check of Parquet bytes lives): the footer's column chunks are checked against
//! the file when it is opened, and every page header of a unit's columns against its chunk
//! before the unit is decoded; the decoder itself runs under a panic guard
//! ([`evalscore_parquet::guarded`]). Every failure is a [`ReadError`] naming the file, and
//! where known the row and column. [`Inputs::stored_chunk`] hands out a column chunk as it is
//! stored (pages still encoded and compressed, checked the same way; module `chunks`), for a
//! writer that copies it instead of decoding it.

mod batches;
mod chunks;
mod error;
mod footers;
mod hive;
mod inputs;
mod jsonl;
mod local;
mod opening;
mod own_outputs;
mod parquet_input;
mod partition_filter;
mod prefetch;
mod remote;
mod scan;
mod schema;
mod stamp;
mod tree;
mod union;
mod units;

// The page checks, named `pages` in this crate as where they were written.
use evalscore_parquet::pages;

pub use batches::UnitBatches;
pub use error::ReadError;
pub use evalscore_error::file_kind;
/// What [`Inputs::stored_chunk`] hands out.
pub use evalscore_parquet::StoredChunk;
pub use hive::HivePartitioning;
pub use inputs::{InputFile, Inputs, OpenOptions};
pub use jsonl::{jsonl_kind, Compression};
pub use opening::{
    OpenProgress, OpenStep, FOOTERS_KEPT, LOCAL_FOOTERS_KEPT, LOCAL_OPENERS, REMOTE_OPENERS,
};
pub use own_outputs::OUTPUT_PARQUET;
pub use partition_filter::{PartitionFilter, Pruning, RowFilter};
pub use prefetch::{FETCH_AHEAD, PREFETCH_BYTES, PREFETCH_OBJECT};
pub use remote::{SMALL_OBJECT, WHOLE_BYTES};
pub use scan::scan_ordered;
pub use tree::InputSource;
pub use units::Unit;

/// The file formats evalscore reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Parquet,
    Jsonl,
}

/// Rows per record batch when decoding. Small batches keep every buffer in the allocator's
/// reused pages: at 64k rows, parquet's list reader grows the `choices` item buffer by exact
/// reservations, copying it and faulting in fresh pages for every page it decodes. 8k rows
/// was the fastest and smallest of the sizes measured on the benchmark job (BENCHMARKS.md).
pub const BATCH_SIZE: usize = 8 * 1024;
