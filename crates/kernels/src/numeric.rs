//! `numeric_match`: the number in the value against the expected number, within a tolerance.

use crate::contract::{Batch, Scored};
use crate::extract::{last_number, last_number_match};
use crate::KernelError;
use evalscore_text::TextColumn;

/// The number of a text as `extract: last_number` reads it: the last number, without `$` and
/// thousands commas (`"$1,234.50"` is 1234.5).
pub fn number_of(s: &str) -> Option<f64> {
    last_number(s)?.parse::<f64>().ok()
}

/// How `numeric_match` reads the number of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NumberReading {
    /// A `-` or `+` separated by spaces from the number is its sign (`- 8.97` is -8.97) when
    /// the sign opens the text, follows an operator or `=` (`x = - 3`, `2 * - 3`), or stands
    /// on the right of an `=` (`y = 0.91x - 8.97`). Off (Inspect AI's reading): only a `-`
    /// written against the number counts.
    pub spaced_sign: bool,
}

/// Characters after which a spaced `-` is a sign rather than a dash between two things.
const OPERATORS: &[char] = &[
    '=', '+', '-', '*', '/', '×', '÷', '^', '(', '[', '<', '>', '≈',
];

impl NumberReading {
    /// The number of `s`: [`number_of`], then the spaced sign when it is read.
    pub fn number_of(self, s: &str) -> Option<f64> {
        if !self.spaced_sign {
            return number_of(s);
        }
        let m = last_number_match(s)?;
        let n = last_number(m.as_str())?.parse::<f64>().ok()?;
        if m.as_str().starts_with('-') {
            return Some(n);
        }
        let before = &s[..m.start()];
        let spaced = before.trim_end();
        if spaced.len() == before.len() {
            return Some(n);
        }
        let Some(sign) = spaced.chars().last().filter(|c| matches!(c, '-' | '+')) else {
            return Some(n);
        };
        let lead = spaced[..spaced.len() - 1].trim_end();
        let is_sign = lead.is_empty() || lead.ends_with(OPERATORS) || lead.contains('=');
        Some(if is_sign && sign == '-' { -n } else { n })
    }
}

/// How close two numbers must be to match: Python's `math.isclose` rule,
/// `|v - e| <= max(rel * max(|v|, |e|), abs)`. Both 0: exact equality.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tolerance {
    pub abs: f64,
    pub rel: f64,
}

impl Tolerance {
    pub fn close(&self, v: f64, e: f64) -> bool {
        v == e || (v - e).abs() <= (self.rel * v.abs().max(e.abs())).max(self.abs)
    }
}

/// `numeric_match`: 1.0 when the number of the value ([`number_of`], on the value after
/// `extract:` and `normalize:`) is within `tol` of the expected number. A value that holds no
/// number scores 0.0.
///
/// Null rule: a null value or a null expected scores 0.0 and counts as missing. An expected
/// text that holds no number is an error naming its row.
pub fn numeric_match(
    batch: Batch<'_>,
    expected: TextColumn<'_>,
    tol: Tolerance,
) -> Result<Scored, KernelError> {
    numeric_match_with(batch, expected, tol, NumberReading::default())
}

/// [`numeric_match()`] with the numbers of both sides read as `reading` says.
pub fn numeric_match_with(
    batch: Batch<'_>,
    expected: TextColumn<'_>,
    tol: Tolerance,
    reading: NumberReading,
) -> Result<Scored, KernelError> {
    // The expected text is read as it is (the error shows it so) and parsed once per run of
    // equal texts.
    let mut last: Option<(&str, f64)> = None;
    batch.with_raw_text(expected).try_pass(|r, v, e| {
        let want = match last {
            Some((text, n)) if text == e => n,
            _ => {
                let n =
                    reading
                        .number_of(&batch.normalize(e))
                        .ok_or_else(|| KernelError::Value {
                            row: r,
                            input: "expected".to_owned(),
                            value: e.to_owned(),
                            message: "holds no number".to_owned(),
                        })?;
                last = Some((e, n));
                n
            }
        };
        Ok(reading.number_of(v).is_some_and(|got| tol.close(got, want)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_columns::{bits, layouts};
    use arrow::array::StringArray;

    #[test]
    fn numeric_match_rows() {
        let values = [
            Some("The answer is $1,234.50."),
            Some("about 3.14159"),
            Some("no number"),
            None,
            Some("-5 degrees"),
            Some("100"),
        ];
        let expected = StringArray::from(vec!["1234.5", "3.14", "1", "1", "-5", "101"]);
        let ec = TextColumn::new(&expected, "e").unwrap();
        for a in layouts(&values) {
            let vc = TextColumn::new(a.as_ref(), "v").unwrap();
            // (absolute, relative) tolerance, and the rows that match under it.
            let cases = [
                ((0.0, 0.0), [true, false, false, false, true, false]),
                ((0.01, 0.0), [true, true, false, false, true, false]),
                ((0.0, 0.01), [true, true, false, false, true, true]),
            ];
            for ((abs, rel), want) in cases {
                let tol = Tolerance { abs, rel };
                let out = numeric_match(Batch::new(vc, None, 6), ec, tol).unwrap();
                assert_eq!(bits(&out.is_correct), want, "abs {abs}, rel {rel}");
                assert_eq!(out.missing, 1);
            }
        }
        let bad = StringArray::from(vec!["1", "1", "one"]);
        let v = StringArray::from(vec!["1", "1", "1"]);
        let err = numeric_match(
            Batch::new(TextColumn::new(&v, "v").unwrap(), None, 3),
            TextColumn::new(&bad, "e").unwrap(),
            Tolerance::default(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "expected value \"one\" holds no number");
    }
}
