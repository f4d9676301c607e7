//! Lexical similarity of a prediction to a reference, as pure functions on `&str`, each
//! matching one reference implementation to 1e-9 (checked against the golden file made by
//! `scripts/golden/lexical.py`):
//!
//! - [`token_f1`]: SQuAD v1.1 token F1 after SQuAD's `normalize_answer` (the functions of
//!   the official evaluation script, which Hugging Face `evaluate`'s `squad` metric uses).
//! - [`rouge`]: Google's `rouge-score` package, `RougeScorer` defaults (its tokenizer, no
//!   stemming), the F-measure of `rouge1`, `rouge2` or `rougeL`; several references take
//!   the best F-measure, as `score_multi` does.
//! - [`sentence_bleu`]: sacrebleu's `sentence_bleu` (13a tokenizer, `exp` smoothing,
//!   effective order, several references as sacrebleu counts them), scaled to [0, 1].
//! - [`chrf`]: sacrebleu's chrF++ (`CHRF(word_order=2)`: character 6-grams, word 2-grams,
//!   beta 2; several references take the best, as sacrebleu does), scaled to [0, 1].
//! - [`levenshtein`]: 1 − edit distance / longer length over Unicode scalar values (rapidfuzz's
//!   `Levenshtein.normalized_similarity`), by the `strsim` crate.
//!
//! The first four are written here: the Rust crates for BLEU and ROUGE implement other
//! variants (NLTK's or Hugging Face's BLEU, other tokenizers), and these scores depend on every
//! detail of the tokenizer and the smoothing. Python's string semantics that matter are
//! reproduced: `str.split()` splits on Unicode whitespace including U+001C..U+001F
//! ([`py_space`]), `str.lower()` is Rust's full Unicode lower-casing, and `\b` of Python's
//! `re` sees letters, numbers and `_` as word characters (not combining marks).

use regex::Regex;
use std::collections::HashMap;
use std::sync::OnceLock;
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

/// rouge-score's default tokenizer: lower case, then every run of `[a-z0-9]` is a token
/// (everything else separates tokens and is dropped).
pub fn rouge_tokens(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

fn fmeasure(precision: f64, recall: f64) -> f64 {
    if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    }
}

/// rouge-score's F-measure of `variant` for `prediction` against `reference` (its target).
pub fn rouge(prediction: &str, reference: &str, variant: RougeVariant) -> f64 {
    let (p, r) = (rouge_tokens(prediction), rouge_tokens(reference));
    match variant {
        RougeVariant::Rouge1 => rouge_n(&p, &r, 1),
        RougeVariant::Rouge2 => rouge_n(&p, &r, 2),
        RougeVariant::RougeL => {
            if p.is_empty() || r.is_empty() {
                return 0.0;
            }
            let lcs = lcs_len(&r, &p) as f64;
            fmeasure(lcs / p.len() as f64, lcs / r.len() as f64)
        }
    }
}

fn rouge_n(p: &[String], r: &[String], n: usize) -> f64 {
    let (pg, rg) = (p.windows(n), r.windows(n));
    let (p_count, r_count) = (pg.len(), rg.len());
    let overlap = common(rg, pg) as f64;
    let precision = overlap / p_count.max(1) as f64;
    let recall = overlap / r_count.max(1) as f64;
    fmeasure(precision, recall)
}

/// Length of the longest common subsequence, in two rows of the dynamic-programming table.
fn lcs_len<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                prev[j + 1].max(cur[j])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

