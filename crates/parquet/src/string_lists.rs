//! A column of lists of strings (MCQA's `choices`) decoded straight from its pages.
//!
//! parquet-rs reads such a column through its generic nested-column path: every level entry
//! is walked several times (repetition levels, a validity bitmap filtered from the definition
//! levels, nulls padded into the item views, offsets built by `ListArrayReader`), which on an
//! export-shaped file cost as much as reading every other column of the job together
//! (BENCHMARKS.md). Here the three-level list of the Parquet spec, with optional or required
//! list and items, is read in one pass over its levels; dictionary-encoded items become
//! `take`s from the dictionary's views (no copy of the strings, no re-validation), plain ones
//! views into their page. The pages themselves come from parquet-rs's `SerializedPageReader`
//! (headers, decompression), and the arrays are those parquet-rs gives: the same type,
//! offsets, nulls and values.
//!
//! Any other shape or encoding (legacy two-level lists, `BIT_PACKED` levels, delta-encoded
//! strings) is left to parquet-rs ([`StringLists::shape`] says which).

#[cfg(test)]
mod tests;

use crate::hybrid::{width_of, Hybrid};
use arrow::array::BooleanBufferBuilder;
use arrow::array::{make_view, Array, ArrayRef, ListArray, StringViewArray, UInt32Array};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, FieldRef};
use bytes::Bytes;
use parquet::basic::{Encoding, Repetition, Type as Physical};
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::schema::types::SchemaDescriptor;

/// Level entries decoded at a time.
const LEVELS: usize = 1024;

/// The most list items one batch may hold (about 1.3 GB of item views and indices). RLE runs
/// let a few bytes of levels and dictionary indices claim any number of items, so nothing in
/// the file bounds them: past this, the chunk is refused before more is decoded.
const MAX_BATCH_ITEMS: usize = 1 << 26;

/// How a list column's definition levels read, and its items' field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// A definition level below this is a null list; at it, an empty list.
    present: u32,
    /// Whether an item may be null (its level is `present + 1`).
    null_items: bool,
    item: FieldRef,
}

impl Shape {
    fn max_def(&self) -> u32 {
        self.present + 1 + u32::from(self.null_items)
    }
}

/// One list column of a unit, decoded from its pages.
pub struct StringLists {
    pages: Box<dyn PageReader>,
    shape: Shape,
    field: FieldRef,
    dictionary: Option<StringViewArray>,
    page: Option<DataPage>,
    rep: Vec<u8>,
    def: Vec<u8>,
    /// The next unread entry of `rep` and `def`, and how many they hold.
    at: usize,
    len: usize,
    /// The items of the batch being built that come from pages of one kind.
    piece: Piece,
    pieces: Vec<ArrayRef>,
    scratch: Vec<u32>,
}

struct DataPage {
    rep: Hybrid,
    def: Hybrid,
    /// Level entries not yet decoded.
    left: usize,
    values: Values,
}

enum Values {
    Dictionary(Hybrid),
    Plain { page: Bytes, at: usize },
}

/// Items of one kind, from the current data page: indices into the dictionary, or views
/// into the page when it is plain.
#[derive(Default)]
struct Piece {
    indices: Vec<u32>,
    views: Vec<u128>,
    /// Positions of null items in this piece.
    nulls: Vec<usize>,
}

impl Piece {
    fn len(&self) -> usize {
        self.indices.len() + self.views.len()
    }
}

impl StringLists {
    /// Whether column `root` of `schema`, read as `data_type`, has the shape and encodings
    /// decoded here: `List<Utf8View>` over a three-level list of strings whose chunk `chunk`
    /// holds only plain or dictionary values and RLE levels.
    pub fn shape(
        schema: &SchemaDescriptor,
        root: usize,
        data_type: &DataType,
        chunk: &ColumnChunkMetaData,
    ) -> Option<Shape> {
        let DataType::List(item) = data_type else {
            return None;
        };
        if item.data_type() != &DataType::Utf8View {
            return None;
        }
        // `get_fields` panics on a primitive type: groups are checked first.
        let list = schema.root_schema().get_fields().get(root)?;
        let repeated = match list.is_group().then(|| list.get_fields()) {
            Some([r]) => r,
            _ => return None,
        };
        let leaf = match repeated.is_group().then(|| repeated.get_fields()) {
            Some([l]) => l,
            _ => return None,
        };
        let repetition = |t: &parquet::schema::types::Type| t.get_basic_info().repetition();
        if repetition(list) == Repetition::REPEATED
            || repetition(repeated) != Repetition::REPEATED
            || !leaf.is_primitive()
            || leaf.get_physical_type() != Physical::BYTE_ARRAY
            || repetition(leaf) == Repetition::REPEATED
        {
            return None;
        }
        let shape = Shape {
            present: u32::from(repetition(list) == Repetition::OPTIONAL),
            null_items: repetition(leaf) == Repetition::OPTIONAL,
            item: item.clone(),
        };
        let descr = chunk.column_descr();
        let known = |e: Encoding| {
            matches!(
                e,
                Encoding::PLAIN
                    | Encoding::RLE
                    | Encoding::PLAIN_DICTIONARY
                    | Encoding::RLE_DICTIONARY
            )
        };
        (descr.max_rep_level() == 1
            && descr.max_def_level() as u32 == shape.max_def()
            && descr.path().parts().len() == 3
            && chunk.encodings().all(known))
        .then_some(shape)
    }

