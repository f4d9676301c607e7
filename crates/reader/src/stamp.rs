//! How a local input file is opened: without waiting on what is not a regular file, and
//! checked against its [`Stamp`] (length, modification time) from when the run first opened
//! it, so that a file rewritten during the run is an error naming it. Local Parquet inputs
//! (module `local`) and JSON Lines inputs (module `jsonl`) are both opened here.

use crate::ReadError;
use evalscore_error::file_kind;
use std::fs::File;
use std::path::Path;

/// Opens the local input `src` (named `path` in messages) for reading, with its length. It
/// is opened without waiting (`O_NONBLOCK`, which a regular file ignores), so that a FIFO put
/// in a file's place after the listing is refused at once instead of blocking the run on a
/// writer that never comes; anything but a regular file is refused as the listing refuses it.
///
/// `expected` is the file's [`Stamp`] when the run opened it first: a file whose length or
/// modification time changed since is an error naming it.
pub(crate) fn open_input(
    src: &Path,
    path: &Path,
    expected: Option<&Stamp>,
) -> Result<(File, Stamp), ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let f = options
        .open(src)
        .map_err(|e| ReadError::at(path, format!("cannot open: {e}")))?;
    let meta = f
        .metadata()
        .map_err(|e| ReadError::at(path, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(
            ReadError::at(path, format!("not a regular file (a {})", file_kind(&meta))).with_hint(
                "it was a file when the run listed its inputs: something replaced it; run again",
            ),
        );
    }
    let stamp = Stamp::of(&meta);
    match expected {
        Some(was) if *was != stamp => Err(ReadError::at(
            path,
            format!(
                "changed during the run: {} bytes when the run opened it, {} now{}",
                was.len,
                stamp.len,
                if was.len == stamp.len {
                    ", and modified since"
                } else {
                    ""
                }
            ),
        )
        .with_hint("another process rewrote it; run again once it is done")),
        _ => Ok((f, stamp)),
    }
}

/// A local file's length and modification time, as the run first opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub len: u64,
    pub modified: Option<std::time::SystemTime>,
}

impl Stamp {
    /// The stamp of a file with metadata `meta`.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}
