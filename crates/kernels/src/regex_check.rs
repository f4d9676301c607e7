//! The value against a regular expression: `regex` (found, or its first group equal to the
//! ground truth) and `not_regex` (not found).

use crate::contract::{Batch, Scored};
use crate::pattern::SearchPattern;
use crate::KernelError;
use arrow::buffer::BooleanBuffer;
use evalscore_text::{TextColumn, Validity};
use regex::Regex;

/// `regex`: 1.0 when `search` is found anywhere in the (normalized) value (a search, not a
/// full match). With `ground_truth`, the first capture group of the first match must also
/// equal the (normalized) ground truth; a match whose group 1 did not take part fails.
///
/// Null rule: a null value, or a null ground truth when one is given, scores 0.0 and counts
/// as missing.
pub fn regex_check(
    batch: Batch<'_>,
    search: &SearchPattern,
    ground_truth: Option<TextColumn<'_>>,
) -> Result<Scored, KernelError> {
    // This worker thread's own copy, whose match cache lives across batches.
    crate::pattern::with_thread_copy(search.regex(), |pattern| {
        regex_rows(batch, search, pattern, ground_truth)
    })
}

fn regex_rows(
    batch: Batch<'_>,
    search: &SearchPattern,
    pattern: &Regex,
    ground_truth: Option<TextColumn<'_>>,
) -> Result<Scored, KernelError> {
    // `search.may_match` rules out texts too short for a match and most texts that lack
    // the pattern's leading word, without running the regex; it never rules out a match.
    if let (TextColumn::Utf8View(v), None, None) = (batch.value, &ground_truth, batch.norm) {
        return Ok(regex_views(v, search, pattern));
    }
    match ground_truth {
        None => batch
            .rows()
            .pass(|_, v, ()| search.may_match(v) && pattern.is_match(v)),
        Some(g) => batch.with_text(g).pass(|_, v, g| {
            search.may_match(v)
                && pattern
                    .captures(v)
                    .and_then(|c| c.get(1))
                    .is_some_and(|m| m.as_str() == g)
        }),
    }
}

/// The view fast path of [`regex_check`]: texts shorter than any match are decided from their
/// view's length, in one pass over the views; only the others are visited. Texts repeat (`The
/// answer is B`), so the regex runs once per repeated text: an inline text (at most 12 bytes)
/// is memoized by its view, which holds it whole; a longer one up to SHORT_TEXT bytes by
/// content; a longer one still by view again: equal out-of-line views are equal texts (a view
/// names its buffer and offset), and rows decoded from one Parquet dictionary share their
/// views.
fn regex_views(
    v: &arrow::array::StringViewArray,
    search: &SearchPattern,
    pattern: &Regex,
) -> Scored {
    use arrow::array::Array;
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
    Scored::from_hits(&hits, v.nulls(), false)
}