    /// The decoder of one chunk's `pages`, giving the arrays of `field` (whose shape
    /// [`StringLists::shape`] gave).
    pub fn new(pages: Box<dyn PageReader>, shape: Shape, field: FieldRef) -> Self {
        Self {
            pages,
            shape,
            field,
            dictionary: None,
            page: None,
            rep: vec![0; LEVELS],
            def: vec![0; LEVELS],
            at: 0,
            len: 0,
            piece: Piece::default(),
            pieces: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// The list field the arrays are for.
    pub fn field(&self) -> &FieldRef {
        &self.field
    }

    /// The next `rows` rows, fewer where the chunk ends first.
    pub fn next_rows(&mut self, rows: usize) -> Result<ListArray, String> {
        // Levels are at most 3 (`Shape::max_def`).
        let (present, max_def) = (self.shape.present as u8, self.shape.max_def() as u8);
        // Each row's first item and whether it is a list, written at every entry into the
        // slot of the next row to start (which that row's first entry then overwrites), so
        // that the loop does not branch on the lists' lengths.
        let mut starts: Vec<i32> = vec![0; rows + 1];
        let mut lists: Vec<bool> = vec![false; rows + 1];
        let (mut done, mut items, mut null_lists) = (0usize, 0usize, 0usize);
        loop {
            if self.at == self.len && !self.refill()? {
                break;
            }
            let (reps, defs) = (&self.rep[self.at..self.len], &self.def[self.at..self.len]);
            // The entries of this batch: up to the start of row `rows`, found by a count
            // first (which vectorizes) and a search only in the chunk where the batch ends.
            let need = rows - done;
            let (end, stop) = if reps.iter().filter(|&&r| r == 0).count() <= need {
                (reps.len(), false)
            } else {
                let mut seen = 0;
                let end = reps
                    .iter()
                    .position(|&r| {
                        seen += usize::from(r == 0);
                        seen > need
                    })
                    .unwrap_or(reps.len());
                (end, true)
            };
            let (reps, defs) = (&reps[..end], &defs[..end]);
            let odd = reps.iter().zip(defs).fold(false, |odd, (&r, &d)| {
                odd | (r > 1) | (d > max_def) | ((r == 1) & (d <= present))
            });
            if odd || (done == 0 && reps.first().is_some_and(|&r| r != 0)) {
                return Err(level_error(reps, present, max_def));
            }
            let first_item = items;
            for (&r, &d) in reps.iter().zip(defs) {
                let row_start = r == 0;
                starts[done] = items as i32;
                lists[done] = d >= present;
                null_lists += usize::from(row_start & (d < present));
                done += usize::from(row_start);
                items += usize::from(d > present);
            }
            if items > MAX_BATCH_ITEMS {
                return Err(format!(
                    "more than {MAX_BATCH_ITEMS} list items in {rows} rows, the most read at once"
                ));
            }
            let values = defs.iter().filter(|&&d| d == max_def).count();
            let nulls = items - first_item - values;
            if nulls > 0 {
                // Null items: their places among this piece's items.
                let mut at = self.piece.len();
                for &d in defs {
                    if d == present + 1 && d < max_def {
                        self.piece.nulls.push(at);
                    }
                    at += usize::from(d > present);
                }
            }
            self.at += end;
            self.take_values(values, nulls)?;
            if stop {
                break;
            }
        }
        starts[done] = item_offset(items)?;
        starts.truncate(done + 1);
        self.flush()?;
        let values = match self.pieces.len() {
            0 | 1 => self
                .pieces
                .pop()
                .unwrap_or_else(|| arrow::array::new_empty_array(&DataType::Utf8View)),
            _ => {
                let parts: Vec<&dyn Array> = self.pieces.iter().map(|a| a.as_ref()).collect();
                let joined = arrow::compute::concat(&parts).map_err(|e| e.to_string())?;
                self.pieces.clear();
                joined
            }
        };
        let nulls = (null_lists > 0)
            .then(|| NullBuffer::new(BooleanBuffer::collect_bool(done, |i| lists[i])));
        ListArray::try_new(
            self.shape.item.clone(),
            OffsetBuffer::new(ScalarBuffer::from(starts)),
            values,
            nulls,
        )
        .map_err(|e| e.to_string())
    }

    /// Decodes the next level entries into `rep` and `def`, reading the next page when this
    /// one has none left; `false` at the end of the chunk.
    fn refill(&mut self) -> Result<bool, String> {
        loop {
            if let Some(page) = &mut self.page {
                if page.left > 0 {
                    let n = page.left.min(LEVELS);
                    page.rep.fill(&mut self.rep[..n])?;
                    page.def.fill(&mut self.def[..n])?;
                    page.left -= n;
                    // Levels longer than their entries would shift the values after them.
                    if page.left == 0 && !(page.rep.at_end() && page.def.at_end()) {
                        return Err("a page's levels run on past its level entries".into());
                    }
                    (self.at, self.len) = (0, n);
                    return Ok(true);
                }
            }
            match self.pages.get_next_page().map_err(|e| e.to_string())? {
                None => return Ok(false),
                Some(page) => self.start_page(page)?,
            }
        }
    }

    fn start_page(&mut self, page: Page) -> Result<(), String> {
        let (rep_w, def_w) = (1, width_of(self.shape.max_def()));
        let (buf, entries, encoding, rep, def) = match page {
            Page::DictionaryPage {
                buf,
                num_values,
                encoding,
                ..
            } => return self.dictionary_page(buf, num_values as usize, encoding),
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding,
                rep_level_encoding,
                ..
            } => {
                if def_level_encoding != Encoding::RLE || rep_level_encoding != Encoding::RLE {
                    return Err(format!(
                        "levels encoded as {rep_level_encoding} and {def_level_encoding}, where RLE was expected"
                    ));
                }
                let (rep, at) = prefixed(&buf, 0)?;
                let (def, at) = prefixed(&buf, at)?;
                (buf.slice(at..), num_values, encoding, rep, def)
            }
            Page::DataPageV2 {
                buf,
                num_values,
                encoding,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let (r, d) = (rep_levels_byte_len as usize, def_levels_byte_len as usize);
                if r.saturating_add(d) > buf.len() {
                    return Err("a page's levels run past its end".into());
                }
                (
                    buf.slice(r + d..),
                    num_values,
                    encoding,
                    buf.slice(..r),
                    buf.slice(r..r + d),
                )
            }
        };
        let values = match encoding {
            Encoding::PLAIN => Values::Plain { page: buf, at: 0 },
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                let width = *buf.first().ok_or("a data page without its index width")?;
                Values::Dictionary(Hybrid::new(buf.slice(1..), u32::from(width))?)
            }
            e => return Err(format!("values encoded as {e}")),
        };
        // Views point into their plain page: the items of a plain page, and those before
        // one, form an array of their own. Dictionary indices run on across pages.
        let plain = |v: &Values| matches!(v, Values::Plain { .. });
        if plain(&values) || self.page.as_ref().is_some_and(|p| plain(&p.values)) {
            self.flush()?;
        }
        self.page = Some(DataPage {
            rep: Hybrid::new(rep, rep_w)?,
            def: Hybrid::new(def, def_w)?,
            left: entries as usize,
            values,
        });
        Ok(())
    }

