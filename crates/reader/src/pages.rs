//! Checks of a Parquet file's footer and page headers, made before the decoder sees them.
//!
//! The decoder (parquet-rs) reads a page header straight from the file, not bounded by its
//! column chunk, and its Thrift reader skips unknown fields element by element, where a skip
//! past the end of the file silently succeeds. A damaged header can therefore lead it into
//! garbage read as nested lists and maps, whose element counts multiply, each element skipped
//! with an empty `read` at the end of the file: `fuzz/regressions/slow-decode-6kb.parquet`, a
//! 3-row file, took seconds to decode. So:
//!
//! - [`check_footer`] (when a file is opened): every column chunk lies inside the file's data,
//!   and holds as many values as its row group has rows (at least as many for repeated
//!   columns).
//! - [`check_chunk`] (before a row group is decoded): every page header of a column chunk is
//!   parsed here, strictly and only from the chunk's own bytes. Every field the decoder reads
//!   must have its expected Thrift type, every list must fit in the bytes left, every page must
//!   fit in the chunk, and the data pages together may not hold more values than the footer
//!   gives the chunk. A header that passes is read by the decoder exactly as it is read here.
//!
//! The decoding work is then bounded by the file's size and the footer's row counts.

use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

/// Bytes of the leading `PAR1` magic, before the first column chunk.
const MAGIC_LEN: u64 = 4;

/// Deepest nesting of structs and lists inside a page header; real headers nest 3 deep.
const MAX_NESTING: u32 = 16;

// Thrift compact protocol wire types.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;
const UUID: u8 = 13;

// Parquet page types.
const DATA_PAGE: i32 = 0;
const INDEX_PAGE: i32 = 1;
const DICTIONARY_PAGE: i32 = 2;
const DATA_PAGE_V2: i32 = 3;

/// Where a column chunk is, as parquet-rs computes it (`ColumnChunkMetaData::byte_range`,
/// which panics on negative values instead of returning them).
fn chunk_range(c: &ColumnChunkMetaData) -> (i64, i64) {
    let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
    (start, c.compressed_size())
}

/// Checks every row group's column chunks against the file: each lies between the leading
/// magic and `data_end` (where the footer starts) and holds as many values as its row group
/// has rows. The error names the row group and the column.
pub(crate) fn check_footer(meta: &ParquetMetaData, data_end: u64) -> Result<(), String> {
    for (g, rg) in meta.row_groups().iter().enumerate() {
        let rows = rg.num_rows();
        if rows < 0 {
            return Err(format!("row group {g} claims {rows} rows"));
        }
        for c in rg.columns() {
            let col = c.column_path().string();
            let (start, len) = chunk_range(c);
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(s, l)| {
                    (s >= MAGIC_LEN)
                        .then_some(s.checked_add(l)?)
                        .filter(|e| *e <= data_end)
                });
            if inside.is_none() {
                return Err(format!(
                    "row group {g}, column `{col}`: the footer places the column chunk at bytes {start} to {}, outside the file's data (bytes {MAGIC_LEN} to {data_end})",
                    start.saturating_add(len)
                ));
            }
            let values = c.num_values();
            let repeated = c.column_descr().max_rep_level() > 0;
            if values < rows || (!repeated && values > rows) {
                return Err(format!(
                    "row group {g}, column `{col}`: the footer gives the column chunk {values} values for {rows} rows"
                ));
            }
        }
    }
    Ok(())
}

/// Where a data page of a column chunk is: what an offset index records of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPageSpan {
    /// File offset of the page header.
    pub offset: u64,
    /// Bytes of the header and the page's (compressed) data.
    pub size: u64,
    /// Values in the page, nulls included (for a flat column, its rows).
    pub values: i64,
}

/// Where column chunk `c` is in its file (offset, length), or why the footer's numbers
/// cannot be.
pub(crate) fn checked_range(c: &ColumnChunkMetaData) -> Result<(u64, u64), String> {
    let (start, len) = chunk_range(c);
    match (u64::try_from(start), u64::try_from(len)) {
        (Ok(start), Ok(len)) => Ok((start, len)),
        _ => Err(format!(
            "the footer places the column chunk at a negative offset or size ({start}, {len})"
        )),
    }
}

