//! A footer's Thrift structures read field by field, as the C++ reader (pyarrow, DuckDB's
//! ancestor, Spark's via parquet-mr likewise) reads them, and compared with what parquet-rs
//! made of them. parquet-rs is lenient where damage turns into data:
//!
//! - it takes a chunk's physical type from the schema alone, so INT64 values under a schema
//!   column that says DOUBLE are decoded as doubles (`ColumnMetaData.type` is compared here);
//! - it does not insist on a struct's required fields: a footer whose `ColumnMetaData` lost
//!   its `type` or whose `PageEncodingStats` lost its `count` still opens, where the C++
//!   reader refuses it (`TProtocolException: Invalid data`);
//! - it reads an integer field whatever its integer wire type, where the C++ reader skips a
//!   field of another type than its own (a `dictionary_page_offset` sent as an i16 is no
//!   offset there, and the chunk is read from its data page on);
//! - it skips a chunk's statistics when it does not need them, so a `min_value` or
//!   `max_value` narrower than its type (an INT64 of 0 bytes) goes unseen, where the C++
//!   reader fails (`Unexpected end of stream`);
//! - it ignores the level histograms of `SizeStatistics`, which the C++ reader requires to
//!   have one entry per level, and their unencoded byte array sizes, which it refuses for a
//!   column of another type;
//! - it reads a group whose logical type is not LIST, MAP or VARIANT (a list's `LIST` made
//!   `UNKNOWN`, or a member it does not know), or disagrees with its converted type (MAP
//!   where that says LIST), by its converted type, where the C++ reader follows the logical
//!   type, and refuses the group.
//!
//! Each of these is an error here naming the column, before any row is read.

use super::footer_shapes::{Field, Note, Opens, Shape, FILE_META};
use super::thrift::{malformed, Bad, Bytes, BINARY, BOOL_TRUE, I16, I32, I64, LIST, STRUCT};
use parquet::basic::Type;
use parquet::file::metadata::ParquetMetaData;
use std::io::{Read, Seek};

/// Deepest nesting of the structs read here (FileMetaData > RowGroup > ColumnChunk >
/// ColumnMetaData > Statistics is 5; a SchemaElement's LogicalType > TimeType > TimeUnit 4).
const MAX_DEPTH: u32 = 8;

/// What the walk noted: each row group's column chunks, and the schema's elements.
#[derive(Default)]
struct Notes {
    groups: Vec<Vec<Chunk>>,
    elements: Vec<Element>,
}

/// What the walk noted of one schema element.
#[derive(Default)]
struct Element {
    name: String,
    group: bool,
    /// Whether it has a `LogicalType`, and the member set, by name (none of those known
    /// here: a kind the C++ reader calls undefined).
    has_logical: bool,
    logical: Option<&'static str>,
    converted: Option<i64>,
}

/// What the walk noted of one column chunk.
#[derive(Default)]
struct Chunk {
    stored_type: Option<i32>,
    max_value: Option<u64>,
    min_value: Option<u64>,
    rep_histogram: Option<u64>,
    def_histogram: Option<u64>,
    /// Whether its size statistics count unencoded byte array bytes.
    unencoded: bool,
}

