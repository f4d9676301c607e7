//! Graded scorers over Arrow columns: a [`Lexical`] similarity per row as `score` (Float64
//! in [0, 1]) and `is_correct` (`score >= threshold`).

use crate::contract::{Batch, Scored};
use crate::expected::{Expected, Strings};
use crate::lexical::Lexical;
use crate::KernelError;

/// Scores every row: `measure` of the value against its expected strings (the best of them,
/// see [`Lexical::score`]), both after `normalize:`.
///
/// Null rule: a null value or a null expected cell scores 0.0, fails, and counts as missing.
/// An empty list of expected strings scores 0.0 (not missing).
pub fn graded(
    batch: Batch<'_>,
    expected: Expected<'_>,
    measure: Lexical,
    threshold: f64,
) -> Result<Scored, KernelError> {
    graded_by(batch, expected, threshold, |v, refs| match refs {
        Strings::One(r) => measure.score(v, std::slice::from_ref(&r)),
        Strings::Many(l) => measure.score(v, l),
    })
}

/// [`graded`] with any measure: `score(value, expected strings)` of each row that has both
/// (after `normalize:`), called with rows in order. `similarity` by embedding uses it twice:
/// once to collect the texts to embed, once to score with their vectors.
pub fn graded_by(
    batch: Batch<'_>,
    expected: Expected<'_>,
    threshold: f64,
    mut score: impl FnMut(&str, Strings<'_>) -> f64,
) -> Result<Scored, KernelError> {
    batch
        .with_expected(expected)?
        .graded(threshold, |_, v, refs| score(v, refs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expected::Needles;
    use crate::lexical::RougeVariant;
    use arrow::array::{Array, LargeStringArray, StringArray, StringViewArray};
    use evalscore_text::TextColumn;

    #[test]
    fn every_layout_and_nulls() {
        let values = [Some("the cat sat"), None, Some(""), Some("a dog")];
        let expected = [
            Some("cat sat"),
            Some("x"),
            Some("y"),
            Some(r#"["dog", "cat"]"#),
        ];
        let (u, l, v) = (
            StringArray::from(values.to_vec()),
            LargeStringArray::from(values.to_vec()),
            StringViewArray::from(values.to_vec()),
        );
        let e = StringViewArray::from(expected.to_vec());
        for a in [&u as &dyn Array, &l, &v] {
            let col = TextColumn::new(a, "v").unwrap();
            let out = graded(
                Batch::new(col, None, 4),
                Expected::PerRow(&e),
                Lexical::F1,
                0.5,
            )
            .unwrap();
            assert_eq!(
                out.score.as_ref().unwrap().values().to_vec(),
                [1.0, 0.0, 0.0, 1.0]
            );
            assert_eq!(out.missing, 1);
            assert_eq!(
                out.is_correct.iter().collect::<Vec<_>>(),
                [Some(true), Some(false), Some(false), Some(true)]
            );
            let fixed = Needles::new(["cat"], None);
            let out = graded(
                Batch::new(col, None, 4),
                Expected::Fixed(&fixed),
                Lexical::Rouge(RougeVariant::Rouge1),
                0.6,
            )
            .unwrap();
            assert_eq!(
                out.score.as_ref().unwrap().values().to_vec(),
                [0.5, 0.0, 0.0, 0.0]
            );
            assert_eq!(out.is_correct.true_count(), 0);
        }
    }
}
