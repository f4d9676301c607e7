//! Templates evaluated a column at a time: `sample.COL | trim | lower ...` over text.

use super::*;

/// A string filter with a column-at-a-time implementation, identical to the null-safe
/// minijinja filter of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFilter {
    Trim,
    Lower,
    Upper,
}

impl TextFilter {
    fn apply<'s>(self, s: std::borrow::Cow<'s, str>) -> std::borrow::Cow<'s, str> {
        use std::borrow::Cow;
        match self {
            TextFilter::Trim => match s {
                Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
                Cow::Owned(o) => Cow::Owned(o.trim().to_owned()),
            },
            // ASCII text already in the target case is passed through without a copy.
            TextFilter::Lower if s.is_ascii() && !s.bytes().any(|b| b.is_ascii_uppercase()) => s,
            TextFilter::Upper if s.is_ascii() && !s.bytes().any(|b| b.is_ascii_lowercase()) => s,
            TextFilter::Lower => Cow::Owned(s.to_lowercase()),
            TextFilter::Upper => Cow::Owned(s.to_uppercase()),
        }
    }
}

/// The vectorized form of an expression, when it has one: `sample.COL` followed by one or
/// more of the filters `trim`, `lower` and `upper` (no arguments).
pub fn vector_plan(expr: &str) -> Option<(String, Vec<TextFilter>)> {
    let mut parts = expr.split('|');
    let column = column_ref(parts.next()?.trim())?;
    let filters = parts
        .map(|f| match f.trim().strip_suffix("()").unwrap_or(f.trim()) {
            "trim" => Some(TextFilter::Trim),
            "lower" => Some(TextFilter::Lower),
            "upper" => Some(TextFilter::Upper),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    (!filters.is_empty()).then_some((column, filters))
}

/// Applies `filters` to every row of a text column; `None` when the column is not text (the
/// caller then evaluates the expression row by row, as minijinja would). Null rule: a null
/// cell stays null.
pub(super) fn filter_column(col: &ArrayRef, filters: &[TextFilter]) -> Option<ArrayRef> {
    if let Some(out) = filter_views(col, filters) {
        return Some(out);
    }
    let text = evalscore_text::TextColumn::new(col.as_ref(), "").ok()?;
    let mut out = arrow::array::StringViewBuilder::with_capacity(col.len());
    for row in 0..col.len() {
        match text.get(row) {
            None => out.append_null(),
            Some(s) => {
                out.append_value(apply(filters, s));
            }
        }
    }
    Some(Arc::new(out.finish()))
}

/// `filters` applied to `s`, in order.
fn apply<'s>(filters: &[TextFilter], s: &'s str) -> std::borrow::Cow<'s, str> {
    filters
        .iter()
        .fold(std::borrow::Cow::Borrowed(s), |v, f| f.apply(v))
}

/// [`filter_column`] over Utf8View when every row's result is a part of its text (`trim`,
/// and `lower`/`upper` of ASCII text already in that case): the column itself when no row
/// changes (clean data, the common case: its arrays stay the input's, which a suite's other
/// tasks also read), else new views into the column's own buffers, no text copied. `None`
/// as soon as a row's result is new text.
fn filter_views(col: &ArrayRef, filters: &[TextFilter]) -> Option<ArrayRef> {
    use arrow::array::{Array, StringViewArray};
    use arrow::buffer::ScalarBuffer;
    use std::borrow::Cow;
    let text = col.as_any().downcast_ref::<StringViewArray>()?;
    let trim_only = filters.iter().all(|f| *f == TextFilter::Trim);
    // The column's views, copied at the first row that changes and rewritten where rows do.
    let mut changed: Option<Vec<u128>> = None;
    for (row, &view) in text.views().iter().enumerate() {
        if text.is_null(row) || (trim_only && trim_keeps(view)) {
            continue;
        }
        let s = text.value(row);
        let Cow::Borrowed(part) = apply(filters, s) else {
            return None;
        };
        if part.len() < s.len() {
            let from = part.as_ptr() as usize - s.as_ptr() as usize;
            changed.get_or_insert_with(|| text.views().to_vec())[row] =
                part_view(view, s.len(), part, from);
        }
    }
    let Some(views) = changed else {
        return Some(Arc::clone(col));
    };
    StringViewArray::try_new(
        ScalarBuffer::from(views),
        text.data_buffers().to_vec(),
        // As the builder gives it: no bitmap without a null.
        text.nulls().filter(|n| n.null_count() > 0).cloned(),
    )
    .ok()
    .map(|a| Arc::new(a) as ArrayRef)
}

/// Whether `trim` keeps the text of `view` as it is, seen from the view alone: an inline
/// text (at most 12 bytes, all in the view) whose first and last bytes are printable ASCII
/// other than a space, or an empty one. `false` means "read the text".
fn trim_keeps(view: u128) -> bool {
    let len = view as u32;
    if len == 0 {
        return true;
    }
    if len > 12 {
        return false;
    }
    let first = (view >> 32) as u8;
    let last = (view >> (32 + 8 * (len - 1))) as u8;
    (0x21..0x7F).contains(&first) && (0x21..0x7F).contains(&last)
}

