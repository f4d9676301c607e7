//! The value model: how every metric reads its inputs, in one place. The registry's
//! [`About::reads`](crate::About) says what each input of a metric type is
//! ([`ValueKind`]); [`prepare`] reads every batch's inputs that way before any state sees
//! them (the [`crate::Accumulator`] of every state calls it), so no metric type turns
//! values into labels or numbers on its own.
//!
//! **Labels compare by value.** A label is the canonical text of its value ([`label`]):
//! - numbers of any type (integers, unsigned, floats, decimals) and booleans (`true` is 1)
//!   are numbers; a whole number is written as its digits (`1`, `-3`,
//!   `10000000000000000`), any other as the shortest decimal that reads back as it, in
//!   exponent form when very large or small (`0.5`, `1e-7`, `1e300`), infinities as `inf`
//!   and `-inf`; `-0.0` is `0`; a Float32 value is the decimal it was written as (`0.1`),
//!   not its binary expansion;
//! - text that reads as a JSON number or a boolean (`2`, `2.0`, `-1e3`, `true`, `False`),
//!   once surrounding ASCII spaces are trimmed, is that number; other text is itself,
//!   spaces included (`01`, `+5`, `.5`, `yes`, ` yes`);
//! - NaN and null are missing: no label.
//!
//! The same text is what metrics.parquet and confusion.parquet show, whatever type a side
//! arrived as, so one value has one label across columns, files and options
//! (`positive_answer: 2`, `2.0` and `"2"` are one answer). Numbers are read as Float64
//! (booleans stay a 0/1 mask for the popcount paths), text that reads as a number as that
//! number. `group_by` keys and bootstrap row keys are identities, not values: they keep
//! their own type's text ([`key_text`]).

use crate::MetricError;
use arrow::array::{
    make_array, Array, ArrayRef, AsArray, Float64Array, StringArray, StringViewBuilder,
};
use arrow::compute::{cast, take};
use arrow::datatypes::{DataType, Float64Type};
use evalscore_task::MetricReads;
use evalscore_text::TextColumn;
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Most distinct labels a state remembers among the rows it excluded (per group): the
/// smallest in byte order, so that merging in any order keeps the same ones.
pub const MAX_SEEN_LABELS: usize = 20;

/// What one input of a metric is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Labels compared by value ([`label_array`]).
    Label,
    /// Numbers ([`number_array`]).
    Number,
    /// Text as it is, numbers as their label: answers whose length is measured.
    Text,
    /// An identity, in its own type's text ([`key_text`]): row keys.
    Key,
    /// As it is: user code reads it.
    Raw,
}

/// What the inputs of a metric that reads `reads` are, in order; inputs past these are row
/// keys ([`ValueKind::Key`]).
pub fn kinds(reads: MetricReads) -> &'static [ValueKind] {
    use ValueKind::*;
    match reads {
        MetricReads::Numbers => &[Number],
        MetricReads::Labels => &[Label],
        MetricReads::Values => &[Raw],
        MetricReads::Pair => &[Label, Label],
        MetricReads::NumberPair => &[Number, Number],
        MetricReads::ScoreTruth => &[Number, Number],
        MetricReads::FieldGroup => &[Number, Label],
        MetricReads::Battle => &[Label, Label, Label],
        MetricReads::Lengths => &[Label, Text, Text, Number],
    }
}

/// The inputs of one batch read as a metric that reads `reads` reads them ([`kinds`]).
/// An input that is already in its form is passed on as it is (the same buffers), so
/// memos keyed by buffers still recognise it.
pub fn prepare(reads: MetricReads, inputs: &[&dyn Array]) -> Result<Vec<ArrayRef>, MetricError> {
    let declared = kinds(reads);
    inputs
        .iter()
        .enumerate()
        .map(
            |(i, a)| match declared.get(i).copied().unwrap_or(ValueKind::Key) {
                ValueKind::Label => label_array(*a),
                ValueKind::Number => number_array(*a),
                ValueKind::Text => text_array(*a),
                ValueKind::Key | ValueKind::Raw => Ok(make_array(a.to_data())),
            },
        )
        .collect()
}

