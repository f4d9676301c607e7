//! sacrebleu's chrF++ (`CHRF(word_order=2)`): characters and words get dense ids (ASCII
//! characters are their code), and the shared n-grams of each order are counted by
//! [`Scratch::shared`]; the statistics and the F-score are sacrebleu's.

use super::ngrams::{with_scratch, Scratch};
use super::py_split;

const CHRF_CHAR_ORDER: usize = 6;
const CHRF_WORD_ORDER: usize = 2;
const CHRF_BETA: f64 = 2.0;

/// chrF's word tokens: whitespace-split words, with one ASCII punctuation character split off
/// the end (else the start) of a word longer than one character.
fn chrf_words(s: &str) -> impl Iterator<Item = &str> {
    py_split(s).flat_map(|w| {
        let mut chars = w.chars();
        let (first, last) = (chars.next(), chars.next_back());
        let (x, y) = match (first, last) {
            (Some(_), Some(l)) if l.is_ascii_punctuation() => {
                (&w[..w.len() - 1], &w[w.len() - 1..])
            }
            (Some(f), Some(_)) if f.is_ascii_punctuation() => (&w[..1], &w[1..]),
            _ => (w, ""),
        };
        [x, y].into_iter().filter(|t| !t.is_empty())
    })
}

/// sacrebleu's `_get_match_statistics` of one order from the n-gram counts: `[hyp, ref,
/// match]`; the hypothesis count is 0 when the reference has no n-gram of this order.
fn order_stats(hyp_len: usize, ref_len: usize, n: usize, matched: u64) -> [u64; 3] {
    let (h, r) = (
        (hyp_len + 1).saturating_sub(n),
        (ref_len + 1).saturating_sub(n),
    );
    [if r == 0 { 0 } else { h as u64 }, r as u64, matched]
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
    with_scratch(|s| {
        let mut best = -1.0f64;
        for r in references {
            best = best.max(chrf_pair(s, hypothesis, r.as_ref()));
        }
        best.max(0.0) / 100.0
    })
}

/// The chrF++ score of one pair, in [0, 100].
fn chrf_pair(s: &mut Scratch, hyp: &str, reference: &str) -> f64 {
    let mut stats = [[0u64; 3]; CHRF_CHAR_ORDER + CHRF_WORD_ORDER];
    // Characters, whitespace removed.
    let vocab = s.char_ids([hyp, reference].into_iter());
    let (h, r) = (s.starts[1] - s.starts[0], s.starts[2] - s.starts[1]);
    let mut matched = [0u64; CHRF_CHAR_ORDER];
    s.shared(vocab, &mut matched);
    for (n, m) in matched.iter().enumerate() {
        stats[n] = order_stats(h, r, n + 1, *m);
    }
    // Words.
    let vocab = {
        let (mut strings, ids, starts) = s.strings();
        for t in [hyp, reference] {
            starts.push(ids.len());
            ids.extend(chrf_words(t).map(|w| strings.id(w)));
        }
        starts.push(ids.len());
        strings.len()
    };
    let (h, r) = (s.starts[1] - s.starts[0], s.starts[2] - s.starts[1]);
    let mut matched = [0u64; CHRF_WORD_ORDER];
    s.shared(vocab, &mut matched);
    for (n, m) in matched.iter().enumerate() {
        stats[CHRF_CHAR_ORDER + n] = order_stats(h, r, n + 1, *m);
    }
    chrf_f_score(&stats)
}
