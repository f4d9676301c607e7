//! The check family: `match`, `includes`, `fuzzy_match` and their negations, `exact`,
//! `pass_fail`, `regex`, and `string_equals` under `normalize:`.

use crate::normalize::{fold_case, Normalizer};
use crate::pattern::SearchPattern;
use crate::text::TextColumn;
use crate::{parse_choice_list, to_text, KernelError};
use arrow::array::{Array, AsArray, BooleanArray, StringArray, StringViewArray};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::datatypes::DataType;
use memchr::memmem::{self, Finder};
use regex::Regex;
use std::borrow::Cow;

/// How a value is tested against an expected string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchMode {
    /// `match`: the value starts with the expected string.
    Prefix,
    /// `includes`: the expected string is a substring of the value.
    Substring,
    /// `fuzzy_match`: either is a substring of the other.
    Fuzzy,
}

/// Literal expected strings, normalized and prepared once per task: one
/// `memchr::memmem::Finder` per string. Empty strings are dropped (they never match).
#[derive(Debug, Clone)]
pub struct Needles {
    items: Vec<(String, Finder<'static>)>,
}

impl Needles {
    /// Prepares `items`, normalizing each with `norm` first.
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(
        items: I,
        norm: Option<&Normalizer>,
    ) -> Self {
        let items = items
            .into_iter()
            .map(|s| match norm {
                Some(n) => n.apply(s.as_ref()).into_owned(),
                None => s.as_ref().to_owned(),
            })
            .filter(|s| !s.is_empty())
            .map(|s| {
                let f = Finder::new(s.as_bytes()).into_owned();
                (s, f)
            })
            .collect();
        Needles { items }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn any(&self, mode: MatchMode, value: &str) -> bool {
        !value.is_empty()
            && self.items.iter().any(|(e, f)| match mode {
                MatchMode::Prefix => value.as_bytes().starts_with(e.as_bytes()),
                MatchMode::Substring => f.find(value.as_bytes()).is_some(),
                MatchMode::Fuzzy => {
                    f.find(value.as_bytes()).is_some()
                        || memmem::find(e.as_bytes(), value.as_bytes()).is_some()
                }
            })
    }
}

/// Whether a text cell may be a list (its first non-space character is `[`), decided on the
/// first byte in the common case.
#[inline]
fn could_be_list(e: &str) -> bool {
    match e.as_bytes().first() {
        None => false,
        Some(b'[') => true,
        Some(b) if b.is_ascii_graphic() => false,
        Some(_) => e.trim_start().starts_with('['),
    }
}

#[inline]
fn one_matches(mode: MatchMode, value: &str, e: &str) -> bool {
    if value.is_empty() || e.is_empty() {
        return false;
    }
    let (v, e) = (value.as_bytes(), e.as_bytes());
    match mode {
        MatchMode::Prefix => v.starts_with(e),
        MatchMode::Substring => contains(v, e),
        MatchMode::Fuzzy => contains(v, e) || contains(e, v),
    }
}

/// Substring test for a needle that changes every row: `memmem::find` builds a searcher per
/// call, which costs more than the search itself for the short needles and haystacks typical
/// here, so one-byte needles use `memchr` and short haystacks a plain scan.
#[inline]
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    match needle.len() {
        0 => true,
        // Short haystacks: an inline scan beats the call into memchr.
        1 if haystack.len() <= 32 => haystack.contains(&needle[0]),
        1 => memchr::memchr(needle[0], haystack).is_some(),
        n if n > haystack.len() => false,
        n if haystack.len() <= 64 => haystack.windows(n).any(|w| w == needle),
        _ => memmem::find(haystack, needle).is_some(),
    }
}

/// `match_check`'s rows as bits for the common shape: value and expected both Utf8View
/// columns, no normalizer, and every expected cell plain text of 1 to 4 bytes that starts
/// with a printable ASCII character other than `[` (so it cannot be a list). Those four bytes
/// sit in the expected cell's view itself, so most rows are decided from the two 16-byte
/// views without touching the string data. `None` when the batch is not of that shape (the
/// caller then takes the general path). Null rows get arbitrary bits; the caller masks them.
fn match_views(
    value: &StringViewArray,
    expected: &StringViewArray,
    mode: MatchMode,
) -> Option<BooleanBuffer> {
    if mode == MatchMode::Fuzzy || value.len() != expected.len() {
        return None;
    }
    let (vs, es) = (value.views(), expected.views());
    if !shaped_once(expected) {
        return None;
    }
    Some(match mode {
        MatchMode::Prefix => crate::view_pair_bits(vs, es, view_prefix),
        _ => substring_views(value, vs, es),
    })
}

/// `includes` over views whose expected text is 1 to 4 bytes, in two passes. The first, with
/// no branch per row, decides from the two views every row whose text is inline (at most 12
/// bytes) and every out-of-line row whose first four bytes hold a one-byte needle
/// ([`substring_view`]). The second visits only the rows left, reading their text.
fn substring_views(value: &StringViewArray, vs: &[u128], es: &[u128]) -> BooleanBuffer {
    let words = vs.len().div_ceil(64);
    let (mut hits, mut rest) = (Vec::with_capacity(words), Vec::with_capacity(words));
    for (vc, ec) in vs.chunks(64).zip(es.chunks(64)) {
        let (mut h, mut r) = (0u64, 0u64);
        for (j, (&v, &e)) in vc.iter().zip(ec).enumerate() {
            let (hit, more) = substring_view(v, e);
            h |= u64::from(hit) << j;
            r |= u64::from(more) << j;
        }
        hits.push(h);
        rest.push(r);
    }
    for (w, (h, mut r)) in hits.iter_mut().zip(rest).enumerate() {
        while r != 0 {
            let j = r.trailing_zeros() as usize;
            r &= r - 1;
            let i = w * 64 + j;
            let e = es[i];
            let needle = ((e >> 32) as u32).to_le_bytes();
            if contains(value.value(i).as_bytes(), &needle[..(e as u32) as usize]) {
                *h |= 1 << j;
            }
        }
    }
    BooleanBuffer::new(arrow::buffer::Buffer::from_vec(hits), 0, vs.len())
}

/// One row of [`substring_views`]' first pass: (hit, undecided). A one-byte needle is
/// searched in the whole inline text, or in the first four bytes of an out-of-line one (in
/// its view too); a longer needle, or an out-of-line text whose first four bytes lack the
/// byte, is left undecided. Both searches run and the view's kind picks one: no branch.
#[inline]
fn substring_view(v: u128, e: u128) -> (bool, bool) {
    let (v_len, e_len) = (v as u32, e as u32);
    let byte = (e >> 32) as u8;
    // (The length tests only fail on null expected rows, masked by the caller.)
    let fits = (v_len >= e_len) & (e_len.wrapping_sub(1) < 4);
    let one = e_len == 1;
    let inline = v_len <= 12;
    // The view's text bytes: all of an inline text, the first four of another.
    let found = view_has_byte(v, if inline { v_len } else { 4 }, byte);
    (fits & one & found, fits & !(one & (inline | found)))
}

/// Whether an expected view has the shape [`match_views`] needs.
#[inline]
fn view_shaped(e: u128) -> bool {
    // Length and first byte sit in the low 64 bits; the range tests are subtractions.
    let e = e as u64;
    let (len, first) = (e as u32, (e >> 32) as u8);
    (len.wrapping_sub(1) < 4) & (first.wrapping_sub(b'!') <= b'~' - b'!') & (first != b'[')
}

thread_local! {
    /// The expected column [`shaped_once`] last tested on this thread, and the answer. The
    /// cache holds the column's view and null buffers, so they cannot be freed and their
    /// addresses reused by another column while they are here: the same addresses mean the
    /// same (immutable) buffers.
    static LAST_SHAPED: std::cell::RefCell<Option<(StringViewArray, bool)>> =
        const { std::cell::RefCell::new(None) };
}

/// [`views_shaped`] of an expected column, remembered for the next call on the same column:
/// `match` and `includes` over one `expected` column (`{{ sample.answer }}`) test it once per
/// batch instead of twice.
fn shaped_once(expected: &StringViewArray) -> bool {
    let same = |a: &StringViewArray, b: &StringViewArray| {
        let (va, vb) = (a.views(), b.views());
        va.as_ptr() == vb.as_ptr()
            && va.len() == vb.len()
            && a.nulls()
                .map(|n| (n.buffer().as_ptr(), n.offset(), n.len()))
                == b.nulls()
                    .map(|n| (n.buffer().as_ptr(), n.offset(), n.len()))
    };
    LAST_SHAPED.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((column, shaped)) = last.as_ref() {
            if same(column, expected) {
                return *shaped;
            }
        }
        let shaped = views_shaped(expected.views(), expected.nulls());
        *last = Some((expected.clone(), shaped));
        shaped
    })
}

