//! Inputs in object storage (`s3://`, `gs://`, `az://`, `abfss://`, `https://`). A URL ending
//! in `/` is a prefix: its `*.parquet` objects are listed and read as a directory's files.
//!
//! A remote Parquet file larger than [`SMALL_OBJECT`] is never downloaded whole. Opening it
//! fetches its tail (8 KiB, or the whole footer when longer) and parses the footer from that;
//! decoding a unit fetches
//! exactly the column chunks of the needed columns in that row group, one ranged GET each,
//! all at once (`evalscore_storage::Object::get_ranges`), and hands the decoder a [`Sparse`]
//! file holding the tail and those chunks. So a run reads the footer plus the needed chunks,
//! and a unit's chunks are in memory while it is decoded (bounded, like every unit in flight,
//! by `scan_ordered`).
//!
//! A small object (at most [`SMALL_OBJECT`] bytes, by the size its listing or HEAD gave) is
//! fetched whole when it is opened, in one GET pinned to its ETag as every read, and its
//! bytes are kept with the file: its footer is parsed from them, again if it was dropped, and
//! its units decode from them, so it costs exactly one GET. The bytes of the objects read
//! whole in one run are at most [`WHOLE_BYTES`] in all (module `opening` picks them, in
//! listing order); the objects past that are read as the larger ones are.
//!
//! A remote JSON Lines file (plain or compressed) is needed whole, so it is streamed into a
//! temporary file when the input is opened (32 MiB at a time, never all in memory) and read
//! from there; the copy is removed when the inputs are dropped.

use crate::parquet_input::{
    load_view, open_from_tail, read_tail, reread, unreadable, Footer, Tail,
};
use crate::units::damaged_unit;
use crate::{jsonl, jsonl_kind, pages, Format, InputFile, ReadError, Unit};
use bytes::Bytes;
use evalscore_parquet::Sparse;
use evalscore_storage::{Object, StorageError, StoreUrl};
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes fetched first from a remote Parquet file's end: the footers of narrow tables fit,
/// and a wide footer costs one more GET rather than fetching bytes nobody needs.
const TAIL: u64 = 8 << 10;

/// Objects of at most this many bytes are fetched whole when opened (module docs): the
/// round trips of a tail and its chunks cost more than the bytes of a column nobody reads.
pub const SMALL_OBJECT: u64 = 1 << 20;

/// The bytes of the small objects a run keeps whole, in all (module docs): a run of any
/// number of objects holds at most this much of their bytes beside its parsed footers.
pub const WHOLE_BYTES: u64 = 64 << 20;

/// What a remote input keeps: the object, and for Parquet its fetched tail and parsed footer
/// unless they were dropped (module `opening`), and a small object's bytes when it was read
/// whole and its footer dropped; for JSON Lines the staged local copy.
pub(crate) struct Remote {
    pub object: Object,
    pub footer: Option<Footer>,
    pub whole: Option<Bytes>,
    pub staged: Option<tempfile::TempPath>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("url", &self.object.url())
            .field("size", &self.object.size())
            .finish_non_exhaustive()
    }
}

