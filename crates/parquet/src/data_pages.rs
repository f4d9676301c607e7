//! A page's levels, dictionary indices and dictionary entries checked once it is
//! decompressed, before a decoder reads it.
//!
//! parquet-rs decodes levels and dictionary indices leniently where the C++ reader (pyarrow)
//! refuses the page, and the difference is data: a definition level above the column's
//! maximum (170 where 2 is the most) is read as some null or value; levels that end before
//! the page's `num_values` leave the rest of the page to whatever follows; a bit-packed run
//! that claims more bytes than the page holds is read as far as the bytes go. Here, for every
//! data page (v1 and v2):
//!
//! - its repetition and definition levels must hold `num_values` entries, each at most the
//!   column's maximum, in runs whose bytes lie inside their section of the page; no run of
//!   one repeated value (levels, indices, RLE booleans) may be wider than its bit width
//!   (readers that mask it and readers that do not read different data);
//! - an entry that continues a list must be defined down to that list's entries (a null
//!   list "inside" a list is no shape, and decoders read it differently);
//! - a dictionary-encoded page's index stream must have a bit width of at most 32 and runs
//!   whose bytes lie inside the page, up to its last non-null value;
//! - a delta-encoded string page's lengths must be sound (module `delta_lengths`), a
//!   BYTE_STREAM_SPLIT page's values whole values of the column's width, and RLE booleans
//!   runs inside the page;
//! - a data page v2 may not give level bytes to a column without those levels (readers skip
//!   them and read the next section shifted);
//! - a dictionary page must be PLAIN and hold as many entries as its header gives (parquet-rs
//!   reads the entries there are, and any encoding as PLAIN).
//!
//! The check costs a pass over the runs (a run of one repeated value is one step) and, for
//! bit-packed levels, over their values. Module `checked_pages` puts it in front of
//! parquet-rs's page readers.

use crate::varint::read_varint;
use parquet::basic::{Encoding, Repetition, Type};
use parquet::column::page::Page;
use parquet::schema::types::{ColumnDescriptor, SchemaDescriptor};

/// What a column's pages must satisfy: its levels' maxima; for each repetition level `r`
/// above 0, the least definition level of an entry that continues a list at depth `r` (such
/// an entry is an item of that list, so the list and its entry are defined); and its
/// physical type, which a dictionary page's entries have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRules {
    pub max_rep: u32,
    pub max_def: u32,
    /// Empty when the pairs of levels are not checked here (a decoder of its own checks them).
    pub continues: Vec<u32>,
    pub physical: Type,
    /// Bytes of a FIXED_LEN_BYTE_ARRAY value.
    pub type_length: i32,
    /// Whether readers read the column as text, so that its values must be UTF-8.
    pub text: bool,
    /// The column's path, when an error should name it (the caller's messages do not).
    pub column: Option<String>,
}

impl PageRules {
    /// The rules of leaf column `leaf` of `schema`, from the nodes on its path.
    pub fn of(schema: &SchemaDescriptor, leaf: usize) -> Self {
        let descr = schema.column(leaf);
        let mut continues = Vec::new();
        let mut def = 0;
        let mut node = schema.root_schema();
        for part in descr.path().parts() {
            let Some(child) = node.get_fields().iter().find(|f| f.name() == part) else {
                break;
            };
            node = child;
            match node.get_basic_info().repetition() {
                Repetition::OPTIONAL => def += 1,
                Repetition::REPEATED => {
                    def += 1;
                    continues.push(def);
                }
                Repetition::REQUIRED => {}
            }
        }
        Self {
            continues,
            column: Some(descr.path().string()),
            ..Self::unpaired(&descr)
        }
    }

    /// The rules of column `descr` without the check of how its levels pair up: for a flat
    /// column, or one whose decoder checks them itself.
    pub fn unpaired(descr: &ColumnDescriptor) -> Self {
        Self {
            max_rep: u32::try_from(descr.max_rep_level()).unwrap_or(0),
            max_def: u32::try_from(descr.max_def_level()).unwrap_or(0),
            continues: Vec::new(),
            physical: descr.physical_type(),
            type_length: descr.type_length(),
            text: crate::stored::is_text(descr),
            column: None,
        }
    }
}

