//! The view fast path of `match` and `includes` ([`match_views`]): value and expected both
//! Utf8View, no normalizer, every expected cell 1 to 4 plain bytes. Most rows are decided
//! from the two 16-byte views alone.

use super::{contains, MatchMode};
use arrow::array::{Array, StringViewArray};
use arrow::buffer::{BooleanBuffer, NullBuffer};

/// `match_check`'s rows as bits for the common shape: value and expected both Utf8View
/// columns, no normalizer, and every expected cell plain text of 1 to 4 bytes that starts
/// with a printable ASCII character other than `[` (so it cannot be a list). Those four bytes
/// sit in the expected cell's view itself, so most rows are decided from the two 16-byte
/// views without touching the string data. `None` when the batch is not of that shape (the
/// caller then takes the general path). Null rows get arbitrary bits; the caller masks them.
pub(super) fn match_views(
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
pub(super) fn shaped_once(expected: &StringViewArray) -> bool {
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
pub(super) fn view_has_byte(view: u128, len: u32, byte: u8) -> bool {
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
