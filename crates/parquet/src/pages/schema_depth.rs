//! The nesting depth of a footer's schema, measured before parquet-rs builds (recursively)
//! its schema tree.

use super::thrift::{malformed, Bad, Bytes, I32, LIST, STRUCT};
use std::io::{Read, Seek};

/// Deepest nesting of a Parquet schema (a top-level column is at depth 1): the decoder and
/// the Arrow conversion recurse once per level, so a deeper schema could overflow a stack.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// Checks the nesting depth of the schema in a file's serialized `FileMetaData` without
/// recursing: the schema is a flat pre-order list of elements, each giving its number of
/// children. Run before parquet-rs builds its schema tree (recursively).
pub fn check_schema_depth(footer: &[u8]) -> Result<(), String> {
    let mut b = Bytes {
        reader: std::io::Cursor::new(footer),
        pos: 0,
        end: footer.len() as u64,
    };
    match b.schema_depth() {
        // A footer this reader cannot follow is left to the decoder, which reports it.
        Ok(()) | Err(Bad::Overrun | Bad::Io(_)) => Ok(()),
        Err(Bad::Malformed(m)) => Err(m),
    }
}

impl<R: Read + Seek> Bytes<R> {
    /// Walks `FileMetaData` up to its schema (field 2), then the schema's elements.
    fn schema_depth(&mut self) -> Result<(), Bad> {
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            last = id;
            if id != 2 || ty != LIST {
                self.skip_value(ty, 1)?;
                continue;
            }
            let h = self.byte()?;
            let count = match h >> 4 {
                15 => self.varint()?,
                n => u64::from(n),
            };
            if h & 0x0f != STRUCT {
                return Ok(());
            }
            // Children still to come at each open level.
            let mut open: Vec<i64> = Vec::new();
            for _ in 0..count {
                if let Some(top) = open.last_mut() {
                    *top -= 1;
                }
                if open.len() > MAX_SCHEMA_DEPTH {
                    return malformed(format!(
                        "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
                    ));
                }
                let children = self.schema_element()?;
                if children > 0 {
                    open.push(children);
                }
                while open.last() == Some(&0) {
                    open.pop();
                }
            }
            return Ok(());
        }
        Ok(())
    }

    /// One `SchemaElement`: its `num_children` (field 5), other fields skipped.
    fn schema_element(&mut self) -> Result<i64, Bad> {
        let mut last = 0;
        let mut children = 0;
        while let Some((id, ty)) = self.field(last)? {
            last = id;
            if id == 5 && ty == I32 {
                children = i64::from(self.i32()?.max(0));
            } else {
                self.skip_value(ty, 1)?;
            }
        }
        Ok(children)
    }
}
