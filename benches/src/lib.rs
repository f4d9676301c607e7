//! Seeded input data for the criterion benchmarks in `benches/` (`cargo bench -p
//! evalscore-benches`), shaped like the synthetic file of `evalscore-gen synthetic`: model
//! outputs of realistic lengths (a bare letter, `B. because ...`, `The answer is C`, empty,
//! null), single-letter answers, per-row choice lists of 3 or 4 letters, 0/1 scores and
//! `VALID`/`INVALID` labels.

use arrow::array::{
    ArrayRef, Float64Array, LargeStringArray, ListArray, ListBuilder, StringArray, StringBuilder,
    StringViewArray,
};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use std::sync::Arc;

/// The criterion settings every benchmark file uses: short runs, sized for a 2-core machine.
pub fn config() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1))
}

/// Rows per benchmark batch (the engine's batches are of this order).
pub const ROWS: usize = 65_536;

/// splitmix64: a fixed-seed generator, so every run benchmarks the same bytes.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

const LETTERS: [&str; 4] = ["A", "B", "C", "D"];
const WORDS: [&str; 8] = [
    "because",
    "the",
    "question",
    "asks",
    "about",
    "energy",
    "therefore",
    "clearly",
];

/// One batch of the benchmark's input columns.
#[derive(Debug, Clone)]
pub struct Batch {
    pub output: StringArray,
    pub answer: StringArray,
    pub choices: ListArray,
    pub scores: Float64Array,
    pub validity: StringArray,
}

/// Builds `rows` rows from `seed`; the mix of output shapes follows `evalscore-gen synthetic`.
pub fn batch(seed: u64, rows: usize) -> Batch {
    let mut rng = Rng::new(seed);
    let mut output: Vec<Option<String>> = Vec::with_capacity(rows);
    let mut answer: Vec<Option<&str>> = Vec::with_capacity(rows);
    let mut choices = ListBuilder::new(StringBuilder::new());
    let mut scores = Vec::with_capacity(rows);
    let mut validity = Vec::with_capacity(rows);
    for _ in 0..rows {
        let n = if rng.below(1000) < 150 { 3 } else { 4 };
        let a = rng.below(n) as usize;
        let l = if rng.below(1000) < 660 {
            LETTERS[a]
        } else {
            LETTERS[(a + 1 + rng.below(3) as usize) % 4]
        };
        let words = |rng: &mut Rng, k: usize| {
            (0..k)
                .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let o = match rng.below(1000) {
            0..480 => Some(l.to_owned()),
            480..600 => Some(format!("{l}. {}", words(&mut rng, 4))),
            600..690 => Some(format!("The answer is {l}")),
            690..770 => Some(format!(" {l}")),
            770..840 => Some(l.to_lowercase()),
            840..900 => Some(format!("{l}) {}", words(&mut rng, 2))),
            900..940 => Some(format!("Answer: {l}")),
            940..980 => Some(String::new()),
            980..990 => Some("I am not sure.".to_owned()),
            _ => None,
        };
        output.push(o);
        answer.push((rng.below(1000) != 0).then_some(LETTERS[a]));
        choices.append_value(LETTERS[..n as usize].iter().map(|s| Some(*s)));
        let correct = rng.below(1000) < 600;
        scores.push(if correct { 1.0 } else { 0.0 });
        validity.push(if rng.below(1000) < 800 {
            "VALID"
        } else {
            "INVALID"
        });
    }
    Batch {
        output: StringArray::from(output),
        answer: StringArray::from(answer),
        choices: choices.finish(),
        scores: Float64Array::from(scores),
        validity: StringArray::from(validity),
    }
}

/// The three string layouts a kernel must read.
pub const LAYOUTS: [(&str, DataType); 3] = [
    ("utf8", DataType::Utf8),
    ("large_utf8", DataType::LargeUtf8),
    ("utf8_view", DataType::Utf8View),
];

/// `a` in the given string layout.
pub fn as_layout(a: &StringArray, t: &DataType) -> ArrayRef {
    match t {
        DataType::Utf8 => Arc::new(a.clone()),
        DataType::LargeUtf8 => Arc::new(LargeStringArray::from_iter(a.iter())),
        DataType::Utf8View => Arc::new(StringViewArray::from_iter(a.iter())),
        other => cast(a, other).unwrap_or_else(|e| panic!("cast to {other}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Array;

    #[test]
    fn batches_are_deterministic_and_shaped() {
        let a = batch(7, 1000);
        let b = batch(7, 1000);
        assert_eq!(a.output, b.output);
        assert_eq!(a.output.len(), 1000);
        assert_eq!(a.choices.len(), 1000);
        assert!(a.output.null_count() > 0);
        for (_, t) in LAYOUTS {
            assert_eq!(as_layout(&a.output, &t).data_type(), &t);
        }
    }
}
