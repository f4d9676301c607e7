//! A file's parsed footer when a unit is decoded: as kept when the file was opened, or read
//! again (fetched again in object storage) for a file that dropped it (module `opening`).

use crate::parquet_input::{load_view, reread};
use crate::sparse::Sparse;
use crate::{InputFile, ReadError};
use parquet::arrow::arrow_reader::ArrowReaderMetadata;

impl InputFile {
    /// The parsed footer, strings as Utf8View: as kept at open, or read again from the file
    /// (fetched again in object storage) when it was dropped. `None` when it was kept
    /// without a view-typed form. A footer that no longer parses is `damaged(what is wrong)`.
    pub(crate) fn reader_meta(
        &self,
        damaged: impl Fn(&dyn std::fmt::Display) -> ReadError,
    ) -> Result<Option<ArrowReaderMetadata>, ReadError> {
        self.reader_meta_from(None, damaged)
    }

    /// [`InputFile::reader_meta`], a local file's footer read again through `handle` when
    /// one is given (the caller's, open on the file).
    pub(crate) fn reader_meta_from(
        &self,
        handle: Option<&std::fs::File>,
        damaged: impl Fn(&dyn std::fmt::Display) -> ReadError,
    ) -> Result<Option<ArrowReaderMetadata>, ReadError> {
        let Some(id) = self.dropped else {
            return Ok(self.reader_meta.clone());
        };
        if let Some(remote) = &self.remote {
            let (_, meta) = crate::remote::unit_footer(self, remote)?.map_err(|m| damaged(&m))?;
            return Ok(meta);
        }
        let read = || {
            let opened;
            let handle = match handle {
                Some(h) => h,
                None => {
                    opened = std::fs::File::open(&self.path)
                        .map_err(|e| ReadError::at(&self.path, format!("cannot open: {e}")))?;
                    &opened
                }
            };
            let meta = match crate::local::file_tail(&self.path, handle)? {
                (len, Ok((start, tail, _))) => {
                    load_view(&Sparse::new(len, vec![(start, tail)]), &self.schema)
                }
                (_, Err(_)) => load_view(handle, &self.schema),
            };
            Ok(meta.map(|meta| (None, meta)))
        };
        let (_, meta) = reread(id, read)?.map_err(|m| damaged(&m))?;
        Ok(Some(meta))
    }
}
