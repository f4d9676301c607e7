//! Any Arrow column read as text, shared by the crates that score and fold text: the
//! kernels, the metrics, the task's templates and the engine.
//!
//! [`to_text`] converts a column to a string array (numbers and booleans as their display
//! text); [`TextColumn`] reads a row of any string layout (Utf8, LargeUtf8, Utf8View) or a
//! broadcast scalar; [`valid_words`] and [`view_bits`] are the 64-rows-at-a-time helpers of
//! the scoring loops; [`ByBuffers`] holds what a suite's tasks derive once from a batch's
//! columns.

mod by_buffers;
pub use by_buffers::{nulls_key, BufferKey, ByBuffers};

use arrow::array::{Array, ArrayRef, AsArray, GenericStringArray, StringArray, StringViewArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use std::sync::Arc;

/// Converts `array` to a string array the kernels read directly.
///
/// Utf8, LargeUtf8 and Utf8View pass through unchanged. Dictionaries are unpacked to their
/// values' type. Integers, floats, booleans and decimals become their Arrow display text
/// (`3`, `0.5`, `true`), dates theirs (`YYYY-MM-DD`), so a numeric ground-truth column compares as its printed form.
/// Nested and binary types are an error naming `input` and the type. Nulls stay null.
pub fn to_text(array: &ArrayRef, input: &str) -> Result<ArrayRef, TextError> {
    match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Ok(Arc::clone(array)),
        DataType::Dictionary(_, value) if is_textual(value) => {
            let target = if matches!(
                value.as_ref(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            ) {
                value.as_ref().clone()
            } else {
                DataType::Utf8
            };
            Ok(cast(array, &target)?)
        }
        DataType::Null => Ok(Arc::new(StringArray::new_null(array.len()))),
        t if is_textual(t) => Ok(cast(array, &DataType::Utf8)?),
        t => Err(TextError::Type {
            input: input.to_owned(),
            data_type: t.to_string(),
        }),
    }
}

/// Whether [`to_text`] reads columns of type `t`: strings, numbers, booleans, dates,
/// dictionaries of them, and the null type. Nested and binary types are not, so a task can be checked against
/// the input's schema before any row is read.
pub fn readable_as_text(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, value) => is_textual(value),
        DataType::Null => true,
        t => is_textual(t),
    }
}

fn is_textual(t: &DataType) -> bool {
    t.is_numeric()
        || matches!(
            t,
            DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Boolean
                // As `YYYY-MM-DD`: a Hive `date=` folder is a Date32 column.
                | DataType::Date32
                | DataType::Date64
        )
}

