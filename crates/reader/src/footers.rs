//! A file's parsed footer when a unit is decoded: as kept when the file was opened, or read
//! again (fetched again in object storage) for a file that dropped it (module `opening`).

use crate::parquet_input::{
    guarded, load_view, reread, reread_hit, view_options, view_schema, without_statistics,
};
use crate::{InputFile, ReadError};
use arrow::datatypes::SchemaRef;
use evalscore_parquet::Sparse;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use parquet::file::metadata::ParquetMetaData;
use std::sync::Arc;

/// A local unit's footer ([`InputFile::local_footer`]): its Utf8View form, or a footer read
/// again and only parsed. A unit that rewrites its chunks (module `decompressed`) makes the
/// form from its own footer, so the form of the file's is made only when needed.
pub(crate) enum UnitFooter {
    View(Option<ArrowReaderMetadata>),
    Parsed(Arc<ParquetMetaData>),
}

impl UnitFooter {
    pub(crate) fn metadata(&self) -> Option<&ParquetMetaData> {
        match self {
            UnitFooter::View(m) => m.as_ref().map(|m| m.metadata().as_ref()),
            UnitFooter::Parsed(m) => Some(m),
        }
    }

    /// The schema the decoder gives (strings as Utf8View), of a file of schema `schema`.
    pub(crate) fn view_schema(&self, schema: &SchemaRef) -> SchemaRef {
        match self {
            UnitFooter::View(Some(m)) => m.schema().clone(),
            _ => view_schema(schema),
        }
    }

    /// The Utf8View form, of a file of schema `schema`; `Err` with what is wrong.
    pub(crate) fn into_view(
        self,
        schema: &SchemaRef,
    ) -> Result<Option<ArrowReaderMetadata>, String> {
        match self {
            UnitFooter::View(m) => Ok(m),
            UnitFooter::Parsed(m) => {
                guarded(|| ArrowReaderMetadata::try_new(m, view_options(schema)))?
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
        }
    }
}

impl InputFile {
    /// The parsed footer, strings as Utf8View: as kept at open, or read again from the file
    /// (fetched again in object storage) when it was dropped. `None` when it was kept
    /// without a view-typed form. A footer that no longer parses is `damaged(what is wrong)`.
    pub(crate) fn reader_meta(
        &self,
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
            let (handle, stamp) =
                crate::local::open_input(&self.path, &self.path, self.stamp.as_ref())?;
            let meta = match crate::local::tail_of(&self.path, &handle, stamp.len)? {
                (len, Ok((start, tail, _))) => {
                    load_view(&Sparse::new(len, vec![(start, tail)]), &self.schema)
                }
                (_, Err(_)) => load_view(&handle, &self.schema),
            };
            Ok(meta.map(|meta| (None, meta)))
        };
        let (_, meta) = reread(id, read)?.map_err(|m| damaged(&m))?;
        Ok(Some(meta))
    }

    /// A local unit's footer, through `handle` (open on the file): as kept at open, this
    /// thread's last one read again if it is this file's, else read again and parsed.
    pub(crate) fn local_footer(
        &self,
        (handle, len): (&std::fs::File, u64),
        damaged: impl Fn(&dyn std::fmt::Display) -> ReadError,
    ) -> Result<UnitFooter, ReadError> {
        let Some(id) = self.dropped else {
            return Ok(UnitFooter::View(self.reader_meta.clone()));
        };
        if let Some((_, meta)) = reread_hit(id) {
            return Ok(UnitFooter::View(Some(meta)));
        }
        match crate::local::tail_of(&self.path, handle, len)? {
            (len, Ok((start, tail, _))) => {
                let sparse = Sparse::new(len, vec![(start, tail)]);
                // Only for decoding: the columns' statistics are skipped. (A unit whose kept
                // columns are copied as stored reads the footer with them, `reader_meta`.)
                let meta = guarded(|| without_statistics().parse_and_finish(&sparse))
                    .map_err(|m| damaged(&m))?
                    .map_err(|e| damaged(&e))?;
                Ok(UnitFooter::Parsed(Arc::new(meta)))
            }
            // Not the end of a Parquet file: parquet-rs, reading it, says what is wrong.
            (_, Err(_)) => load_view(handle, &self.schema)
                .map(|m| UnitFooter::View(Some(m)))
                .map_err(|m| damaged(&m)),
        }
    }
}
