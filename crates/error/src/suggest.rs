//! "Did you mean" suggestions for a name that is not known (a scorer type, an option, a
//! partition column).

/// The closest candidate to `word` by edit distance, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
