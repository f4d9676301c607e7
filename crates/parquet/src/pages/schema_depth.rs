//! The nesting depth of a footer's schema, measured before parquet-rs builds (recursively)
//! its schema tree, and its element counts checked against the footer's bytes before
//! parquet-rs reserves room for them.

use super::thrift::{malformed, Bad, Bytes, I32, LIST, STRUCT};
use std::io::{Read, Seek};

/// Deepest nesting of a Parquet schema (a top-level column is at depth 1): the decoder and
/// the Arrow conversion recurse once per level, so a deeper schema could overflow a stack.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// Why a footer's schema is refused before parquet-rs builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaFault {
    /// Nested deeper than [`MAX_SCHEMA_DEPTH`].
    TooDeep(String),
    /// Element counts that the footer's bytes cannot hold: damage.
    Damaged(String),
}

/// Checks the schema in a file's serialized `FileMetaData` without recursing: the schema is
/// a flat pre-order list of elements, each giving its number of children, so the list must
/// fit in the footer's bytes, every element's children must be among the elements after
/// it, and nesting is at most [`MAX_SCHEMA_DEPTH`]. Run before parquet-rs builds its schema
/// tree (recursively, reserving room for each element's children as the footer gives them).
pub fn check_schema_depth(footer: &[u8]) -> Result<(), SchemaFault> {
    let mut b = Bytes {
        reader: std::io::Cursor::new(footer),
        pos: 0,
        end: footer.len() as u64,
    };
    match b.schema_depth() {
        // A footer this reader cannot follow is left to the decoder, which reports it.
        Ok(()) | Err(Bad::Overrun | Bad::Io(_)) => Ok(()),
        Err(Bad::Malformed(m)) if m.contains("nests deeper") => Err(SchemaFault::TooDeep(m)),
        Err(Bad::Malformed(m)) => Err(SchemaFault::Damaged(m)),
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
            // Every element takes at least its stop byte.
            if count > self.end - self.pos {
                return malformed(format!(
                    "the schema claims {count} elements in a footer of {} bytes",
                    self.end
                ));
            }
            // Children still to come at each open level.
            let mut open: Vec<i64> = Vec::new();
            for i in 0..count {
                if let Some(top) = open.last_mut() {
                    *top -= 1;
                }
                if open.len() > MAX_SCHEMA_DEPTH {
                    return malformed(format!(
                        "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
                    ));
                }
                let children = self.schema_element()?;
                let after = count - i - 1;
                if children as u64 > after {
                    return malformed(format!(
                        "schema element {i} claims {children} children, but {after} elements follow it"
                    ));
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A `FileMetaData` whose schema is three elements, the first claiming `children`.
    fn footer(children: i32) -> Vec<u8> {
        // Field 1 (version, i32 1); field 2, a list of 3 structs.
        let mut f = vec![0x15, 0x02, 0x19, 0x3c, 0x55];
        crate::varint::put_varint(&mut f, crate::varint::zigzag(i64::from(children)));
        f.extend_from_slice(&[0x00, 0x00, 0x00, 0x00]);
        f
    }

    #[test]
    fn a_root_claiming_more_children_than_follow_is_damage() {
        assert_eq!(check_schema_depth(&footer(2)), Ok(()));
        assert_eq!(
            check_schema_depth(&footer(i32::MAX)),
            Err(SchemaFault::Damaged(
                "schema element 0 claims 2147483647 children, but 2 elements follow it".into()
            ))
        );
        // A list claiming more elements than the footer has bytes.
        let mut f = vec![0x15, 0x02, 0x19, 0xfc];
        crate::varint::put_varint(&mut f, u64::from(u32::MAX));
        f.extend_from_slice(&[0x00, 0x00]);
        assert_eq!(
            check_schema_depth(&f),
            Err(SchemaFault::Damaged(
                "the schema claims 4294967295 elements in a footer of 11 bytes".into()
            ))
        );
    }
}
