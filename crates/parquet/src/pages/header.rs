//! A page header read field by field: the fields parquet-rs reads are checked for their
//! Thrift type, the others skipped.

use super::thrift::{malformed, Bad, Bytes, BINARY, BOOL_TRUE, I32, I64, STRUCT};
use std::io::{Read, Seek};

// Parquet page types.
const DATA_PAGE: i32 = 0;
const INDEX_PAGE: i32 = 1;
const DICTIONARY_PAGE: i32 = 2;
const DATA_PAGE_V2: i32 = 3;

pub(super) enum Kind {
    Data { values: i32 },
    Dictionary { entries: i32 },
    Index,
}

pub(super) struct Page {
    pub(super) kind: Kind,
    pub(super) compressed: i32,
    pub(super) uncompressed: i32,
    /// The header's own fields, in the order read: what a rewrite of it copies.
    pub(super) fields: Vec<FieldAt>,
    /// Bytes of a data page v2's levels, which are never compressed (0 for other pages).
    pub(super) levels: i64,
    /// Whether the codec applies to the page's bytes (after a v2 page's levels): a data page
    /// v2 may say they are stored as they are.
    pub(super) codec_applies: bool,
    /// The CRC32 of the page's bytes as stored, when the writer gave one.
    pub(super) crc: Option<u32>,
}

/// A field of a page header: its id, wire type and where its value lies in the file.
pub(super) struct FieldAt {
    pub(super) id: i16,
    pub(super) ty: u8,
    pub(super) value: std::ops::Range<u64>,
}

impl<R: Read + Seek> Bytes<R> {
    /// Reads a `PageHeader`: the fields parquet-rs reads are checked for their type, the
    /// others skipped.
    pub(super) fn page_header(&mut self) -> Result<Page, Bad> {
        const WHAT: &str = "page header";
        let (mut page_type, mut uncompressed, mut compressed, mut crc) = (None, None, None, None);
        let (mut data, mut dictionary, mut data_v2) = (None, None, None);
        let mut fields = Vec::with_capacity(6);
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            let at = self.pos;
            match id {
                1..=4 => {
                    self.expect(WHAT, id, ty, I32)?;
                    let v = self.i32()?;
                    match id {
                        1 => page_type = Some(v),
                        2 => uncompressed = Some(v),
                        3 => compressed = Some(v),
                        // Thrift has no unsigned type: the checksum's bits in an i32.
                        _ => crc = Some(v as u32),
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
            fields.push(FieldAt {
                id,
                ty,
                value: at..self.pos,
            });
            last = id;
        }
        let (Some(page_type), Some(uncompressed), Some(compressed)) =
            (page_type, uncompressed, compressed)
        else {
            return malformed("a required field (type or sizes) is missing");
        };
        let (mut levels, mut codec_applies) = (0, page_type != INDEX_PAGE);
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
                (levels, codec_applies) = (v2.levels, v2.compressed);
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
            fields,
            levels,
            codec_applies,
            crc,
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
        let mut compressed = true;
        let mut last = 0;
        while let Some((id, ty)) = self.field(last)? {
            match id {
                1..=6 => {
                    self.expect(WHAT, id, ty, I32)?;
                    f[(id - 1) as usize] = Some(self.i32()?);
                }
                7 => {
                    self.expect(WHAT, id, ty, BOOL_TRUE)?;
                    compressed = ty == BOOL_TRUE;
                }
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
            compressed,
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
    /// `is_compressed`, true when absent.
    compressed: bool,
}