/// The canonical label of a value written as text (an option such as `positive_answer`,
/// an entry of `labels:`, or a cell of a text column); see the module doc.
pub fn label(text: &str) -> Cow<'_, str> {
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if t.eq_ignore_ascii_case("true") {
        return Cow::Borrowed("1");
    }
    if t.eq_ignore_ascii_case("false") {
        return Cow::Borrowed("0");
    }
    if !is_json_number(t) {
        return Cow::Borrowed(text);
    }
    let written = match t.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        false => match t.parse::<i128>() {
            Ok(i) => i.to_string(),
            Err(_) => number_label(t.parse().unwrap_or(f64::NAN)).unwrap_or_default(),
        },
        true => number_label(t.parse().unwrap_or(f64::NAN)).unwrap_or_default(),
    };
    match written == text {
        true => Cow::Borrowed(text),
        false => Cow::Owned(written),
    }
}

/// The label of a number; `None` for NaN (a missing value).
pub fn number_label(x: f64) -> Option<String> {
    if x.is_nan() {
        return None;
    }
    if x.is_infinite() {
        return Some(if x > 0.0 { "inf" } else { "-inf" }.to_owned());
    }
    // Whole numbers within i128 as digits (every f64 there is exact in i128).
    if x.fract() == 0.0 && x.abs() < 1.7e38 {
        return Some((x as i128).to_string());
    }
    Some(format!("{x:?}"))
}

/// The label of a Float32 value: the shortest decimal that reads back as the f32.
fn f32_label(x: f32) -> Option<String> {
    match x.is_finite() {
        true => number_label(format!("{x:?}").parse().unwrap_or(f64::NAN)),
        false => number_label(f64::from(x)),
    }
}

/// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Whether a text might not be its own label: it could read as a number or a boolean.
fn may_rewrite(s: &str) -> bool {
    match s.as_bytes().first() {
        None => false,
        Some(b) if b.is_ascii_digit() || *b == b'-' || b.is_ascii_whitespace() => true,
        Some(b't' | b'T' | b'f' | b'F') => matches!(s.len(), 4 | 5),
        _ => s.as_bytes().last().is_some_and(u8::is_ascii_whitespace),
    }
}

/// Whether every value of a text column is its own label, so the column is passed on as
/// it is. A Utf8View column is checked from its views, where a value's length, first bytes
/// and (up to 12 bytes) last byte sit: only a value that may read as a number or a
/// boolean is read whole.
fn all_own_labels(a: &dyn Array, col: &TextColumn<'_>) -> bool {
    let Some(v) = a.as_string_view_opt() else {
        return (0..a.len()).all(|i| col.get(i).is_none_or(|s| !may_rewrite(s) || label(s) == s));
    };
    let views = v.views();
    (0..v.len()).all(|i| {
        let view = views[i];
        let len = view as u32 as usize;
        if len == 0 || v.is_null(i) {
            return true;
        }
        let first = (view >> 32) as u8;
        let last_inline = (len <= 12).then(|| (view >> (32 + 8 * (len - 1))) as u8);
        let candidate = first.is_ascii_digit()
            || first == b'-'
            || first.is_ascii_whitespace()
            || (matches!(first, b't' | b'T' | b'f' | b'F') && matches!(len, 4 | 5))
            || last_inline.is_none_or(|b| b.is_ascii_whitespace());
        !candidate || {
            let s = v.value(i);
            label(s) == s
        }
    })
}