/// Checks page `page` of a column of rules `rules`. The error says what is wrong with the
/// page.
pub fn check_page(page: &Page, rules: &PageRules) -> Result<(), String> {
    let checked = match page {
        Page::DictionaryPage {
            buf,
            num_values,
            encoding,
            ..
        } => dictionary_page(buf, *num_values as usize, *encoding, rules)
            .map_err(|m| format!("a dictionary page {m}")),
        _ => data_page(page, rules).map_err(|m| format!("a data page's {m}")),
    };
    match &rules.column {
        Some(c) => checked.map_err(|m| format!("column `{c}`: {m}")),
        None => checked,
    }
}

/// A dictionary page must be PLAIN and hold its `n` entries (the C++ reader refuses other
/// encodings, and a dictionary shorter than its header says).
fn dictionary_page(
    buf: &[u8],
    n: usize,
    encoding: Encoding,
    rules: &PageRules,
) -> Result<(), String> {
    if !matches!(encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
        return Err(format!("is {encoding}, where only PLAIN is allowed"));
    }
    let width = match rules.physical {
        Type::BYTE_ARRAY => {
            let mut at = 0usize;
            for i in 0..n {
                let len = buf
                    .get(at..at + 4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                    .ok_or_else(|| format!("holds {i} of the {n} entries its header gives"))?;
                at = at.saturating_add(4).saturating_add(len);
                if at > buf.len() {
                    return Err(format!("holds {i} of the {n} entries its header gives"));
                }
            }
            return Ok(());
        }
        Type::BOOLEAN => return Ok(()),
        Type::INT32 | Type::FLOAT => 4,
        Type::INT64 | Type::DOUBLE => 8,
        Type::INT96 => 12,
        Type::FIXED_LEN_BYTE_ARRAY => usize::try_from(rules.type_length).unwrap_or(0),
    };
    let held = buf.len().checked_div(width).unwrap_or(usize::MAX);
    if held < n {
        return Err(format!("holds {held} of the {n} entries its header gives"));
    }
    Ok(())
}

fn data_page(page: &Page, rules: &PageRules) -> Result<(), String> {
    let (max_rep, max_def) = (rules.max_rep, rules.max_def);
    let (buf, values, encoding, rep, def) = match page {
        Page::DataPage {
            buf,
            num_values,
            encoding,
            def_level_encoding,
            rep_level_encoding,
            ..
        } => {
            // Deprecated for writers; files written with it are still read.
            #[allow(deprecated)]
            let format = |e: &Encoding, what: &str| match e {
                Encoding::RLE => Ok(Format::Prefixed),
                Encoding::BIT_PACKED => Ok(Format::Legacy),
                e => Err(format!("{what} levels are {e}, which is no level encoding")),
            };
            let rep = format(rep_level_encoding, "repetition")?;
            let def = format(def_level_encoding, "definition")?;
            (buf, *num_values, *encoding, rep, def)
        }
        Page::DataPageV2 {
            buf,
            num_values,
            encoding,
            def_levels_byte_len,
            rep_levels_byte_len,
            ..
        } => (
            buf,
            *num_values,
            *encoding,
            Format::Sized(*rep_levels_byte_len as usize),
            Format::Sized(*def_levels_byte_len as usize),
        ),
        Page::DictionaryPage { .. } => return Ok(()),
    };
    let values = values as usize;
    let mut at = 0;
    let rep_bytes = section(buf, &mut at, max_rep, rep, values, "repetition")?;
    let def_bytes = section(buf, &mut at, max_def, def, values, "definition")?;
    let legacy = |f: Format, max: u32| max > 0 && f == Format::Legacy;
    let present = if legacy(rep, max_rep) || legacy(def, max_def) {
        // Legacy bit-packed levels (from writers of long ago): their values, not their pairs.
        if max_rep > 0 {
            check_any_levels(rep_bytes, rep, values, max_rep, "repetition")?;
        }
        match max_def {
            0 => values,
            _ => check_any_levels(def_bytes, def, values, max_def, "definition")?,
        }
    } else if max_rep > 0 && rules.continues.len() == max_rep as usize {
        check_pairs(rep_bytes, def_bytes, values, rules)?
    } else {
        if max_rep > 0 {
            check_levels(rep_bytes, values, max_rep, "repetition")?;
        }
        match max_def {
            0 => values,
            _ => check_levels(def_bytes, values, max_def, "definition")?,
        }
    };
    let data = buf.get(at..).unwrap_or_default();
    crate::delta_lengths::check_delta_strings(data, present, encoding, rules.text)?;
    if encoding == Encoding::BYTE_STREAM_SPLIT {
        split_values(data, present, rules)?;
    }
    if encoding == Encoding::RLE && rules.physical == Type::BOOLEAN {
        // Booleans in the hybrid encoding at one bit, behind their length.
        let len = data
            .get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or("RLE booleans' length runs past the page")?;
        let runs = data.get(4..len.saturating_add(4)).ok_or_else(|| {
            format!(
                "RLE booleans take {len} bytes, {} are left in the page",
                data.len() - 4
            )
        })?;
        walk(runs, 1, present, "RLE booleans", |_| Ok(()))?;
    }
    if matches!(
        encoding,
        Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY
    ) && present > 0
    {
        let indices = buf.get(at..).unwrap_or_default();
        let (&width, runs) = indices
            .split_first()
            .ok_or("dictionary indices are missing")?;
        if width > 32 {
            return Err(format!(
                "dictionary indices have a bit width of {width}, where at most 32 is allowed"
            ));
        }
        walk(
            runs,
            u32::from(width),
            present,
            "dictionary indices",
            |_| Ok(()),
        )?;
    }
    Ok(())
}

/// How a level section is stored: in the hybrid encoding behind a 4-byte length (data page
/// v1, RLE), bit-packed from the most significant bit with no length (data page v1,
/// BIT_PACKED, long deprecated), or in the hybrid encoding in as many bytes as a data page
/// v2's header gives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Prefixed,
    Legacy,
    Sized(usize),
}

