//! A strict reader of Thrift's compact protocol over a byte range: every value must fit in
//! the bytes left, every collection is checked before it is skipped, and nesting is bounded.

use crate::varint::{read_varint, unzigzag};
use std::io::{Read, Seek};

/// Deepest nesting of structs and lists inside a page header; real headers nest 3 deep.
const MAX_NESTING: u32 = 16;

// Thrift compact protocol wire types.
pub(super) const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
pub(super) const BYTE: u8 = 3;
pub(super) const I16: u8 = 4;
pub(super) const I32: u8 = 5;
pub(super) const I64: u8 = 6;
pub(super) const DOUBLE: u8 = 7;
pub(super) const BINARY: u8 = 8;
pub(super) const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
pub(super) const STRUCT: u8 = 12;
const UUID: u8 = 13;

pub(super) enum Bad {
    /// The header needs bytes beyond the end of the column chunk.
    Overrun,
    Malformed(String),
    Io(std::io::Error),
}

pub(super) fn malformed<T>(m: impl Into<String>) -> Result<T, Bad> {
    Err(Bad::Malformed(m.into()))
}

/// The bytes of one column chunk, read through a buffer, never past `end`.
pub(super) struct Bytes<R> {
    pub(super) reader: R,
    /// File offset of the next byte.
    pub(super) pos: u64,
    pub(super) end: u64,
}

impl<R: Read + Seek> Bytes<R> {
    pub(super) fn left(&self) -> u64 {
        self.end - self.pos
    }

    pub(super) fn byte(&mut self) -> Result<u8, Bad> {
        if self.pos >= self.end {
            return Err(Bad::Overrun);
        }
        let mut b = [0u8; 1];
        self.reader.read_exact(&mut b).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Bad::Overrun
            } else {
                Bad::Io(e)
            }
        })?;
        self.pos += 1;
        Ok(b[0])
    }

    /// The next `n` bytes, which must lie in the chunk.
    pub(super) fn bytes(&mut self, n: u64) -> Result<Vec<u8>, Bad> {
        if n > self.left() {
            return Err(Bad::Overrun);
        }
        let mut out = vec![0; n as usize];
        self.reader.read_exact(&mut out).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Bad::Overrun
            } else {
                Bad::Io(e)
            }
        })?;
        self.pos += n;
        Ok(out)
    }

    pub(super) fn skip(&mut self, n: u64) -> Result<(), Bad> {
        if n > self.left() {
            return Err(Bad::Overrun);
        }
        // `n` is at most the chunk's length, which fits in an i64 (the footer stores it so).
        let step = i64::try_from(n).map_err(|_| Bad::Overrun)?;
        self.reader.seek_relative(step).map_err(Bad::Io)?;
        self.pos += n;
        Ok(())
    }

    pub(super) fn varint(&mut self) -> Result<u64, Bad> {
        match read_varint(|| self.byte())? {
            Some(v) => Ok(v),
            None => malformed("a varint longer than 10 bytes"),
        }
    }

    pub(super) fn zigzag(&mut self) -> Result<i64, Bad> {
        self.varint().map(unzigzag)
    }

    pub(super) fn i32(&mut self) -> Result<i32, Bad> {
        let v = self.zigzag()?;
        // parquet-rs truncates instead; a value that does not fit is damage, not a number.
        i32::try_from(v).or_else(|_| malformed(format!("{v} does not fit in an i32 field")))
    }

    /// The next field of a struct: `None` at its end, else (id, wire type).
    pub(super) fn field(&mut self, last: i16) -> Result<Option<(i16, u8)>, Bad> {
        let b = self.byte()?;
        let ty = b & 0x0f;
        if ty == 0 {
            return Ok(None);
        }
        if ty > UUID {
            return malformed(format!("unknown Thrift type {ty}"));
        }
        let delta = i16::from(b >> 4);
        let id = if delta != 0 {
            last.checked_add(delta)
        } else {
            i16::try_from(self.zigzag()?).ok()
        };
        match id {
            Some(id) => Ok(Some((id, ty))),
            None => malformed("a field id out of range"),
        }
    }

    /// Skips a value of wire type `ty`. Every list, set and map must fit in the bytes left,
    /// each element taking at least one byte, so skipping costs at most the chunk's length.
    pub(super) fn skip_value(&mut self, ty: u8, depth: u32) -> Result<(), Bad> {
        if depth > MAX_NESTING {
            return malformed(format!("values nested deeper than {MAX_NESTING} levels"));
        }
        match ty {
            // A boolean struct field is held in its type nibble.
            BOOL_TRUE | BOOL_FALSE => Ok(()),
            BYTE => self.byte().map(|_| ()),
            I16 | I32 | I64 => self.varint().map(|_| ()),
            DOUBLE => self.skip(8),
            BINARY => {
                let n = self.varint()?;
                self.skip(n)
            }
            LIST | SET => {
                let (count, elem) = self.list_header()?;
                for _ in 0..count {
                    self.skip_value(elem, depth + 1)?;
                }
                Ok(())
            }
            MAP => {
                let count = self.varint()?;
                if count == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                let (k, v) = (kv >> 4, kv & 0x0f);
                self.elements(count.saturating_mul(2), &[k, v])?;
                for _ in 0..count {
                    self.skip_value(k, depth + 1)?;
                    self.skip_value(v, depth + 1)?;
                }
                Ok(())
            }
            STRUCT => {
                let mut last = 0;
                while let Some((id, t)) = self.field(last)? {
                    self.skip_value(t, depth + 1)?;
                    last = id;
                }
                Ok(())
            }
            UUID => self.skip(16),
            other => malformed(format!("unknown Thrift type {other}")),
        }
    }

    /// A list's (or set's) header: its element count and type, the count checked against
    /// the bytes left ([`Bytes::elements`]).
    pub(super) fn list_header(&mut self) -> Result<(u64, u8), Bad> {
        let h = self.byte()?;
        let count = match h >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        let elem = h & 0x0f;
        if count > 0 {
            self.elements(count, &[elem])?;
        }
        Ok((count, elem))
    }

    /// Checks a collection of `count` elements of types `types` before it is skipped.
    fn elements(&self, count: u64, types: &[u8]) -> Result<(), Bad> {
        // parquet-rs skips boolean elements as if they took no bytes (the protocol gives them
        // one each), so it would read such a list differently; no page header has one.
        if let Some(t) = types
            .iter()
            .find(|t| matches!(**t, BOOL_TRUE | BOOL_FALSE) || !(BYTE..=UUID).contains(*t))
        {
            return malformed(format!("a collection of element type {t}"));
        }
        if count > self.left() {
            return malformed(format!(
                "a collection of {count} elements with {} bytes left in the column chunk",
                self.left()
            ));
        }
        Ok(())
    }

    pub(super) fn expect(&self, what: &str, id: i16, ty: u8, want: u8) -> Result<(), Bad> {
        let same = ty == want || (want == BOOL_TRUE && ty == BOOL_FALSE);
        if same {
            Ok(())
        } else {
            malformed(format!(
                "field {id} of the {what} has Thrift type {ty}, not {want}"
            ))
        }
    }
}
