//! The text of a label: the one conversion every metric that reads a field as labels uses
//! (classification on either side, `frequency`, `group_by` keys, confusion cells).
//!
//! A column's labels are written in its [`LabelForm`]: text as it is; integers as their
//! digits (`3`, `-1`); floats as Arrow displays them (`1.0`, `0.5`, `1e20`); booleans as the
//! 0/1 scores the scorer kernels return them for (`1.0`, `0.0`), and decimals as floats.
//! Where two sides meet (the two fields of a classification metric, and its
//! `positive_answer`, `negative_answer` and `labels` options) labels compare by value: both
//! are written in the wider form (text < integer < float), so an integer `1`, a float `1.0`,
//! a boolean `true` and the text `true` or `1` read as one label. A text value is rewritten
//! only when it reads as a number or a boolean; other text stays as it is.

use crate::MetricError;
use arrow::array::{make_array, Array, ArrayRef, AsArray, Float64Array, StringArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use evalscore_text::TextColumn;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Most distinct labels a classification state remembers among the rows it excluded (per
/// group): the smallest in byte order, so that merging in any order keeps the same ones.
pub const MAX_SEEN_LABELS: usize = 20;

/// How a column's labels are written, in widening order.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum LabelForm {
    #[default]
    Text,
    Integer,
    Float,
}

impl LabelForm {
    /// The form of a column of type `t` (a dictionary has its values' form).
    pub fn of(t: &DataType) -> LabelForm {
        match t {
            DataType::Dictionary(_, v) => LabelForm::of(v),
            DataType::Boolean
            | DataType::Float16
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..) => LabelForm::Float,
            t if t.is_integer() => LabelForm::Integer,
            _ => LabelForm::Text,
        }
    }
}

/// The labels of a column in its own form.
pub fn labels(a: &dyn Array) -> Result<ArrayRef, MetricError> {
    labels_as(a, LabelForm::of(a.data_type()))
}

/// The labels of a column written in `form`, or in its own form when that is wider.
pub fn labels_as(a: &dyn Array, form: LabelForm) -> Result<ArrayRef, MetricError> {
    let mut a: ArrayRef = make_array(a.to_data());
    let own = LabelForm::of(a.data_type());
    if let DataType::Dictionary(_, v) = a.data_type() {
        if own != LabelForm::Text {
            a = cast(&a, v)?;
        }
    }
    match own.max(form) {
        LabelForm::Text => plain_text(&a),
        wide if own == LabelForm::Text => {
            let text = plain_text(&a)?;
            rewrite(TextColumn::new(text.as_ref(), "labels")?, text.len(), wide)
        }
        LabelForm::Integer => Ok(cast(&a, &DataType::Utf8)?),
        LabelForm::Float => {
            let floats = match a.data_type() {
                DataType::Float16 | DataType::Float32 | DataType::Float64 => a,
                _ => cast(&a, &DataType::Float64)?,
            };
            Ok(cast(&floats, &DataType::Utf8)?)
        }
    }
}

/// A label column (from [`labels`] or [`labels_as`]), borrowed.
pub(crate) fn column(a: &ArrayRef) -> Result<TextColumn<'_>, MetricError> {
    TextColumn::new(a.as_ref(), "labels").map_err(MetricError::Text)
}

/// Text as it is; other types without a numeric form (dates, times) in Arrow's display.
fn plain_text(a: &ArrayRef) -> Result<ArrayRef, MetricError> {
    match evalscore_text::readable_as_text(a.data_type()) {
        true => evalscore_text::to_text(a, "labels").map_err(MetricError::Text),
        false => Ok(cast(a, &DataType::Utf8)?),
    }
}

/// An option's label (`positive_answer`, `negative_answer`, an entry of `labels`) as a
/// column of `form` writes the same value.
pub fn answer_as(answer: &str, form: LabelForm) -> String {
    if form == LabelForm::Text {
        return answer.to_owned();
    }
    let one = StringArray::from(vec![answer]);
    match rewrite(TextColumn::Utf8(&one), 1, form) {
        Ok(a) => a.as_string::<i32>().value(0).to_owned(),
        Err(_) => answer.to_owned(),
    }
}

/// Text values in a numeric form: those that read as a number or a boolean are written as
/// a column of that form writes the value; the others are kept.
fn rewrite(col: TextColumn<'_>, len: usize, form: LabelForm) -> Result<ArrayRef, MetricError> {
    let out: StringArray = match form {
        LabelForm::Text => (0..len).map(|r| col.get(r)).collect(),
        LabelForm::Integer => (0..len)
            .map(|r| {
                col.get(r)
                    .map(|s| integer(s).map_or_else(|| s.to_owned(), |i| i.to_string()))
            })
            .collect(),
        LabelForm::Float => {
            let numbers: Float64Array = (0..len).map(|r| col.get(r).and_then(float)).collect();
            let written = cast(&numbers, &DataType::Utf8)?;
            let written = written.as_string::<i32>();
            (0..len)
                .map(|r| match written.is_valid(r) {
                    true => Some(written.value(r)),
                    false => col.get(r),
                })
                .collect()
        }
    };
    Ok(Arc::new(out))
}

fn boolean(s: &str) -> Option<bool> {
    match s {
        s if s.eq_ignore_ascii_case("true") => Some(true),
        s if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// A text's value as a float: a number, or a boolean as 1 or 0.
fn float(s: &str) -> Option<f64> {
    let s = s.trim();
    boolean(s)
        .map(|b| f64::from(u8::from(b)))
        .or_else(|| s.parse().ok())
}

/// A text's value as an integer: integer digits, a float with no fraction, or a boolean.
fn integer(s: &str) -> Option<i128> {
    let s = s.trim();
    if let Some(b) = boolean(s) {
        return Some(i128::from(b));
    }
    s.parse::<i128>().ok().or_else(|| {
        let f: f64 = s.parse().ok()?;
        // Within the range of the widest integer column (u64, i64), where the value is exact.
        (f.is_finite() && f.fract() == 0.0 && f.abs() < 1.9e19).then_some(f as i128)
    })
}

/// Distinct labels seen in excluded rows that the metric did not expect: at most
/// [`MAX_SEEN_LABELS`], the smallest in byte order, and whether there were more.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeenLabels {
    labels: BTreeSet<String>,
    more: bool,
}

impl SeenLabels {
    pub fn note(&mut self, label: &str) {
        if self.labels.contains(label) {
            return;
        }
        if self.labels.len() >= MAX_SEEN_LABELS
            && self.labels.last().is_some_and(|l| l.as_str() < label)
        {
            self.more = true;
            return;
        }
        self.labels.insert(label.to_owned());
        if self.labels.len() > MAX_SEEN_LABELS {
            self.labels.pop_last();
            self.more = true;
        }
    }

    pub fn merge(&mut self, other: &SeenLabels) {
        self.more |= other.more;
        for l in &other.labels {
            self.note(l);
        }
    }

    /// The labels kept, in byte order.
    pub fn labels(&self) -> impl Iterator<Item = &str> {
        self.labels.iter().map(String::as_str)
    }

    /// Whether more distinct labels were seen than are kept.
    pub fn more(&self) -> bool {
        self.more
    }

    /// The labels written in a wider form, without those `expected` now accepts.
    pub(crate) fn widen(&mut self, form: LabelForm, expected: impl Fn(&str) -> bool) {
        let old = std::mem::take(&mut self.labels);
        for l in old {
            let l = answer_as(&l, form);
            if !expected(&l) {
                self.note(&l);
            }
        }
    }
}