/// Checks the serialized `FileMetaData` `footer`, which parquet-rs parsed into `meta`: every
/// struct has its required fields (with their wire types), and each column chunk's own type,
/// statistics and level histograms agree with its schema column. The error names the column
/// (or the struct that lacks a field) and what is wrong.
pub fn check_footer_fields(footer: &[u8], meta: &ParquetMetaData) -> Result<(), String> {
    let mut b = Bytes {
        reader: std::io::Cursor::new(footer),
        pos: 0,
        end: footer.len() as u64,
    };
    let mut notes = Notes::default();
    match b.walk(&FILE_META, 0, &mut notes) {
        Ok(()) => {}
        Err(Bad::Malformed(m)) => return Err(m),
        Err(Bad::Overrun) => return Err("the footer's Thrift runs past its end".into()),
        Err(Bad::Io(e)) => return Err(e.to_string()),
    }
    // The C++ reader refuses a group of a logical type for columns, and a column of one for
    // groups; parquet-rs reads such a list by its converted type, or as a struct.
    for e in notes.elements.iter().skip(1) {
        if e.group && e.has_logical && e.logical.is_none() {
            return Err(format!(
                "schema element `{}` is a group of a logical type of no known kind",
                e.name
            ));
        }
        let nested = matches!(e.logical, Some("LIST" | "MAP" | "VARIANT"));
        if let Some(logical) = e.logical.filter(|_| nested != e.group) {
            let kind = if e.group { "a group" } else { "a column" };
            return Err(format!(
                "schema element `{}` is {kind}, to which logical type {logical} does not apply",
                e.name
            ));
        }
        // A list or map by one annotation and not the other: the C++ reader follows the
        // logical type, parquet-rs the converted one.
        let agree = match (e.logical, e.converted) {
            (Some("LIST"), Some(c)) => c == 3,
            (Some("MAP"), Some(c)) => c == 1 || c == 2,
            (Some(_), Some(c)) => c != 1 && c != 2 && c != 3,
            _ => true,
        };
        if let (false, Some(logical), Some(c)) = (agree, e.logical, e.converted) {
            let converted = match c {
                1 => "MAP".to_owned(),
                2 => "MAP_KEY_VALUE".to_owned(),
                3 => "LIST".to_owned(),
                c => format!("{c}"),
            };
            return Err(format!(
                "schema element `{}` has logical type {logical} and converted type {converted}",
                e.name
            ));
        }
    }
    for (g, (rg, chunks)) in meta.row_groups().iter().zip(&notes.groups).enumerate() {
        for (c, chunk) in rg.columns().iter().zip(chunks) {
            let descr = c.column_descr();
            let col = c.column_path().string();
            let schema = descr.physical_type();
            if let Some(stored) = chunk.stored_type.map(type_name) {
                if stored != schema.to_string() {
                    return Err(format!(
                        "column `{col}` is {schema} in the schema and {stored} in its column chunk"
                    ));
                }
            }
            let width = match schema {
                Type::BOOLEAN => Some(1),
                Type::INT32 | Type::FLOAT => Some(4),
                Type::INT64 | Type::DOUBLE => Some(8),
                Type::INT96 => Some(12),
                Type::FIXED_LEN_BYTE_ARRAY => u64::try_from(descr.type_length()).ok(),
                Type::BYTE_ARRAY => None,
            };
            for (what, len) in [
                ("min_value", chunk.min_value),
                ("max_value", chunk.max_value),
            ] {
                if let (Some(len), Some(width)) = (len, width) {
                    if len < width {
                        return Err(format!(
                            "row group {g}, column `{col}`: its statistics' {what} holds {len} bytes, where {schema} values take {width}"
                        ));
                    }
                }
            }
            if chunk.unencoded && schema != Type::BYTE_ARRAY {
                return Err(format!(
                    "row group {g}, column `{col}`: its size statistics count unencoded byte array bytes, for a column of {schema}"
                ));
            }
            for (what, len, max) in [
                ("repetition", chunk.rep_histogram, descr.max_rep_level()),
                ("definition", chunk.def_histogram, descr.max_def_level()),
            ] {
                let levels = u64::try_from(max).unwrap_or(0) + 1;
                if let Some(len) = len.filter(|&n| n > 0 && n != levels) {
                    return Err(format!(
                        "row group {g}, column `{col}`: its {what} level histogram has {len} entries, for {levels} levels"
                    ));
                }
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

/// Whether a field of wire type `got` is read as one of type `want`: a boolean field's
/// value is its type (true or false).
fn same_type(want: u8, got: u8) -> bool {
    want == got || (want == BOOL_TRUE && got == BOOL_TRUE + 1)
}

impl<R: Read + Seek> Bytes<R> {
    /// Reads a struct of shape `shape`, noting into `notes`. A field of a known id but
    /// another wire type is skipped, as the C++ reader skips it (and then misses it if the
    /// struct requires it).
    fn walk(&mut self, shape: &Shape, depth: u32, notes: &mut Notes) -> Result<(), Bad> {
        if depth > MAX_DEPTH {
            return malformed(format!("a {} nested too deep", shape.name));
        }
        match shape.opens {
            Opens::RowGroup => notes.groups.push(Vec::new()),
            Opens::Chunk => {
                if let Some(g) = notes.groups.last_mut() {
                    g.push(Chunk::default());
                }
            }
            Opens::Element => notes.elements.push(Element::default()),
            Opens::Nothing => {}
        }
        let mut seen = 0u64;
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            last = id;
            let Some(i) = shape.fields.iter().position(|f| f.id == id) else {
                self.skip_value(ty, depth + 1)?;
                continue;
            };
            // The C++ reader skips a field of another type, and then reads the struct without
            // it (a dictionary page offset sent as an i16 is no offset there, but one for
            // parquet-rs): readers would part ways.
            let f = &shape.fields[i];
            if !same_type(f.ty, ty) {
                return malformed(format!(
                    "field {id} (`{}`) of a {} has Thrift type {ty}, not {}",
                    f.name, shape.name, f.ty
                ));
            }
            seen |= 1 << i;
            if let Some(e) = notes.elements.last_mut() {
                match f.note {
                    Note::Name => {
                        let n = self.varint()?;
                        e.name = String::from_utf8_lossy(&self.bytes(n)?).into_owned();
                        continue;
                    }
                    Note::Children => e.group = true,
                    Note::LogicalType => e.has_logical = true,
                    Note::Converted if ty == I32 => {
                        e.converted = Some(self.zigzag()?);
                        continue;
                    }
                    Note::Logical => e.logical = Some(f.name),
                    _ => {}
                }
            }
            let noted = self.field_value(f, ty, depth, notes)?;
            let chunk = notes.groups.last_mut().and_then(|g| g.last_mut());
            if let (Some(v), Some(chunk)) = (noted, chunk) {
                match f.note {
                    Note::Type => chunk.stored_type = i32::try_from(v).ok(),
                    Note::MaxValue => chunk.max_value = u64::try_from(v).ok(),
                    Note::MinValue => chunk.min_value = u64::try_from(v).ok(),
                    Note::RepHistogram => chunk.rep_histogram = u64::try_from(v).ok(),
                    Note::DefHistogram => chunk.def_histogram = u64::try_from(v).ok(),
                    Note::Unencoded => chunk.unencoded = true,
                    _ => {}
                }
            }
        }
        for (i, f) in shape.fields.iter().enumerate() {
            if f.required && seen & (1 << i) == 0 {
                return malformed(format!(
                    "a {} lacks its required field {} (`{}`)",
                    shape.name, f.id, f.name
                ));
            }
        }
        Ok(())
    }

    /// Reads field `f`'s value (of wire type `ty`); returns what a note keeps of it: an
    /// integer's value, a binary's length, a list's element count.
    fn field_value(
        &mut self,
        f: &Field,
        ty: u8,
        depth: u32,
        notes: &mut Notes,
    ) -> Result<Option<i64>, Bad> {
        match (ty, f.inner) {
            (STRUCT, Some(inner)) => self.walk(inner, depth + 1, notes).map(|()| None),
            (LIST, Some(inner)) => {
                let (count, elem) = self.list_header()?;
                if count > 0 && elem != STRUCT {
                    return malformed(format!("`{}` holds elements of type {elem}", f.name));
                }
                for _ in 0..count {
                    self.walk(inner, depth + 1, notes)?;
                }
                Ok(None)
            }
            (LIST, None) => {
                let (count, elem) = self.list_header()?;
                for _ in 0..count {
                    self.skip_value(elem, depth + 1)?;
                }
                Ok(i64::try_from(count).ok())
            }
            (BINARY, _) => {
                let n = self.varint()?;
                self.skip(n)?;
                Ok(i64::try_from(n).ok())
            }
            (I16 | I32 | I64, _) => self.zigzag().map(Some),
            _ => self.skip_value(ty, depth + 1).map(|()| None),
        }
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

    /// The serialized `FileMetaData` of a file of one INT64 column `x` (100, 200; nullable
    /// when `nullable`, so its chunk has a definition level histogram) with parquet-rs's
    /// default statistics.
    fn footer_bytes(nullable: bool) -> Vec<u8> {
        let x: ArrayRef = Arc::new(Int64Array::from(vec![100, 200]));
        let field = arrow::datatypes::Field::new("x", arrow::datatypes::DataType::Int64, nullable);
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![field]));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![x]).unwrap();
        let mut file = Vec::new();
        let mut w = ArrowWriter::try_new(&mut file, schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let n = file.len();
        let len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
        file[n - 8 - len..n - 8].to_vec()
    }

    /// `meta` checked after parquet-rs parsed it, which must succeed.
    fn check(meta: &[u8]) -> Result<(), String> {
        let parsed = ParquetMetaDataReader::decode_metadata(meta).unwrap();
        check_footer_fields(meta, &parsed)
    }

    fn at(meta: &[u8], bytes: &[u8]) -> usize {
        let found: Vec<usize> = (0..meta.len())
            .filter(|&i| meta[i..].starts_with(bytes))
            .collect();
        assert_eq!(found.len(), 1, "{bytes:x?} in {meta:x?}");
        found[0]
    }

    #[test]
    fn a_schema_type_other_than_the_chunks_is_damage() {
        let mut meta = footer_bytes(false);
        assert_eq!(check(&meta), Ok(()));
        // The schema element of `x`: type INT64 (field 1, zigzag 4), REQUIRED, name "x".
        let element = at(&meta, &[0x15, 0x04, 0x25, 0x00, 0x18, 0x01, b'x']);
        meta[element + 1] = 0x0a; // DOUBLE
        let parsed = ParquetMetaDataReader::decode_metadata(&meta).unwrap();
        assert_eq!(
            parsed.row_group(0).column(0).column_descr().physical_type(),
            Type::DOUBLE
        );
        assert_eq!(
            check_footer_fields(&meta, &parsed),
            Err("column `x` is DOUBLE in the schema and INT64 in its column chunk".into())
        );
    }

    /// A `min_value` of 0 bytes: parquet-rs opens such a file when it skips statistics (as
    /// evalscore does for a footer it does not keep); the C++ reader fails on it.
    #[test]
    fn statistics_narrower_than_their_type_are_damage() {
        let meta = footer_bytes(false);
        let parsed = ParquetMetaDataReader::decode_metadata(&meta).unwrap();
        // Statistics.min_value (field 6, after max_value, field 5): 8 bytes, 100.
        let min = at(&meta, &[0x18, 0x08, 100, 0, 0, 0, 0, 0, 0, 0, 0x11]);
        let mut cut = meta[..min].to_vec();
        cut.extend_from_slice(&[0x18, 0x00]);
        cut.extend_from_slice(&meta[min + 10..]);
        assert_eq!(
            check_footer_fields(&cut, &parsed),
            Err(
                "row group 0, column `x`: its statistics' min_value holds 0 bytes, where INT64 values take 8"
                    .into()
            )
        );
    }

    /// A `PageEncodingStats` whose `count` (field 3) became another field: the C++ reader
    /// refuses the footer (`Invalid data`), and so must this check, whether or not
    /// parquet-rs parses that part of the footer (it skips it with some options).
    #[test]
    fn a_missing_required_field_is_damage() {
        let meta = footer_bytes(false);
        // ColumnMetaData.encoding_stats (field 13: delta 1 after statistics, a list of two
        // structs), whose first struct is page_type 2, encoding 0, count 1.
        let stats = at(&meta, &[0x19, 0x2c, 0x15, 0x04, 0x15, 0x00, 0x15, 0x02]);
        let parsed = ParquetMetaDataReader::decode_metadata(&meta).unwrap();
        let mut changed = meta.clone();
        changed[stats + 6] = 0x25; // field 4 instead of 3: unknown, skipped
        assert_eq!(
            check_footer_fields(&changed, &parsed),
            Err("a PageEncodingStats lacks its required field 3 (`count`)".into())
        );
    }

    /// A definition level histogram of 3 entries for a column of levels 0 and 1.
    #[test]
    fn a_level_histogram_of_another_length_is_damage() {
        let meta = footer_bytes(true);
        assert_eq!(check(&meta), Ok(()));
        // SizeStatistics.definition_level_histogram (field 3, a list of two i64: 0 and 2).
        let list = at(&meta, &[0x39, 0x26, 0x00, 0x04]);
        let mut grown = meta[..list + 1].to_vec();
        grown.push(0x36);
        grown.extend_from_slice(&meta[list + 2..list + 4]);
        grown.push(0x00);
        grown.extend_from_slice(&meta[list + 4..]);
        assert_eq!(
            check(&grown),
            Err("row group 0, column `x`: its definition level histogram has 3 entries, for 2 levels".into())
        );
    }
}
