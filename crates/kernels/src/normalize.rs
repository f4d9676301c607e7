//! `normalize:` steps applied to both sides of a comparison, in the order written.

use arrow::array::{ArrayRef, StringArray};
use evalscore_text::TextColumn;
use regex::Regex;
use std::borrow::Cow;
use std::sync::Arc;
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::UnicodeNormalization;

/// A Unicode normalization form for the `unicode:` step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnicodeForm {
    Nfc,
    Nfkc,
}

/// One normalization step.
#[derive(Debug, Clone)]
pub enum Step {
    /// Every match of each regex is removed, one regex after the other (`re.sub(r, "", s)`).
    /// `$` at a pattern's end as in Python ([`crate::pattern::IgnorePattern`]).
    RegexesToIgnore(Vec<crate::pattern::IgnorePattern>),
    /// Leading and trailing Unicode whitespace removed.
    Strip,
    /// Unicode default case folding (`ß` → `ss`, `Σ`/`ς` → `σ`).
    IgnoreCase,
    /// Characters of the Unicode punctuation categories (P*) and the ASCII symbols of Python's
    /// `string.punctuation` (`$ + < = > ^ \` | ~`) removed.
    IgnorePunctuation,
    /// Every run of Unicode whitespace replaced by one space (not trimmed).
    IgnoreWhitespace,
    /// The whole words `a`, `an`, `the` (any case) replaced by a space.
    RemoveArticles,
    /// Decimal digits (Unicode category Nd) removed.
    IgnoreNumbers,
    /// Unicode normalization form NFC or NFKC.
    Unicode(UnicodeForm),
}

/// A compiled list of steps, built once per task.
#[derive(Debug, Clone)]
pub struct Normalizer {
    steps: Vec<Step>,
}

/// The step names accepted by [`Normalizer`] (for errors and hints).
pub const STEP_NAMES: &[&str] = &[
    "regexes_to_ignore",
    "strip",
    "ignore_case",
    "ignore_punctuation",
    "ignore_whitespace",
    "remove_articles",
    "ignore_numbers",
    "unicode",
];

fn articles() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        #[allow(clippy::expect_used)]
        Regex::new(r"(?i)\b(?:a|an|the)\b").expect("a valid built-in regex")
    })
}

/// Whether `c` is removed by `ignore_punctuation`.
pub fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    matches!(
        get_general_category(c),
        GeneralCategory::ConnectorPunctuation
            | GeneralCategory::DashPunctuation
            | GeneralCategory::OpenPunctuation
            | GeneralCategory::ClosePunctuation
            | GeneralCategory::InitialPunctuation
            | GeneralCategory::FinalPunctuation
            | GeneralCategory::OtherPunctuation
    )
}

fn is_digit(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    get_general_category(c) == GeneralCategory::DecimalNumber
}

/// Unicode default case folding, with an ASCII fast path.
pub fn fold_case(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(s.to_ascii_lowercase())
        } else {
            Cow::Borrowed(s)
        }
    } else {
        Cow::Owned(caseless::default_case_fold_str(s))
    }
}