fn tokenizer_13a_patterns() -> &'static [(Regex, &'static str); 4] {
    static RE: OnceLock<[(Regex, &'static str); 4]> = OnceLock::new();
    RE.get_or_init(|| {
        #[allow(clippy::expect_used)]
        let re = |p: &str| Regex::new(p).expect("a valid built-in regex");
        [
            // sacrebleu's TokenizerRegexp, in its order.
            (re(r"([\{-~\[-` -&\(-\+:-@/])"), " $1 "),
            (re(r"([^0-9])([\.,])"), "$1 $2 "),
            (re(r"([\.,])([^0-9])"), " $1 $2"),
            (re(r"([0-9])(-)"), "$1 $2 "),
        ]
    })
}

/// sacrebleu's `13a` tokenizer (mteval-v13a), after BLEU's `rstrip()`: the tokens, as the
/// tokenized line's `split()` gives them.
pub fn tokenize_13a(s: &str) -> Vec<String> {
    let mut line = s
        .trim_end_matches(py_space)
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    let mut line = format!(" {line} ");
    for (re, rep) in tokenizer_13a_patterns() {
        line = re.replace_all(&line, *rep).into_owned();
    }
    py_split(&line).map(str::to_owned).collect()
}

const BLEU_ORDER: usize = 4;

/// The n-gram counts (orders 1 to 4) of a token list.
fn word_ngrams(tokens: &[String], max: usize) -> HashMap<&[String], u64> {
    let mut m = HashMap::new();
    for n in 1..=max {
        for w in tokens.windows(n) {
            *m.entry(w).or_default() += 1;
        }
    }
    m
}

/// sacrebleu's `sentence_bleu(hypothesis, references)` with its defaults (13a tokenizer, `exp`
/// smoothing, effective order), divided by 100. Several references: each n-gram's count is
/// clipped by its largest count in any reference, and the brevity penalty uses the closest
/// reference length (the shorter on a tie).
pub fn sentence_bleu<S: AsRef<str>>(hypothesis: &str, references: &[S]) -> f64 {
    let hyp = tokenize_13a(hypothesis);
    let refs: Vec<Vec<String>> = references
        .iter()
        .map(|r| tokenize_13a(r.as_ref()))
        .collect();
    let mut ref_ngrams: HashMap<&[String], u64> = HashMap::new();
    for r in &refs {
        for (g, c) in word_ngrams(r, BLEU_ORDER) {
            let e = ref_ngrams.entry(g).or_default();
            *e = (*e).max(c);
        }
    }
    let sys_len = hyp.len();
    let mut ref_len: Option<(usize, usize)> = None;
    for r in &refs {
        let diff = r.len().abs_diff(sys_len);
        ref_len = match ref_len {
            None => Some((diff, r.len())),
            Some((d, _)) if diff < d => Some((diff, r.len())),
            Some((d, l)) if diff == d && r.len() < l => Some((diff, r.len())),
            keep => keep,
        };
    }
    let ref_len = ref_len.map_or(0, |(_, l)| l);
    let mut correct = [0u64; BLEU_ORDER];
    let mut total = [0u64; BLEU_ORDER];
    for (g, c) in word_ngrams(&hyp, BLEU_ORDER) {
        let n = g.len() - 1;
        total[n] += c;
        if let Some(&rc) = ref_ngrams.get(g) {
            correct[n] += c.min(rc);
        }
    }
    let mut bp = 1.0;
    if sys_len < ref_len {
        bp = if sys_len > 0 {
            (1.0 - ref_len as f64 / sys_len as f64).exp()
        } else {
            0.0
        };
    }
    if correct.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let mut precisions = [0.0f64; BLEU_ORDER];
    let mut smooth = 1.0f64;
    let mut eff_order = BLEU_ORDER;
    for n in 1..=BLEU_ORDER {
        if total[n - 1] == 0 {
            break;
        }
        eff_order = n;
        if correct[n - 1] == 0 {
            smooth *= 2.0;
            precisions[n - 1] = 100.0 / (smooth * total[n - 1] as f64);
        } else {
            precisions[n - 1] = 100.0 * correct[n - 1] as f64 / total[n - 1] as f64;
        }
    }
    let logs = precisions[..eff_order]
        .iter()
        .map(|&p| if p == 0.0 { -9_999_999_999.0 } else { p.ln() })
        .fold(0.0, |a, b| a + b);
    bp * (logs / eff_order as f64).exp() / 100.0
}

const CHRF_CHAR_ORDER: usize = 6;
const CHRF_WORD_ORDER: usize = 2;
const CHRF_BETA: f64 = 2.0;

/// chrF's word tokens: whitespace-split words, with one ASCII punctuation character split off
/// the end (else the start) of a word longer than one character.
fn chrf_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in py_split(s) {
        let mut chars = w.chars();
        let (first, last) = (chars.next(), chars.next_back());
        match (first, last) {
            (Some(_), None) => out.push(w.to_owned()),
            (Some(f), Some(l)) => {
                if l.is_ascii_punctuation() {
                    out.push(w[..w.len() - l.len_utf8()].to_owned());
                    out.push(l.to_string());
                } else if f.is_ascii_punctuation() {
                    out.push(f.to_string());
                    out.push(w[f.len_utf8()..].to_owned());
                } else {
                    out.push(w.to_owned());
                }
            }
            (None, _) => {}
        }
    }
    out
}

/// The counters of [`ChrfText::ngrams`]: characters per order, words per order.
type ChrfNgrams<'a> = (Vec<HashMap<&'a str, u64>>, Vec<HashMap<&'a [String], u64>>);

/// A text's chrF++ material: the text without whitespace and its word tokens.
struct ChrfText {
    compact: String,
    words: Vec<String>,
}

impl ChrfText {
    fn new(s: &str) -> Self {
        ChrfText {
            compact: s.chars().filter(|&c| !py_space(c)).collect(),
            words: chrf_words(s),
        }
    }

    /// The n-gram counters, one per order: characters 1..=6 (slices of the text without
    /// whitespace), then words 1..=2.
    fn ngrams(&self) -> ChrfNgrams<'_> {
        let bounds: Vec<usize> = self
            .compact
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(self.compact.len()))
            .collect();
        let chars = (1..=CHRF_CHAR_ORDER)
            .map(|n| {
                let mut m: HashMap<&str, u64> = HashMap::new();
                for w in bounds.windows(n + 1) {
                    *m.entry(&self.compact[w[0]..w[n]]).or_default() += 1;
                }
                m
            })
            .collect();
        let words = (1..=CHRF_WORD_ORDER)
            .map(|n| {
                let mut m: HashMap<&[String], u64> = HashMap::new();
                for w in self.words.windows(n) {
                    *m.entry(w).or_default() += 1;
                }
                m
            })
            .collect();
        (chars, words)
    }
}