/// The level section at `at` of `buf` (moving `at` past it) of a column whose levels go up
/// to `max`, stored as `format`, for `n` entries: none when `max` is 0.
fn section<'a>(
    buf: &'a [u8],
    at: &mut usize,
    max: u32,
    format: Format,
    n: usize,
    what: &str,
) -> Result<&'a [u8], String> {
    match (max, format) {
        // Readers skip such a section and read the next one after it: shifted levels.
        (0, Format::Sized(len)) if len > 0 => {
            let unit = if len == 1 { "byte" } else { "bytes" };
            return Err(format!(
                "header gives {len} {unit} of {what} levels, in a column without them"
            ));
        }
        (0, _) => return Ok(&[]),
        _ => {}
    }
    let len = match format {
        Format::Sized(len) => len,
        Format::Legacy => n.saturating_mul(width_of(max) as usize).div_ceil(8),
        Format::Prefixed => {
            let prefix = buf
                .get(*at..*at + 4)
                .ok_or_else(|| format!("{what} levels' length runs past the page"))?;
            *at += 4;
            u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize
        }
    };
    let bytes = buf.get(*at..at.saturating_add(len)).ok_or_else(|| {
        format!(
            "{what} levels take {len} bytes, {} are left in the page",
            buf.len() - (*at).min(buf.len())
        )
    })?;
    *at += len;
    Ok(bytes)
}

/// Bits a level of at most `max` takes.
fn width_of(max: u32) -> u32 {
    32 - max.leading_zeros()
}

/// [`check_levels`] for a section stored as `format`.
fn check_any_levels(
    data: &[u8],
    format: Format,
    n: usize,
    max: u32,
    what: &str,
) -> Result<usize, String> {
    if format != Format::Legacy {
        return check_levels(data, n, max, what);
    }
    let width = width_of(max) as usize;
    let mut at_max = 0;
    for i in 0..n {
        let mut v = 0u32;
        for b in i * width..(i + 1) * width {
            let bit = data.get(b / 8).map_or(0, |byte| (byte >> (7 - b % 8)) & 1);
            v = (v << 1) | u32::from(bit);
        }
        if v > max {
            return Err(above(what, v, max));
        }
        at_max += usize::from(v == max);
    }
    Ok(at_max)
}

