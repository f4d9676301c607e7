//! A file of which some byte ranges are in memory: a remote file's tail and fetched column
//! chunks, a local file's end (its footer) read at open, or a small local unit's chunks read
//! at once. The Parquet decoder reads it as it reads a file.

use bytes::Bytes;
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

/// A file of which only some byte ranges were fetched or read: enough for the Parquet
/// decoder, which reads only the footer and the chunks of the projected columns. Asking for
/// bytes that were not fetched is an error (it would be a bug in the choice of ranges, or a
/// damaged page reaching past its chunk), never a fetch.
#[derive(Clone)]
pub struct Sparse {
    len: u64,
    /// (first byte, bytes), sorted by first byte.
    pieces: Vec<(u64, Bytes)>,
}

impl Sparse {
    pub fn new(len: u64, mut pieces: Vec<(u64, Bytes)>) -> Sparse {
        pieces.sort_by_key(|p| p.0);
        Sparse { len, pieces }
    }

    /// This file with the pieces `more` added (past the others), `len` bytes long.
    pub fn with(&self, len: u64, more: Vec<(u64, Bytes)>) -> Sparse {
        let mut pieces = self.pieces.clone();
        pieces.extend(more);
        Sparse::new(len, pieces)
    }

    pub fn piece(&self, start: u64, length: u64) -> Result<Bytes, ParquetError> {
        // The last piece starting at or before `start` holds it, if any does.
        let i = self.pieces.partition_point(|p| p.0 <= start);
        if i > 0 {
            let (at, b) = &self.pieces[i - 1];
            let off = start - at;
            if off.saturating_add(length) <= b.len() as u64 {
                return Ok(b.slice(off as usize..(off + length) as usize));
            }
        }
        Err(ParquetError::General(format!(
            "bytes {start} to {} of the file were not read",
            start.saturating_add(length)
        )))
    }
}

impl Length for Sparse {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for Sparse {
    type T = std::io::Cursor<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let i = self.pieces.partition_point(|p| p.0 <= start);
        let (at, b) = i
            .checked_sub(1)
            .and_then(|i| self.pieces.get(i))
            .filter(|(at, b)| start - at <= b.len() as u64)
            .ok_or_else(|| {
                ParquetError::General(format!("byte {start} of the file was not read"))
            })?;
        Ok(std::io::Cursor::new(b.slice((start - at) as usize..)))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.piece(start, length as u64)
    }
}