/// Parses every page header of column chunk `c` from `file` (see the module docs) and returns
/// where its data pages are. The error says what is wrong and at which byte of the file.
pub(crate) fn check_chunk(
    file: &File,
    c: &ColumnChunkMetaData,
) -> Result<Vec<DataPageSpan>, String> {
    let (start, _) = checked_range(c)?;
    let mut reader = BufReader::new(file);
    reader
        .seek(SeekFrom::Start(start))
        .map_err(|e| format!("cannot read the column chunk: {e}"))?;
    check_pages(reader, c)
}

/// [`check_chunk`] over the chunk's bytes already read into memory (all of them, from the
/// chunk's first page on).
pub(crate) fn check_chunk_bytes(
    bytes: &[u8],
    c: &ColumnChunkMetaData,
) -> Result<Vec<DataPageSpan>, String> {
    check_pages(std::io::Cursor::new(bytes), c)
}

/// The page-header walk of [`check_chunk`], from `reader` placed at the chunk's start.
fn check_pages<R: Read + Seek>(
    reader: R,
    c: &ColumnChunkMetaData,
) -> Result<Vec<DataPageSpan>, String> {
    let (start, len) = checked_range(c)?;
    let io = |e: std::io::Error| format!("cannot read the column chunk: {e}");
    let mut h = Bytes {
        reader,
        pos: start,
        end: start.saturating_add(len),
    };
    let chunk_values = c.num_values();
    let end = h.end;
    let mut values: i64 = 0;
    let mut spans = Vec::new();
    while h.pos < end {
        let at = h.pos;
        let page = h.page_header().map_err(|b| match b {
            Bad::Overrun => format!(
                "the page header at byte {at} runs past the end of the column chunk at byte {end}"
            ),
            Bad::Malformed(m) => format!("the page header at byte {at} is malformed: {m}"),
            Bad::Io(e) => io(e),
        })?;
        let left = h.end - h.pos;
        if page.compressed < 0 || page.uncompressed < 0 {
            return Err(format!(
                "the page at byte {at} claims a negative size ({} bytes compressed, {} uncompressed)",
                page.compressed, page.uncompressed
            ));
        }
        if page.compressed as u64 > left {
            return Err(format!(
                "the page at byte {at} claims {} bytes, but only {left} are left in the column chunk",
                page.compressed
            ));
        }
        match page.kind {
            Kind::Data { values: n } => {
                values = values.saturating_add(i64::from(n));
                spans.push(DataPageSpan {
                    offset: at,
                    size: (h.pos - at).saturating_add(page.compressed as u64),
                    values: i64::from(n),
                });
                if values > chunk_values {
                    return Err(format!(
                        "the data pages up to byte {at} hold {values} values, more than the {chunk_values} the footer gives the column chunk"
                    ));
                }
            }
            Kind::Dictionary { entries } => {
                // Every dictionary entry takes at least one bit (bit-packed booleans).
                if i64::from(entries) > i64::from(page.uncompressed).saturating_mul(8) {
                    return Err(format!(
                        "the dictionary page at byte {at} claims {entries} entries in {} bytes",
                        page.uncompressed
                    ));
                }
            }
            Kind::Index => {}
        }
        h.skip(page.compressed as u64).map_err(|b| match b {
            Bad::Io(e) => io(e),
            _ => format!("the page at byte {at} runs past the end of the column chunk"),
        })?;
    }
    Ok(spans)
}

enum Kind {
    Data { values: i32 },
    Dictionary { entries: i32 },
    Index,
}

struct Page {
    kind: Kind,
    compressed: i32,
    uncompressed: i32,
}

enum Bad {
    /// The header needs bytes beyond the end of the column chunk.
    Overrun,
    Malformed(String),
    Io(std::io::Error),
}

fn malformed<T>(m: impl Into<String>) -> Result<T, Bad> {
    Err(Bad::Malformed(m.into()))
}

