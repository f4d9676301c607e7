//! Local inputs: a path expanded into files (a directory into its `*.parquet` files), and a
//! local Parquet file's footer read and checked.

use crate::parquet_input::{not_parquet, open_from_tail, read_tail, Tail};
// Part of what a local input is: its readers (batches, footers, chunks) open it through here.
pub(crate) use crate::stamp::{open_input, Stamp};
use crate::{jsonl, jsonl_kind, pages, Format, InputFile, ReadError};
use bytes::Bytes;
use evalscore_error::file_kind;
use evalscore_parquet::Sparse;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The files `p` names, each with its format (from its name): `p` itself, or a directory's
/// `*.parquet` files sorted by name.
pub(crate) fn expand(p: &Path) -> Result<Vec<(PathBuf, Format)>, ReadError> {
    let meta = std::fs::metadata(p).map_err(|e| {
        ReadError::at(p, format!("cannot read input: {e}")).with_hint("check the `--input` path")
    })?;
    if meta.is_dir() {
        // The entry's own type, as the listing gives it: a `stat` per entry only for a
        // symbolic link (read when it leads to a file), not for each of thousands of files.
        let mut found: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| ReadError::at(p, format!("cannot list directory: {e}")))?
            .filter_map(Result::ok)
            .filter(|e| {
                Path::new(&e.file_name())
                    .extension()
                    .is_some_and(|x| x.eq_ignore_ascii_case("parquet"))
                    && e.file_type()
                        .is_ok_and(|t| t.is_file() || (t.is_symlink() && e.path().is_file()))
            })
            .map(|e| e.path())
            .collect();
        found.sort_unstable_by(|a, b| crate::tree::byte_order(a, b));
        if found.is_empty() {
            return Err(
                ReadError::at(p, "directory holds no Parquet files (*.parquet)")
                    .with_hint("point `--input` at Parquet files or a directory of them"),
            );
        }
        return Ok(found.into_iter().map(|f| (f, Format::Parquet)).collect());
    }
    if !meta.is_file() {
        return Err(ReadError::at(
            p,
            format!("not a regular file or a directory (a {})", file_kind(&meta)),
        )
        .with_hint("inputs are read whole and more than once: copy a stream to a file first"));
    }
    let format = match jsonl_kind(p) {
        Some(_) => Format::Jsonl,
        None => Format::Parquet,
    };
    Ok(vec![(p.to_path_buf(), format)])
}

/// Opens a local input: a Parquet file's footer (its parsed form dropped unless `keep`, see
/// module `opening`), a JSON Lines file's first pass.
pub(crate) fn open_file(path: &Path, format: Format, keep: bool) -> Result<InputFile, ReadError> {
    match format {
        Format::Jsonl => {
            // Taken before the first pass, so that a change during it shows later (`expand`
            // has refused anything but a regular file).
            let stamp = std::fs::metadata(path)
                .map(|m| Stamp::of(&m))
                .map_err(|e| ReadError::at(path, format!("cannot read: {e}")))?;
            let mut file = jsonl::open(path, path, jsonl_kind(path).flatten())?;
            file.stamp = Some(stamp);
            Ok(file)
        }
        Format::Parquet => {
            let (handle, stamp) = open_input(path, path, None)?;
            let (len, tail) = tail_of(path, &handle, stamp.len)?;
            let mut file = match tail {
                Ok(tail) => open_from_tail(path, len, tail, keep)?.0,
                // Not the end of a Parquet file: parquet-rs, reading it, says what is wrong.
                Err(_) => return Err(not_parquet(path, &handle)),
            };
            if !keep {
                file.drop_footer();
            }
            file.stamp = Some(stamp);
            Ok(file)
        }
    }
}

/// Bytes read first from a local Parquet file's end: the footers of narrow tables fit (a
/// small file's footer is read at open and, once dropped, by each unit).
const TAIL: u64 = 4 << 10;

/// A local Parquet file's end holding the whole footer ([`read_tail`]), of a file of `len`
/// bytes: one read, or two for a footer longer than [`TAIL`].
pub(crate) fn tail_of(
    path: &Path,
    f: &File,
    len: u64,
) -> Result<(u64, Result<Tail, String>), ReadError> {
    let io = |e: std::io::Error| ReadError::at(path, format!("cannot read footer: {e}"));
    let tail = read_tail(len, TAIL, |r| read_range(f, r)).map_err(io)?;
    Ok((len, tail))
}

/// Bytes `r` of `f`.
fn read_range(f: &File, r: Range<u64>) -> std::io::Result<Bytes> {
    let mut buf = vec![0u8; (r.end - r.start) as usize];
    f.read_exact_at(&mut buf, r.start)?;
    Ok(buf.into())
}

