//! Graded scorers over Arrow columns: a [`Lexical`] similarity per row as `score` (Float64
//! in [0, 1]) and `is_correct` (`score >= threshold`).

use crate::checks::ExpectedReader;
use crate::lexical::Lexical;
use crate::normalize::Normalizer;
use crate::text::TextColumn;
use crate::KernelError;
use arrow::array::{Array, BooleanArray, Float64Array};
use std::borrow::Cow;

/// The expected strings of a graded scorer: the same for every row (a literal or a literal
/// list), or per row (a text column, read as a list when a cell is a JSON or Python list of
/// strings, or a list column).
#[derive(Debug, Clone, Copy)]
pub enum References<'a> {
    Fixed(&'a [String]),
    PerRow(&'a dyn Array),
}

/// The fields of a graded scorer for one batch.
#[derive(Debug, Clone, PartialEq)]
pub struct GradedOutput {
    /// In [0, 1]; no nulls (a missing row scores 0.0).
    pub score: Float64Array,
    /// `score >= threshold`; no nulls.
    pub is_correct: BooleanArray,
    pub missing: usize,
}

/// Scores every row: `measure` of the value against its expected strings (the best of them,
/// see [`Lexical::score`]), both after `norm` when given.
///
/// Null rule: a null value or a null expected cell scores 0.0, fails, and counts as missing.
/// An empty list of expected strings scores 0.0 (not missing).
pub fn graded(
    value: TextColumn<'_>,
    references: References<'_>,
    measure: Lexical,
    threshold: f64,
    norm: Option<&Normalizer>,
    len: usize,
) -> Result<GradedOutput, KernelError> {
    graded_by(value, references, threshold, norm, len, |v, refs| {
        measure.score(v, refs)
    })
}

/// [`graded`] with any measure: `score(value, references)` of each row that has both (after
/// `norm`), which may be called with rows in order only. `similarity` by embedding uses it
/// twice: once to collect the texts to embed, once to score with their vectors.
pub fn graded_by(
    value: TextColumn<'_>,
    references: References<'_>,
    threshold: f64,
    norm: Option<&Normalizer>,
    len: usize,
    mut score: impl FnMut(&str, &[String]) -> f64,
) -> Result<GradedOutput, KernelError> {
    let apply = |s: &str| -> String {
        match norm {
            Some(n) => n.apply(s).into_owned(),
            None => s.to_owned(),
        }
    };
    let fixed: Option<Vec<String>> = match references {
        References::Fixed(l) => Some(l.iter().map(|s| apply(s)).collect()),
        References::PerRow(_) => None,
    };
    let mut reader = match references {
        References::PerRow(a) => Some(ExpectedReader::new(a, norm)?),
        References::Fixed(_) => None,
    };
    let mut scores = Vec::with_capacity(len);
    let mut missing = 0;
    for r in 0..len {
        let refs: Option<&[String]> = match (&fixed, reader.as_mut()) {
            (Some(f), _) => Some(f),
            (None, Some(rd)) => rd.row(r),
            (None, None) => None,
        };
        match (value.get(r), refs) {
            (Some(v), Some(refs)) => {
                let v: Cow<'_, str> = match norm {
                    Some(n) => n.apply(v),
                    None => Cow::Borrowed(v),
                };
                scores.push(score(&v, refs));
            }
            _ => {
                missing += 1;
                scores.push(0.0);
            }
        }
    }
    let is_correct = BooleanArray::from(scores.iter().map(|&s| s >= threshold).collect::<Vec<_>>());
    Ok(GradedOutput {
        score: Float64Array::from(scores),
        is_correct,
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexical::RougeVariant;
    use arrow::array::{LargeStringArray, StringArray, StringViewArray};

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
            let out = graded(col, References::PerRow(&e), Lexical::F1, 0.5, None, 4).unwrap();
            assert_eq!(out.score.values().to_vec(), [1.0, 0.0, 0.0, 1.0]);
            assert_eq!(out.missing, 1);
            assert_eq!(
                out.is_correct.iter().collect::<Vec<_>>(),
                [Some(true), Some(false), Some(false), Some(true)]
            );
            let fixed = ["cat".to_owned()];
            let out = graded(
                col,
                References::Fixed(&fixed),
                Lexical::Rouge(RougeVariant::Rouge1),
                0.6,
                None,
                4,
            )
            .unwrap();
            assert_eq!(out.score.values().to_vec(), [0.5, 0.0, 0.0, 0.0]);
            assert_eq!(out.is_correct.true_count(), 0);
        }
    }
}
