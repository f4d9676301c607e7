//! The expected strings of a row, for the kernels that compare a value with several strings
//! (the match family, `includes_all`, the graded scorers): the same strings for every row
//! ([`Needles`], prepared once), or a column's cell ([`Expected::PerRow`]).

use crate::normalize::Normalizer;
use crate::side::{normalize, Side, SideItem};
use crate::{parse_choice_list, to_text, KernelError};
use arrow::array::{Array, AsArray};
use arrow::datatypes::DataType;
use evalscore_text::TextColumn;
use memchr::memmem::Finder;
use std::borrow::Cow;

/// Where the expected strings of each row come from.
#[derive(Debug, Clone, Copy)]
pub enum Expected<'a> {
    /// The same strings for every row (a literal or a literal list), normalized with the
    /// batch's `normalize:` steps and prepared once.
    Fixed(&'a Needles),
    /// A list column (`List`/`LargeList` of text), or a text column whose cells are one
    /// string each, or a list written as a JSON array / quoted Python list (see
    /// [`text_as_list`]).
    PerRow(&'a dyn Array),
}

/// Literal expected strings, normalized and prepared once per task: each string, and one
/// `memchr::memmem::Finder` per non-empty one (an empty string is found nowhere by the
/// checks; the graded measures score it).
#[derive(Debug, Clone)]
pub struct Needles {
    strings: Vec<String>,
    search: Vec<(String, Finder<'static>)>,
}

impl Needles {
    /// Prepares `items`, normalizing each with `norm` first.
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(
        items: I,
        norm: Option<&Normalizer>,
    ) -> Self {
        let strings: Vec<String> = items
            .into_iter()
            .map(|s| normalize(norm, s.as_ref()).into_owned())
            .collect();
        let search = strings
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| (s.clone(), Finder::new(s.as_bytes()).into_owned()))
            .collect();
        Needles { strings, search }
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Every string, empty ones included, in order.
    pub fn strings(&self) -> &[String] {
        &self.strings
    }

    /// The non-empty strings with their finders.
    pub(crate) fn searchers(&self) -> &[(String, Finder<'static>)] {
        &self.search
    }
}

/// One row's expected strings.
#[derive(Debug, Clone, Copy)]
pub enum Strings<'s> {
    /// A plain text cell, read in place.
    One(&'s str),
    Many(&'s [String]),
}

impl<'s> Strings<'s> {
    pub fn iter(self) -> impl Iterator<Item = &'s str> {
        let (one, many) = match self {
            Strings::One(s) => (Some(s), &[][..]),
            Strings::Many(l) => (None, l),
        };
        one.into_iter().chain(many.iter().map(String::as_str))
    }
}

/// Whether a text cell may be a list (its first non-space character is `[`), decided on the
/// first byte in the common case.
#[inline]
pub(crate) fn could_be_list(e: &str) -> bool {
    match e.as_bytes().first() {
        None => false,
        Some(b'[') => true,
        Some(b) if b.is_ascii_graphic() => false,
        Some(_) => e.trim_start().starts_with('['),
    }
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

/// The expected strings of each row, as the driver reads them ([`Side`]).
pub(crate) enum ExpectedRows<'a> {
    Fixed(&'a Needles),
    PerRow(ExpectedReader<'a>),
}

impl<'a> ExpectedRows<'a> {
    pub(crate) fn new(
        expected: Expected<'a>,
        norm: Option<&'a Normalizer>,
    ) -> Result<Self, KernelError> {
        Ok(match expected {
            Expected::Fixed(n) => ExpectedRows::Fixed(n),
            Expected::PerRow(a) => ExpectedRows::PerRow(ExpectedReader::new(a, norm)?),
        })
    }
}

impl<'s> SideItem<'s> for ExpectedRows<'_> {
    type Item = Strings<'s>;
}

impl Side for ExpectedRows<'_> {
    #[inline]
    fn get(&mut self, r: usize) -> Option<Strings<'_>> {
        match self {
            ExpectedRows::Fixed(n) => Some(Strings::Many(n.strings())),
            ExpectedRows::PerRow(reader) => reader.row(r),
        }
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
    fn new(arr: &'a dyn Array, norm: Option<&'a Normalizer>) -> Result<Self, KernelError> {
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
        self.items.extend(items.map(|s| match normalize(norm, &s) {
            Cow::Owned(n) => n,
            Cow::Borrowed(_) => s,
        }));
    }

    /// One expected string, in the buffer of the last row when there is one (no allocation
    /// per row once the buffer is large enough).
    fn set_one(&mut self, text: &str) {
        let text = normalize(self.norm, text);
        self.items.truncate(1);
        match self.items.first_mut() {
            Some(slot) => {
                slot.clear();
                slot.push_str(&text);
            }
            None => self.items.push(text.into_owned()),
        }
    }

    fn row(&mut self, row: usize) -> Option<Strings<'_>> {
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
                Some(Strings::Many(&self.items))
            }
            Src::Text(col) => {
                let text = col.get(row)?;
                // A plain cell that is not a list is one string as it is, with no copy (the
                // common `expected: "{{ sample.answer }}"` without normalize).
                if self.norm.is_none() && !could_be_list(text) {
                    return Some(Strings::One(text));
                }
                if self.last_text != Some(text) || self.items.is_empty() {
                    match text_as_list(text) {
                        Some(list) => self.set(list.into_iter()),
                        None => self.set_one(text),
                    }
                    self.last_text = Some(text);
                }
                Some(Strings::Many(&self.items))
            }
        }
    }
}
