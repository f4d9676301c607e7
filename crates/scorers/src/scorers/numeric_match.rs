//! `numeric_match`: the value's number equals the expected number within a tolerance.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, EXPECTED_FIELDS};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::{numeric_match, Tolerance};
use evalscore_task::{ScorerField, TaskError};

/// The kind `numeric_match`.
#[derive(Debug)]
pub struct NumericMatch;

impl Kind for NumericMatch {
    const ABOUT: About = About::new(
        &["numeric_match"],
        "`is_correct` is 1.0 when the value's number equals the expected number within `abs_tolerance` or `rel_tolerance`.",
        &[
            OptionDoc::required("expected", "template of the expected number"),
            OptionDoc::optional(
                "abs_tolerance",
                "largest absolute difference that still matches (>= 0, default 0)",
            ),
            OptionDoc::optional(
                "rel_tolerance",
                "largest difference relative to the expected number (>= 0, default 0)",
            ),
            VALUE_OPTION,
        ],
        r#"{type: numeric_match, expected: "{{ sample.answer }}", abs_tolerance: 0.01}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected = cx.required_template("expected", r#""{{ sample.answer }}""#)?;
        let tolerance = Tolerance {
            abs: non_negative(cx, "abs_tolerance")?,
            rel: non_negative(cx, "rel_tolerance")?,
        };
        cx.bind(NumericMatchCheck { tolerance }, Some(expected))
    }
}

/// A tolerance option: a finite number >= 0, default 0.
fn non_negative(cx: &ParseCx<'_>, key: &str) -> Result<f64, TaskError> {
    let Some(node) = cx.get(key) else {
        return Ok(0.0);
    };
    let text = node.scalar_string(key)?;
    match text.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(node
            .err(format!("`{key}` must be a number >= 0, found `{text}`"))
            .with_hint("e.g. `abs_tolerance: 0.01` or `rel_tolerance: 0.001`")),
    }
}

/// A bound `numeric_match`: the value's number against the `expected` one.
#[derive(Debug)]
struct NumericMatchCheck {
    tolerance: Tolerance,
}

impl Check for NumericMatchCheck {
    const FIELDS: &'static [ScorerField] = EXPECTED_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_text(input, "expected", |batch, e| {
            numeric_match(batch, e, self.tolerance)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::NumericMatchCheck;
    use crate::bound::Bound;
    use crate::Task;
    use evalscore_kernels::Tolerance;

    #[test]
    fn tolerances_are_typed() {
        let text = "definition:\n  scorers:\n    - {type: numeric_match, expected: \"{{ sample.n }}\", rel_tolerance: 0.01}\n";
        let task = Task::from_yaml(text, &[]).unwrap();
        let any: &dyn std::any::Any = task.scorers[0].scorer.as_ref();
        let n = any.downcast_ref::<Bound<NumericMatchCheck>>().unwrap();
        assert_eq!(
            n.check.tolerance,
            Tolerance {
                abs: 0.0,
                rel: 0.01
            }
        );
    }
}