/// Deepest nesting of a Parquet schema (a top-level column is at depth 1): the decoder and
/// the Arrow conversion recurse once per level, so a deeper schema could overflow a stack.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// Checks the nesting depth of the schema in a file's serialized `FileMetaData` without
/// recursing: the schema is a flat pre-order list of elements, each giving its number of
/// children. Run before parquet-rs builds its schema tree (recursively).
pub(crate) fn check_schema_depth(footer: &[u8]) -> Result<(), String> {
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

/// The bytes of one column chunk, read through a buffer, never past `end`.
struct Bytes<R> {
    reader: R,
    /// File offset of the next byte.
    pos: u64,
    end: u64,
}

impl<R: Read + Seek> Bytes<R> {
    fn left(&self) -> u64 {
        self.end - self.pos
    }

    fn byte(&mut self) -> Result<u8, Bad> {
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

    fn skip(&mut self, n: u64) -> Result<(), Bad> {
        if n > self.left() {
            return Err(Bad::Overrun);
        }
        // `n` is at most the chunk's length, which fits in an i64 (the footer stores it so).
        let step = i64::try_from(n).map_err(|_| Bad::Overrun)?;
        self.reader.seek_relative(step).map_err(Bad::Io)?;
        self.pos += n;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64, Bad> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        malformed("a varint longer than 10 bytes")
    }

    fn zigzag(&mut self) -> Result<i64, Bad> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, Bad> {
        let v = self.zigzag()?;
        // parquet-rs truncates instead; a value that does not fit is damage, not a number.
        i32::try_from(v).or_else(|_| malformed(format!("{v} does not fit in an i32 field")))
    }

    /// The next field of a struct: `None` at its end, else (id, wire type).
    fn field(&mut self, last: i16) -> Result<Option<(i16, u8)>, Bad> {
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
    fn skip_value(&mut self, ty: u8, depth: u32) -> Result<(), Bad> {
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
                let h = self.byte()?;
                let count = match h >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                if count == 0 {
                    return Ok(());
                }
                let elem = h & 0x0f;
                self.elements(count, &[elem])?;
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

    fn expect(&self, what: &str, id: i16, ty: u8, want: u8) -> Result<(), Bad> {
        let same = ty == want || (want == BOOL_TRUE && ty == BOOL_FALSE);
        if same {
            Ok(())
        } else {
            malformed(format!(
                "field {id} of the {what} has Thrift type {ty}, not {want}"
            ))
        }
    }

    /// Reads a `PageHeader`: the fields parquet-rs reads are checked for their type, the
    /// others skipped.
    fn page_header(&mut self) -> Result<Page, Bad> {
        const WHAT: &str = "page header";
        let (mut page_type, mut uncompressed, mut compressed) = (None, None, None);
        let (mut data, mut dictionary, mut data_v2) = (None, None, None);
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            match id {
                1..=4 => {
                    self.expect(WHAT, id, ty, I32)?;
                    let v = self.i32()?;
                    match id {
                        1 => page_type = Some(v),
                        2 => uncompressed = Some(v),
                        3 => compressed = Some(v),
                        _ => {} // crc
                    }
                }
                5..=8 => {
                    self.expect(WHAT, id, ty, STRUCT)?;
                    match id {
                        5 => data = Some(self.data_page_header()?),
                        7 => dictionary = Some(self.dictionary_page_header()?),
                        8 => data_v2 = Some(self.data_page_header_v2()?),
                        _ => self.skip_value(STRUCT, 1)?, // index page header: no fields
                    }
                }
                _ => self.skip_value(ty, 1)?,
            }
            last = id;
        }
        let (Some(page_type), Some(uncompressed), Some(compressed)) =
            (page_type, uncompressed, compressed)
        else {
            return malformed("a required field (type or sizes) is missing");
        };
        let kind = match page_type {
            DATA_PAGE => Kind::Data {
                values: data.ok_or_else(|| {
                    Bad::Malformed("a data page without its data page header".into())
                })?,
            },
            DATA_PAGE_V2 => {
                let v2: V2 = data_v2.ok_or_else(|| {
                    Bad::Malformed("a data page v2 without its data page header".into())
                })?;
                if v2.levels > i64::from(compressed) {
                    return malformed(format!(
                        "{} bytes of levels in a page of {compressed} bytes",
                        v2.levels
                    ));
                }
                Kind::Data { values: v2.values }
            }
            DICTIONARY_PAGE => Kind::Dictionary {
                entries: dictionary.ok_or_else(|| {
                    Bad::Malformed("a dictionary page without its dictionary page header".into())
                })?,
            },
            INDEX_PAGE => Kind::Index,
            other => return malformed(format!("unknown page type {other}")),
        };
        Ok(Page {
            kind,
            compressed,
            uncompressed,
        })
    }

    /// `DataPageHeader`: returns `num_values`.
    fn data_page_header(&mut self) -> Result<i32, Bad> {
        const WHAT: &str = "data page header";
        let mut values = None;
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            match id {
                1..=4 => {
                    self.expect(WHAT, id, ty, I32)?;
                    let v = self.i32()?;
                    if id == 1 {
                        values = Some(v);
                    }
                }
                5 => {
                    self.expect(WHAT, id, ty, STRUCT)?;
                    self.statistics()?;
                }
                _ => self.skip_value(ty, 2)?,
            }
            last = id;
        }
        match values {
            Some(v) if v >= 0 => Ok(v),
            Some(v) => malformed(format!("{v} values")),
            None => malformed("the data page header has no value count"),
        }
    }

    /// `DictionaryPageHeader`: returns `num_values`.
    fn dictionary_page_header(&mut self) -> Result<i32, Bad> {
        const WHAT: &str = "dictionary page header";
        let mut entries = None;
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            match id {
                1 | 2 => {
                    self.expect(WHAT, id, ty, I32)?;
                    let v = self.i32()?;
                    if id == 1 {
                        entries = Some(v);
                    }
                }
                3 => self.expect(WHAT, id, ty, BOOL_TRUE)?,
                _ => self.skip_value(ty, 2)?,
            }
            last = id;
        }
        match entries {
            Some(v) if v >= 0 => Ok(v),
            Some(v) => malformed(format!("{v} dictionary entries")),
            None => malformed("the dictionary page header has no entry count"),
        }
    }

    fn data_page_header_v2(&mut self) -> Result<V2, Bad> {
        const WHAT: &str = "data page header v2";
        let mut f = [None::<i32>; 6];
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            match id {
                1..=6 => {
                    self.expect(WHAT, id, ty, I32)?;
                    f[(id - 1) as usize] = Some(self.i32()?);
                }
                7 => self.expect(WHAT, id, ty, BOOL_TRUE)?,
                8 => {
                    self.expect(WHAT, id, ty, STRUCT)?;
                    self.statistics()?;
                }
                _ => self.skip_value(ty, 2)?,
            }
            last = id;
        }
        let [Some(values), Some(nulls), Some(rows), _, Some(def), Some(rep)] = f else {
            return malformed("the data page header v2 lacks a count or a level length");
        };
        if values < 0
            || nulls < 0
            || rows < 0
            || def < 0
            || rep < 0
            || nulls > values
            || rows > values
        {
            return malformed(format!(
                "implausible counts: {values} values, {nulls} nulls, {rows} rows, level lengths {def} and {rep}"
            ));
        }
        Ok(V2 {
            values,
            levels: i64::from(def) + i64::from(rep),
        })
    }

    /// `Statistics`: min and max are binaries, counts i64, exactness flags booleans.
    fn statistics(&mut self) -> Result<(), Bad> {
        const WHAT: &str = "page statistics";
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            let want = match id {
                1 | 2 | 5 | 6 => Some(BINARY),
                3 | 4 => Some(I64),
                7 | 8 => Some(BOOL_TRUE),
                _ => None,
            };
            if let Some(w) = want {
                self.expect(WHAT, id, ty, w)?;
            }
            self.skip_value(ty, 3)?;
            last = id;
        }
        Ok(())
    }
}

