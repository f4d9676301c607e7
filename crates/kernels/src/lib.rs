//! Scorer kernels: functions over Arrow arrays, one signature for all of them.
//!
//! # The kernel contract
//!
//! As arrow's comparison kernels are `fn(&dyn Datum, &dyn Datum) -> Result<BooleanArray>`,
//! every column kernel here is
//! `fn(batch: Batch<'_>, <its other input and options>) -> Result<Scored, KernelError>`:
//!
//! - [`Batch`]: the scored value as a [`TextColumn`] (Utf8, LargeUtf8, Utf8View, or one
//!   scalar for every row; [`to_text`] makes one from numbers, booleans and dictionaries),
//!   the `normalize:` steps, applied to the value and to the other side, and the row count.
//! - The other input: nothing, another [`TextColumn`] (`exact`, `string_equals`, `regex`'s
//!   ground truth, ...), or [`Expected`] strings: the same for every row ([`Needles`],
//!   normalized and prepared once per task) or a column's cell, a list column or a list
//!   written as text ([`text_as_list`]). Every kernel that compares with several strings
//!   (the match family, `includes_all`, the graded scorers) takes [`Expected`].
//! - [`Scored`]: the pass mask (`is_correct`, a [`arrow::array::BooleanArray`] without
//!   nulls), the graded kernels' `score`, the kernels' `details` text where they have one,
//!   and `missing`, the count of rows with a null input.
//!
//! One driver (in `contract.rs`) owns what every kernel shares: it reads each row through
//! [`TextColumn`], so a kernel's row function is written once for the three string layouts
//! and monomorphised per call site (no dynamic dispatch or allocation per row); it counts a
//! row whose value or other input is null as missing (it fails, and its text is null unless
//! the kernel names it); and it hands the row function both sides after `normalize:`. Each
//! kernel documents its null rule. Fast paths (arrow's `eq` for `string_equals`, the
//! decisions read from string views for `match`/`includes`/`regex`, `string_equals_mcqa`'s
//! view path) are specialisations inside a kernel, taken before the general path when the
//! batch has their shape, with the same result.
//!
//! Scores are 0/1, so the pass mask is a bit per row instead of eight bytes: the engine
//! writes it to Parquet and folds it into means without building the Float64 column.
//! [`bool_to_score`] gives the Float64 scores where they are wanted.
//!
//! # Modules
//!
//! - [`string_equals()`] and [`string_equals_mcqa()`] (with [`Choices`] and the
//!   `completion_validity` labels [`VALID`] / [`INVALID`]);
//! - [`exact()`] and [`pass_fail()`]; [`match_check()`] (`match`, `includes`, `fuzzy_match`
//!   and negations) and [`includes_all()`]; [`regex_check()`] and [`not_regex()`];
//!   [`numeric_match()`] (and [`numeric_match_with()`], a spaced sign read per
//!   [`NumberReading`]); [`json`] (`valid_json`, `contains_json`, a JSON Schema subset);
//!   [`injection::check_injection`];
//! - [`lexical`]: token F1, ROUGE, BLEU, chrF++ and Levenshtein similarity as pure
//!   functions; [`graded()`] scores columns with them (`score` and
//!   `is_correct = score >= threshold`);
//! - [`normalize::Normalizer`] (`normalize:` steps) and [`extract::Extractor`] (`extract:`);
//!   [`pattern::compile`]: every regular expression from a task file, with size limits;
//! - [`judge`]: a judge model's reply read as a label or a grade (model-graded scorers);
//! - [`BatchMemo`]: what several scorers of one batch (a suite's tasks) would each derive
//!   again from the same column, made once;
//! - [`KernelError`] names the row (within the batch) and the input that is at fault.

mod batch_memo;
mod choices;
mod contract;
mod exact;
mod expected;
pub mod extract;
mod graded;
pub mod injection;
pub mod json;
pub mod judge;
pub mod lexical;
mod matching;
mod mcqa;
pub mod normalize;
mod numeric;
pub mod pattern;
mod regex_check;
mod side;
mod string_equals;
mod view_eq;