/// Whether every non-null expected view has the shape, 64 rows at a time (null rows'
/// views are not read for a score, so they do not count).
fn views_shaped(es: &[u128], nulls: Option<&NullBuffer>) -> bool {
    let fold = |chunk: &[u128]| {
        let mut bad = 0u64;
        for (j, &e) in chunk.iter().enumerate() {
            bad |= u64::from(!view_shaped(e)) << j;
        }
        bad
    };
    es.chunks(64)
        .zip(crate::valid_words(nulls, es.len()))
        .all(|(c, valid)| fold(c) & valid == 0)
}

/// `match` over two views whose expected text is 1 to 4 bytes: the value is at least as long
/// and its first bytes (always in the view) equal the expected ones.
#[inline]
fn view_prefix(v: u128, e: u128) -> bool {
    // Length and first four bytes are the low 64 bits of both views.
    let (v, e) = (v as u64, e as u64);
    let (v_len, e_len) = (v as u32, e as u32);
    // `& 7` keeps the lookup in the table on null rows, whose bits are masked anyway.
    let mask = crate::LOW_BYTES[(e_len & 7) as usize] << 32;
    (v_len >= e_len) & (e_len != 0) & ((v ^ e) & mask == 0)
}

/// Whether the first `len` (at most 12) of the text bytes a view holds (bytes 4..16: all of
/// an inline text, the first four bytes of another) hold `byte`, eight and four at a time
/// ([`crate::bytes_equal`]), masked by the length ([`crate::LOW_BYTES`]).
#[inline]
fn view_has_byte(view: u128, len: u32, byte: u8) -> bool {
    // Per length, the masks of the low and the high word, in one lookup.
    const MASKS: [(u64, u64); 13] = {
        let mut m = [(0, 0); 13];
        let mut len = 0;
        while len <= 12 {
            let (lo, hi) = if len <= 8 { (len, 0) } else { (8, len - 8) };
            m[len] = (crate::LOW_BYTES[lo], crate::LOW_BYTES[hi]);
            len += 1;
        }
        m
    };
    let (lo_mask, hi_mask) = MASKS[len.min(12) as usize];
    let (lo, hi) = ((view >> 32) as u64, (view >> 96) as u64);
    (crate::bytes_equal(lo, byte) & lo_mask) | (crate::bytes_equal(hi, byte) & hi_mask) != 0
}

