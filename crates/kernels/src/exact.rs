//! The value against an expected output: `exact` (equal, with a `details` text) and
//! `pass_fail` (non-empty, and holding it).

use crate::contract::{Batch, Scored};
use crate::normalize::fold_case;
use crate::KernelError;
use evalscore_text::TextColumn;
use memchr::memmem::{self, Finder};
use std::borrow::Cow;

/// The `details` text of `exact` on a pass.
pub const EXACT_PASS: &str = "Exact match: PASS.";
/// The `details` text of `exact` when the expected output is missing (null).
pub const EXACT_NO_EXPECTED: &str =
    "Exact match: FAIL. No expected_output defined for this scenario.";

/// `exact`: strict `==` of value and expected output (after `normalize:`, with the
/// [`crate::normalized_equal`] rule), with a `details` text per row: `Exact match: PASS.`,
/// `Exact match: FAIL. Expected "E", got "V".` (the compared texts, as they are, between
/// double quotes) and [`EXACT_NO_EXPECTED`].
///
/// Null rule: a null expected output fails with [`EXACT_NO_EXPECTED`]; a null value fails
/// with `Exact match: FAIL. Expected "E", got null.` (`null` without quotes, so it cannot be
/// confused with the text "null"). Both count as missing.
pub fn exact(batch: Batch<'_>, expected: TextColumn<'_>) -> Result<Scored, KernelError> {
    let value = batch.value;
    batch.with_text(expected).explained(
        |r, v, e| {
            // `normalized_equal` on the normalized texts: two texts that both normalize to
            // the empty string are equal only when they were equal before.
            if v == e && (!v.is_empty() || value.get(r) == expected.get(r)) {
                (true, Cow::Borrowed(EXACT_PASS))
            } else {
                let text = format!("Exact match: FAIL. Expected \"{e}\", got \"{v}\".");
                (false, Cow::Owned(text))
            }
        },
        |r| {
            Some(match expected.get(r) {
                None => Cow::Borrowed(EXACT_NO_EXPECTED),
                Some(e) => Cow::Owned(format!(
                    "Exact match: FAIL. Expected \"{}\", got null.",
                    batch.normalize(e)
                )),
            })
        },
    )
}

/// `pass_fail`: 1.0 when the (normalized) value is non-empty after trimming and the expected
/// output is a case-insensitive (Unicode case folding) substring of it. It can also run as
/// an output-produced check: without an expected output (no `expected_output`,
/// `TextColumn::Scalar(None)`, or a null cell) a row passes when its value is non-empty after
/// trimming. An empty expected output is a substring of every text, as with Python's `in`,
/// so it too passes any non-empty value.
///
/// Null rule: a null value fails and counts as missing; a null expected output does not.
pub fn pass_fail(batch: Batch<'_>, expected: TextColumn<'_>) -> Result<Scored, KernelError> {
    // A scalar expected output is folded and prepared once.
    let scalar = match expected {
        TextColumn::Scalar(Some(e)) => {
            let e = fold_case(&batch.normalize(e)).into_owned();
            Some(Finder::new(e.as_bytes()).into_owned())
        }
        _ => None,
    };
    batch.with_optional_text(expected).pass(|_, v, e| {
        if v.trim().is_empty() {
            return false;
        }
        let Some(e) = e else {
            return true;
        };
        let v = fold_case(v);
        match &scalar {
            Some(f) => f.find(v.as_bytes()).is_some(),
            None => memmem::find(v.as_bytes(), fold_case(e).as_bytes()).is_some(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::{Normalizer, Step};
    use crate::test_columns::{col, layouts};
    use arrow::array::{Array, ArrayRef, StringArray};
    use std::sync::Arc;

    #[test]
    fn exact_details_over_every_layout() {
        let values = [
            Some("positive"),
            Some("Positive"),
            Some("x"),
            None,
            Some(""),
            Some("日本"),
        ];
        let expected: ArrayRef = Arc::new(StringArray::from(vec![
            Some("positive"),
            Some("positive"),
            None,
            Some("positive"),
            Some(""),
            Some("日本 "),
        ]));
        for a in layouts(&values) {
            let out = exact(Batch::new(col(&a), None, 6), col(&expected)).unwrap();
            assert_eq!(
                crate::score_vec(&out.is_correct),
                [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
            );
            let d: Vec<&str> = out.details_text().into_iter().flatten().collect();
            assert_eq!(
                d,
                [
                    "Exact match: PASS.",
                    "Exact match: FAIL. Expected \"positive\", got \"Positive\".",
                    "Exact match: FAIL. No expected_output defined for this scenario.",
                    "Exact match: FAIL. Expected \"positive\", got null.",
                    "Exact match: PASS.",
                    "Exact match: FAIL. Expected \"日本 \", got \"日本\".",
                ]
            );
            assert_eq!(out.missing, 2);
            assert_eq!(out.details.as_ref().map(|d| d.null_count()), Some(0));
        }
        // With normalize, the normalized texts are compared and shown.
        let n = Normalizer::new(vec![Step::IgnoreCase, Step::Strip]);
        let a: ArrayRef = Arc::new(StringArray::from(vec!["Positive ", "Negative"]));
        let out = exact(
            Batch::new(col(&a), Some(&n), 2),
            TextColumn::scalar(Some("positive")),
        )
        .unwrap();
        let d: Vec<&str> = out.details_text().into_iter().flatten().collect();
        assert_eq!(
            d,
            [
                "Exact match: PASS.",
                "Exact match: FAIL. Expected \"positive\", got \"negative\"."
            ]
        );
        // Both sides normalized away: equal only if they were equal before.
        let p = Normalizer::new(vec![Step::IgnorePunctuation]);
        let a: ArrayRef = Arc::new(StringArray::from(vec!["?!", "?!"]));
        let e: ArrayRef = Arc::new(StringArray::from(vec!["...", "?!"]));
        let out = exact(Batch::new(col(&a), Some(&p), 2), col(&e)).unwrap();
        assert_eq!(crate::score_vec(&out.is_correct), [0.0, 1.0]);
        assert_eq!(
            out.details_text()[0],
            Some("Exact match: FAIL. Expected \"\", got \"\".")
        );
    }

    #[test]
    fn pass_fail_rule() {
        let values = [
            Some("The answer is Paris."),
            Some("   "),
            Some(""),
            None,
            Some("STRASSE"),
            Some("london"),
            Some("paris"),
        ];
        let expected: ArrayRef = Arc::new(StringArray::from(vec![
            Some("paris"),
            Some(""),
            Some("x"),
            Some("x"),
            Some("straße"),
            None,
            Some(""),
        ]));
        for a in layouts(&values) {
            let b = Batch::new(col(&a), None, 7);
            let out = pass_fail(b, col(&expected)).unwrap();
            // A null expected output (row 5) only asks for an output; an empty one (row 6) is
            // a substring of any text.
            assert_eq!(
                crate::score_vec(&out.is_correct),
                [1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
            );
            assert_eq!(out.missing, 1);
            let out = pass_fail(b, TextColumn::scalar(Some("PARIS"))).unwrap();
            assert_eq!(
                crate::score_vec(&out.is_correct),
                [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
            );
            // No expected output, or an empty one: the output-produced check.
            for e in [None, Some("")] {
                let out = pass_fail(b, TextColumn::scalar(e)).unwrap();
                assert_eq!(
                    crate::score_vec(&out.is_correct),
                    [1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
                );
                assert_eq!(out.missing, 1);
            }
        }
    }
}
