//! The `choices` of a multiple-choice row: a list column, a JSON array string, a Python list
//! literal string, or one literal list for every row.

use crate::normalize::Normalizer;
use crate::KernelError;
use arrow::array::builder::make_view;
use arrow::array::{Array, ArrayRef, AsArray, GenericListArray, OffsetSizeTrait};
use arrow::buffer::NullBuffer;
use arrow::datatypes::DataType;
use evalscore_text::TextColumn;
use std::borrow::Cow;

/// Where each row's choices come from.
#[derive(Debug, Clone, Copy)]
pub enum Choices<'a> {
    /// No `choices`: any non-empty output is valid.
    None,
    /// The same list for every row.
    Fixed(&'a [String]),
    /// A `List`/`LargeList` of strings, or a string column holding `["A","B"]` or `['A', 'B']`.
    PerRow(&'a dyn Array),
}

/// Parses a JSON array string (`["A","B"]`) or a Python list literal (`['A', 'B']`).
///
/// Items may be double- or single-quoted (with backslash escapes) or bare words; `None`/`null`
/// items are dropped. Returns `None` when the text is not a bracketed list.
pub fn parse_choice_list(text: &str) -> Option<Vec<String>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut items = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        let item = if c == '"' || c == '\'' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next()? {
                    '\\' => {
                        let e = chars.next()?;
                        s.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            'u' => {
                                let hex: String = (0..4).filter_map(|_| chars.next()).collect();
                                char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
                            }
                            other => other,
                        });
                    }
                    q if q == c => break,
                    other => s.push(other),
                }
            }
            Some(s)
        } else {
            let mut s = String::new();
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                s.push(c);
                chars.next();
            }
            let s = s.trim().to_owned();
            (!matches!(s.as_str(), "None" | "null")).then_some(s)
        };
        items.extend(item);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => break,
            Some(',') => continue,
            Some(_) => return None,
        }
    }
    Some(items)
}

/// Per-row access to choices as single characters. A text column caches the last parsed
/// string; a list column remembers the last few distinct lists by their item views, so a
/// column that repeats a handful of lists builds each once per batch.
pub(crate) struct ChoiceReader<'a> {
    source: Source<'a>,
    norm: Option<&'a Normalizer>,
    last_text: Option<&'a str>,
    last: Vec<char>,
    /// Recent list rows whose items are all inline views (12 bytes or less; an inline view
    /// holds the whole string, so equal views mean equal items), with their choices. Every
    /// valid choice is one character, so every list worth remembering is inline.
    views_seen: Vec<(Vec<u128>, Vec<char>)>,
    views_hit: usize,
    views_next: usize,
    /// The inline views of the current row's items, when they are not stored as views.
    keys: Vec<u128>,
}

/// How many distinct inline-view choice lists a reader remembers.
const VIEW_CACHE: usize = 8;

enum Source<'a> {
    None,
    Fixed(Vec<char>),
    /// A list column: its validity, its offsets (from 0) and its items as text, cut to the
    /// rows' range: stored views when they are views, else read in place (a per-batch
    /// conversion to views cost more than the scoring).
    List {
        nulls: Option<NullBuffer>,
        offsets: Vec<usize>,
        items: ArrayRef,
    },
    Text(TextColumn<'a>),
}

/// The result for one row: `None` when the row has no choices (null).
pub(crate) enum RowChoices<'r> {
    Any,
    Missing,
    Set(&'r [char]),
}