    fn dictionary_page(
        &mut self,
        buf: Bytes,
        entries: usize,
        encoding: Encoding,
    ) -> Result<(), String> {
        if self.dictionary.is_some() || self.page.is_some() {
            return Err("a second dictionary page, or one after the data pages".into());
        }
        if !matches!(encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
            return Err(format!("a dictionary page encoded as {encoding}"));
        }
        // Each entry takes at least its 4-byte length: a damaged count cannot reserve more.
        let mut views = Vec::with_capacity(entries.min(buf.len() / 4));
        let mut at = 0;
        for _ in 0..entries {
            let (start, len) = plain_value(&buf, at)?;
            views.push(make_view(&buf[start..start + len], 0, start as u32));
            at = start + len;
        }
        let dictionary = StringViewArray::try_new(views.into(), vec![Buffer::from(buf)], None)
            .map_err(|e| format!("dictionary page: {e}"))?;
        self.dictionary = Some(dictionary);
        Ok(())
    }

    /// Reads the values of the items just walked: `values` present, `nulls` null (at the
    /// positions `piece.nulls` ends with).
    fn take_values(&mut self, values: usize, nulls: usize) -> Result<(), String> {
        if values + nulls == 0 {
            return Ok(());
        }
        let page = self.page.as_mut().ok_or("items before any data page")?;
        let piece = &mut self.piece;
        let first_null = piece.nulls.len() - nulls;
        let nulls_at = &piece.nulls[first_null..];
        match &mut page.values {
            Values::Dictionary(indices) if nulls == 0 => {
                let at = piece.indices.len();
                piece.indices.resize(at + values, 0);
                indices.fill(&mut piece.indices[at..])?;
            }
            Values::Dictionary(indices) => {
                self.scratch.resize(values, 0);
                indices.fill(&mut self.scratch)?;
                let mut taken = self.scratch.iter().copied();
                place(&mut piece.indices, values + nulls, nulls_at, || {
                    Ok(taken.next().unwrap_or_default())
                })?;
            }
            Values::Plain { page: buf, at } => {
                place(&mut piece.views, values + nulls, nulls_at, || {
                    let (s, len) = plain_value(buf, *at)?;
                    *at = s + len;
                    Ok(make_view(&buf[s..s + len], 0, s as u32))
                })?;
            }
        }
        Ok(())
    }

