//! The kernel contract. Every column kernel is
//! `fn(batch: Batch<'_>, <its other input and options>) -> Result<Scored, KernelError>`, as
//! arrow's kernels are `fn(&dyn Datum, &dyn Datum) -> Result<BooleanArray, ArrowError>`:
//!
//! - [`Batch`]: the scored value column (any string layout, or a scalar), the `normalize:`
//!   steps that apply to both sides of the comparison, and the row count;
//! - [`Scored`]: the pass mask, with a score or a text per row where the kernel has one, and
//!   the count of rows with a null input.
//!
//! A kernel's general path is a function of one row's texts. The driver ([`Batch::rows`] and
//! its siblings, then [`Rows::pass`], [`Rows::explained`] or [`Rows::graded`]) runs it over
//! the batch: it reads each row through [`TextColumn`] (Utf8, LargeUtf8, Utf8View or a
//! scalar), counts a row whose value or other input is null as missing (it fails, and its text
//! is null), and hands the function both sides after `normalize:`. Fast paths (arrow's `eq`,
//! the decisions from string views) are specialisations inside a kernel, taken before the
//! general path when the batch has their shape, with the same result.

use crate::expected::{Expected, ExpectedRows};
use crate::normalize::Normalizer;
pub(crate) use crate::side::{normalize, Item, Optional, RawText, Side, TextSide};
use crate::KernelError;
use arrow::array::{ArrayRef, BooleanArray, Float64Array, StringBuilder};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use evalscore_text::TextColumn;
use std::borrow::Cow;
use std::sync::Arc;

/// What a kernel scores: the value column, the `normalize:` steps (applied to the value and
/// to the other side) and the number of rows.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    pub value: TextColumn<'a>,
    pub norm: Option<&'a Normalizer>,
    pub len: usize,
}

/// What a kernel gives for one batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The pass mask: true scores 1.0, false 0.0; no nulls.
    pub is_correct: BooleanArray,
    /// The graded kernels' score in [0, 1] (no nulls; a missing row scores 0.0), of which
    /// `is_correct` is `score >= threshold`.
    pub score: Option<Float64Array>,
    /// The kernel's text per row, where it has one: why the row scored as it did (`details`),
    /// or `string_equals_mcqa`'s `completion_validity`.
    pub details: Option<ArrayRef>,
    /// Rows with a null value or a null other input: they score 0.0.
    pub missing: usize,
}

impl Scored {
    /// A pass mask and its missing count.
    pub(crate) fn pass(is_correct: BooleanBuffer, missing: usize) -> Scored {
        Scored {
            is_correct: BooleanArray::new(is_correct, None),
            score: None,
            details: None,
            missing,
        }
    }

    /// The result of a fast path that decided every row as `hits`, valid or not: true where
    /// the row is valid and `hit != negate`; the other rows are missing.
    pub(crate) fn from_hits(
        hits: &BooleanBuffer,
        valid: Option<&NullBuffer>,
        negate: bool,
    ) -> Scored {
        let pass = if negate { !hits } else { hits.clone() };
        match valid {
            Some(v) => Scored::pass(&pass & v.inner(), v.null_count()),
            None => Scored::pass(pass, 0),
        }
    }

    /// The details as text (the kernels whose `details` are Utf8).
    #[cfg(test)]
    pub(crate) fn details_text(&self) -> Vec<Option<&str>> {
        use arrow::array::AsArray;
        match &self.details {
            Some(d) => d.as_string::<i32>().iter().collect(),
            None => Vec::new(),
        }
    }
}

impl<'a> Batch<'a> {
    pub fn new(value: TextColumn<'a>, norm: Option<&'a Normalizer>, len: usize) -> Self {
        Batch { value, norm, len }
    }

    /// `s` after the `normalize:` steps.
    pub fn normalize<'s>(&self, s: &'s str) -> Cow<'s, str> {
        normalize(self.norm, s)
    }

    /// The rows, scored on the value alone.
    pub(crate) fn rows(self) -> Rows<'a, ()> {
        Rows {
            batch: self,
            side: (),
        }
    }

    /// The rows against another text column; a row where it is null is missing.
    pub(crate) fn with_text(self, other: TextColumn<'a>) -> Rows<'a, TextSide<'a>> {
        let side = TextSide::new(other, self.norm);
        Rows { batch: self, side }
    }

    /// The rows against another text column read as it is (not normalized: the kernel
    /// normalizes what it needs); a row where it is null is missing.
    pub(crate) fn with_raw_text(self, other: TextColumn<'a>) -> Rows<'a, RawText<'a>> {
        Rows {
            batch: self,
            side: RawText(other),
        }
    }

    /// The rows against another text column that may be null: the row function gets `None`
    /// there, and the row is not missing.
    pub(crate) fn with_optional_text(
        self,
        other: TextColumn<'a>,
    ) -> Rows<'a, Optional<TextSide<'a>>> {
        let side = Optional(TextSide::new(other, self.norm));
        Rows { batch: self, side }
    }

    /// The rows against their expected strings; a row whose expected cell is null is missing.
    pub(crate) fn with_expected(
        self,
        expected: Expected<'a>,
    ) -> Result<Rows<'a, ExpectedRows<'a>>, KernelError> {
        let side = ExpectedRows::new(expected, self.norm)?;
        Ok(Rows { batch: self, side })
    }
}

