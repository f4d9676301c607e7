//! Opening the input list: each `--input` told apart once as a local path or a URL, and as
//! a file, a folder, a tree or a glob ([`InputSource`], module `tree`), expanded into files
//! (modules `local`, `remote`, `tree`), every footer read, and one schema checked to be
//! shared by all (module `schema`).

use crate::opening::{self, OpenProgress, OpenStep, ToOpen};
use crate::own_outputs::OwnOutputs;
use crate::partition_filter::{self, PartitionFilter, Pruning};
use crate::tree::{InputSource, Select};
use crate::{hive, local, remote, schema, union, Compression, Format, HivePartitioning, ReadError};
use arrow::array::ArrayRef;
use arrow::datatypes::{FieldRef, Schema, SchemaRef};
use evalscore_storage::Location;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use std::path::PathBuf;
use std::sync::Arc;

/// One input file and what its footer (or first pass) says about it.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub path: PathBuf,
    pub format: Format,
    /// JSONL only: how the file is compressed (from its name).
    pub compression: Option<Compression>,
    pub rows: u64,
    /// Rows per row group (for a JSONL file: per chunk of lines, see `jsonl_spans`).
    pub row_groups: Vec<u64>,
    /// SHA-256 of the Parquet footer (metadata and its length), hex; of the whole file for JSONL.
    pub footer_sha256: String,
    pub(crate) schema: SchemaRef,
    /// JSONL only: the byte range of each chunk of lines, one per entry of `row_groups`.
    pub(crate) jsonl_spans: Vec<(u64, u64)>,
    /// Parquet only: the footer as parsed when the file was opened, with strings as
    /// Utf8View, so that each unit's decoder starts from it instead of reading and parsing
    /// the footer again (200 files of one row group each read 200 footers twice before).
    /// `None` when the view schema does not apply, or when the footer was dropped (below);
    /// units then read the footer themselves.
    pub(crate) reader_meta: Option<ArrowReaderMetadata>,
    /// Parquet only: when the parsed footer (and a remote file's tail) was dropped after the
    /// file was opened, to bound the memory of a run of many files (module `opening`), a
    /// number no other file has, under which a worker keeps the footer it read again.
    pub(crate) dropped: Option<u64>,
    /// An input in object storage (`path` is then its URL): see module `remote`.
    pub(crate) remote: Option<Arc<remote::Remote>>,
    /// The file's Hive partition values, one row each, in the order of the partition columns
    /// that end [`Inputs::schema`] (module `hive`); empty without them.
    pub(crate) partitions: Vec<ArrayRef>,
    /// A local file's length and modification time when it was opened: each later opening
    /// checks them, so that a file rewritten during the run is an error, not rows of another
    /// file under this one's name and fingerprint (module `local`).
    pub(crate) stamp: Option<local::Stamp>,
}

/// How a run's inputs are found and read (the `run` options `--recursive`,
/// `--hive-partitioning`, `--union-by-name`, `--storage-option`).
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Folders and prefixes are read at any depth (module `tree`).
    pub recursive: bool,
    /// Whether `key=value` folders become columns (module `hive`).
    pub hive: HivePartitioning,
    /// Files whose columns differ are read as one table: the union of their columns by
    /// name, types widened (module `union`).
    pub union_by_name: bool,
    /// Object storage configuration, `KEY=VALUE` as `--storage-option` gives it.
    pub storage_options: Vec<(String, String)>,
    /// Partition filters (`--where`, a task's `filter:`), ANDed: only the listed files they
    /// match are opened (module `partition_filter`).
    pub filters: Vec<PartitionFilter>,
    /// Told how listing and opening go, for a progress line: a large prefix takes minutes
    /// before the first row is read.
    pub progress: Option<OpenProgress>,
    /// The run's `--out` folder or prefix: its output files found in a listed folder,
    /// prefix, tree or glob are left out (module `own_outputs`).
    pub out_dir: Option<PathBuf>,
}

/// The set of input files of a run.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub files: Vec<InputFile>,
    /// The schema every file shares (the first file's; with `union_by_name`, the union of
    /// the files' columns, module `union`), then the Hive partition columns, if any (module
    /// `hive`).
    pub schema: SchemaRef,
    /// Every batch is made to hold the run's columns exactly (module `union`).
    pub(crate) union_by_name: bool,
    /// The Hive partition columns that end `schema` (empty without them).
    pub partition_columns: Vec<FieldRef>,
    /// What the partition filters did, when there were any.
    pub pruning: Option<Pruning>,
    /// What the caller should tell the user: each object whose key no object path can hold,
    /// stepped over in a listing (`evalscore_storage::Listing::skipped`).
    pub warnings: Vec<String>,
}

