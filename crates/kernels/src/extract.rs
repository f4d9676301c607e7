//! `extract:` pulls the answer out of the value before it is scored.

use arrow::array::{ArrayRef, StringArray};
use evalscore_text::TextColumn;
use regex::Regex;
use std::sync::{Arc, OnceLock};

/// The default `fallback:` of an extraction that finds nothing (see docs/compatibility.md).
pub const DEFAULT_FALLBACK: &str = "[invalid]";

/// An answer extractor, compiled once per task.
#[derive(Debug, Clone)]
pub enum Extractor {
    /// The `regex` filter: all non-overlapping matches are found, the
    /// `group_select`-th is taken (negative counts from the end); of that match, the whole
    /// match when the pattern has no group, the group's text (even empty) when it has one,
    /// and the first non-empty group when it has several; trimmed.
    Regex {
        regex: Regex,
        group_select: i64,
        fallback: String,
    },
    /// A multiple-choice letter A-Z (see [`answer_letter`]).
    AnswerLetter { fallback: String },
    /// The last number, without `$` and thousands separators (see [`last_number`]).
    LastNumber { fallback: String },
}

/// The result of extraction over a column.
#[derive(Debug, Clone)]
pub struct Extracted {
    /// The extracted text, or the fallback; null where the value is null.
    pub values: ArrayRef,
    /// Per row: whether something was found (false for null values).
    pub found: Vec<bool>,
}

impl Extractor {
    /// The answer in `s`, if one is found.
    pub fn find<'s>(&self, s: &'s str) -> Option<&'s str> {
        match self {
            Extractor::Regex {
                regex,
                group_select,
                ..
            } => regex_select(regex, *group_select, s),
            Extractor::AnswerLetter { .. } => answer_letter(s),
            Extractor::LastNumber { .. } => last_number_span(s),
        }
    }

    pub fn fallback(&self) -> &str {
        match self {
            Extractor::Regex { fallback, .. }
            | Extractor::AnswerLetter { fallback }
            | Extractor::LastNumber { fallback } => fallback,
        }
    }

    /// Extracts every row of `col`.
    ///
    /// Null rule: a null value stays null (and counts as not found).
    pub fn column(&self, col: &TextColumn<'_>, len: usize) -> Extracted {
        let mut found = Vec::with_capacity(len);
        let mut owned: Vec<Option<String>> = Vec::with_capacity(len);
        for r in 0..len {
            match col.get(r) {
                None => {
                    found.push(false);
                    owned.push(None);
                }
                Some(s) => {
                    let hit = self.find(s);
                    found.push(hit.is_some());
                    let text = match (self, hit) {
                        (_, None) => self.fallback().to_owned(),
                        (Extractor::LastNumber { .. }, Some(n)) => clean_number(n),
                        (_, Some(h)) => h.to_owned(),
                    };
                    owned.push(Some(text));
                }
            }
        }
        Extracted {
            values: Arc::new(StringArray::from(owned)),
            found,
        }
    }
}

fn regex_select<'s>(regex: &Regex, group_select: i64, s: &'s str) -> Option<&'s str> {
    let all: Vec<regex::Captures<'s>> = regex.captures_iter(s).collect();
    let n = all.len() as i64;
    let idx = if group_select < 0 {
        n + group_select
    } else {
        group_select
    };
    if idx < 0 || idx >= n {
        return None;
    }
    let caps = &all[usize::try_from(idx).ok()?];
    // As Python's `re.findall`, which the reference filter reads: no group gives
    // the whole match; one group gives its text, `""` when it matched empty text or did
    // not take part; several groups give the first non-empty one, or nothing.
    let text = match caps.len() {
        1 => caps.get(0).map(|m| m.as_str()),
        2 => Some(caps.get(1).map_or("", |m| m.as_str())),
        _ => caps
            .iter()
            .skip(1)
            .flatten()
            .map(|m| m.as_str())
            .find(|m| !m.is_empty()),
    }?;
    Some(text.trim())
}

fn letter_patterns() -> &'static [Regex; 3] {
    static RE: OnceLock<[Regex; 3]> = OnceLock::new();
    RE.get_or_init(|| {
        #[allow(clippy::expect_used)]
        let re = |p: &str| Regex::new(p).expect("a valid built-in regex");
        [
            // "ANSWER: B", "The answer is (B)", "answer is **C**", "Answer: [D]"
            re(r"(?i:answer)\s*(?i:is)?\s*[:：]?\s*[\(\[]?\*{0,2}\(?([A-Z])\b"),
            // "**B**", "**(B)**", "**B.**"
            re(r"\*\*\(?([A-Z])\)?[.:]?\*\*"),
            // "B.", "B)", "(B)" at a word start, or a lone letter ending the text
            re(r"(?:^|\s)\(?([A-Z])(?:[.):]|\)?\s*$)"),
        ]
    })
}