fn remove_chars(s: Cow<'_, str>, f: impl Fn(char) -> bool) -> Cow<'_, str> {
    if s.chars().any(&f) {
        Cow::Owned(s.chars().filter(|&c| !f(c)).collect())
    } else {
        s
    }
}

impl Step {
    fn apply<'a>(&self, s: Cow<'a, str>) -> Cow<'a, str> {
        match self {
            Step::RegexesToIgnore(list) => {
                let mut s = s;
                for re in list {
                    if let Cow::Owned(o) = re.remove_all(&s) {
                        s = Cow::Owned(o);
                    }
                }
                s
            }
            Step::Strip => match s {
                Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
                Cow::Owned(o) => {
                    let t = o.trim();
                    if t.len() == o.len() {
                        Cow::Owned(o)
                    } else {
                        Cow::Owned(t.to_owned())
                    }
                }
            },
            Step::IgnoreCase => match fold_case(&s) {
                Cow::Borrowed(_) => s,
                Cow::Owned(o) => Cow::Owned(o),
            },
            Step::IgnorePunctuation => remove_chars(s, is_punctuation),
            Step::IgnoreNumbers => remove_chars(s, is_digit),
            Step::IgnoreWhitespace => {
                let needs = {
                    let mut prev_ws = false;
                    s.chars().any(|c| {
                        let ws = c.is_whitespace();
                        let bad = ws && (prev_ws || c != ' ');
                        prev_ws = ws;
                        bad
                    })
                };
                if !needs {
                    return s;
                }
                let mut out = String::with_capacity(s.len());
                let mut prev_ws = false;
                for c in s.chars() {
                    if c.is_whitespace() {
                        if !prev_ws {
                            out.push(' ');
                        }
                        prev_ws = true;
                    } else {
                        out.push(c);
                        prev_ws = false;
                    }
                }
                Cow::Owned(out)
            }
            Step::RemoveArticles => match articles().replace_all(&s, " ") {
                Cow::Borrowed(_) => s,
                Cow::Owned(o) => Cow::Owned(o),
            },
            Step::Unicode(form) => {
                let ascii = s.is_ascii();
                if ascii {
                    return s;
                }
                match form {
                    UnicodeForm::Nfc => Cow::Owned(s.nfc().collect()),
                    UnicodeForm::Nfkc => Cow::Owned(s.nfkc().collect()),
                }
            }
        }
    }
}

impl Normalizer {
    pub fn new(steps: Vec<Step>) -> Self {
        Normalizer { steps }
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Applies every step in order.
    pub fn apply<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(s);
        for step in &self.steps {
            out = step.apply(out);
        }
        out
    }

    /// Normalizes a whole column; nulls stay null.
    pub fn column(&self, col: &TextColumn<'_>, len: usize) -> ArrayRef {
        let out: StringArray = (0..len)
            .map(|r| col.get(r).map(|s| self.apply(s)))
            .collect::<Vec<_>>()
            .iter()
            .map(|o| o.as_deref())
            .collect();
        Arc::new(out)
    }
}

/// Equality of normalized texts: equal after `norm`, except that two texts which both
/// normalize to the empty string are equal only when they were equal before.
pub fn normalized_equal(a: &str, b: &str, norm: Option<&Normalizer>) -> bool {
    match norm {
        None => a == b,
        Some(n) => {
            let (na, nb) = (n.apply(a), n.apply(b));
            na == nb && (!na.is_empty() || a == b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(steps: Vec<Step>, s: &str) -> String {
        Normalizer::new(steps).apply(s).into_owned()
    }

    #[test]
    fn each_step() {
        assert_eq!(norm(vec![Step::Strip], "  a b \n"), "a b");
        assert_eq!(
            norm(vec![Step::IgnoreCase], "StraSSe Straße ΣΑΣ"),
            "strasse strasse σασ"
        );
        assert_eq!(
            norm(
                vec![Step::IgnorePunctuation],
                "¿Qué? «hola» — a$b+c|d 日本。"
            ),
            "Qué hola  abcd 日本"
        );
        assert_eq!(
            norm(vec![Step::IgnoreWhitespace], " a \t\n b  c "),
            " a b c "
        );
        assert_eq!(
            norm(vec![Step::RemoveArticles], "The cat ate an apple, theater"),
            "  cat ate   apple, theater"
        );
        assert_eq!(norm(vec![Step::IgnoreNumbers], "agent007 ٣x"), "agent x");
        assert_eq!(norm(vec![Step::Unicode(UnicodeForm::Nfc)], "e\u{301}"), "é");
        assert_eq!(norm(vec![Step::Unicode(UnicodeForm::Nfkc)], "ﬁ①"), "fi1");
        let re = vec![
            crate::pattern::IgnorePattern::new("the ").unwrap(),
            crate::pattern::IgnorePattern::new("yell").unwrap(),
        ];
        assert_eq!(norm(vec![Step::RegexesToIgnore(re)], "the yelling"), "ing");
    }
}