pub use batch_memo::BatchMemo;
pub use choices::{parse_choice_list, Choices};
pub use contract::{missing_count, Batch, Scored};
pub use evalscore_text::{
    readable_as_text, to_text, valid_words, view_bits, TextColumn, TextError, Validity,
};
pub use exact::{exact, pass_fail, EXACT_NO_EXPECTED, EXACT_PASS};
pub use expected::{text_as_list, Expected, Needles, Strings};
pub use extract::{Extracted, Extractor};
pub use graded::{graded, graded_by};
pub use injection::check_injection;
pub use json::{contains_json, valid_json, JsonSchema, JSON_VALID, NO_JSON};
pub use lexical::{Lexical, RougeVariant};
pub use matching::{includes_all, match_check, MatchMode};
pub use mcqa::{string_equals_mcqa, string_equals_mcqa_with, McqaOutput, INVALID, VALID};
pub use normalize::{normalized_equal, Normalizer, Step, UnicodeForm};
pub use numeric::{number_of, numeric_match, numeric_match_with, NumberReading, Tolerance};
/// The regular expression type of compiled task patterns.
pub use regex::Regex;
pub use regex_check::{not_regex, regex_check};
pub use string_equals::string_equals;

use std::fmt;

/// A kernel could not score its input.
#[derive(Debug, Clone, PartialEq)]
pub enum KernelError {
    /// A column of a type the scorer cannot read as text.
    Type {
        input: String,
        data_type: String,
    },
    /// A value that breaks the scorer's contract, at `row` of the batch.
    Value {
        row: usize,
        input: String,
        value: String,
        message: String,
    },
    Arrow(String),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Type { input, data_type } => write!(
                f,
                "{input} has type {data_type}, which cannot be read as text"
            ),
            KernelError::Value {
                input,
                value,
                message,
                ..
            } => write!(f, "{input} value {value:?} {message}"),
            KernelError::Arrow(m) => write!(f, "arrow: {m}"),
        }
    }
}

impl std::error::Error for KernelError {}

impl From<evalscore_text::TextError> for KernelError {
    fn from(e: evalscore_text::TextError) -> Self {
        match e {
            evalscore_text::TextError::Type { input, data_type } => {
                KernelError::Type { input, data_type }
            }
            evalscore_text::TextError::Arrow(m) => KernelError::Arrow(m),
        }
    }
}

impl From<arrow::error::ArrowError> for KernelError {
    fn from(e: arrow::error::ArrowError) -> Self {
        KernelError::Arrow(e.to_string())
    }
}

/// Turns a boolean mask into 0.0/1.0 scores, with null counting as 0.0 (false).
pub fn bool_to_score(mask: &arrow::array::BooleanArray) -> arrow::array::Float64Array {
    scores_from_bits(&pass_bits(mask))
}

/// [`view_bits`] over two view columns of the same length, row by row.
pub(crate) fn view_pair_bits(
    a: &[u128],
    b: &[u128],
    mut f: impl FnMut(u128, u128) -> bool,
) -> arrow::buffer::BooleanBuffer {
    debug_assert_eq!(a.len(), b.len());
    let words: Vec<u64> = a
        .chunks(64)
        .zip(b.chunks(64))
        .map(|(ca, cb)| {
            let mut w = 0u64;
            for (j, (&x, &y)) in ca.iter().zip(cb).enumerate() {
                w |= u64::from(f(x, y)) << j;
            }
            w
        })
        .collect();
    arrow::buffer::BooleanBuffer::new(arrow::buffer::Buffer::from_vec(words), 0, a.len())
}