/// Finds a multiple-choice letter (A-Z, upper case) in `s`.
///
/// Three forms, tried from the most explicit: an answer phrase (`ANSWER: B`, `The answer is
/// (B)`, `answer: **C**`), a bold letter (`**B**`), a bare letter followed by `.`, `)` or `:`
/// at a word start (`B.`, `(B)`), or a lone letter at the end of the text (`C`, `... is C`).
/// Within the most explicit form found, the last occurrence wins.
pub fn answer_letter(s: &str) -> Option<&str> {
    for re in letter_patterns() {
        if let Some(c) = re.captures_iter(s).last() {
            return c.get(1).map(|m| m.as_str());
        }
    }
    None
}

fn number_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        #[allow(clippy::expect_used)]
        Regex::new(r"-?\$?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
            .expect("a valid built-in regex")
    })
}

fn last_number_span(s: &str) -> Option<&str> {
    last_number_match(s).map(|m| m.as_str())
}

/// Where the last number of `s` is, as it is written there (with its `$` and commas).
pub(crate) fn last_number_match(s: &str) -> Option<regex::Match<'_>> {
    number_pattern().find_iter(s).last()
}

fn clean_number(n: &str) -> String {
    n.chars().filter(|&c| c != '$' && c != ',').collect()
}

/// The last number in `s` (ASCII digits, optional `-`, `$`, thousands commas and decimals),
/// with `$` and commas removed: `"$1,234.50"` → `"1234.50"`.
pub fn last_number(s: &str) -> Option<String> {
    last_number_span(s).map(clean_number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_letters() {
        for (s, want) in [
            ("ANSWER: B", Some("B")),
            ("The answer is (B)", Some("B")),
            ("I think **C** is right", Some("C")),
            ("B. because", Some("B")),
            ("D) the answer", Some("D")),
            ("A", Some("A")),
            (" C", Some("C")),
            ("🙂 A", Some("A")),
            ("The answer is (A). Wait, ANSWER: C", Some("C")),
            ("A. no B. no ANSWER: D. Option C. is wrong", Some("D")),
            ("I think so", None),
            ("b", None),
            ("", None),
            ("É", None),
        ] {
            assert_eq!(answer_letter(s), want, "{s:?}");
        }
    }

    #[test]
    fn last_numbers() {
        assert_eq!(
            last_number("It costs $1,234.50").as_deref(),
            Some("1234.50")
        );
        assert_eq!(last_number("3 apples and 42 pears.").as_deref(), Some("42"));
        assert_eq!(last_number("owe -$5").as_deref(), Some("-5"));
        assert_eq!(last_number("no digits"), None);
        assert_eq!(last_number("#### 72").as_deref(), Some("72"));
    }

    #[test]
    fn regex_group_select() {
        let e = |p: &str, g: i64| Extractor::Regex {
            regex: Regex::new(p).unwrap(),
            group_select: g,
            fallback: DEFAULT_FALLBACK.into(),
        };
        let text = "#### 1 then #### 2 then #### 3";
        assert_eq!(e(r"#### (\-?[0-9\.\,]+)", 0).find(text), Some("1"));
        assert_eq!(e(r"#### (\-?[0-9\.\,]+)", -1).find(text), Some("3"));
        assert_eq!(e(r"#### (\-?[0-9\.\,]+)", 5).find(text), None);
        assert_eq!(e(r"(a)|(b)", 0).find("b"), Some("b"));
        // One group that matched empty text: `""`, as `re.findall` gives it.
        assert_eq!(e(r"answer: ([A-D]?)", 0).find("answer: ?"), Some(""));
        assert_eq!(e(r"x(y)?", 0).find("x"), Some(""));
        // Several groups, none non-empty: nothing found (the fallback).
        assert_eq!(e(r"(a?)(b?)c", 0).find("c"), None);
        // GSM8K's published filters (gsm8k.yaml: strict-match and flexible-extract).
        let strict = e(r"#### (\-?[0-9\.\,]+)", 0);
        assert_eq!(strict.find("so 3+4=7\n#### 7"), Some("7"));
        let flexible = e(r"(-?[$0-9.,]{2,})|(-?[0-9]+)", -1);
        assert_eq!(flexible.find("He pays $1,200. Then 5 more"), Some("5"));
        assert_eq!(flexible.find("The answer is 18.\n"), Some("18."));
        assert_eq!(e(r"x+", -1).find("x xx"), Some("xx"));
        let col = arrow::array::StringArray::from(vec![Some("#### 4"), Some("none"), None]);
        let tc = TextColumn::new(&col, "v").unwrap();
        let out = e(r"#### (\d+)", -1).column(&tc, 3);
        assert_eq!(out.found, [true, false, false]);
        let v = out.values;
        let v = arrow::array::AsArray::as_string::<i32>(v.as_ref());
        assert_eq!(
            v.iter().collect::<Vec<_>>(),
            [Some("4"), Some("[invalid]"), None]
        );
    }
}