/// Up to this span of bytes, from its first needed column chunk to its last, a local unit's
/// needed chunks are read into memory at once. Through a file handle, parquet-rs duplicates
/// the handle, seeks and reads for every column chunk and page reader, and the page-header
/// checks read each header again: many system calls for a small file's row group, against
/// one open and a read or two here. A larger unit (a large file's row group) stays on the
/// handle, where those calls are few per byte and its chunks are not held in memory at once;
/// the limit is low enough that a large file's row groups stay under the run's memory bound
/// (BENCHMARKS.md, "Many files").
const IN_MEMORY_UNIT: u64 = 1 << 20;

/// Needed chunks closer than this are read with one read, the bytes between them included:
/// copying a few KiB costs less than another system call. Farther apart (a wide column the
/// run does not read, such as a prompt), each is read on its own.
const READ_GAP: u64 = 8 << 10;

/// A small unit's needed column chunks (those of the columns `roots` in row group
/// `row_group` of `meta`), read from `f` (the file at `path`) at once: one read per run of
/// chunks closer than [`READ_GAP`]. `None` when they span more than [`IN_MEMORY_UNIT`] or
/// the footer places a chunk where it cannot be (the decoder, reading through the handle,
/// then says what is wrong).
pub(crate) fn small_unit(
    path: &Path,
    (f, len): (&File, u64),
    meta: &parquet::file::metadata::ParquetMetaData,
    row_group: usize,
    roots: &[usize],
) -> Result<Option<Sparse>, ReadError> {
    let schema = meta.file_metadata().schema_descr();
    let Some(rg) = meta.row_groups().get(row_group) else {
        return Ok(None);
    };
    let mut chunks = Vec::new();
    for (leaf, chunk) in rg.columns().iter().enumerate() {
        if leaf < schema.num_columns() && roots.contains(&schema.get_column_root_idx(leaf)) {
            let Ok((start, len)) = pages::checked_range(chunk) else {
                return Ok(None);
            };
            chunks.push((start, start.saturating_add(len)));
        }
    }
    let reads = coalesce(chunks, READ_GAP);
    let total: u64 = reads.iter().map(|r| r.end - r.start).sum();
    let (Some(first), Some(last)) = (reads.first(), reads.last()) else {
        return Ok(None);
    };
    let last = last.end;
    if total == 0 || last - first.start > IN_MEMORY_UNIT {
        return Ok(None);
    }
    let io = |e: std::io::Error| ReadError::at(path, format!("cannot read: {e}"));
    if last > len {
        return Ok(None);
    }
    // One buffer for all the reads, each piece a slice of it.
    let mut buf = vec![0u8; total as usize];
    let mut at = 0usize;
    for r in &reads {
        let n = (r.end - r.start) as usize;
        f.read_exact_at(&mut buf[at..at + n], r.start).map_err(io)?;
        at += n;
    }
    let buf = Bytes::from(buf);
    let mut at = 0usize;
    let pieces = reads
        .iter()
        .map(|r| {
            let n = (r.end - r.start) as usize;
            at += n;
            (r.start, buf.slice(at - n..at))
        })
        .collect();
    Ok(Some(Sparse::new(len, pieces)))
}