/// A column's labels as text (Utf8 or Utf8View, or a dictionary of Utf8 labels), null where
/// a value is null or NaN. A text column whose every value is its own label is passed on as
/// it is. States that read a label per row take it through [`per_row`].
pub fn label_array(a: &dyn Array) -> Result<ArrayRef, MetricError> {
    let t = a.data_type();
    match t {
        DataType::Dictionary(_, _) => {
            // Still a dictionary, of the values' labels: `frequency` counts its keys.
            let d = a.as_any_dictionary();
            let mut values = label_array(d.values().as_ref())?;
            if *values.data_type() == DataType::Utf8View {
                values = cast(&values, &DataType::Utf8)?;
            }
            Ok(d.with_values(values))
        }
        DataType::Null => Ok(Arc::new(StringArray::new_null(a.len()))),
        DataType::Boolean => {
            let b = a.as_boolean();
            Ok(Arc::new(views(a.len(), |i| {
                b.is_valid(i).then(|| if b.value(i) { "1" } else { "0" })
            })))
        }
        DataType::Float16 | DataType::Float32 => {
            let f = cast(a, &DataType::Float32)?;
            let f = f.as_primitive::<arrow::datatypes::Float32Type>();
            Ok(Arc::new(float_views(
                a.len(),
                |i| f.is_valid(i).then(|| f64::from(f.value(i))),
                |x| f32_label(x as f32),
            )))
        }
        t if t.is_floating()
            || matches!(
                t,
                DataType::Decimal32(..)
                    | DataType::Decimal64(..)
                    | DataType::Decimal128(..)
                    | DataType::Decimal256(..)
            ) =>
        {
            let f = cast(a, &DataType::Float64)?;
            let f = f.as_primitive::<Float64Type>();
            Ok(Arc::new(float_views(
                a.len(),
                |i| f.is_valid(i).then(|| f.value(i)),
                number_label,
            )))
        }
        t if t.is_integer() => Ok(cast(a, &DataType::Utf8)?),
        _ if evalscore_text::readable_as_text(t) => {
            let col = TextColumn::new(a, "labels")?;
            if all_own_labels(a, &col) {
                return Ok(make_array(a.to_data()));
            }
            Ok(Arc::new(views(a.len(), |i| col.get(i).map(label))))
        }
        _ => Ok(cast(a, &DataType::Utf8)?),
    }
}

/// A column read as numbers: numeric columns and boolean masks as they are (states read
/// them with [`numbers`]), text that reads as numbers as Float64 (other text is an error
/// naming it), dictionaries through their values.
pub fn number_array(a: &dyn Array) -> Result<ArrayRef, MetricError> {
    let t = a.data_type();
    match t {
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            let values = number_array(d.values().as_ref())?;
            let keys = cast(d.keys(), &DataType::UInt32)?;
            Ok(take(values.as_ref(), &keys, None)?)
        }
        t if t.is_numeric() || *t == DataType::Boolean || *t == DataType::Null => {
            Ok(make_array(a.to_data()))
        }
        _ if evalscore_text::readable_as_text(t) => {
            let col = TextColumn::new(a, "numbers")?;
            let out = (0..a.len())
                .map(|i| match col.get(i) {
                    None => Ok(None),
                    Some(s) => text_number(s).map(Some).ok_or_else(|| {
                        MetricError::Invalid(format!(
                            "a numeric metric needs numbers, got the text {s:?}"
                        ))
                    }),
                })
                .collect::<Result<Float64Array, MetricError>>()?;
            Ok(Arc::new(out))
        }
        t => Err(MetricError::Invalid(format!(
            "a numeric metric needs numbers, got values of type {t}"
        ))),
    }
}

/// The number a text reads as (see the module doc), if any.
fn text_number(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    if t.eq_ignore_ascii_case("true") {
        return Some(1.0);
    }
    if t.eq_ignore_ascii_case("false") {
        return Some(0.0);
    }
    is_json_number(t).then(|| t.parse().ok()).flatten()
}