/// sacrebleu's `_get_match_statistics`: `[hyp, ref, match]` counts of one order; the
/// hypothesis count is 0 when the reference has no n-gram of this order.
fn chrf_stats<K: std::hash::Hash + Eq>(h: &HashMap<K, u64>, r: &HashMap<K, u64>) -> [u64; 3] {
    let (mut hyp_count, mut matched) = (0, 0);
    for (g, &c) in h {
        hyp_count += c;
        if let Some(&rc) = r.get(g) {
            matched += c.min(rc);
        }
    }
    let hyp_count = if r.is_empty() { 0 } else { hyp_count };
    [hyp_count, r.values().sum(), matched]
}

/// sacrebleu's `CHRF._compute_f_score` over `[hyp, ref, match]` counts per order, in [0, 100].
fn chrf_f_score(stats: &[[u64; 3]]) -> f64 {
    let factor = CHRF_BETA * CHRF_BETA;
    let (mut avg_prec, mut avg_rec, mut effective) = (0.0f64, 0.0f64, 0usize);
    for &[n_hyp, n_ref, n_match] in stats {
        if n_hyp > 0 && n_ref > 0 {
            avg_prec += n_match as f64 / n_hyp as f64;
            avg_rec += n_match as f64 / n_ref as f64;
            effective += 1;
        }
    }
    if effective == 0 {
        return 0.0;
    }
    avg_prec /= effective as f64;
    avg_rec /= effective as f64;
    if avg_prec + avg_rec != 0.0 {
        let mut score = (1.0 + factor) * avg_prec * avg_rec;
        score /= (factor * avg_prec) + avg_rec;
        100.0 * score
    } else {
        0.0
    }
}

/// sacrebleu's chrF++ (`CHRF(word_order=2)`) sentence score, divided by 100. Several
/// references: the one with the best score.
pub fn chrf<S: AsRef<str>>(hypothesis: &str, references: &[S]) -> f64 {
    let hyp_text = ChrfText::new(hypothesis);
    let (hyp_chars, hyp_words) = hyp_text.ngrams();
    let mut best = -1.0f64;
    for r in references {
        let ref_text = ChrfText::new(r.as_ref());
        let (ref_chars, ref_words) = ref_text.ngrams();
        let stats: Vec<[u64; 3]> = hyp_chars
            .iter()
            .zip(&ref_chars)
            .map(|(h, r)| chrf_stats(h, r))
            .chain(
                hyp_words
                    .iter()
                    .zip(&ref_words)
                    .map(|(h, r)| chrf_stats(h, r)),
            )
            .collect();
        best = best.max(chrf_f_score(&stats));
    }
    best.max(0.0) / 100.0
}

/// rapidfuzz's `Levenshtein.normalized_similarity`: 1 − distance / the longer length, over
/// Unicode scalar values; two empty texts score 1.0.
pub fn levenshtein(a: &str, b: &str) -> f64 {
    strsim::normalized_levenshtein(a, b)
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
