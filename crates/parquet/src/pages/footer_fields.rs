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
//!   have one entry per level.
//!
//! Each of these is an error here naming the column, before any row is read.

use super::thrift::{malformed, Bad, Bytes, BINARY, BOOL_TRUE, BYTE, I16, I32, I64, LIST, STRUCT};
use parquet::basic::Type;
use parquet::file::metadata::ParquetMetaData;
use std::io::{Read, Seek};

/// Deepest nesting of the structs read here (FileMetaData > RowGroup > ColumnChunk >
/// ColumnMetaData > Statistics is 5; a SchemaElement's LogicalType > TimeType > TimeUnit 4).
const MAX_DEPTH: u32 = 8;

/// What the walk notes of a field, for the comparison with parquet-rs's footer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Note {
    None,
    Type,
    MaxValue,
    MinValue,
    RepHistogram,
    DefHistogram,
}

/// A field of a Thrift struct: its id, wire type, whether the struct must have it, and for a
/// struct or a list of structs, the struct's shape.
struct Field {
    id: i16,
    ty: u8,
    name: &'static str,
    required: bool,
    inner: Option<&'static Shape>,
    note: Note,
}

/// A Thrift struct of the footer; `opens` a row group or a column chunk in the notes.
struct Shape {
    name: &'static str,
    fields: &'static [Field],
    opens: Opens,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Opens {
    Nothing,
    RowGroup,
    Chunk,
}

const fn req(id: i16, ty: u8, name: &'static str) -> Field {
    Field {
        id,
        ty,
        name,
        required: true,
        inner: None,
        note: Note::None,
    }
}

const fn opt(id: i16, ty: u8, name: &'static str) -> Field {
    Field {
        id,
        ty,
        name,
        required: false,
        inner: None,
        note: Note::None,
    }
}

const fn with(f: Field, inner: &'static Shape) -> Field {
    Field {
        inner: Some(inner),
        ..f
    }
}

const fn noted(f: Field, note: Note) -> Field {
    Field { note, ..f }
}

const fn shape(name: &'static str, fields: &'static [Field]) -> Shape {
    Shape {
        name,
        fields,
        opens: Opens::Nothing,
    }
}

/// A struct of no fields (the members of `LogicalType` and `ColumnOrder` without options).
static EMPTY: Shape = shape("empty struct", &[]);
static TIME_UNIT: Shape = shape("TimeUnit", &[]);
static DECIMAL: Shape = shape(
    "DecimalType",
    &[req(1, I32, "scale"), req(2, I32, "precision")],
);
static TIME: Shape = shape(
    "TimeType",
    &[
        req(1, BOOL_TRUE, "isAdjustedToUTC"),
        with(req(2, STRUCT, "unit"), &TIME_UNIT),
    ],
);
static INT: Shape = shape(
    "IntType",
    &[req(1, BYTE, "bitWidth"), req(2, BOOL_TRUE, "isSigned")],
);
static LOGICAL: Shape = shape(
    "LogicalType",
    &[
        with(opt(1, STRUCT, "STRING"), &EMPTY),
        with(opt(2, STRUCT, "MAP"), &EMPTY),
        with(opt(3, STRUCT, "LIST"), &EMPTY),
        with(opt(4, STRUCT, "ENUM"), &EMPTY),
        with(opt(5, STRUCT, "DECIMAL"), &DECIMAL),
        with(opt(6, STRUCT, "DATE"), &EMPTY),
        with(opt(7, STRUCT, "TIME"), &TIME),
        with(opt(8, STRUCT, "TIMESTAMP"), &TIME),
        with(opt(10, STRUCT, "INTEGER"), &INT),
        with(opt(11, STRUCT, "UNKNOWN"), &EMPTY),
        with(opt(12, STRUCT, "JSON"), &EMPTY),
        with(opt(13, STRUCT, "BSON"), &EMPTY),
        with(opt(14, STRUCT, "UUID"), &EMPTY),
        with(opt(15, STRUCT, "FLOAT16"), &EMPTY),
    ],
);
static SCHEMA_ELEMENT: Shape = shape(
    "SchemaElement",
    &[
        opt(1, I32, "type"),
        opt(2, I32, "type_length"),
        opt(3, I32, "repetition_type"),
        req(4, BINARY, "name"),
        opt(5, I32, "num_children"),
        opt(6, I32, "converted_type"),
        opt(7, I32, "scale"),
        opt(8, I32, "precision"),
        opt(9, I32, "field_id"),
        with(opt(10, STRUCT, "logicalType"), &LOGICAL),
    ],
);
static KEY_VALUE: Shape = shape(
    "KeyValue",
    &[req(1, BINARY, "key"), opt(2, BINARY, "value")],
);
static SORTING_COLUMN: Shape = shape(
    "SortingColumn",
    &[
        req(1, I32, "column_idx"),
        req(2, BOOL_TRUE, "descending"),
        req(3, BOOL_TRUE, "nulls_first"),
    ],
);
static STATISTICS: Shape = shape(
    "Statistics",
    &[
        opt(1, BINARY, "max"),
        opt(2, BINARY, "min"),
        opt(3, I64, "null_count"),
        opt(4, I64, "distinct_count"),
        noted(opt(5, BINARY, "max_value"), Note::MaxValue),
        noted(opt(6, BINARY, "min_value"), Note::MinValue),
        opt(7, BOOL_TRUE, "is_max_value_exact"),
        opt(8, BOOL_TRUE, "is_min_value_exact"),
    ],
);
static PAGE_ENCODING_STATS: Shape = shape(
    "PageEncodingStats",
    &[
        req(1, I32, "page_type"),
        req(2, I32, "encoding"),
        req(3, I32, "count"),
    ],
);
static SIZE_STATISTICS: Shape = shape(
    "SizeStatistics",
    &[
        opt(1, I64, "unencoded_byte_array_data_bytes"),
        noted(
            opt(2, LIST, "repetition_level_histogram"),
            Note::RepHistogram,
        ),
        noted(
            opt(3, LIST, "definition_level_histogram"),
            Note::DefHistogram,
        ),
    ],
);
static BOUNDING_BOX: Shape = shape(
    "BoundingBox",
    &[
        req(1, super::thrift::DOUBLE, "xmin"),
        req(2, super::thrift::DOUBLE, "xmax"),
        req(3, super::thrift::DOUBLE, "ymin"),
        req(4, super::thrift::DOUBLE, "ymax"),
    ],
);
static GEOSPATIAL_STATISTICS: Shape = shape(
    "GeospatialStatistics",
    &[with(opt(1, STRUCT, "bbox"), &BOUNDING_BOX)],
);
static COLUMN_META: Shape = shape(
    "ColumnMetaData",
    &[
        noted(req(1, I32, "type"), Note::Type),
        req(2, LIST, "encodings"),
        req(3, LIST, "path_in_schema"),
        req(4, I32, "codec"),
        req(5, I64, "num_values"),
        req(6, I64, "total_uncompressed_size"),
        req(7, I64, "total_compressed_size"),
        with(opt(8, LIST, "key_value_metadata"), &KEY_VALUE),
        req(9, I64, "data_page_offset"),
        opt(10, I64, "index_page_offset"),
        opt(11, I64, "dictionary_page_offset"),
        with(opt(12, STRUCT, "statistics"), &STATISTICS),
        with(opt(13, LIST, "encoding_stats"), &PAGE_ENCODING_STATS),
        opt(14, I64, "bloom_filter_offset"),
        opt(15, I32, "bloom_filter_length"),
        with(opt(16, STRUCT, "size_statistics"), &SIZE_STATISTICS),
        with(
            opt(17, STRUCT, "geospatial_statistics"),
            &GEOSPATIAL_STATISTICS,
        ),
    ],
);
static COLUMN_CHUNK: Shape = Shape {
    name: "ColumnChunk",
    fields: &[
        opt(1, BINARY, "file_path"),
        req(2, I64, "file_offset"),
        with(opt(3, STRUCT, "meta_data"), &COLUMN_META),
        opt(4, I64, "offset_index_offset"),
        opt(5, I32, "offset_index_length"),
        opt(6, I64, "column_index_offset"),
        opt(7, I32, "column_index_length"),
    ],
    opens: Opens::Chunk,
};
static ROW_GROUP: Shape = Shape {
    name: "RowGroup",
    fields: &[
        with(req(1, LIST, "columns"), &COLUMN_CHUNK),
        req(2, I64, "total_byte_size"),
        req(3, I64, "num_rows"),
        with(opt(4, LIST, "sorting_columns"), &SORTING_COLUMN),
        opt(5, I64, "file_offset"),
        opt(6, I64, "total_compressed_size"),
        opt(7, I16, "ordinal"),
    ],
    opens: Opens::RowGroup,
};
static COLUMN_ORDER: Shape = shape("ColumnOrder", &[with(opt(1, STRUCT, "TYPE_ORDER"), &EMPTY)]);
static FILE_META: Shape = shape(
    "FileMetaData",
    &[
        req(1, I32, "version"),
        with(req(2, LIST, "schema"), &SCHEMA_ELEMENT),
        req(3, I64, "num_rows"),
        with(req(4, LIST, "row_groups"), &ROW_GROUP),
        with(opt(5, LIST, "key_value_metadata"), &KEY_VALUE),
        opt(6, BINARY, "created_by"),
        with(opt(7, LIST, "column_orders"), &COLUMN_ORDER),
    ],
);

/// What the walk noted of one column chunk.
#[derive(Default)]
struct Chunk {
    stored_type: Option<i32>,
    max_value: Option<u64>,
    min_value: Option<u64>,
    rep_histogram: Option<u64>,
    def_histogram: Option<u64>,
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
    let mut groups: Vec<Vec<Chunk>> = Vec::new();
    match b.walk(&FILE_META, 0, &mut groups) {
        Ok(()) => {}
        Err(Bad::Malformed(m)) => return Err(m),
        Err(Bad::Overrun) => return Err("the footer's Thrift runs past its end".into()),
        Err(Bad::Io(e)) => return Err(e.to_string()),
    }
    for (g, (rg, chunks)) in meta.row_groups().iter().zip(&groups).enumerate() {
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
    /// Reads a struct of shape `shape`, noting into `groups`. A field of a known id but
    /// another wire type is skipped, as the C++ reader skips it (and then misses it if the
    /// struct requires it).
    fn walk(&mut self, shape: &Shape, depth: u32, groups: &mut Vec<Vec<Chunk>>) -> Result<(), Bad> {
        if depth > MAX_DEPTH {
            return malformed(format!("a {} nested too deep", shape.name));
        }
        match shape.opens {
            Opens::RowGroup => groups.push(Vec::new()),
            Opens::Chunk => {
                if let Some(g) = groups.last_mut() {
                    g.push(Chunk::default());
                }
            }
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
            let noted = self.field_value(f, ty, depth, groups)?;
            if let (Some(v), Some(chunk)) = (noted, groups.last_mut().and_then(|g| g.last_mut())) {
                match f.note {
                    Note::Type => chunk.stored_type = i32::try_from(v).ok(),
                    Note::MaxValue => chunk.max_value = u64::try_from(v).ok(),
                    Note::MinValue => chunk.min_value = u64::try_from(v).ok(),
                    Note::RepHistogram => chunk.rep_histogram = u64::try_from(v).ok(),
                    Note::DefHistogram => chunk.def_histogram = u64::try_from(v).ok(),
                    Note::None => {}
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
        groups: &mut Vec<Vec<Chunk>>,
    ) -> Result<Option<i64>, Bad> {
        match (ty, f.inner) {
            (STRUCT, Some(inner)) => self.walk(inner, depth + 1, groups).map(|()| None),
            (LIST, Some(inner)) => {
                let (count, elem) = self.list_header()?;
                if count > 0 && elem != STRUCT {
                    return malformed(format!("`{}` holds elements of type {elem}", f.name));
                }
                for _ in 0..count {
                    self.walk(inner, depth + 1, groups)?;
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