struct V2 {
    values: i32,
    levels: i64,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use parquet::file::metadata::{FileMetaData, RowGroupMetaData};
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::SchemaDescriptor;
    use std::io::Write;
    use std::sync::Arc;

    fn schema() -> Arc<SchemaDescriptor> {
        let t = parse_message_type("message m { required binary id (UTF8); }").unwrap();
        Arc::new(SchemaDescriptor::new(Arc::new(t)))
    }

    fn chunk(start: i64, len: i64, values: i64) -> ColumnChunkMetaData {
        ColumnChunkMetaData::builder(schema().column(0))
            .set_data_page_offset(start)
            .set_total_compressed_size(len)
            .set_num_values(values)
            .build()
            .unwrap()
    }

    /// A page header in the compact protocol: a data page of `values` values and `size`
    /// bytes (both sizes), with `extra` bytes spliced in after the sizes.
    fn header(values: u8, size: u8, extra: &[u8]) -> Vec<u8> {
        let mut h = vec![0x15, 0x00, 0x15, size * 2, 0x15, size * 2];
        h.extend_from_slice(extra);
        // Field 5 (DataPageHeader) after field 3, or after field 9 when `extra` is a field 9.
        h.push(if extra.is_empty() { 0x2c } else { 0x0c });
        if !extra.is_empty() {
            h.push(0x0a); // full field id 5 (zigzag)
        }
        h.extend_from_slice(&[
            0x15,
            values * 2,
            0x15,
            0x00,
            0x15,
            0x06,
            0x15,
            0x06,
            0x00,
            0x00,
        ]);
        h
    }

