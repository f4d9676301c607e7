//! rapidfuzz's `Levenshtein.normalized_similarity`, by the `rapidfuzz` crate: the Rust port
//! by rapidfuzz's author of the same bit-parallel algorithms (Hyyrö's, on 64-bit words,
//! banded or blockwise for long texts; mbleven for small distances), over Unicode scalar
//! values, with the same normalization, so its scores are rapidfuzz's to the bit. ASCII
//! texts are compared as bytes (the same distance, without decoding).

use rapidfuzz::distance::levenshtein;
use std::cell::RefCell;

thread_local! {
    static CHARS: RefCell<(Vec<char>, Vec<char>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// rapidfuzz's `Levenshtein.normalized_similarity`: 1 − distance / the longer length, over
/// Unicode scalar values; two empty texts score 1.0.
pub fn levenshtein(a: &str, b: &str) -> f64 {
    if a.is_ascii() && b.is_ascii() {
        return levenshtein::normalized_similarity(a.bytes(), b.bytes());
    }
    let decoded = |x: &mut Vec<char>, y: &mut Vec<char>| {
        x.clear();
        x.extend(a.chars());
        y.clear();
        y.extend(b.chars());
        levenshtein::normalized_similarity(x.iter().copied(), y.iter().copied())
    };
    CHARS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut bufs) => {
            let (x, y) = &mut *bufs;
            let s = decoded(x, y);
            if x.capacity() > 1 << 20 || y.capacity() > 1 << 20 {
                *bufs = (Vec::new(), Vec::new());
            }
            s
        }
        Err(_) => decoded(&mut Vec::new(), &mut Vec::new()),
    })
}