/// The view of `part`, the bytes `from..` of the text of `view` (`len` bytes long).
fn part_view(view: u128, len: usize, part: &str, from: usize) -> u128 {
    use arrow::array::builder::make_view;
    if len <= 12 {
        // An inline text's bytes sit in its view, after the length: shift and mask them.
        let bytes = (view >> (32 + 8 * from)) & ((1u128 << (8 * part.len())) - 1);
        return part.len() as u128 | bytes << 32;
    }
    if part.len() <= 12 {
        return make_view(part.as_bytes(), 0, 0);
    }
    // A part longer than 12 bytes stays in the text's buffer, further on.
    let at = arrow::array::ByteView::from(view);
    make_view(part.as_bytes(), at.buffer_index, at.offset + from as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, StringArray, StringViewArray};

    /// Rows of every kind: inline and long, whitespace at either end, a long text trimmed to
    /// an inline one and to a long one, non-ASCII, empty, null.
    fn rows() -> Vec<Option<&'static str>> {
        vec![
            Some("  yes "),
            None,
            Some("no"),
            Some("   a longer answer with spaces   "),
            Some("          short         "),
            Some(""),
            Some(" \t\n "),
            Some("  Ünïcode text that is long enough  "),
            Some("UPPER CASE TEXT OVER TWELVE"),
            Some("lower case text over twelve"),
            Some("Mixed"),
        ]
    }

    /// `trim_keeps` says "kept" only of texts `str::trim` keeps: every first and last byte,
    /// at every inline length, and long texts.
    #[test]
    fn trim_keeps_only_what_trim_keeps() {
        for len in 1..=13usize {
            for first in 0u8..=255 {
                for last in [b' ', b'\t', b'a', b'~', 0x7F, 0x85, 0xA0, b'\r', first] {
                    let mut bytes = vec![b'x'; len];
                    bytes[0] = first;
                    bytes[len - 1] = last;
                    let Ok(text) = std::str::from_utf8(&bytes) else {
                        continue;
                    };
                    let view = arrow::array::builder::make_view(text.as_bytes(), 0, 0);
                    if trim_keeps(view) {
                        assert_eq!(text.trim(), text, "{bytes:?}");
                    }
                }
            }
        }
        // Inline texts with printable ASCII at both ends are decided from the view alone.
        let view = |t: &str| arrow::array::builder::make_view(t.as_bytes(), 0, 0);
        for t in ["A", "yes", "a b", "abcdefghijkl", "~!", "x\u{e9}x"] {
            assert!(trim_keeps(view(t)), "{t:?}");
        }
        // Spaces at an end, a non-ASCII end, a long text: the text is read.
        for t in [" yes", "no\n", "\u{e9}", "abcdefghijklm"] {
            assert!(!trim_keeps(view(t)), "{t:?}");
        }
        assert!(trim_keeps(0));
    }

    fn strings(a: &ArrayRef) -> Vec<Option<String>> {
        let t = evalscore_text::TextColumn::new(a.as_ref(), "").unwrap();
        (0..a.len()).map(|r| t.get(r).map(str::to_owned)).collect()
    }

    /// Over Utf8View (the views path, or its fallback) and over Utf8 (the copying path) the
    /// same filters give the same rows, for slices too; and trim over views copies no text.
    #[test]
    fn views_give_what_copies_give() {
        use TextFilter::*;
        let views: ArrayRef = Arc::new(StringViewArray::from(rows()));
        let utf8: ArrayRef = Arc::new(StringArray::from(rows()));
        for filters in [
            &[Trim][..],
            &[Trim, Lower],
            &[Upper, Trim],
            &[Lower],
            &[Trim, Trim],
        ] {
            for (offset, len) in [(0, rows().len()), (3, 5), (7, 0)] {
                let (v, u) = (views.slice(offset, len), utf8.slice(offset, len));
                let (fv, fu) = (
                    filter_column(&v, filters).unwrap(),
                    filter_column(&u, filters).unwrap(),
                );
                assert_eq!(strings(&fv), strings(&fu), "{filters:?} {offset}+{len}");
            }
        }
        let trimmed = filter_views(&views, &[Trim]).unwrap();
        let trimmed: &StringViewArray = trimmed.as_any().downcast_ref().unwrap();
        let source: &StringViewArray = views.as_any().downcast_ref().unwrap();
        assert_eq!(trimmed.data_buffers().len(), source.data_buffers().len());
        assert!(trimmed
            .data_buffers()
            .iter()
            .zip(source.data_buffers())
            .all(|(a, b)| a.as_ptr() == b.as_ptr()));
        assert_eq!(trimmed.value(3), "a longer answer with spaces");
        assert_eq!(trimmed.value(4), "short");
        // A row whose result is new text: no views path.
        assert!(filter_views(&views, &[TextFilter::Lower]).is_none());
        // No row changes: the column itself.
        let clean: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("a"),
            None,
            Some("a longer clean text"),
        ]));
        assert!(Arc::ptr_eq(
            &filter_views(&clean, &[Trim, Lower]).unwrap(),
            &clean
        ));
        let part = clean.slice(1, 2);
        assert!(Arc::ptr_eq(&filter_column(&part, &[Trim]).unwrap(), &part));
    }
}