/// The bytes of `w` equal to `byte`, each marked by its high bit: the zero-byte test of
/// "Bit Twiddling Hacks" on `w ^ byte…`. A borrow only marks bytes above a real match, so
/// "any marked byte below a length" is exact; which byte matched is not.
#[inline]
pub(crate) fn bytes_equal(w: u64, byte: u8) -> u64 {
    const LOW: u64 = 0x0101_0101_0101_0101;
    let x = w ^ (LOW * u64::from(byte));
    x.wrapping_sub(LOW) & !x & (LOW << 7)
}

/// `LOW_BYTES[n]` has the low `n` bytes set (`n` up to 8): a mask of the first `n` bytes of a
/// little-endian word, for the byte searches on views ([`bytes_equal`]). A table, because a
/// shift by a variable length costs more in these loops.
pub(crate) const LOW_BYTES: [u64; 9] = {
    let mut m = [0u64; 9];
    let mut n = 1;
    while n <= 8 {
        m[n] = u64::MAX >> (64 - 8 * n);
        n += 1;
    }
    m
};

/// A boolean mask as a pass mask: null counts as false, and the result has no nulls.
pub fn pass_mask(mask: &arrow::array::BooleanArray) -> arrow::array::BooleanArray {
    arrow::array::BooleanArray::new(pass_bits(mask), None)
}

fn pass_bits(mask: &arrow::array::BooleanArray) -> arrow::buffer::BooleanBuffer {
    match arrow::array::Array::nulls(mask) {
        Some(n) => mask.values() & n.inner(),
        None => mask.values().clone(),
    }
}

/// Test helper: a pass mask as the 0.0/1.0 scores the engine writes.
#[cfg(test)]
pub(crate) fn score_vec(mask: &arrow::array::BooleanArray) -> Vec<f64> {
    bool_to_score(mask).values().to_vec()
}

/// 1.0 for each set bit, 0.0 for each unset one.
fn scores_from_bits(bits: &arrow::buffer::BooleanBuffer) -> arrow::array::Float64Array {
    arrow::array::Float64Array::from(bits_as(bits, |b| b as f64))
}

/// One value per bit, `of(0)` or `of(1)`: 0/1 scores, dictionary keys.
pub(crate) fn bits_as<T: Copy + Default>(
    bits: &arrow::buffer::BooleanBuffer,
    of: impl Fn(u64) -> T,
) -> Vec<T> {
    let mut out = vec![T::default(); bits.len()];
    let chunks = bits.bit_chunks();
    let mut slots = out.chunks_exact_mut(64);
    // Fixed-size inner loops without pushes: these vectorize.
    for (word, slot) in chunks.iter().zip(&mut slots) {
        for (j, o) in slot.iter_mut().enumerate() {
            *o = of((word >> j) & 1);
        }
    }
    let rest = chunks.remainder_bits();
    for (j, o) in slots.into_remainder().iter_mut().enumerate() {
        *o = of((rest >> j) & 1);
    }
    out
}

/// Test helpers: one column in each string layout, read back.
#[cfg(test)]
pub(crate) mod test_columns {
    use arrow::array::{ArrayRef, BooleanArray, LargeStringArray, StringArray, StringViewArray};
    use evalscore_text::TextColumn;
    use std::sync::Arc;

    /// `values` as Utf8, LargeUtf8 and Utf8View.
    pub fn layouts(values: &[Option<&str>]) -> Vec<ArrayRef> {
        vec![
            Arc::new(StringArray::from(values.to_vec())),
            Arc::new(LargeStringArray::from(values.to_vec())),
            Arc::new(StringViewArray::from(values.to_vec())),
        ]
    }

    /// A string array as a text column.
    #[allow(clippy::unwrap_used)]
    pub fn col(a: &ArrayRef) -> TextColumn<'_> {
        TextColumn::new(a.as_ref(), "v").unwrap()
    }

    /// A pass mask as booleans.
    pub fn bits(b: &BooleanArray) -> Vec<bool> {
        b.iter().map(|x| x == Some(true)).collect()
    }
}