    /// Turns the piece being built, from the current data page, into an array of the
    /// batch's items.
    fn flush(&mut self) -> Result<(), String> {
        let piece = std::mem::take(&mut self.piece);
        if piece.len() == 0 {
            return Ok(());
        }
        let n = piece.len();
        let nulls = (!piece.nulls.is_empty()).then(|| {
            let mut valid = BooleanBufferBuilder::new(n);
            valid.append_n(n, true);
            for &i in &piece.nulls {
                valid.set_bit(i, false);
            }
            NullBuffer::new(valid.finish())
        });
        let array: ArrayRef = match self.page.as_ref().map(|p| &p.values) {
            Some(Values::Plain { page, .. }) => std::sync::Arc::new(
                StringViewArray::try_new(
                    piece.views.into(),
                    vec![Buffer::from(page.clone())],
                    nulls,
                )
                .map_err(|e| e.to_string())?,
            ),
            _ => {
                let dictionary = self
                    .dictionary
                    .as_ref()
                    .ok_or("dictionary indices without a dictionary page")?;
                // Null items hold index 0, so with an empty dictionary every item must be null.
                let entries = dictionary.len() as u32;
                let bad = match entries {
                    0 => (piece.nulls.len() < n).then_some(0),
                    _ => piece.indices.iter().copied().find(|&i| i >= entries),
                };
                if let Some(bad) = bad {
                    return Err(format!(
                        "dictionary index {bad}, where the dictionary has {entries} entries"
                    ));
                }
                if entries == 0 {
                    arrow::array::new_null_array(&DataType::Utf8View, n)
                } else {
                    let indices = UInt32Array::new(piece.indices.into(), nulls);
                    arrow::compute::take(dictionary, &indices, None).map_err(|e| e.to_string())?
                }
            }
        };
        self.pieces.push(array);
        Ok(())
    }
}

/// Appends `n` items to `out`: the zero value at the positions `nulls` (counted from the
/// start of `out`, in order), `next()` elsewhere.
fn place<T: Default>(
    out: &mut Vec<T>,
    n: usize,
    nulls: &[usize],
    mut next: impl FnMut() -> Result<T, String>,
) -> Result<(), String> {
    let mut nulls = nulls.iter().peekable();
    for i in out.len()..out.len() + n {
        let item = match nulls.next_if_eq(&&i) {
            Some(_) => T::default(),
            None => next()?,
        };
        out.push(item);
    }
    Ok(())
}

/// What is wrong with a run of level entries whose repetition levels are `reps`.
fn level_error(reps: &[u8], present: u8, max_def: u8) -> String {
    match reps.iter().find(|&&r| r > 1) {
        Some(r) => format!("a repetition level of {r}, where at most 1 is allowed"),
        None => format!(
            "levels out of place: a list that goes on before it starts, a null or empty list \
             inside one, or a definition level above {max_def} (null lists are below {present})"
        ),
    }
}

/// An item count as a list offset.
fn item_offset(items: usize) -> Result<i32, String> {
    i32::try_from(items).map_err(|_| "more than 2^31 items in one batch".to_owned())
}

/// A v1 page's levels: a 4-byte length, then that many bytes; with where they end.
fn prefixed(buf: &Bytes, at: usize) -> Result<(Bytes, usize), String> {
    let len = buf
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or("a page ends inside its levels")?;
    let end = at + 4 + len;
    if end > buf.len() {
        return Err("a page's levels run past its end".into());
    }
    Ok((buf.slice(at + 4..end), end))
}

/// A plain byte array at `at`: its bytes' start and length.
fn plain_value(buf: &[u8], at: usize) -> Result<(usize, usize), String> {
    let len = buf
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or("fewer values than the page's levels promise")?;
    let start = at + 4;
    if start + len > buf.len() || u32::try_from(start + len).is_err() {
        return Err("a value runs past the end of its page".into());
    }
    Ok((start, len))
}