/// `not_regex`: 1.0 when `pattern` is not found anywhere in the (normalized) value.
///
/// Null rule: a null value scores 0.0 and counts as missing. An empty value passes unless
/// the pattern matches the empty text.
pub fn not_regex(batch: Batch<'_>, pattern: &SearchPattern) -> Result<Scored, KernelError> {
    let found = regex_check(batch, pattern, None)?;
    // A null row fails both ways: only the valid rows are flipped.
    let not_found = !found.is_correct.values();
    let pass = match batch.value.validity() {
        Validity::AllValid => not_found,
        Validity::AllNull => BooleanBuffer::new_unset(batch.len),
        Validity::Mask(valid) => &valid & &not_found,
    };
    Ok(Scored::pass(pass, found.missing))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_columns::{col, layouts};
    use arrow::array::{Array, ArrayRef, AsArray, StringArray};
    use arrow::datatypes::DataType;
    use std::sync::Arc;

    fn batch(a: &ArrayRef) -> Batch<'_> {
        Batch::new(col(a), None, a.len())
    }

    #[test]
    fn regex_search_and_capture() {
        let values = [
            Some("The answer is 42."),
            Some("no number"),
            Some(""),
            None,
            Some("答えは 7"),
            Some("ANSWER 9"),
        ];
        let p = SearchPattern::new(r"(?i)answer is (\d+)").unwrap();
        let any = SearchPattern::new(r"\d").unwrap();
        let gt: ArrayRef = Arc::new(StringArray::from(vec![
            Some("42"),
            Some("1"),
            Some("1"),
            Some("1"),
            None,
            Some("9"),
        ]));
        for a in layouts(&values) {
            let out = regex_check(batch(&a), &any, None).unwrap();
            assert_eq!(
                crate::score_vec(&out.is_correct),
                [1.0, 0.0, 0.0, 0.0, 1.0, 1.0]
            );
            assert_eq!(out.missing, 1);
            let out = regex_check(batch(&a), &p, Some(col(&gt))).unwrap();
            assert_eq!(
                crate::score_vec(&out.is_correct),
                [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
            );
            assert_eq!(out.missing, 2);
        }
    }

    #[test]
    fn search_patterns_know_their_shortest_match() {
        let len = |p: &str| SearchPattern::new(p).unwrap().min_len();
        assert_eq!(len(r"(?i)answer(?: is)?:?\s*\(?([A-D])\b"), 7);
        assert_eq!(len(r"\d"), 1);
        assert_eq!(len(r"x*"), 0);
        assert_eq!(len(r"é"), 2);
        assert_eq!(len(r"^$"), 0);
    }

    /// Over Utf8View, the regex scorer remembers its answers for repeated texts: by content for
    /// short ones, by view for long ones (rows cast from a dictionary share views). Colliding,
    /// repeated and distinct texts all score what the Utf8 path gives.
    #[test]
    fn regex_memos_give_the_plain_answers() {
        use arrow::array::{DictionaryArray, Int32Array};
        use arrow::datatypes::Int32Type;
        let words = [
            "The answer is B",
            "the answer is b",
            "The answer is Z",
            "Answer: C",
            "I am not sure.",
            "a long explanation that ends with the answer is (D) today",
            "a long explanation that ends with no answer at all, sadly",
            "answer is C but that is more than thirty-two bytes long",
        ];
        let keys: Vec<i32> = (0..3000).map(|i| (i * 7 + i / 5) % 8).collect();
        let dict = DictionaryArray::<Int32Type>::try_new(
            Int32Array::from(keys.clone()),
            Arc::new(StringArray::from(words.to_vec())),
        )
        .unwrap();
        let views = arrow::compute::cast(&dict, &DataType::Utf8View).unwrap();
        // Rows of one dictionary value share a view.
        let v = views.as_string_view();
        assert_eq!(
            v.views()[0],
            v.views()[keys.iter().skip(1).position(|k| *k == keys[0]).unwrap() + 1]
        );
        let plain: ArrayRef = Arc::new(StringArray::from(
            keys.iter().map(|k| words[*k as usize]).collect::<Vec<_>>(),
        ));
        let p = SearchPattern::new(r"(?i)answer(?: is)?:?\s*\(?([A-D])\b").unwrap();
        let a = regex_check(batch(&views), &p, None).unwrap();
        let b = regex_check(batch(&plain), &p, None).unwrap();
        assert_eq!(a, b);
        let expect: Vec<f64> = keys
            .iter()
            .map(|k| [1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0][*k as usize])
            .collect();
        assert_eq!(crate::score_vec(&a.is_correct), expect);
    }

    #[test]
    fn not_regex_rows() {
        let p = SearchPattern::new(r"(?i)\bsorry\b").unwrap();
        for a in layouts(&[Some("Sorry, no"), Some("fine"), Some(""), None]) {
            let out = not_regex(batch(&a), &p).unwrap();
            assert_eq!(crate::score_vec(&out.is_correct), [0.0, 1.0, 1.0, 0.0]);
            assert_eq!(out.missing, 1);
        }
    }
}
