//! The value against expected strings: `match`, `includes`, `fuzzy_match` and their
//! negations ([`match_check`]), and `includes_all`.

mod views;

use crate::contract::{Batch, Scored};
use crate::expected::{Expected, Needles};
use crate::KernelError;
use arrow::array::{Array, AsArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::DataType;
use evalscore_text::TextColumn;
use memchr::memmem;

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

impl Needles {
    /// Whether `value` matches any of the strings under `mode`; an empty value matches none.
    fn any(&self, mode: MatchMode, value: &str) -> bool {
        !value.is_empty()
            && self.searchers().iter().any(|(e, f)| match mode {
                MatchMode::Prefix => value.as_bytes().starts_with(e.as_bytes()),
                MatchMode::Substring => f.find(value.as_bytes()).is_some(),
                MatchMode::Fuzzy => {
                    f.find(value.as_bytes()).is_some()
                        || memmem::find(e.as_bytes(), value.as_bytes()).is_some()
                }
            })
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

/// `match` / `includes` / `fuzzy_match` (and with `negate`, their `not_` forms): 1.0 when the
/// (normalized) value matches any expected string under `mode`.
///
/// An empty expected string never matches, and an empty value matches nothing (so the `not_`
/// forms score an empty value 1.0). The batch's `normalize:` steps apply to the value and,
/// for [`Expected::PerRow`], to each expected string; [`Needles`] are normalized when built.
///
/// Null rule: a null value, or a null expected cell, scores 0.0 in every form, `not_` forms
/// included, and counts as missing.
pub fn match_check(
    batch: Batch<'_>,
    expected: Expected<'_>,
    mode: MatchMode,
    negate: bool,
) -> Result<Scored, KernelError> {
    match expected {
        // The strings are prepared once: one searcher each.
        Expected::Fixed(needles) => batch.rows().pass(|_, v, ()| needles.any(mode, v) != negate),
        Expected::PerRow(arr) => {
            if let (None, TextColumn::Utf8View(v), DataType::Utf8View) =
                (batch.norm, batch.value, arr.data_type())
            {
                let e = arr.as_string_view();
                if let Some(hits) = views::match_views(v, e, mode) {
                    let valid = NullBuffer::union(v.nulls(), e.nulls());
                    return Ok(Scored::from_hits(&hits, valid.as_ref(), negate));
                }
            }
            batch
                .with_expected(expected)?
                .pass(|_, v, items| items.iter().any(|e| one_matches(mode, v, e)) != negate)
        }
    }
}

/// `includes_all`: 1.0 when every expected string is a substring of the value (after
/// `normalize:`). As in the match family, an empty value never passes and empty expected
/// strings are ignored (so a list of only empty strings passes any non-empty value).
///
/// Null rule: a null value or a null expected cell scores 0.0 and counts as missing.
pub fn includes_all(batch: Batch<'_>, expected: Expected<'_>) -> Result<Scored, KernelError> {
    match expected {
        Expected::Fixed(needles) => batch.rows().pass(|_, v, ()| {
            !v.is_empty()
                && needles
                    .searchers()
                    .iter()
                    .all(|(_, f)| f.find(v.as_bytes()).is_some())
        }),
        Expected::PerRow(_) => batch.with_expected(expected)?.pass(|_, v, items| {
            !v.is_empty()
                && items
                    .iter()
                    .all(|e| e.is_empty() || memmem::find(v.as_bytes(), e.as_bytes()).is_some())
        }),
    }
}

#[cfg(test)]
mod tests;