/// A BYTE_STREAM_SPLIT page's values: whole values of the column's width, at least the
/// page's `present` (the C++ reader refuses a size that is not a multiple of the width).
fn split_values(data: &[u8], present: usize, rules: &PageRules) -> Result<(), String> {
    let width = match rules.physical {
        Type::INT32 | Type::FLOAT => 4,
        Type::INT64 | Type::DOUBLE => 8,
        Type::FIXED_LEN_BYTE_ARRAY => usize::try_from(rules.type_length).unwrap_or(0),
        _ => return Ok(()),
    };
    let n = data.len();
    if width == 0 || !n.is_multiple_of(width) {
        return Err(format!(
            "BYTE_STREAM_SPLIT values take {n} bytes, no whole number of {width}-byte {} values",
            rules.physical
        ));
    }
    if n / width < present {
        return Err(format!(
            "BYTE_STREAM_SPLIT values are {} for the page's {present}",
            n / width
        ));
    }
    Ok(())
}

/// Checks `n` levels of at most `max` in the hybrid stream `data`; returns how many equal
/// `max` (for definition levels, the non-null values).
fn check_levels(data: &[u8], n: usize, max: u32, what: &str) -> Result<usize, String> {
    let width = width_of(max);
    let mut at_max = 0;
    walk(data, width, n, &format!("{what} levels"), |run| {
        match run {
            Run::Repeated { value, count } => {
                if value > max {
                    return Err(above(what, value, max));
                }
                if value == max {
                    at_max += count;
                }
            }
            // One bit a level (an optional flat column): no value can be above 1, and the
            // set bits are the values.
            Run::Packed { bytes, count } if width == 1 => at_max += ones(bytes, count),
            // Two bits a level whose most is 3 (a list's): none can be above it, and the
            // values at it are the pairs of set bits.
            Run::Packed { bytes, count } if width == 2 && max == 3 => {
                let full = count / 4;
                at_max += bytes[..full]
                    .iter()
                    .map(|b| (b & (b >> 1) & 0x55).count_ones() as usize)
                    .sum::<usize>();
                at_max += (full * 4..count)
                    .filter(|i| unpack(bytes, i * 2, 2) == 3)
                    .count();
            }
            Run::Packed { bytes, count } => {
                let all_ones = (1u64 << width) - 1 == u64::from(max);
                for i in 0..count {
                    let v = unpack(bytes, i * width as usize, width);
                    if !all_ones && v > max {
                        return Err(above(what, v, max));
                    }
                    at_max += usize::from(v == max);
                }
            }
        }
        Ok(())
    })?;
    Ok(at_max)
}

/// [`check_levels`] over both level streams of a repeated column, and a check that each
/// entry that continues a list (repetition level `r` above 0) is defined down to that list's
/// entries: a continuation with a lower definition level (a null or an empty list inside a
/// list) is no shape a writer gives, and decoders read it differently. Returns the entries
/// at the most definition level (the non-null values).
fn check_pairs(rep: &[u8], def: &[u8], n: usize, rules: &PageRules) -> Result<usize, String> {
    let reps = decoded(rep, n, rules.max_rep, "repetition")?;
    let defs = decoded(def, n, rules.max_def, "definition")?;
    let mut present = 0;
    for (i, (&r, &d)) in reps.iter().zip(&defs).enumerate() {
        let (r, d) = (u32::from(r), u32::from(d));
        present += usize::from(d == rules.max_def);
        if r == 0 {
            continue;
        }
        let least = rules.continues.get(r as usize - 1).copied().unwrap_or(0);
        if d < least {
            return Err(format!(
                "levels continue a list with an entry of definition level {d} (entry {i}: repetition level {r}, where {least} is the least)"
            ));
        }
    }
    Ok(present)
}

/// The `n` levels of the hybrid stream `data`, each at most `max` (a schema's depth bounds
/// levels, so they fit in a byte: `check_schema_depth`).
fn decoded(data: &[u8], n: usize, max: u32, what: &str) -> Result<Vec<u8>, String> {
    let width = width_of(max);
    if width > 7 {
        return Err(format!("{what} levels go up to {max}"));
    }
    let (w, mask) = (width as usize, (1u64 << width) - 1);
    let mut out = Vec::with_capacity(n);
    walk(data, width, n, &format!("{what} levels"), |run| {
        match run {
            Run::Repeated { value, count } => {
                out.extend(std::iter::repeat_n(value.min(255) as u8, count));
            }
            Run::Packed { bytes, count } => {
                // Each group of eight values starts on a byte and fits in a 64-bit word.
                let mut i = 0;
                while i + 8 <= count {
                    let Some(b) = bytes.get(i / 8 * w..i / 8 * w + 8) else {
                        break;
                    };
                    let word = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
                    out.extend((0..8).map(|k| ((word >> (k * w)) & mask) as u8));
                    i += 8;
                }
                out.extend((i..count).map(|j| unpack(bytes, j * w, width) as u8));
            }
        }
        Ok(())
    })?;
    if let Some(v) = out.iter().copied().find(|&v| u32::from(v) > max) {
        return Err(above(what, v.into(), max));
    }
    Ok(out)
}