/// The pass mask from per-row hits: true where the row is valid and `hit != negate`;
/// null rows count as missing.
fn scores_from_hits(hits: &BooleanBuffer, valid: Option<&NullBuffer>, negate: bool) -> CheckOutput {
    let pass = if negate { !hits } else { hits.clone() };
    let (pass, missing) = match valid {
        Some(v) => (&pass & v.inner(), v.null_count()),
        None => (pass, 0),
    };
    CheckOutput {
        is_correct: BooleanArray::new(pass, None),
        missing,
    }
}

/// Texts up to this many bytes are memoized by content ([`TextMemo`]).
const SHORT_TEXT: usize = 32;

/// A direct-mapped memo from a text of at most [`SHORT_TEXT`] bytes to a boolean, 256
/// entries keyed by the text itself (zero-padded, with its length): a lookup costs a copy,
/// a hash and a compare of 32 bytes; a miss replaces the slot, if the computed value is
/// worth keeping.
struct TextMemo {
    slots: Box<[TextSlot; 256]>,
}

/// (text zero-padded, its length, filled, value)
type TextSlot = ([u8; SHORT_TEXT], u8, bool, bool);

impl Default for TextMemo {
    fn default() -> Self {
        TextMemo {
            slots: Box::new([([0; SHORT_TEXT], 0, false, false); 256]),
        }
    }
}

