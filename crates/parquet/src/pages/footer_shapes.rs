//! The footer's Thrift structs as the C++ reader reads them (module `footer_fields`): each
//! field's id, wire type and whether it is required, and what the walk notes of it.

use super::thrift::{BINARY, BOOL_TRUE, BYTE, DOUBLE, I16, I32, I64, LIST, STRUCT};

/// What the walk notes of a field, for the comparison with parquet-rs's footer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Note {
    None,
    Type,
    MaxValue,
    MinValue,
    RepHistogram,
    DefHistogram,
    /// A schema element's `num_children`: it is a group.
    Children,
    /// A schema element's name.
    Name,
    /// A schema element's `converted_type`.
    Converted,
    /// A schema element's `logicalType` (whichever member, if any, is set).
    LogicalType,
    /// A chunk's `SizeStatistics.unencoded_byte_array_data_bytes`.
    Unencoded,
    /// The member of a `LogicalType` union that is set.
    Logical,
}

/// A field of a Thrift struct: its id, wire type, whether the struct must have it, and for a
/// struct or a list of structs, the struct's shape.
pub(super) struct Field {
    pub(super) id: i16,
    pub(super) ty: u8,
    pub(super) name: &'static str,
    pub(super) required: bool,
    pub(super) inner: Option<&'static Shape>,
    pub(super) note: Note,
}

/// A Thrift struct of the footer; `opens` a row group, a column chunk or a schema element
/// in the notes.
pub(super) struct Shape {
    pub(super) name: &'static str,
    pub(super) fields: &'static [Field],
    pub(super) opens: Opens,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Opens {
    Nothing,
    RowGroup,
    Chunk,
    Element,
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

/// A member of the `LogicalType` union (a struct, whose own fields are `inner`'s).
const fn member(id: i16, name: &'static str, inner: &'static Shape) -> Field {
    noted(with(opt(id, STRUCT, name), inner), Note::Logical)
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
        member(1, "STRING", &EMPTY),
        member(2, "MAP", &EMPTY),
        member(3, "LIST", &EMPTY),
        member(4, "ENUM", &EMPTY),
        member(5, "DECIMAL", &DECIMAL),
        member(6, "DATE", &EMPTY),
        member(7, "TIME", &TIME),
        member(8, "TIMESTAMP", &TIME),
        member(10, "INTEGER", &INT),
        member(11, "UNKNOWN", &EMPTY),
        member(12, "JSON", &EMPTY),
        member(13, "BSON", &EMPTY),
        member(14, "UUID", &EMPTY),
        member(15, "FLOAT16", &EMPTY),
        member(16, "VARIANT", &EMPTY),
        member(17, "GEOMETRY", &EMPTY),
        member(18, "GEOGRAPHY", &EMPTY),
    ],
);
static SCHEMA_ELEMENT: Shape = Shape {
    name: "SchemaElement",
    fields: &[
        opt(1, I32, "type"),
        opt(2, I32, "type_length"),
        opt(3, I32, "repetition_type"),
        noted(req(4, BINARY, "name"), Note::Name),
        noted(opt(5, I32, "num_children"), Note::Children),
        noted(opt(6, I32, "converted_type"), Note::Converted),
        opt(7, I32, "scale"),
        opt(8, I32, "precision"),
        opt(9, I32, "field_id"),
        noted(
            with(opt(10, STRUCT, "logicalType"), &LOGICAL),
            Note::LogicalType,
        ),
    ],
    opens: Opens::Element,
};
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
        noted(
            opt(1, I64, "unencoded_byte_array_data_bytes"),
            Note::Unencoded,
        ),
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
        req(1, DOUBLE, "xmin"),
        req(2, DOUBLE, "xmax"),
        req(3, DOUBLE, "ymin"),
        req(4, DOUBLE, "ymax"),
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
pub(super) static FILE_META: Shape = shape(
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