/// A batch's rows with the kernel's other input: the driver.
pub(crate) struct Rows<'a, S> {
    batch: Batch<'a>,
    side: S,
}

impl<S: Side> Rows<'_, S> {
    /// Runs `row` over every row whose value and other input are both present (the value
    /// after `normalize:`) and `missing` over every other row, handing each result to `push`
    /// in row order. Returns the missing count. The one loop every kernel's general path
    /// runs in.
    fn drive<T>(
        self,
        mut row: impl FnMut(usize, &str, Item<'_, S>) -> Result<T, KernelError>,
        mut missing: impl FnMut(usize) -> T,
        mut push: impl FnMut(usize, T),
    ) -> Result<usize, KernelError> {
        let Rows { batch, mut side } = self;
        let mut count = 0;
        for r in 0..batch.len {
            let out = match batch.value.get(r) {
                Some(v) => match side.get(r) {
                    Some(e) => row(r, &normalize(batch.norm, v), e)?,
                    None => {
                        count += 1;
                        missing(r)
                    }
                },
                None => {
                    count += 1;
                    missing(r)
                }
            };
            push(r, out);
        }
        Ok(count)
    }

    /// A pass bit per row from `row`; a missing row fails.
    pub fn pass(
        self,
        mut row: impl FnMut(usize, &str, Item<'_, S>) -> bool,
    ) -> Result<Scored, KernelError> {
        self.try_pass(|r, v, e| Ok(row(r, v, e)))
    }

    /// [`Rows::pass`] with a row function that may fail: the first error is the kernel's.
    pub fn try_pass(
        self,
        row: impl FnMut(usize, &str, Item<'_, S>) -> Result<bool, KernelError>,
    ) -> Result<Scored, KernelError> {
        let len = self.batch.len;
        let mut words = vec![0u64; len.div_ceil(64)];
        let missing = self.drive(
            row,
            |_| false,
            |r, pass| {
                words[r / 64] |= u64::from(pass) << (r % 64);
            },
        )?;
        let bits = BooleanBuffer::new(Buffer::from_vec(words), 0, len);
        Ok(Scored::pass(bits, missing))
    }

    /// A pass bit and a text per row from `row`; a missing row fails with the text
    /// `missing` gives it (null for most kernels).
    pub fn explained(
        self,
        row: impl FnMut(usize, &str, Item<'_, S>) -> (bool, Cow<'static, str>),
        mut missing: impl FnMut(usize) -> Option<Cow<'static, str>>,
    ) -> Result<Scored, KernelError> {
        let len = self.batch.len;
        let mut words = vec![0u64; len.div_ceil(64)];
        let mut details = StringBuilder::with_capacity(len, len * 16);
        let mut row = row;
        let count = self.drive(
            |r, v, e| {
                let (pass, text) = row(r, v, e);
                Ok((pass, Some(text)))
            },
            |r| (false, missing(r)),
            |r, (pass, text)| {
                words[r / 64] |= u64::from(pass) << (r % 64);
                details.append_option(text);
            },
        )?;
        let mut out = Scored::pass(BooleanBuffer::new(Buffer::from_vec(words), 0, len), count);
        out.details = Some(Arc::new(details.finish()));
        Ok(out)
    }

    /// A score per row from `row`, and `is_correct = score >= threshold`; a missing row
    /// scores 0.0.
    pub fn graded(
        self,
        threshold: f64,
        mut row: impl FnMut(usize, &str, Item<'_, S>) -> f64,
    ) -> Result<Scored, KernelError> {
        let len = self.batch.len;
        let mut scores = Vec::with_capacity(len);
        let missing = self.drive(|r, v, e| Ok(row(r, v, e)), |_| 0.0, |_, s| scores.push(s))?;
        let pass = BooleanBuffer::collect_bool(len, |r| scores[r] >= threshold);
        let mut out = Scored::pass(pass, missing);
        out.score = Some(Float64Array::from(scores));
        Ok(out)
    }
}

/// The rows (within a batch) where either column is null: a two-column kernel's missing
/// rows, counted from the validity bitmaps rather than row by row (the fast paths that do not
/// run the driver's loop count them so).
pub fn missing_count(a: &TextColumn<'_>, b: &TextColumn<'_>, len: usize) -> usize {
    use evalscore_text::Validity;
    match (a.validity(), b.validity()) {
        (Validity::AllNull, _) | (_, Validity::AllNull) => len,
        (Validity::AllValid, Validity::AllValid) => 0,
        (Validity::Mask(m), Validity::AllValid) | (Validity::AllValid, Validity::Mask(m)) => {
            len - m.count_set_bits()
        }
        (Validity::Mask(a), Validity::Mask(b)) => len - (&a & &b).count_set_bits(),
    }
}