impl TextMemo {
    /// `text` must be at most [`SHORT_TEXT`] bytes long. `compute` gives the value and
    /// whether to keep it.
    #[inline]
    fn get_or(&mut self, text: &[u8], compute: impl FnOnce() -> (bool, bool)) -> bool {
        let mut key = [0u8; SHORT_TEXT];
        key[..text.len()].copy_from_slice(text);
        let mut h = text.len() as u64;
        for w in key.chunks_exact(8) {
            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        let slot = &mut self.slots[(h >> 56) as usize];
        if slot.2 && usize::from(slot.1) == text.len() && slot.0 == key {
            return slot.3;
        }
        let (value, keep) = compute();
        if keep {
            *slot = (key, text.len() as u8, true, value);
        }
        value
    }
}

/// A direct-mapped memo from a string view (16 bytes) to a boolean, 256 entries: a lookup
/// costs a multiply and a compare, a miss replaces the slot if the value is worth keeping.
struct ViewMemo {
    slots: Box<[(u128, bool, bool); 256]>,
}

impl Default for ViewMemo {
    fn default() -> Self {
        ViewMemo {
            // (view, filled, value)
            slots: Box::new([(0, false, false); 256]),
        }
    }
}

impl ViewMemo {
    /// `compute` gives the value and whether to keep it.
    #[inline]
    fn get_or(&mut self, view: u128, compute: impl FnOnce() -> (bool, bool)) -> bool {
        let h = ((view as u64) ^ ((view >> 64) as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56;
        let slot = &mut self.slots[h as usize];
        if slot.1 && slot.0 == view {
            return slot.2;
        }
        let (value, keep) = compute();
        if keep {
            *slot = (view, true, value);
        }
        value
    }
}

/// Where the expected strings of each row come from.
#[derive(Debug, Clone, Copy)]
pub enum Expected<'a> {
    /// The same strings for every row (a literal or a literal list), prepared once.
    Fixed(&'a Needles),
    /// A list column (`List`/`LargeList` of text), or a text column whose cells are one
    /// string each, or a list written as a JSON array / quoted Python list (see
    /// [`text_as_list`]).
    PerRow(&'a dyn Array),
}

/// Reads a text cell as a list of expected strings when it is written as one: a JSON array
/// (`["a", "b"]`) or a Python list literal whose items are quoted (`['a', 'b']`). Anything
/// else is one string, so `"[invalid]"` stays the single string `[invalid]`.
pub fn text_as_list(text: &str) -> Option<Vec<String>> {
    let t = text.trim();
    if !(t.starts_with('[') && t.ends_with(']')) {
        return None;
    }
    if let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(t) {
        return items
            .into_iter()
            .map(|i| match i {
                serde_json::Value::String(s) => Some(s),
                serde_json::Value::Number(n) => Some(n.to_string()),
                serde_json::Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect();
    }
    let inner = t[1..t.len() - 1].trim();
    if inner.is_empty() || inner.starts_with('\'') || inner.starts_with('"') {
        return parse_choice_list(t);
    }
    None
}

/// The result of a check over a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOutput {
    /// The pass mask: true scores 1.0, false 0.0; no nulls.
    pub is_correct: BooleanArray,
    /// Rows with a null value or a null expected/ground truth.
    pub missing: usize,
}

/// `match` / `includes` / `fuzzy_match` (and with `negate`, their `not_` forms): 1.0 when the
/// (normalized) value matches any expected string under `mode`.
///
/// An empty expected string never matches, and an empty value matches nothing (so the `not_`
/// forms score an empty value 1.0). `norm` is applied to the value and, for
/// [`Expected::PerRow`], to each expected string; [`Needles`] are normalized when built.
///
/// Null rule: a null value, or a null expected cell, scores 0.0 in every form, `not_` forms
/// included, and counts as missing.
pub fn match_check(
    value: TextColumn<'_>,
    expected: Expected<'_>,
    mode: MatchMode,
    negate: bool,
    norm: Option<&Normalizer>,
    len: usize,
) -> Result<CheckOutput, KernelError> {
    let mut scores = Vec::with_capacity(len);
    let mut missing = 0;
    let score = |hit: bool| hit != negate;
    match expected {
        Expected::Fixed(needles) => {
            for r in 0..len {
                match value.get(r) {
                    None => {
                        missing += 1;
                        scores.push(false);
                    }
                    Some(v) => {
                        let v = apply(norm, v);
                        scores.push(score(needles.any(mode, &v)));
                    }
                }
            }
        }
        Expected::PerRow(arr) => {
            if let (None, TextColumn::Utf8View(v), DataType::Utf8View) =
                (norm, value, arr.data_type())
            {
                let e = arr.as_string_view();
                if let Some(hits) = match_views(v, e, mode) {
                    return Ok(scores_from_hits(
                        &hits,
                        NullBuffer::union(v.nulls(), e.nulls()).as_ref(),
                        negate,
                    ));
                }
            }
            // Fast path: a plain text cell that is not a list is matched as it is, with no
            // copy (the common `expected: "{{ sample.answer }}"` without normalize).
            let plain = match (norm, arr.data_type()) {
                (None, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => {
                    Some(TextColumn::new(arr, "expected")?)
                }
                _ => None,
            };
            let mut reader = ExpectedReader::new(arr, norm)?;
            for r in 0..len {
                if let Some(p) = &plain {
                    if let (Some(v), Some(e)) = (value.get(r), p.get(r)) {
                        if !could_be_list(e) {
                            scores.push(score(one_matches(mode, v, e)));
                            continue;
                        }
                    }
                }
                let (v, e) = (value.get(r), reader.row(r));
                match (v, e) {
                    (Some(v), Some(items)) => {
                        let v = apply(norm, v);
                        scores.push(score(items.iter().any(|e| one_matches(mode, &v, e))));
                    }
                    _ => {
                        missing += 1;
                        scores.push(false);
                    }
                }
            }
        }
    }
    Ok(CheckOutput {
        is_correct: BooleanArray::from(scores),
        missing,
    })
}

fn apply<'a>(norm: Option<&Normalizer>, s: &'a str) -> Cow<'a, str> {
    match norm {
        Some(n) => n.apply(s),
        None => Cow::Borrowed(s),
    }
}

/// Per-row expected strings, with the last parsed text cached so a column that repeats the
/// same value parses (and normalizes) it once per run of equal values.
pub(crate) struct ExpectedReader<'a> {
    source: Src<'a>,
    norm: Option<&'a Normalizer>,
    last_text: Option<&'a str>,
    items: Vec<String>,
}

enum Src<'a> {
    List(&'a dyn Array),
    Text(TextColumn<'a>),
}

impl<'a> ExpectedReader<'a> {
    pub(crate) fn new(
        arr: &'a dyn Array,
        norm: Option<&'a Normalizer>,
    ) -> Result<Self, KernelError> {
        let source = match arr.data_type() {
            DataType::List(_) | DataType::LargeList(_) => Src::List(arr),
            _ => Src::Text(TextColumn::new(arr, "expected")?),
        };
        Ok(ExpectedReader {
            source,
            norm,
            last_text: None,
            items: Vec::new(),
        })
    }

    fn set(&mut self, items: impl Iterator<Item = String>) {
        let norm = self.norm;
        self.items.clear();
        self.items.extend(items.map(|s| match apply(norm, &s) {
            Cow::Owned(n) => n,
            Cow::Borrowed(_) => s,
        }));
    }

    /// One expected string, in the buffer of the last row when there is one (no allocation
    /// per row once the buffer is large enough).
    fn set_one(&mut self, text: &str) {
        let text = apply(self.norm, text);
        self.items.truncate(1);
        match self.items.first_mut() {
            Some(slot) => {
                slot.clear();
                slot.push_str(&text);
            }
            None => self.items.push(text.into_owned()),
        }
    }

    pub(crate) fn row(&mut self, row: usize) -> Option<&[String]> {
        match &self.source {
            Src::List(a) => {
                if a.is_null(row) {
                    return None;
                }
                let values = match a.data_type() {
                    DataType::List(_) => a.as_list::<i32>().value(row),
                    _ => a.as_list::<i64>().value(row),
                };
                let values = to_text(&values, "expected").ok()?;
                let col = TextColumn::new(values.as_ref(), "expected").ok()?;
                let items: Vec<String> = (0..values.len())
                    .filter_map(|i| col.get(i).map(str::to_owned))
                    .collect();
                self.set(items.into_iter());
                self.last_text = None;
                Some(&self.items)
            }
            Src::Text(col) => {
                let text = col.get(row)?;
                if self.last_text != Some(text) || self.items.is_empty() {
                    match text_as_list(text) {
                        Some(list) => self.set(list.into_iter()),
                        None => self.set_one(text),
                    }
                    self.last_text = Some(text);
                }
                Some(&self.items)
            }
        }
    }
}

/// Equality of normalized texts: equal after `norm`, except that two texts which both
/// normalize to the empty string are equal only when they were equal before (the rule of
/// Hugging Face `evaluate`'s exact_match).
pub fn normalized_equal(a: &str, b: &str, norm: Option<&Normalizer>) -> bool {
    match norm {
        None => a == b,
        Some(n) => {
            let (na, nb) = (n.apply(a), n.apply(b));
            na == nb && (!na.is_empty() || a == b)
        }
    }
}

/// `string_equals` with `normalize:`: 1.0 when [`normalized_equal`].
///
/// Null rule: a null on either side scores 0.0 (the caller counts it as missing).
pub fn string_equals_normalized(
    value: TextColumn<'_>,
    ground_truth: TextColumn<'_>,
    norm: &Normalizer,
    len: usize,
) -> BooleanArray {
    // A scalar ground truth is normalized once.
    let scalar = match ground_truth {
        TextColumn::Scalar(Some(g)) => Some((g, norm.apply(g))),
        _ => None,
    };
    let eq = BooleanBuffer::collect_bool(len, |r| match (value.get(r), &scalar) {
        (None, _) => false,
        (Some(v), Some((g, ng))) => {
            let nv = norm.apply(v);
            nv == *ng && (!nv.is_empty() || v == *g)
        }
        (Some(v), None) => ground_truth
            .get(r)
            .is_some_and(|g| normalized_equal(v, g, Some(norm))),
    });
    BooleanArray::new(eq, None)
}

/// The `details` text of `exact` on a pass.
pub const EXACT_PASS: &str = "Exact match: PASS.";
/// The `details` text of `exact` when the expected output is missing (null).
pub const EXACT_NO_EXPECTED: &str =
    "Exact match: FAIL. No expected_output defined for this scenario.";

/// The fields of the `exact` scorer for one batch.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactOutput {
    /// The pass mask: true scores 1.0, false 0.0; no nulls.
    pub is_correct: BooleanArray,
    /// Never null.
    pub details: StringArray,
    pub missing: usize,
}

/// AgenticAssure's `exact`: strict `==` of value and expected output (after `norm`, if any, with
/// the [`normalized_equal`] rule), with the seed's `details`:
/// `Exact match: PASS.`, `Exact match: FAIL. Expected "E", got "V".` (the compared texts,
/// as they are, between double quotes) and [`EXACT_NO_EXPECTED`].
///
/// Null rule: a null expected output fails with [`EXACT_NO_EXPECTED`]; a null value fails
/// with `Exact match: FAIL. Expected "E", got null.` (`null` without quotes, so it cannot be
/// confused with the text "null"). Both count as missing.
pub fn exact(
    value: TextColumn<'_>,
    expected: TextColumn<'_>,
    norm: Option<&Normalizer>,
    len: usize,
) -> ExactOutput {
    let mut scores = Vec::with_capacity(len);
    let mut details: Vec<Cow<'static, str>> = Vec::with_capacity(len);
    let mut missing = 0;
    for r in 0..len {
        let (v, e) = (value.get(r), expected.get(r));
        let (pass, text) = match (v, e) {
            (_, None) => (false, Cow::Borrowed(EXACT_NO_EXPECTED)),
            (None, Some(e)) => (
                false,
                Cow::Owned(format!(
                    "Exact match: FAIL. Expected \"{}\", got null.",
                    apply(norm, e)
                )),
            ),
            (Some(v), Some(e)) => {
                if normalized_equal(v, e, norm) {
                    (true, Cow::Borrowed(EXACT_PASS))
                } else {
                    (
                        false,
                        Cow::Owned(format!(
                            "Exact match: FAIL. Expected \"{}\", got \"{}\".",
                            apply(norm, e),
                            apply(norm, v)
                        )),
                    )
                }
            }
        };
        if v.is_none() || e.is_none() {
            missing += 1;
        }
        scores.push(pass);
        details.push(text);
    }
    ExactOutput {
        is_correct: BooleanArray::from(scores),
        details: details.iter().map(|d| Some(d.as_ref())).collect(),
        missing,
    }
}

/// AgenticAssure's `pass_fail`: 1.0 when the (normalized) value is non-empty after trimming and the
/// expected output is a case-insensitive (Unicode case folding) substring of it. The seed's
/// PassFail "can run with just an output-produced check": without an expected output (no
/// `expected_output`, `TextColumn::Scalar(None)`, or a null cell) a row passes when its
/// value is non-empty after trimming. An empty expected output is a substring of every
/// text, as with Python's `in`, so it too passes any non-empty value.
///
/// Null rule: a null value fails and counts as missing; a null expected output does not.
pub fn pass_fail(
    value: TextColumn<'_>,
    expected: TextColumn<'_>,
    norm: Option<&Normalizer>,
    len: usize,
) -> CheckOutput {
    let scalar = match expected {
        TextColumn::Scalar(Some(e)) => {
            let e = fold_case(&apply(norm, e)).into_owned();
            Some(Finder::new(e.as_bytes()).into_owned())
        }
        _ => None,
    };
    let mut missing = 0;
    let scores = BooleanBuffer::collect_bool(len, |r| {
        let Some(v) = value.get(r) else {
            missing += 1;
            return false;
        };
        let v = apply(norm, v);
        if v.trim().is_empty() {
            return false;
        }
        let Some(e) = expected.get(r) else {
            return true;
        };
        let v = fold_case(&v);
        match &scalar {
            Some(f) => f.find(v.as_bytes()).is_some(),
            None => {
                let e = fold_case(&apply(norm, e)).into_owned();
                memmem::find(v.as_bytes(), e.as_bytes()).is_some()
            }
        }
    });
    CheckOutput {
        is_correct: BooleanArray::new(scores, None),
        missing,
    }
}

/// `regex`: 1.0 when `pattern` is found anywhere in the (normalized) value (a search, not a
/// full match). With `ground_truth`, the first capture group of the first match must also
/// equal the (normalized) ground truth; a match whose group 1 did not take part fails.
///
/// Null rule: a null value, or a null ground truth when one is given, scores 0.0 and counts
/// as missing.
pub fn regex_check(
    value: TextColumn<'_>,
    search: &SearchPattern,
    ground_truth: Option<TextColumn<'_>>,
    norm: Option<&Normalizer>,
    len: usize,
) -> CheckOutput {
    // This worker thread's own copy, whose match cache lives across batches.
    crate::pattern::with_thread_copy(search.regex(), |pattern| {
        regex_rows(value, search, pattern, ground_truth, norm, len)
    })
}

fn regex_rows(
    value: TextColumn<'_>,
    search: &SearchPattern,
    pattern: &Regex,
    ground_truth: Option<TextColumn<'_>>,
    norm: Option<&Normalizer>,
    len: usize,
) -> CheckOutput {
    // `search.may_match` rules out texts too short for a match and most texts that lack
    // the pattern's leading word, without running the regex; it never rules out a match.
    let mut missing = 0;
    if let (TextColumn::Utf8View(v), None, None) = (value, &ground_truth, norm) {
        // Texts shorter than any match are decided from their view's length, in one pass
        // over the views; only the others are visited. Texts repeat (`The answer is B`), so
        // the regex runs once per repeated text: an inline text (at most 12 bytes) is
        // memoized by its view, which holds it whole; a longer one up to SHORT_TEXT bytes by
        // content; a longer one still by view again: equal out-of-line views are equal texts
        // (a view names its buffer and offset), and rows decoded from one Parquet dictionary
        // share their views.
        let mut short = TextMemo::default();
        let mut by_view = ViewMemo::default();
        let views = v.views();
        let min_len = search.min_len();
        let candidates = crate::view_bits(views, |view| (view as u32) as usize >= min_len);
        let mut hits = vec![0u64; views.len().div_ceil(64)];
        for i in candidates.set_indices() {
            let view = views[i];
            let n = (view as u32) as usize;
            let text = v.value(i);
            // Only texts that needed the regex are kept: the many a prefilter rules out at
            // once would otherwise evict the repeated ones.
            let test = || match search.may_match(text) {
                true => (pattern.is_match(text), true),
                false => (false, false),
            };
            let hit = if n <= 12 || n > SHORT_TEXT {
                by_view.get_or(view, test)
            } else {
                short.get_or(text.as_bytes(), test)
            };
            hits[i / 64] |= u64::from(hit) << (i % 64);
        }
        let hits = BooleanBuffer::new(arrow::buffer::Buffer::from_vec(hits), 0, views.len());
        return scores_from_hits(&hits, v.nulls(), false);
    }
    let scores = BooleanBuffer::collect_bool(len, |r| {
        let Some(v) = value.get(r) else {
            missing += 1;
            return false;
        };
        match &ground_truth {
            None => {
                let v = apply(norm, v);
                search.may_match(&v) && pattern.is_match(&v)
            }
            Some(g) => {
                let Some(g) = g.get(r) else {
                    missing += 1;
                    return false;
                };
                let v = apply(norm, v);
                let g = apply(norm, g);
                search.may_match(&v)
                    && pattern
                        .captures(&v)
                        .and_then(|c| c.get(1))
                        .is_some_and(|m| m.as_str() == g)
            }
        }
    });
    CheckOutput {
        is_correct: BooleanArray::new(scores, None),
        missing,
    }
}

#[cfg(test)]
mod tests;