    /// Writes `PAR1` + `pages` to a file and checks them as one chunk of `values` values.
    fn check(pages: &[u8], len: Option<i64>, values: i64) -> Result<(), String> {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"PAR1").unwrap();
        f.write_all(pages).unwrap();
        f.write_all(&[0; 8]).unwrap();
        let len = len.unwrap_or(pages.len() as i64);
        check_chunk(&f, &chunk(4, len, values)).map(|_| ())
    }

    #[test]
    fn a_sound_chunk_passes() {
        let mut pages = header(3, 4, &[]);
        pages.extend_from_slice(&[1, 2, 3, 4]);
        let again = pages.clone();
        pages.extend_from_slice(&again);
        assert_eq!(check(&pages, None, 6), Ok(()));
    }

    #[test]
    fn a_header_past_the_chunk_is_caught() {
        let pages = header(3, 4, &[]);
        assert_eq!(
            check(&pages, Some(10), 3),
            Err(
                "the page header at byte 4 runs past the end of the column chunk at byte 14".into()
            )
        );
    }

    #[test]
    fn a_huge_list_in_an_unknown_field_is_caught_before_it_is_skipped() {
        // Field 9 (unknown): a list of 2,000,000,000 i32, which parquet-rs would skip one
        // element at a time.
        let pages = header(3, 4, &[0x69, 0xf5, 0x80, 0xa8, 0xd6, 0xb9, 0x07]);
        let err = check(&pages, None, 3).unwrap_err();
        assert!(
            err.starts_with(
                "the page header at byte 4 is malformed: a collection of 2000000000 elements with "
            ),
            "{err}"
        );
        // A list of booleans, which parquet-rs would skip as if it took no bytes.
        let pages = header(3, 4, &[0x69, 0x31, 1, 1, 1]);
        assert_eq!(
            check(&pages, None, 3),
            Err("the page header at byte 4 is malformed: a collection of element type 1".into())
        );
    }

    #[test]
    fn a_field_of_the_wrong_type_is_caught() {
        // Field 2 (uncompressed_page_size) as a binary instead of an i32.
        let pages = [0x15, 0x00, 0x18, 0x01, 0x41, 0x00];
        assert_eq!(
            check(&pages, None, 3),
            Err("the page header at byte 4 is malformed: field 2 of the page header has Thrift type 8, not 5".into())
        );
    }

    #[test]
    fn a_page_larger_than_the_chunk_is_caught() {
        let mut pages = header(3, 40, &[]);
        pages.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(
            check(&pages, None, 3),
            Err(
                "the page at byte 4 claims 40 bytes, but only 4 are left in the column chunk"
                    .into()
            )
        );
    }

    #[test]
    fn more_values_than_the_footer_gives_are_caught() {
        let mut pages = header(5, 4, &[]);
        pages.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(
            check(&pages, None, 3),
            Err("the data pages up to byte 4 hold 5 values, more than the 3 the footer gives the column chunk".into())
        );
    }

    fn metadata(rows: i64, c: ColumnChunkMetaData) -> ParquetMetaData {
        let rg = RowGroupMetaData::builder(schema())
            .set_num_rows(rows)
            .set_column_metadata(vec![c])
            .build()
            .unwrap();
        ParquetMetaData::new(
            FileMetaData::new(2, rows, None, None, schema(), None),
            vec![rg],
        )
    }

    #[test]
    fn the_footer_is_checked_against_the_file_and_the_row_count() {
        assert_eq!(check_footer(&metadata(3, chunk(4, 48, 3)), 100), Ok(()));
        assert_eq!(
            check_footer(&metadata(3, chunk(4, 480, 3)), 100),
            Err("row group 0, column `id`: the footer places the column chunk at bytes 4 to 484, outside the file's data (bytes 4 to 100)".into())
        );
        assert_eq!(
            check_footer(&metadata(3, chunk(-1, 10, 3)), 100),
            Err("row group 0, column `id`: the footer places the column chunk at bytes -1 to 9, outside the file's data (bytes 4 to 100)".into())
        );
        assert_eq!(
            check_footer(&metadata(3, chunk(4, 48, 3_000_000)), 100),
            Err("row group 0, column `id`: the footer gives the column chunk 3000000 values for 3 rows".into())
        );
        assert_eq!(
            check_footer(&metadata(-3, chunk(4, 48, 3)), 100),
            Err("row group 0 claims -3 rows".into())
        );
    }
}