/// A level above its column's maximum.
fn above(what: &str, v: u32, max: u32) -> String {
    format!("{what} levels hold a {v}, above the column's maximum of {max}")
}

/// One run of a hybrid stream, cut to the values still needed.
enum Run<'a> {
    Repeated { value: u32, count: usize },
    Packed { bytes: &'a [u8], count: usize },
}

/// Walks the runs of the hybrid stream `data` of `width`-bit values until `n` values have
/// been seen, calling `visit` on each. Every run read must lie inside `data`, and `data`
/// must hold `n` values.
fn walk<'a>(
    data: &'a [u8],
    width: u32,
    n: usize,
    what: &str,
    mut visit: impl FnMut(Run<'a>) -> Result<(), String>,
) -> Result<(), String> {
    let mut pos = 0;
    let mut left = n;
    while left > 0 {
        let mut next = || {
            let b = data.get(pos).copied();
            pos += 1;
            b.ok_or(())
        };
        let header = match read_varint(&mut next) {
            Ok(Some(h)) => h,
            Ok(None) => return Err(format!("{what} have a run header of over ten bytes")),
            Err(()) => return Err(format!("{what} end after {} of the page's {n}", n - left)),
        };
        let count = usize::try_from(header >> 1).unwrap_or(usize::MAX);
        if count == 0 {
            return Err(format!("{what} have a run of no values"));
        }
        if header & 1 == 1 {
            let bytes = count.saturating_mul(width as usize);
            let have = data.len() - pos.min(data.len());
            if bytes > have {
                return Err(format!(
                    "{what} have a bit-packed run of {} bytes with {have} left",
                    bytes
                ));
            }
            let take = count.saturating_mul(8).min(left);
            visit(Run::Packed {
                bytes: &data[pos..pos + bytes],
                count: take,
            })?;
            pos += bytes;
            left -= take;
        } else {
            let size = width.div_ceil(8) as usize;
            let raw = data
                .get(pos..pos + size)
                .ok_or_else(|| format!("{what} have a run whose value runs past their end"))?;
            let mut le = [0u8; 4];
            le[..size].copy_from_slice(raw);
            pos += size;
            let value = u32::from_le_bytes(le);
            // Readers that mask such a value (to its lowest bit, for booleans) and readers
            // that do not read different data.
            if u64::from(value) >> width != 0 {
                return Err(format!(
                    "{what} have a run of the value {value}, wider than their {width} bits"
                ));
            }
            let take = count.min(left);
            visit(Run::Repeated { value, count: take })?;
            left -= take;
        }
    }
    Ok(())
}

/// The `width`-bit value at bit `bit` of `bytes` (which hold it whole).
fn unpack(bytes: &[u8], bit: usize, width: u32) -> u32 {
    let at = bit / 8;
    let word = match bytes.get(at..at + 8) {
        Some(b) => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        None => {
            let mut w = [0u8; 8];
            for (o, b) in w.iter_mut().zip(bytes.iter().skip(at)) {
                *o = *b;
            }
            u64::from_le_bytes(w)
        }
    };
    ((word >> (bit % 8)) & ((1u64 << width) - 1)) as u32
}

/// The set bits among the first `n` bits of `bytes` (which hold them).
fn ones(bytes: &[u8], n: usize) -> usize {
    let full = (n / 8).min(bytes.len());
    let mut count: usize = bytes[..full].iter().map(|b| b.count_ones() as usize).sum();
    if !n.is_multiple_of(8) {
        if let Some(b) = bytes.get(full) {
            count += (b & ((1u8 << (n % 8)) - 1)).count_ones() as usize;
        }
    }
    count
}

#[cfg(test)]
mod tests;
