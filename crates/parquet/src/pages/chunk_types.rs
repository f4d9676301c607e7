//! The physical type each column chunk's own metadata gives (`ColumnMetaData.type`), read
//! from the footer's bytes and compared with the schema's: parquet-rs takes a chunk's type
//! from the schema alone, so a footer whose schema says DOUBLE over a chunk of INT64 values
//! would be decoded as doubles.

use super::thrift::{malformed, Bad, Bytes, I32, LIST, STRUCT};
use parquet::file::metadata::ParquetMetaData;
use std::io::{Read, Seek};

/// Checks that every column chunk of `meta` (parsed from `footer`, a file's serialized
/// `FileMetaData`) has the physical type its schema column has; the error names the column
/// and both types. A footer this reader cannot follow is left to the decoder.
pub fn check_chunk_types(footer: &[u8], meta: &ParquetMetaData) -> Result<(), String> {
    let mut b = Bytes {
        reader: std::io::Cursor::new(footer),
        pos: 0,
        end: footer.len() as u64,
    };
    let Ok(groups) = b.chunk_types() else {
        return Ok(());
    };
    for (rg, types) in meta.row_groups().iter().zip(&groups) {
        for (c, stored) in rg.columns().iter().zip(types) {
            let schema = c.column_descr().physical_type().to_string();
            let Some(stored) = stored.map(type_name) else {
                continue;
            };
            if stored != schema {
                return Err(format!(
                    "column `{}` is {schema} in the schema and {stored} in its column chunk",
                    c.column_path().string()
                ));
            }
        }
    }
    Ok(())
}

/// The name of Parquet physical type `t` as parquet-rs prints it.
fn type_name(t: i32) -> String {
    const NAMES: [&str; 8] = [
        "BOOLEAN",
        "INT32",
        "INT64",
        "INT96",
        "FLOAT",
        "DOUBLE",
        "BYTE_ARRAY",
        "FIXED_LEN_BYTE_ARRAY",
    ];
    usize::try_from(t)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("type {t}"), |n| (*n).to_owned())
}

impl<R: Read + Seek> Bytes<R> {
    /// A list's element count and type, its count bounded by the bytes left.
    fn list_of_structs(&mut self) -> Result<u64, Bad> {
        let h = self.byte()?;
        let count = match h >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        if count > 0 && h & 0x0f != STRUCT {
            return malformed("a list of structs holds something else");
        }
        if count > self.left() {
            return malformed(format!("a list of {count} structs in fewer bytes"));
        }
        Ok(count)
    }

    /// `FileMetaData.row_groups` (field 4): for each row group, each column chunk's type.
    fn chunk_types(&mut self) -> Result<Vec<Vec<Option<i32>>>, Bad> {
        let mut groups = Vec::new();
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            last = id;
            if id == 4 && ty == LIST {
                for _ in 0..self.list_of_structs()? {
                    groups.push(self.row_group()?);
                }
            } else {
                self.skip_value(ty, 1)?;
            }
        }
        Ok(groups)
    }

    /// `RowGroup.columns` (field 1): each `ColumnChunk`'s `meta_data` (field 3) type.
    fn row_group(&mut self) -> Result<Vec<Option<i32>>, Bad> {
        let mut types = Vec::new();
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            last = id;
            if id == 1 && ty == LIST {
                for _ in 0..self.list_of_structs()? {
                    types.push(self.column_chunk()?);
                }
            } else {
                self.skip_value(ty, 1)?;
            }
        }
        Ok(types)
    }

    /// A `ColumnChunk`: its `ColumnMetaData` (field 3)'s `type` (field 1).
    fn column_chunk(&mut self) -> Result<Option<i32>, Bad> {
        let mut found = None;
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            last = id;
            if id == 3 && ty == STRUCT {
                found = self.column_meta()?;
            } else {
                self.skip_value(ty, 1)?;
            }
        }
        Ok(found)
    }

    fn column_meta(&mut self) -> Result<Option<i32>, Bad> {
        let mut found = None;
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            last = id;
            if id == 1 && ty == I32 {
                found = Some(self.i32()?);
            } else {
                self.skip_value(ty, 1)?;
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::ParquetMetaDataReader;
    use std::sync::Arc;

    /// A file of one required INT64 column `x` (100, 200) whose footer's schema, with
    /// `retyped`, says DOUBLE: its `FileMetaData` bytes, and the footer parsed by parquet-rs.
    fn footer(retyped: bool) -> (Vec<u8>, ParquetMetaData) {
        let x: ArrayRef = Arc::new(Int64Array::from(vec![100, 200]));
        let batch = RecordBatch::try_from_iter([("x", x)]).unwrap();
        let mut file = Vec::new();
        let mut w = ArrowWriter::try_new(&mut file, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let n = file.len();
        let len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
        let mut meta = file[n - 8 - len..n - 8].to_vec();
        // The schema element of `x`: type INT64 (field 1, zigzag 4), REQUIRED, name "x".
        let element = [0x15, 0x04, 0x25, 0x00, 0x18, 0x01, b'x'];
        let at = meta.windows(7).position(|w| w == element).unwrap();
        if retyped {
            meta[at + 1] = 0x0a; // DOUBLE
        }
        let parsed = ParquetMetaDataReader::decode_metadata(&meta).unwrap();
        (meta, parsed)
    }

    #[test]
    fn a_schema_type_other_than_the_chunks_is_damage() {
        let (bytes, meta) = footer(false);
        assert_eq!(check_chunk_types(&bytes, &meta), Ok(()));
        let (bytes, meta) = footer(true);
        assert_eq!(
            meta.row_group(0).column(0).column_descr().physical_type(),
            parquet::basic::Type::DOUBLE
        );
        assert_eq!(
            check_chunk_types(&bytes, &meta),
            Err("column `x` is DOUBLE in the schema and INT64 in its column chunk".into())
        );
    }
}
