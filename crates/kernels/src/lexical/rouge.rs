//! rouge-score's ROUGE-1, ROUGE-2 and ROUGE-L F-measures: tokens as slices of the
//! lower-cased text with dense ids, shared n-grams counted by [`Scratch::shared`], the longest
//! common subsequence by rapidfuzz's bit-parallel `lcs_seq` over the ids.

use super::ngrams::{with_scratch, Scratch};
use super::{fmeasure, RougeVariant};
use rapidfuzz::distance::lcs_seq;

/// rouge-score's default tokenizer: lower case, then every run of `[a-z0-9]` is a token
/// (everything else separates tokens and is dropped).
pub fn rouge_tokens(s: &str) -> Vec<String> {
    let mut lower = String::new();
    lowercase(s, &mut lower);
    tokens(&lower).map(str::to_owned).collect()
}

/// Python's `str.lower()` into `out`: Unicode's full lower-casing (`İ` becomes `i` and a
/// combining dot). Final sigma aside, which no token can hold, it is Rust's `to_lowercase`.
fn lowercase(s: &str, out: &mut String) {
    out.clear();
    if s.is_ascii() {
        out.push_str(s);
        out.make_ascii_lowercase();
    } else {
        out.extend(s.chars().flat_map(char::to_lowercase));
    }
}

/// The runs of `[a-z0-9]` of a lower-cased text.
fn tokens(lower: &str) -> impl Iterator<Item = &str> {
    lower
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
}

/// rouge-score's F-measure of `variant` for `prediction` against `reference` (its target).
pub fn rouge(prediction: &str, reference: &str, variant: RougeVariant) -> f64 {
    with_scratch(|s| rouge_in(s, prediction, reference, variant))
}

fn rouge_in(s: &mut Scratch, prediction: &str, reference: &str, variant: RougeVariant) -> f64 {
    let [pl, rl, _] = &mut s.text;
    lowercase(prediction, pl);
    lowercase(reference, rl);
    let (pl, rl) = (std::mem::take(pl), std::mem::take(rl));
    let (p_len, r_len, vocab) = {
        let (mut strings, ids, starts) = s.strings();
        starts.push(0);
        ids.extend(tokens(&pl).map(|t| strings.id(t)));
        let p_len = ids.len();
        starts.push(p_len);
        ids.extend(tokens(&rl).map(|t| strings.id(t)));
        starts.push(ids.len());
        (p_len, ids.len() - p_len, strings.len())
    };
    s.text[0] = pl;
    s.text[1] = rl;
    match variant {
        RougeVariant::Rouge1 | RougeVariant::Rouge2 => {
            let n = if variant == RougeVariant::Rouge1 {
                1
            } else {
                2
            };
            let mut matched = [0u64; 2];
            s.shared(vocab, &mut matched[..n]);
            let overlap = matched[n - 1] as f64;
            let (p_count, r_count) = ((p_len + 1).saturating_sub(n), (r_len + 1).saturating_sub(n));
            let precision = overlap / p_count.max(1) as f64;
            let recall = overlap / r_count.max(1) as f64;
            fmeasure(precision, recall)
        }
        RougeVariant::RougeL => {
            if p_len == 0 || r_len == 0 {
                return 0.0;
            }
            let (p, r) = s.ids.split_at(p_len);
            let lcs = lcs_seq::similarity(r.iter().copied(), p.iter().copied()) as f64;
            fmeasure(lcs / p_len as f64, lcs / r_len as f64)
        }
    }
}