/// The byte ranges `chunks` (start, end) sorted and joined where less than `gap` bytes lie
/// between them.
fn coalesce(mut chunks: Vec<(u64, u64)>, gap: u64) -> Vec<Range<u64>> {
    chunks.sort_unstable();
    let mut reads: Vec<Range<u64>> = Vec::with_capacity(chunks.len());
    for (start, end) in chunks {
        match reads.last_mut() {
            Some(r) if start <= r.end.saturating_add(gap) => r.end = r.end.max(end),
            _ => reads.push(start..end),
        }
    }
    reads
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Inputs;
    use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow::compute::concat;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    use std::sync::Arc;

    /// `rows` rows of an id and a 40-character text that does not compress, in one row
    /// group, uncompressed: 48 bytes a row of column chunks.
    fn write(path: &Path, rows: usize) {
        let mut rng = fastrand::Rng::with_seed(11);
        let text: StringArray = (0..rows)
            .map(|_| Some((0..40).map(|_| rng.alphanumeric()).collect::<String>()))
            .collect();
        let ids = Int64Array::from_iter_values(0..rows as i64);
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(ids) as ArrayRef),
            ("text", Arc::new(text)),
        ])
        .unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_max_row_group_row_count(Some(rows))
            .build();
        let mut w =
            ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    /// The columns as `Inputs` reads them and as parquet-rs reads them, each joined.
    fn both(path: &Path) -> (Vec<ArrayRef>, Vec<ArrayRef>) {
        let inputs = Inputs::open(&[path.to_path_buf()]).unwrap();
        let columns = ["id".to_owned(), "text".to_owned()];
        let mut ours: Vec<Vec<ArrayRef>> = vec![Vec::new(); 2];
        for unit in inputs.units() {
            inputs
                .read_unit(&unit, &columns, |b: RecordBatch| {
                    for (c, a) in ours.iter_mut().zip(b.columns()) {
                        c.push(arrow::compute::cast(a, &arrow::datatypes::DataType::Utf8).unwrap());
                    }
                    Ok::<_, ReadError>(())
                })
                .unwrap();
        }
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut theirs: Vec<Vec<ArrayRef>> = vec![Vec::new(); 2];
        for b in reader {
            for (c, a) in theirs.iter_mut().zip(b.unwrap().columns()) {
                c.push(arrow::compute::cast(a, &arrow::datatypes::DataType::Utf8).unwrap());
            }
        }
        let join = |v: Vec<Vec<ArrayRef>>| -> Vec<ArrayRef> {
            v.iter()
                .map(|c| {
                    concat(&c.iter().map(|a| a.as_ref()).collect::<Vec<&dyn Array>>()).unwrap()
                })
                .collect()
        };
        (join(ours), join(theirs))
    }

    /// A folder's `*.parquet` entries that are files, or links to files, in name order; a
    /// folder named like one, a link to a folder and other names are not listed.
    #[test]
    fn a_folder_lists_its_parquet_files_and_links_to_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("b.parquet"), b"x").unwrap();
        std::fs::write(d.join("a.txt"), b"x").unwrap();
        std::fs::create_dir(d.join("c.parquet")).unwrap();
        std::os::unix::fs::symlink(d.join("b.parquet"), d.join("a.PARQUET")).unwrap();
        std::os::unix::fs::symlink(d.join("c.parquet"), d.join("d.parquet")).unwrap();
        std::os::unix::fs::symlink(d.join("gone"), d.join("e.parquet")).unwrap();
        let found: Vec<PathBuf> = expand(d).unwrap().into_iter().map(|(p, _)| p).collect();
        assert_eq!(found, [d.join("a.PARQUET"), d.join("b.parquet")]);
    }

    /// Chunks less than the gap apart are read together; a wide chunk the unit does not
    /// need, between two it needs, is not read.
    #[test]
    fn needed_chunks_are_read_in_runs() {
        let chunks = vec![(20_000, 20_010), (4, 10), (100, 110), (110, 300)];
        assert_eq!(coalesce(chunks, 8 << 10), vec![4..300, 20_000..20_010]);
        assert_eq!(coalesce(vec![(4, 10), (10, 20)], 0), vec![4..20]);
        assert_eq!(coalesce(vec![(4, 10), (11, 20)], 0), vec![4..10, 11..20]);
    }

    /// A file that does not end as Parquet does, however short, is refused in parquet-rs's
    /// words with the usual hint (a file shorter than the 8-byte footer end included).
    #[test]
    fn files_that_do_not_end_as_parquet_are_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        for bytes in [&b"abc"[..], b"", b"PAR1PAR1", b"id,answer\n1,Paris\n"] {
            let path = dir.path().join("x.parquet");
            std::fs::write(&path, bytes).unwrap();
            let e = Inputs::open(std::slice::from_ref(&path)).unwrap_err();
            let text = e.to_string();
            let want = format!("{}: not a readable Parquet file: ", path.display());
            assert!(text.starts_with(&want), "{bytes:?}: {text}");
            if bytes == b"abc" {
                assert_eq!(
                    text,
                    format!("{want}EOF: Parquet file too small. Size is 3 but need 8")
                );
            }
            assert_eq!(
                e.hint.as_deref(),
                Some("the file may be truncated, still being written, or not Parquet at all"),
                "{bytes:?}"
            );
        }
    }

    /// A unit whose chunks span at most [`IN_MEMORY_UNIT`] is read into memory at once, a
    /// larger one through the file handle; both give what parquet-rs gives.
    #[test]
    fn small_units_are_read_at_once_and_large_ones_through_the_handle() {
        let dir = tempfile::tempdir().unwrap();
        let rows_over = (IN_MEMORY_UNIT / 48) as usize + 1_000;
        for (name, rows, at_once) in [
            ("small.parquet", 2_000, true),
            ("large.parquet", rows_over, false),
        ] {
            let path = dir.path().join(name);
            write(&path, rows);
            let meta = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
                .unwrap()
                .metadata()
                .clone();
            let f = File::open(&path).unwrap();
            let len = f.metadata().unwrap().len();
            let read = small_unit(&path, (&f, len), &meta, 0, &[0, 1]).unwrap();
            assert_eq!(read.is_some(), at_once, "{name}");
            let (ours, theirs) = both(&path);
            assert_eq!(ours[0].len(), rows, "{name}");
            assert_eq!(ours, theirs, "{name}");
        }
    }
}