/// A storage failure as a read error naming the URL.
pub(crate) fn read_error(e: StorageError) -> ReadError {
    let err = ReadError::at(Path::new(&e.url), e.message);
    match e.hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// The tail of a remote Parquet file ([`read_tail`]), fetched; the whole object, in one
/// GET, when `whole`.
pub(crate) fn fetch_tail(object: &Object, whole: bool) -> Result<Result<Tail, String>, ReadError> {
    let first = if whole { object.size() } else { TAIL };
    read_tail(object.size(), first, |r| {
        object.get_range(r).map_err(read_error)
    })
}

/// The tail of a remote Parquet file: from its bytes when it was read whole, else fetched.
fn tail_of(remote: &Remote) -> Result<Result<Tail, String>, ReadError> {
    let Some(whole) = &remote.whole else {
        return fetch_tail(&remote.object, false);
    };
    read_tail(whole.len() as u64, whole.len() as u64, |r| {
        let (start, end) = (r.start as usize, r.end as usize);
        Ok::<_, ReadError>(whole.slice(start..end))
    })
}

impl InputFile {
    /// The local file to read: a remote input's staged copy, else the path itself.
    pub(crate) fn read_path(&self) -> &Path {
        self.remote
            .as_ref()
            .and_then(|r| r.staged.as_deref())
            .unwrap_or(&self.path)
    }
}

/// One unit of a remote Parquet file as its decoder needs it: the needed column chunks of
/// the row group, fetched (one ranged GET each, concurrently) beside the tail, and the parsed
/// footer to decode them from memory with.
pub(crate) fn fetch_unit(
    file: &InputFile,
    remote: &Remote,
    unit: &Unit,
    roots: &[usize],
) -> Result<(Sparse, Option<ArrowReaderMetadata>), ReadError> {
    let damaged = |e: &dyn std::fmt::Display| damaged_unit(file, unit, e);
    let (footer, reader_meta) = unit_footer(file, remote)?.map_err(|m| damaged(&m))?;
    let meta = &footer.meta;
    // The chunks to fetch: those of the needed columns, but for those the tail holds (all
    // of a tiny file's).
    let mut ranges = Vec::new();
    let schema = meta.file_metadata().schema_descr();
    if let Some(rg) = meta.row_groups().get(unit.row_group) {
        for (leaf, chunk) in rg.columns().iter().enumerate() {
            if leaf < schema.num_columns() && roots.contains(&schema.get_column_root_idx(leaf)) {
                let (start, len) = pages::checked_range(chunk).map_err(|m| damaged(&m))?;
                if start < footer.tail_start {
                    ranges.push(start..start.saturating_add(len));
                }
            }
        }
    }
    let fetched = remote.object.get_ranges(&ranges).map_err(read_error)?;
    let mut pieces: Vec<(u64, Bytes)> = ranges.iter().map(|r| r.start).zip(fetched).collect();
    pieces.push((footer.tail_start, footer.tail.clone()));
    Ok((Sparse::new(remote.object.size(), pieces), reader_meta))
}

/// A remote Parquet file's tail and parsed footer (strings as Utf8View, `None` when they do
/// not apply): as kept at open, or as [`footer`] fetches them again (once per unit and
/// worker, see `parquet_input::reread`).
pub(crate) fn unit_footer(
    file: &InputFile,
    remote: &Remote,
) -> Result<Result<(Footer, Option<ArrowReaderMetadata>), String>, ReadError> {
    if let Some(kept) = &remote.footer {
        return Ok(Ok((kept.clone(), file.reader_meta.clone())));
    }
    let id = file.dropped.unwrap_or(u64::MAX);
    let read = || Ok(footer(file, remote)?.map(|(f, meta)| (Some(f), meta)));
    Ok(reread(id, read)?.and_then(|(f, meta)| match f {
        Some(f) => Ok((f, Some(meta))),
        None => Err("the footer was not fetched".to_owned()),
    }))
}

/// A remote Parquet file's footer: its tail fetched again (pinned to the
/// version opened, as every read), or taken from its bytes read whole, and parsed, with strings as Utf8View. A failed fetch is
/// `Err`; a footer that does not parse `Ok(Err)` with what is wrong, for the caller to name
/// the unit.
pub(crate) fn footer(
    file: &InputFile,
    remote: &Remote,
) -> Result<Result<(Footer, ArrowReaderMetadata), String>, ReadError> {
    let (tail_start, tail) = match tail_of(remote)? {
        Ok((start, tail, _)) => (start, tail),
        Err(m) => return Ok(Err(format!("not a readable Parquet file: {m}"))),
    };
    let sparse = Sparse::new(remote.object.size(), vec![(tail_start, tail.clone())]);
    Ok(load_view(&sparse, &file.schema).map(|loaded| {
        let footer = Footer {
            tail_start,
            tail,
            meta: Arc::clone(loaded.metadata()),
        };
        (footer, loaded)
    }))
}

/// What a listing found, and its warnings.
pub(crate) type Found<T> = (Vec<T>, Vec<String>);

/// The objects a URL names: one object, or (a URL ending in `/`) every `*.parquet` directly
/// under the prefix, sorted by key, as a local directory's files are; and a warning for each
/// key stepped over ([`skipped`]).
pub(crate) fn expand_url(
    url: &StoreUrl,
    options: &[(String, String)],
) -> Result<Found<(Object, Format)>, ReadError> {
    let loc = url.connect(options).map_err(read_error)?;
    if loc.is_prefix() {
        let listing = loc.list(".parquet").map_err(read_error)?;
        let warnings = skipped(&url.shown(), &listing.skipped);
        if listing.found.is_empty() {
            let e = ReadError::at(
                Path::new(url.as_str()),
                "prefix holds no Parquet files (*.parquet)",
            )
            .with_hint("point `--input` at Parquet objects or a prefix of them (ending in `/`)");
            return Err(with_skipped(e, &warnings));
        }
        let found = listing.found.into_iter();
        return Ok((found.map(|o| (o, Format::Parquet)).collect(), warnings));
    }
    let object = loc.object().map_err(read_error)?;
    let format = match jsonl_kind(Path::new(url.as_str())) {
        Some(_) => Format::Jsonl,
        None => Format::Parquet,
    };
    Ok((vec![(object, format)], Vec::new()))
}

/// `e` (nothing found), with the warnings of what was stepped over added to its hint.
pub(crate) fn with_skipped(mut e: ReadError, warnings: &[String]) -> ReadError {
    if !warnings.is_empty() {
        let hint = e.hint.take().into_iter().chain(warnings.iter().cloned());
        e.hint = Some(hint.collect::<Vec<_>>().join("; "));
    }
    e
}

/// The warnings for the entries under the prefix `base` that a listing stepped over (paths
/// relative to it; a folder ends in `/`).
pub(crate) fn skipped(base: &str, rels: &[String]) -> Vec<String> {
    let base = base.trim_end_matches('/');
    let why = "is not a valid object path (a `.` or `..` part, or an empty one)";
    rels.iter()
        .map(|rel| match rel.ends_with('/') {
            true => format!(
                "skipped the objects under `{base}/{rel}`: it {why}; rename them to read them"
            ),
            false => format!("skipped `{base}/{rel}`: it {why}; rename it to read it"),
        })
        .collect()
}

/// Opens a remote input: a Parquet file's footer from its fetched tail (kept, with the tail,
/// only when `keep`; see module `opening`), or from the whole object fetched when `whole`
/// (its bytes kept either way), a JSON Lines file from a staged local copy.
pub(crate) fn open_remote(
    object: Object,
    format: Format,
    keep: bool,
    whole: bool,
) -> Result<InputFile, ReadError> {
    let path = PathBuf::from(object.url());
    match format {
        Format::Jsonl => {
            let mut staged = tempfile::Builder::new()
                .prefix(".evalscore-input-")
                .tempfile()
                .map_err(|e| {
                    ReadError::at(&path, format!("cannot stage the download: {e}"))
                        .with_hint("check the temporary folder (TMPDIR)")
                })?;
            {
                let mut w = std::io::BufWriter::with_capacity(1 << 20, staged.as_file_mut());
                object.download(&mut w).map_err(read_error)?;
                w.flush()
                    .map_err(|e| ReadError::at(&path, format!("cannot stage the download: {e}")))?;
            }
            let staged = staged.into_temp_path();
            let mut file = jsonl::open(&staged, &path, jsonl_kind(&path).flatten())?;
            file.remote = Some(Arc::new(Remote {
                object,
                footer: None,
                whole: None,
                staged: Some(staged),
            }));
            Ok(file)
        }
        Format::Parquet => {
            let whole = whole && object.size() <= SMALL_OBJECT;
            let tail = fetch_tail(&object, whole)?.map_err(|m| unreadable(&path, &m))?;
            let (tail_start, tail_bytes) = (tail.0, tail.1.clone());
            // A small object's bytes stay for its units: in the footer kept, else alone, copied
            // out of the response's buffer, which may be larger than the object.
            let whole = (whole && !keep).then(|| Bytes::copy_from_slice(&tail_bytes));
            let (mut file, meta) = open_from_tail(&path, object.size(), tail, keep)?;
            let footer = keep.then_some(Footer {
                tail_start,
                tail: tail_bytes,
                meta,
            });
            if !keep {
                file.drop_footer();
            }
            file.remote = Some(Arc::new(Remote {
                object,
                footer,
                whole,
                staged: None,
            }));
            Ok(file)
        }
    }
}
