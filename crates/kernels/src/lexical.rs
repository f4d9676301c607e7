//! Lexical similarity of a prediction to a reference, as pure functions on `&str`, each
//! matching one reference implementation to 1e-9 (checked against the golden file made by
//! `scripts/golden/lexical.py`):
//!
//! - [`token_f1`]: SQuAD v1.1 token F1 after SQuAD's `normalize_answer` (the functions of
//!   the official evaluation script).
//! - [`rouge`]: Google's `rouge-score` package, `RougeScorer` defaults (its tokenizer, no
//!   stemming), the F-measure of `rouge1`, `rouge2` or `rougeL`; several references take
//!   the best F-measure, as `score_multi` does.
//! - [`sentence_bleu`]: sacrebleu's `sentence_bleu` (13a tokenizer, `exp` smoothing,
//!   effective order, several references as sacrebleu counts them), scaled to [0, 1].
//! - [`chrf`]: sacrebleu's chrF++ (`CHRF(word_order=2)`: character 6-grams, word 2-grams,
//!   beta 2; several references take the best, as sacrebleu does), scaled to [0, 1].
//! - [`levenshtein`]: 1 − edit distance / longer length over Unicode scalar values (rapidfuzz's
//!   `Levenshtein.normalized_similarity`), by the `rapidfuzz` crate: the Rust port by
//!   rapidfuzz's author of the same bit-parallel algorithms (Hyyrö's bit-vector distance,
//!   banded or blockwise past 64 characters), so it gives rapidfuzz's scores at rapidfuzz's
//!   speed (the plain O(n·m) table of `strsim` was an order of magnitude slower).
//!
//! The first four are written here: the Rust crates for BLEU and ROUGE implement other
//! variants (other BLEU smoothings, other tokenizers), and these scores depend on every
//! detail of the tokenizer and the smoothing. Python's string semantics that matter are
//! reproduced: `str.split()` splits on Unicode whitespace including U+001C..U+001F
//! ([`py_space`]), `str.lower()` is Rust's full Unicode lower-casing, and `\b` of Python's
//! `re` sees letters, numbers and `_` as word characters (not combining marks).
//!
//! For speed, ROUGE, BLEU and chrF++ never build an n-gram: tokens are slices of the text
//! (or of one reused buffer), equal tokens get equal integer ids, and the n-grams the two
//! sides share are counted order by order from those ids (`ngrams`), in buffers each thread
//! reuses from one pair to the next. The counts are integers and the floating-point formulas
//! are the libraries', in their order, so the scores are the same to the bit.

mod bleu;
mod chrf;
mod levenshtein;
mod ngrams;
mod rouge;

pub use bleu::{sentence_bleu, tokenize_13a};
pub use chrf::chrf;
pub use levenshtein::levenshtein;
pub use rouge::{rouge, rouge_tokens};

use std::collections::HashMap;
use unicode_general_category::{get_general_category, GeneralCategory as G};

/// Which ROUGE score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RougeVariant {
    Rouge1,
    Rouge2,
    RougeL,
}

impl RougeVariant {
    /// The names of `variant:`.
    pub const NAMES: &'static [&'static str] = &["rouge1", "rouge2", "rougeL"];

    pub fn from_name(name: &str) -> Option<RougeVariant> {
        match name {
            "rouge1" => Some(RougeVariant::Rouge1),
            "rouge2" => Some(RougeVariant::Rouge2),
            "rougeL" => Some(RougeVariant::RougeL),
            _ => None,
        }
    }
}

/// A lexical similarity measure, with its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lexical {
    F1,
    Rouge(RougeVariant),
    Bleu,
    Chrf,
    Levenshtein,
}