/// A numeric input read as Float64 (after [`prepare`]: numbers, booleans as 0/1).
pub(crate) fn numbers(values: &dyn Array) -> Result<Float64Array, MetricError> {
    match values.data_type() {
        DataType::Float64 => Ok(values.as_primitive::<Float64Type>().clone()),
        t if t.is_numeric() || *t == DataType::Boolean || *t == DataType::Null => {
            let c = cast(values, &DataType::Float64)?;
            Ok(c.as_primitive::<Float64Type>().clone())
        }
        t => Err(MetricError::Invalid(format!(
            "a numeric metric needs numbers, got values of type {t}"
        ))),
    }
}

/// Text as it is; numbers as their labels; other types in Arrow's display.
fn text_array(a: &dyn Array) -> Result<ArrayRef, MetricError> {
    let t = match a.data_type() {
        DataType::Dictionary(_, v) => v.as_ref(),
        t => t,
    };
    if t.is_numeric() || *t == DataType::Boolean {
        return per_row(label_array(a)?.as_ref());
    }
    match evalscore_text::readable_as_text(t) {
        true => {
            evalscore_text::to_text(&make_array(a.to_data()), "answers").map_err(MetricError::Text)
        }
        false => Ok(cast(a, &DataType::Utf8)?),
    }
}

/// A label column after [`prepare`], borrowed.
pub(crate) fn column(a: &ArrayRef) -> Result<TextColumn<'_>, MetricError> {
    TextColumn::new(a.as_ref(), "labels").map_err(MetricError::Text)
}

/// A label column after [`prepare`] with one text per row: a dictionary's labels gathered by
/// key as views (no text is copied); any other column as it is.
pub(crate) fn per_row(a: &dyn Array) -> Result<ArrayRef, MetricError> {
    match a.data_type() {
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            let values = cast(d.values(), &DataType::Utf8View)?;
            let keys = cast(d.keys(), &DataType::UInt32)?;
            Ok(take(values.as_ref(), &keys, None)?)
        }
        _ => Ok(make_array(a.to_data())),
    }
}

/// An identity's text in its own type's form, not by value: text as it is, integers as
/// their digits, floats and booleans as Arrow displays a Float64 (`1.0`, `0.5`), other
/// types in Arrow's display. `group_by` keys and bootstrap row keys.
pub fn key_text(a: &dyn Array) -> Result<ArrayRef, MetricError> {
    let t = a.data_type();
    if let DataType::Dictionary(_, v) = t {
        if v.is_numeric() || **v == DataType::Boolean {
            return key_text(cast(a, v)?.as_ref());
        }
    }
    if t.is_integer() {
        return Ok(cast(a, &DataType::Utf8)?);
    }
    if *t == DataType::Boolean
        || t.is_floating()
        || matches!(
            t,
            DataType::Decimal32(..)
                | DataType::Decimal64(..)
                | DataType::Decimal128(..)
                | DataType::Decimal256(..)
        )
    {
        return Ok(cast(&cast(a, &DataType::Float64)?, &DataType::Utf8)?);
    }
    match evalscore_text::readable_as_text(t) {
        true => {
            evalscore_text::to_text(&make_array(a.to_data()), "labels").map_err(MetricError::Text)
        }
        false => Ok(cast(a, &DataType::Utf8)?),
    }
}

/// A Utf8View column of one label per row (`None` a missing value).
fn views<S: AsRef<str>>(
    len: usize,
    value: impl Fn(usize) -> Option<S>,
) -> arrow::array::StringViewArray {
    let mut b = StringViewBuilder::with_capacity(len);
    for i in 0..len {
        b.append_option(value(i));
    }
    b.finish()
}