impl Inputs {
    /// Expands `paths` and opens every file's footer.
    ///
    /// A directory contributes its `*.parquet` files sorted by name. Files ending `.jsonl` or
    /// `.ndjson` are JSON Lines, and so are those names ending `.gz` or `.zst` (decompressed
    /// as they are read); everything else is read as Parquet. A path with a wildcard is a
    /// glob ([`InputSource::parse`]).
    pub fn open(paths: &[PathBuf]) -> Result<Inputs, ReadError> {
        Inputs::open_with(paths, &[])
    }

    /// [`Inputs::open`], where a path may also be an object storage URL (`s3://`, `gs://`,
    /// `az://`, `abfss://`, `https://`; a URL ending in `/` is a prefix, read as a directory),
    /// configured from the environment and `storage_options` (`--storage-option KEY=VALUE`).
    pub fn open_with(
        paths: &[PathBuf],
        storage_options: &[(String, String)],
    ) -> Result<Inputs, ReadError> {
        Inputs::open_tree(paths, false, storage_options)
    }

    /// [`Inputs::open_with`], where a folder or a prefix is read at any depth when
    /// `recursive` (`--recursive`; see module `tree` for the files skipped and the order).
    pub fn open_tree(
        paths: &[PathBuf],
        recursive: bool,
        storage_options: &[(String, String)],
    ) -> Result<Inputs, ReadError> {
        Inputs::open_partitioned(paths, recursive, HivePartitioning::Auto, storage_options)
    }

    /// [`Inputs::open_tree`], reading the `key=value` folders of trees and globs as columns
    /// as `hive` says (`--hive-partitioning`; see module `hive`).
    pub fn open_partitioned(
        paths: &[PathBuf],
        recursive: bool,
        hive: HivePartitioning,
        storage_options: &[(String, String)],
    ) -> Result<Inputs, ReadError> {
        Inputs::open_options(
            paths,
            &OpenOptions {
                recursive,
                hive,
                union_by_name: false,
                storage_options: storage_options.to_vec(),
                ..OpenOptions::default()
            },
        )
    }

    /// Expands and opens `paths` as `opts` says: every way of reading the inputs of a run.
    pub fn open_options(paths: &[PathBuf], opts: &OpenOptions) -> Result<Inputs, ReadError> {
        let sources = paths
            .iter()
            .map(|p| InputSource::parse(p, opts.recursive))
            .collect::<Result<Vec<_>, _>>()?;
        Inputs::open_sources_options(&sources, opts)
    }

    /// [`Inputs::open_with`] of inputs already told apart as local paths and URLs, each read
    /// as given.
    pub fn open_locations(
        locations: &[Location],
        storage_options: &[(String, String)],
    ) -> Result<Inputs, ReadError> {
        let sources: Vec<InputSource> = locations
            .iter()
            .map(|location| InputSource {
                location: location.clone(),
                select: Select::AsGiven,
            })
            .collect();
        Inputs::open_sources(&sources, storage_options)
    }

    /// [`Inputs::open_with`] of inputs already parsed ([`InputSource::parse`]). The files of
    /// each input follow those of the inputs before it.
    pub fn open_sources(
        sources: &[InputSource],
        storage_options: &[(String, String)],
    ) -> Result<Inputs, ReadError> {
        Inputs::open_sources_partitioned(sources, HivePartitioning::Auto, storage_options)
    }

    /// [`Inputs::open_sources`], with Hive partitions read as `hive` says.
    pub fn open_sources_partitioned(
        sources: &[InputSource],
        hive: HivePartitioning,
        storage_options: &[(String, String)],
    ) -> Result<Inputs, ReadError> {
        Inputs::open_sources_options(
            sources,
            &OpenOptions {
                recursive: false,
                hive,
                union_by_name: false,
                storage_options: storage_options.to_vec(),
                ..OpenOptions::default()
            },
        )
    }

    /// [`Inputs::open_options`] of inputs already parsed ([`InputSource::parse`]; `recursive`
    /// was applied there).
    pub fn open_sources_options(
        sources: &[InputSource],
        opts: &OpenOptions,
    ) -> Result<Inputs, ReadError> {
        Inputs::open_sources_keeping(sources, opts, opening::footers_kept(), crate::WHOLE_BYTES)
    }

    /// [`Inputs::open_sources_options`], where only the first `footers_kept` files keep their
    /// parsed footer (otherwise `EVALSCORE_FOOTERS_KEPT`, else [`crate::FOOTERS_KEPT`] in
    /// object storage and [`crate::LOCAL_FOOTERS_KEPT`] locally): the others read it again
    /// for each unit. The scores are the same either way.
    pub fn open_sources_kept(
        sources: &[InputSource],
        opts: &OpenOptions,
        footers_kept: usize,
    ) -> Result<Inputs, ReadError> {
        Inputs::open_sources_keeping(sources, opts, Some(footers_kept), crate::WHOLE_BYTES)
    }