impl Lexical {
    /// The similarity in [0, 1] of `prediction` to its `references` (the best one, or for
    /// BLEU and chrF as sacrebleu combines several); 0.0 without references.
    pub fn score<S: AsRef<str>>(self, prediction: &str, references: &[S]) -> f64 {
        if references.is_empty() {
            return 0.0;
        }
        let best = |f: &dyn Fn(&str) -> f64| {
            references
                .iter()
                .map(|r| f(r.as_ref()))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let s = match self {
            Lexical::F1 => best(&|r| token_f1(prediction, r)),
            Lexical::Rouge(v) => best(&|r| rouge(prediction, r, v)),
            Lexical::Levenshtein => best(&|r| levenshtein(prediction, r)),
            Lexical::Bleu => sentence_bleu(prediction, references),
            Lexical::Chrf => chrf(prediction, references),
        };
        // BLEU of identical texts is 1 + 4e-16 in floating point, as in sacrebleu.
        s.clamp(0.0, 1.0)
    }
}

/// Python's `str.isspace()`: Unicode White_Space plus the separators U+001C..U+001F.
#[inline]
pub fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `s.split()`: the runs of non-whitespace.
fn py_split(s: &str) -> impl Iterator<Item = &str> {
    s.split(py_space).filter(|t| !t.is_empty())
}

/// A word character of Python's `re` (`str.isalnum()` or `_`).
fn py_word(c: char) -> bool {
    c == '_'
        || c.is_ascii_alphanumeric()
        || (!c.is_ascii()
            && matches!(
                get_general_category(c),
                G::UppercaseLetter
                    | G::LowercaseLetter
                    | G::TitlecaseLetter
                    | G::ModifierLetter
                    | G::OtherLetter
                    | G::DecimalNumber
                    | G::LetterNumber
                    | G::OtherNumber
            ))
}

/// SQuAD's `normalize_answer`: lower case, ASCII punctuation (`string.punctuation`) removed,
/// the words `a`, `an`, `the` replaced by a space, whitespace runs made one space, trimmed.
pub fn squad_normalize(s: &str) -> String {
    let lowered: String = s
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    // `re.sub(r'\b(a|an|the)\b', ' ', text)`: a whole run of word characters.
    let mut text = String::with_capacity(lowered.len());
    let mut rest = lowered.as_str();
    while let Some(start) = rest.find(py_word) {
        text.push_str(&rest[..start]);
        let word = &rest[start..];
        let end = word.find(|c| !py_word(c)).unwrap_or(word.len());
        match &word[..end] {
            "a" | "an" | "the" => text.push(' '),
            w => text.push_str(w),
        }
        rest = &word[end..];
    }
    text.push_str(rest);
    py_split(&text).collect::<Vec<_>>().join(" ")
}

/// Multiset intersection size of two token lists.
fn common<T: std::hash::Hash + Eq>(a: impl Iterator<Item = T>, b: impl Iterator<Item = T>) -> u64 {
    let mut counts: HashMap<T, i64> = HashMap::new();
    for t in a {
        *counts.entry(t).or_default() += 1;
    }
    let mut same = 0;
    for t in b {
        if let Some(c) = counts.get_mut(&t) {
            if *c > 0 {
                *c -= 1;
                same += 1;
            }
        }
    }
    same
}

/// SQuAD v1.1's `f1_score(prediction, ground_truth)` after [`squad_normalize`]. No common
/// token (so also an empty side, and two empty texts) scores 0.0.
pub fn token_f1(prediction: &str, reference: &str) -> f64 {
    let p = squad_normalize(prediction);
    let r = squad_normalize(reference);
    let (pt, rt): (Vec<&str>, Vec<&str>) = (p.split(' ').collect(), r.split(' ').collect());
    if p.is_empty() || r.is_empty() {
        return 0.0;
    }
    let same = common(pt.iter(), rt.iter());
    if same == 0 {
        return 0.0;
    }
    let precision = same as f64 / pt.len() as f64;
    let recall = same as f64 / rt.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// rouge-score's `fmeasure`.
fn fmeasure(precision: f64, recall: f64) -> f64 {
    if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squad_normalization() {
        assert_eq!(squad_normalize("The  Cat, a dog!"), "cat dog");
        assert_eq!(squad_normalize("an-apple"), "anapple");
        // A word run next to a non-word, non-space character: replaced by a space.
        assert_eq!(squad_normalize("€a€"), "€ €");
        assert_eq!(
            token_f1("the cat sat", "a cat sat down"),
            2.0 * 1.0 * (2.0 / 3.0) / (1.0 + 2.0 / 3.0)
        );
        assert_eq!(token_f1("", ""), 0.0);
    }

    #[test]
    fn bleu_and_chrf_bounds() {
        assert!(
            (sentence_bleu("the cat sat on the mat", &["the cat sat on the mat"]) - 1.0).abs()
                < 1e-12
        );
        assert_eq!(sentence_bleu("", &["x"]), 0.0);
        assert!((chrf("abc def", &["abc def"]) - 1.0).abs() < 1e-12);
        assert_eq!(
            tokenize_13a("Hello, world. 3.5-4"),
            ["Hello", ",", "world", ".", "3.5", "-", "4"]
        );
        assert_eq!(levenshtein("", ""), 1.0);
        assert_eq!(levenshtein("日本", "日"), 0.5);
    }
}