/// The labels of a float column, each distinct value written once: label columns hold few
/// distinct values, so the per-row work is a lookup (at most [`MEMO`] values are kept; a
/// column with more writes the others per row).
fn float_views(
    len: usize,
    value: impl Fn(usize) -> Option<f64>,
    write: impl Fn(f64) -> Option<String>,
) -> arrow::array::StringViewArray {
    let mut memo: std::collections::HashMap<u64, Option<String>> = std::collections::HashMap::new();
    let mut b = StringViewBuilder::with_capacity(len);
    for i in 0..len {
        let Some(x) = value(i) else {
            b.append_null();
            continue;
        };
        let bits = x.to_bits();
        let label = match memo.get(&bits) {
            Some(l) => l.clone(),
            None => {
                let l = write(x);
                if memo.len() < MEMO {
                    memo.insert(bits, l.clone());
                }
                l
            }
        };
        b.append_option(label);
    }
    b.finish()
}

/// Most distinct values [`float_views`] remembers per column.
const MEMO: usize = 4096;

/// Distinct labels seen in excluded rows that the metric did not expect: at most
/// [`MAX_SEEN_LABELS`], the smallest in byte order, and whether there were more.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeenLabels {
    labels: BTreeSet<String>,
    more: bool,
}

impl SeenLabels {
    /// Notes one label.
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

    /// Folds another's labels in.
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

    /// The labels kept, quoted and joined (`"x", "y", ...`), or `none`.
    pub fn listed(&self) -> String {
        let mut seen: Vec<String> = self.labels().map(|l| format!("{l:?}")).collect();
        if self.more {
            seen.push("...".to_owned());
        }
        match seen.is_empty() {
            true => "none".to_owned(),
            false => seen.join(", "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_one_label() {
        for (text, want) in [
            ("1", "1"),
            ("1.0", "1"),
            ("true", "1"),
            ("TRUE", "1"),
            (" 1 ", "1"),
            ("-0.0", "0"),
            ("-0", "0"),
            ("2.50", "2.5"),
            ("1e3", "1000"),
            ("1e300", "1e300"),
            ("1e400", "inf"),
            ("0.1", "0.1"),
            ("10000000000000001", "10000000000000001"),
            ("01", "01"),
            ("+5", "+5"),
            (".5", ".5"),
            ("NaN", "NaN"),
            (" yes", " yes"),
            ("yes", "yes"),
        ] {
            assert_eq!(label(text), want, "{text:?}");
        }
        assert_eq!(
            number_label(1e16 + 1.0).as_deref(),
            Some("10000000000000000")
        );
        assert_eq!(number_label(-0.0).as_deref(), Some("0"));
        assert_eq!(number_label(1e-7).as_deref(), Some("1e-7"));
        assert_eq!(number_label(f64::NAN), None);
        assert_eq!(f32_label(0.1).as_deref(), Some("0.1"));
    }

    #[test]
    fn text_columns_pass_through_unless_a_value_is_rewritten() {
        use arrow::array::StringViewArray;
        let long = "a label longer than twelve bytes";
        let values = vec![
            Some("yes"),
            None,
            Some(long),
            Some("1"),
            Some("trueish"),
            Some(" no"),
        ];
        let a = StringViewArray::from(values.clone());
        let out = label_array(&a).unwrap();
        assert_eq!(
            out.to_data().buffers()[0].as_ptr(),
            a.to_data().buffers()[0].as_ptr()
        );
        for odd in [
            "2.0",
            " 2",
            "True",
            "a label longer than twelve bytes but 1 ",
            "12345678901234.0",
        ] {
            let mut v = values.clone();
            v.push(Some(odd));
            let out = label_array(&StringViewArray::from(v)).unwrap();
            let col = column(&out).unwrap();
            assert_eq!(col.get(6), Some(label(odd).as_ref()), "{odd:?}");
            assert_eq!(col.get(2), Some(long));
        }
        assert_eq!(label("12345678901234.0"), "12345678901234");
    }

    #[test]
    fn a_label_is_its_own_label() {
        for x in [0.0, 1.0, -3.0, 0.5, 1e-7, 1e300, 123456.789, f64::INFINITY] {
            let l = number_label(x).unwrap_or_default();
            assert_eq!(label(&l), l.as_str(), "{x}");
        }
    }
}