/// A borrowed text column: one of Arrow's three string layouts, or one scalar for every row.
///
/// Kernels are written once against [`TextColumn::get`]; the match on the layout is
/// perfectly predictable inside a loop, so this costs no more than three copies of the body.
#[derive(Debug, Clone, Copy)]
pub enum TextColumn<'a> {
    Utf8(&'a GenericStringArray<i32>),
    LargeUtf8(&'a GenericStringArray<i64>),
    Utf8View(&'a StringViewArray),
    Scalar(Option<&'a str>),
}

impl<'a> TextColumn<'a> {
    /// Borrows a string array (see [`to_text`] to get one).
    pub fn new(array: &'a dyn Array, input: &str) -> Result<Self, TextError> {
        match array.data_type() {
            DataType::Utf8 => Ok(TextColumn::Utf8(array.as_string::<i32>())),
            DataType::LargeUtf8 => Ok(TextColumn::LargeUtf8(array.as_string::<i64>())),
            DataType::Utf8View => Ok(TextColumn::Utf8View(array.as_string_view())),
            t => Err(TextError::Type {
                input: input.to_owned(),
                data_type: t.to_string(),
            }),
        }
    }

    /// A scalar column: `get` returns the same text (or null) for every row.
    pub fn scalar(value: Option<&'a str>) -> Self {
        TextColumn::Scalar(value)
    }

    /// The text at `row`, `None` when null.
    #[inline]
    pub fn get(&self, row: usize) -> Option<&'a str> {
        match self {
            TextColumn::Utf8(a) => a.is_valid(row).then(|| a.value(row)),
            TextColumn::LargeUtf8(a) => a.is_valid(row).then(|| a.value(row)),
            TextColumn::Utf8View(a) => a.is_valid(row).then(|| a.value(row)),
            TextColumn::Scalar(s) => *s,
        }
    }

    pub fn is_scalar(&self) -> bool {
        matches!(self, TextColumn::Scalar(_))
    }

    /// Which rows are non-null, for counting without a per-row loop.
    pub fn validity(&self) -> Validity {
        let nulls = match self {
            TextColumn::Utf8(a) => a.logical_nulls(),
            TextColumn::LargeUtf8(a) => a.logical_nulls(),
            TextColumn::Utf8View(a) => a.logical_nulls(),
            TextColumn::Scalar(Some(_)) => return Validity::AllValid,
            TextColumn::Scalar(None) => return Validity::AllNull,
        };
        match nulls {
            Some(n) if n.null_count() > 0 => Validity::Mask(n.inner().clone()),
            _ => Validity::AllValid,
        }
    }
}

/// The non-null rows of a [`TextColumn`].
#[derive(Debug, Clone)]
pub enum Validity {
    AllValid,
    AllNull,
    Mask(arrow::buffer::BooleanBuffer),
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{DictionaryArray, Float64Array, Int64Array, ListArray};
    use arrow::datatypes::{Int32Type, Int8Type};

    #[test]
    fn packed_bytes_are_their_low_bits() {
        // Every byte value at every place, so that any carry between the eight products of
        // a word, or a high bit leaking, would show.
        for value in 0..=255u8 {
            for place in 0..64 {
                let mut bytes = [0u8; 64];
                bytes[place] = value;
                assert_eq!(pack_bytes(&bytes), u64::from(value & 1) << place);
                let mut ones = [1u8; 64];
                ones[place] = value;
                let want = !(u64::from(value & 1 == 0) << place);
                assert_eq!(pack_bytes(&ones), want, "{value} at {place}");
            }
        }
        let bytes: [u8; 64] = std::array::from_fn(|j| (j * 37 % 11) as u8);
        let want = (0..64).fold(0u64, |w, j| w | u64::from(bytes[j] & 1) << j);
        assert_eq!(pack_bytes(&bytes), want);
    }

    #[test]
    fn numbers_become_their_display_text() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None, Some(-1)]));
        let t = to_text(&a, "x").unwrap();
        let c = TextColumn::new(t.as_ref(), "x").unwrap();
        assert_eq!(
            (c.get(0), c.get(1), c.get(2)),
            (Some("3"), None, Some("-1"))
        );
        let a: ArrayRef = Arc::new(Float64Array::from(vec![0.5, 1.0]));
        let t = to_text(&a, "x").unwrap();
        let c = TextColumn::new(t.as_ref(), "x").unwrap();
        assert_eq!((c.get(0), c.get(1)), (Some("0.5"), Some("1.0")));
    }

    #[test]
    fn dates_become_their_iso_text() {
        let a: ArrayRef = Arc::new(arrow::array::Date32Array::from(vec![Some(20_417), None]));
        let t = to_text(&a, "x").unwrap();
        let c = TextColumn::new(t.as_ref(), "x").unwrap();
        assert_eq!((c.get(0), c.get(1)), (Some("2025-11-25"), None));
    }

    #[test]
    fn dictionaries_unpack() {
        let d: DictionaryArray<Int8Type> = vec![Some("a"), None, Some("b"), Some("a")]
            .into_iter()
            .collect();
        let a: ArrayRef = Arc::new(d);
        let t = to_text(&a, "x").unwrap();
        let c = TextColumn::new(t.as_ref(), "x").unwrap();
        assert_eq!((c.get(0), c.get(1), c.get(3)), (Some("a"), None, Some("a")));
    }

    #[test]
    fn readable_as_text_matches_to_text() {
        use arrow::array::new_empty_array;
        use arrow::datatypes::Field;
        let types = [
            DataType::Utf8,
            DataType::LargeUtf8,
            DataType::Utf8View,
            DataType::Int64,
            DataType::Float32,
            DataType::Boolean,
            DataType::Decimal128(10, 2),
            DataType::Null,
            DataType::Date32,
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            DataType::Binary,
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            DataType::Struct(vec![Field::new("a", DataType::Utf8, true)].into()),
        ];
        for t in types {
            let a = new_empty_array(&t);
            assert_eq!(readable_as_text(&t), to_text(&a, "x").is_ok(), "{t}");
        }
    }

    #[test]
    fn nested_types_are_rejected_with_their_type() {
        let l = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)])]);
        let a: ArrayRef = Arc::new(l);
        assert_eq!(
            to_text(&a, "column `choices`").unwrap_err().to_string(),
            "column `choices` has type List(Int32), which cannot be read as text"
        );
    }
}

/// A column that cannot be read as text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TextError {
    /// A column of a type that has no text form (nested or binary).
    #[error("{input} has type {data_type}, which cannot be read as text")]
    Type { input: String, data_type: String },
    /// Arrow failed to convert the column.
    #[error("arrow: {0}")]
    Arrow(String),
}

impl From<arrow::error::ArrowError> for TextError {
    fn from(e: arrow::error::ArrowError) -> Self {
        TextError::Arrow(e.to_string())
    }
}

/// The validity of `len` rows as 64-row words, the last one padded (all set without a null
/// buffer): for loops that score 64 rows at a time and apply nulls per word.
pub fn valid_words(nulls: Option<&arrow::buffer::NullBuffer>, len: usize) -> Vec<u64> {
    match nulls {
        Some(n) => n.inner().bit_chunks().iter_padded().collect(),
        None => vec![u64::MAX; len.div_ceil(64)],
    }
}

/// Bit `j` of the word is the low bit of `bytes[j]`. Loops that decide 64 rows at a time
/// write each row's verdict as a byte and pack them here, eight per multiplication: shifting
/// each verdict into the word instead costs a shift by a variable and a dependent `or` per
/// row, and keeps the loop from being vectorized.
#[inline]
pub fn pack_bytes(bytes: &[u8; 64]) -> u64 {
    let mut word = 0;
    for (k, eight) in bytes.as_chunks::<8>().0.iter().enumerate() {
        let x = u64::from_le_bytes(*eight) & 0x0101_0101_0101_0101;
        // Byte i's bit lands on bit 56 + i of the product; no two partial products meet
        // (or carry) there.
        word |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    word
}

/// One bit per string view, `f` of the view, as a [`arrow::buffer::BooleanBuffer`]: a loop
/// over the views 64 at a time, where arrow's `collect_bool` calls a closure with each row's
/// index (which then bounds-checks every access). The kernels' view paths decide most rows
/// from the 16-byte view alone (length, first four bytes, or the whole inline text).
pub fn view_bits(views: &[u128], mut f: impl FnMut(u128) -> bool) -> arrow::buffer::BooleanBuffer {
    let words: Vec<u64> = views
        .chunks(64)
        .map(|chunk| {
            let mut bytes = [0u8; 64];
            for (b, &v) in bytes.iter_mut().zip(chunk) {
                *b = u8::from(f(v));
            }
            pack_bytes(&bytes)
        })
        .collect();
    arrow::buffer::BooleanBuffer::new(arrow::buffer::Buffer::from_vec(words), 0, views.len())
}