impl<'a> ChoiceReader<'a> {
    /// `norm` (the scorer's `normalize:`) is applied to every choice before it is checked.
    pub fn new(choices: Choices<'a>, norm: Option<&'a Normalizer>) -> Result<Self, KernelError> {
        let source = match choices {
            Choices::None => Source::None,
            Choices::Fixed(list) => {
                Source::Fixed(single_chars(list.iter().map(|s| normed(norm, s)), 0)?)
            }
            Choices::PerRow(a) => match a.data_type() {
                DataType::List(_) => list_source(a.as_list::<i32>())?,
                DataType::LargeList(_) => list_source(a.as_list::<i64>())?,
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                    Source::Text(TextColumn::new(a, "choices")?)
                }
                t => {
                    return Err(KernelError::Type {
                        input: "choices".to_owned(),
                        data_type: t.to_string(),
                    })
                }
            },
        };
        Ok(ChoiceReader {
            source,
            norm,
            last_text: None,
            last: Vec::new(),
            views_seen: Vec::new(),
            views_hit: 0,
            views_next: 0,
            keys: Vec::new(),
        })
    }

    pub fn row(&mut self, row: usize) -> Result<RowChoices<'_>, KernelError> {
        match &self.source {
            Source::None => Ok(RowChoices::Any),
            Source::Fixed(set) => Ok(RowChoices::Set(set)),
            Source::List {
                nulls,
                offsets,
                items,
            } => {
                if nulls.as_ref().is_some_and(|n| n.is_null(row)) {
                    return Ok(RowChoices::Missing);
                }
                let (start, end) = (offsets[row], offsets[row + 1]);
                let col = TextColumn::new(items, "choices")?;
                let no_nulls = match items.nulls() {
                    Some(n) if n.null_count() > 0 => (start..end).all(|i| n.is_valid(i)),
                    _ => true,
                };
                // The items' inline views (what a Utf8View column stores for strings of 12
                // bytes or less): stored ones, or made here from the text.
                let vs: &[u128] = match items.as_string_view_opt() {
                    Some(v) => &v.views()[start..end],
                    None => {
                        self.keys.clear();
                        for i in start..end {
                            let b = col.get(i).unwrap_or_default().as_bytes();
                            // A longer string cannot be inline: the row is not cached.
                            self.keys.push(if b.len() <= 12 {
                                make_view(b, 0, 0)
                            } else {
                                u128::MAX
                            });
                        }
                        &self.keys
                    }
                };
                let reusable = no_nulls && vs.iter().all(|&v| v as u32 <= 12);
                let norm = self.norm;
                let chars = (start..end).filter_map(|i| col.get(i).map(|s| normed(norm, s)));
                if !reusable {
                    self.last = single_chars(chars, row)?;
                    return Ok(RowChoices::Set(&self.last));
                }
                // A handful of distinct lists (3 or 4 options, ...) usually alternate: keep
                // the last few, most recent hit checked first.
                let recent = self.views_seen.get(self.views_hit);
                let hit = if recent.is_some_and(|(k, _)| k == vs) {
                    Some(self.views_hit)
                } else {
                    self.views_seen.iter().position(|(k, _)| k == vs)
                };
                let slot = match hit {
                    Some(i) => i,
                    None => {
                        let entry = (vs.to_vec(), single_chars(chars, row)?);
                        if self.views_seen.len() < VIEW_CACHE {
                            self.views_seen.push(entry);
                            self.views_seen.len() - 1
                        } else {
                            let i = self.views_next;
                            self.views_next = (i + 1) % VIEW_CACHE;
                            self.views_seen[i] = entry;
                            i
                        }
                    }
                };
                self.views_hit = slot;
                Ok(RowChoices::Set(&self.views_seen[slot].1))
            }
            Source::Text(col) => {
                let Some(text) = col.get(row) else {
                    return Ok(RowChoices::Missing);
                };
                if self.last_text != Some(text) {
                    let list = parse_choice_list(text).ok_or_else(|| KernelError::Value {
                        row,
                        input: "choices".to_owned(),
                        value: text.to_owned(),
                        message: "is not a list (expected a JSON array like [\"A\", \"B\"] or a Python list like ['A', 'B'])".to_owned(),
                    })?;
                    let norm = self.norm;
                    self.last = single_chars(list.iter().map(|s| normed(norm, s)), row)?;
                    self.last_text = Some(text);
                }
                Ok(RowChoices::Set(&self.last))
            }
        }
    }
}

/// A list column's source: validity, offsets from 0, and the items of its rows as text (a
/// sliced list's `values()` are its parent's, so they are cut to the rows' range first).
fn list_source<'a, O: OffsetSizeTrait>(l: &GenericListArray<O>) -> Result<Source<'a>, KernelError> {
    let offsets = l.value_offsets();
    let first = offsets.first().map_or(0, |o| o.as_usize());
    let last = offsets.last().map_or(0, |o| o.as_usize());
    let items = crate::to_text(&l.values().slice(first, last - first), "choices")?;
    Ok(Source::List {
        nulls: l.logical_nulls(),
        offsets: offsets.iter().map(|o| o.as_usize() - first).collect(),
        items,
    })
}

fn normed<'s>(norm: Option<&Normalizer>, s: &'s str) -> Cow<'s, str> {
    match norm {
        Some(n) => n.apply(s),
        None => Cow::Borrowed(s),
    }
}

fn single_chars<'s>(
    items: impl Iterator<Item = Cow<'s, str>>,
    row: usize,
) -> Result<Vec<char>, KernelError> {
    items
        .map(|s| single_char(&s).ok_or_else(|| KernelError::Value {
            row,
            input: "choices".to_owned(),
            value: s.into_owned(),
            message: "is not a single character (string_equals_mcqa supports single-character choices only)".to_owned(),
        }))
        .collect()
}

pub(crate) fn single_char(s: &str) -> Option<char> {
    let mut it = s.chars();
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_json_and_python_lists() {
        let v = |s: &str| parse_choice_list(s);
        assert_eq!(v(r#"["A","B"]"#), Some(vec!["A".into(), "B".into()]));
        assert_eq!(
            v("['A', 'B', 'C']"),
            Some(vec!["A".into(), "B".into(), "C".into()])
        );
        assert_eq!(v("[A, B]"), Some(vec!["A".into(), "B".into()]));
        assert_eq!(
            v(r#"["\u00c9", 'x\'']"#),
            Some(vec!["É".into(), "x'".into()])
        );
        assert_eq!(v("[]"), Some(vec![]));
        assert_eq!(v("A, B"), None);
        assert_eq!(v("['A' 'B']"), None);
    }
}