    /// [`Inputs::open_sources_kept`], where the small objects read whole when opened add up
    /// to at most `whole_bytes` (otherwise [`crate::WHOLE_BYTES`]; 0: none is, each is read
    /// as a larger object is). The scores are the same either way.
    pub fn open_sources_whole(
        sources: &[InputSource],
        opts: &OpenOptions,
        footers_kept: usize,
        whole_bytes: u64,
    ) -> Result<Inputs, ReadError> {
        Inputs::open_sources_keeping(sources, opts, Some(footers_kept), whole_bytes)
    }

    fn open_sources_keeping(
        sources: &[InputSource],
        opts: &OpenOptions,
        footers_kept: Option<usize>,
        whole_bytes: u64,
    ) -> Result<Inputs, ReadError> {
        let (hive, storage_options) = (opts.hive, opts.storage_options.as_slice());
        if sources.is_empty() {
            return Err(ReadError::new("no input given")
                .with_hint("pass `--input FILE.parquet` or `--input DIR`"));
        }
        // Every input is listed first, in order (with each file's path below its tree's base,
        // `None` for a file read as given), then pruned by the partition filters, then the
        // files left opened at once (module `opening`), so that pruning skips the others'
        // footers. An input that cannot be listed fails after the files listed before it are
        // opened, so the first error is the one opening them one by one would meet.
        let mut jobs = Vec::new();
        let mut rels = Vec::new();
        let mut warnings = Vec::new();
        let progress = opts.progress.as_ref();
        let own = OwnOutputs::new(opts.out_dir.as_deref());
        for source in sources {
            if let Some(p) = progress {
                (p.0)(OpenStep::Listing(source.shown()));
            }
            let listed = list_source(source, storage_options, own.as_ref(), &mut jobs, &mut rels);
            if let Err(e) = listed.map(|w| warnings.extend(w)) {
                opening::open_all(jobs, footers_kept, whole_bytes, progress)?;
                return Err(e);
            }
        }
        let mut parts = hive::partitions(&rels, |i| jobs[i].path(), hive)?;
        let pruning = match partition_filter::prune(&opts.filters, &parts, hive)? {
            Some((keep, pruning)) => {
                parts.retain(&keep)?;
                let mut keep = keep.into_iter();
                jobs.retain(|_| keep.next().unwrap_or(false));
                Some(pruning)
            }
            None => None,
        };
        let mut files = opening::open_all(jobs, footers_kept, whole_bytes, progress)?;
        let shared = if opts.union_by_name {
            union::union_schema(&files)?
        } else {
            schema::shared_schema(&files)?
        };
        let partition_columns = parts.assign(&mut files, &shared)?;
        let schema = if partition_columns.is_empty() {
            shared
        } else {
            let mut fields: Vec<FieldRef> = shared.fields().iter().cloned().collect();
            fields.extend(partition_columns.iter().cloned());
            Arc::new(Schema::new_with_metadata(fields, shared.metadata().clone()))
        };
        Ok(Inputs {
            schema,
            files,
            union_by_name: opts.union_by_name,
            partition_columns,
            pruning,
            warnings,
        })
    }
}

/// Lists the files of `source` onto `jobs`, each with its path below its tree's base (or
/// `None`) onto `rels`; gives the listing's warnings.
fn list_source(
    source: &InputSource,
    storage_options: &[(String, String)],
    own: Option<&OwnOutputs>,
    jobs: &mut Vec<ToOpen>,
    rels: &mut Vec<Option<String>>,
) -> Result<Vec<String>, ReadError> {
    let from = jobs.len();
    let mut warnings = match &source.location {
        Location::Remote(url) => match source.remote_objects(url, storage_options) {
            Some(found) => {
                let (found, warnings) = found?;
                for listed in found {
                    jobs.push(ToOpen::Remote(listed.file, listed.format));
                    rels.push(Some(listed.rel));
                }
                warnings
            }
            None => {
                let (found, warnings) = remote::expand_url(url, storage_options)?;
                for (object, format) in found {
                    jobs.push(ToOpen::Remote(object, format));
                    rels.push(None);
                }
                warnings
            }
        },
        Location::Local(p) => {
            match source.local_files(p) {
                Some(found) => {
                    for listed in found? {
                        jobs.push(ToOpen::Local(listed.file, listed.format));
                        rels.push(Some(listed.rel));
                    }
                }
                None => {
                    for (path, format) in local::expand(p)? {
                        jobs.push(ToOpen::Local(path, format));
                        rels.push(None);
                    }
                }
            }
            Vec::new()
        }
    };
    if let Some(w) = own.and_then(|own| own.leave_out(source, jobs, rels, from)) {
        warnings.push(w);
    }
    Ok(warnings)
}
