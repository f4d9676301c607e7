//! Local inputs: a path expanded into files (a directory into its `*.parquet` files), and a
//! local Parquet file's footer read and checked.

use crate::parquet_input::open_parquet;
use crate::{jsonl, jsonl_kind, pages, Format, InputFile, ReadError};
use evalscore_error::file_kind;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The files `p` names, each with its format (from its name): `p` itself, or a directory's
/// `*.parquet` files sorted by name.
pub(crate) fn expand(p: &Path) -> Result<Vec<(PathBuf, Format)>, ReadError> {
    let meta = std::fs::metadata(p).map_err(|e| {
        ReadError::at(p, format!("cannot read input: {e}")).with_hint("check the `--input` path")
    })?;
    if meta.is_dir() {
        let mut found: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| ReadError::at(p, format!("cannot list directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|q| {
                q.is_file()
                    && q.extension()
                        .is_some_and(|x| x.eq_ignore_ascii_case("parquet"))
            })
            .collect();
        found.sort();
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
        Format::Jsonl => jsonl::open(path, path, jsonl_kind(path).flatten()),
        Format::Parquet => {
            let handle =
                File::open(path).map_err(|e| ReadError::at(path, format!("cannot open: {e}")))?;
            check_schema_depth(path)?;
            let (footer_sha256, data_end) = footer(path)?;
            let mut file = open_parquet(path, &handle, footer_sha256, data_end)?;
            if !keep {
                file.drop_footer();
            }
            Ok(file)
        }
    }
}

/// Refuses a schema nested deeper than `MAX_SCHEMA_DEPTH` (module `pages`), read from the footer's
/// bytes before parquet-rs builds (recursively) its schema tree. A footer that does not look
/// like one is left to the decoder, which says what is wrong.
fn check_schema_depth(path: &Path) -> Result<(), ReadError> {
    let io = |e: std::io::Error| ReadError::at(path, format!("cannot read footer: {e}"));
    let mut f = File::open(path).map_err(io)?;
    let len = f.seek(SeekFrom::End(0)).map_err(io)?;
    if len < 12 {
        return Ok(());
    }
    let mut tail = [0u8; 8];
    f.seek(SeekFrom::Start(len - 8)).map_err(io)?;
    f.read_exact(&mut tail).map_err(io)?;
    let meta_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if &tail[4..] != b"PAR1" || meta_len + 12 > len {
        return Ok(());
    }
    f.seek(SeekFrom::Start(len - 8 - meta_len)).map_err(io)?;
    let mut buf = Vec::with_capacity(meta_len as usize);
    f.take(meta_len).read_to_end(&mut buf).map_err(io)?;
    pages::check_schema_depth(&buf).map_err(|m| {
        ReadError::at(path, format!("unsupported schema: {m}"))
            .with_hint("flatten the deepest columns, or drop those the task does not use")
    })
}

/// SHA-256 of a Parquet file's footer (the metadata, its 4-byte length and the magic), and
/// the offset where the footer starts, which ends the column chunks' data.
fn footer(path: &Path) -> Result<(String, u64), ReadError> {
    let io = |e: std::io::Error| ReadError::at(path, format!("cannot read footer: {e}"));
    let mut f = File::open(path).map_err(io)?;
    let len = f.seek(SeekFrom::End(0)).map_err(io)?;
    let mut tail = [0u8; 8];
    f.seek(SeekFrom::Start(len.saturating_sub(8))).map_err(io)?;
    f.read_exact(&mut tail).map_err(io)?;
    let meta_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    let start = len.saturating_sub(8 + meta_len);
    f.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut buf = Vec::with_capacity((len - start) as usize);
    f.take(len - start).read_to_end(&mut buf).map_err(io)?;
    Ok((format!("{:x}", Sha256::digest(&buf)), start))
}
