//! `numeric_match`: the value's number equals the expected number within a tolerance.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, EXPECTED_FIELDS};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::{numeric_match_with, NumberReading, Tolerance};
use evalscore_task::{ScorerField, TaskError};

/// The kind `numeric_match`.
#[derive(Debug)]
pub struct NumericMatch;

impl Kind for NumericMatch {
    const ABOUT: About = About::new(
        &["numeric_match"],
        "`is_correct` is 1.0 when the value's number equals the expected number within `abs_tolerance` or `rel_tolerance`. The number of a text is its last number; a `-` written against it is its sign (`-8.97`), while a `-` separated from it by spaces is not, as Inspect AI reads it (`y = 0.91x - 8.97` reads 8.97). With `spaced_sign: true`, a `-` or `+` separated by spaces from the number is its sign when it opens the text, follows `=` or an operator (`x = - 3`, `2 * - 3`), or stands on the right of an `=` (`y = 0.91x - 8.97` reads -8.97; `pages 10 - 20` still reads 20). It applies to both the value and the expected number.",
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
            OptionDoc::optional(
                "spaced_sign",
                "`true`: a `-` or `+` separated by spaces from the number, after `=`, an operator or at the start, is its sign (default `false`, Inspect AI's reading)",
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
        let reading = NumberReading {
            spaced_sign: cx
                .get("spaced_sign")
                .map(|n| n.boolean("spaced_sign"))
                .transpose()?
                .unwrap_or(false),
        };
        cx.bind(NumericMatchCheck { tolerance, reading }, Some(expected))
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
    reading: NumberReading,
}

impl Check for NumericMatchCheck {
    const FIELDS: &'static [ScorerField] = EXPECTED_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_text(input, "expected", |batch, e| {
            numeric_match_with(batch, e, self.tolerance, self.reading)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::NumericMatchCheck;
    use crate::bound::Bound;
    use crate::Task;
    use evalscore_kernels::{NumberReading, Tolerance};

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
        assert_eq!(n.check.reading, NumberReading { spaced_sign: false });
        let spaced = text.replace("rel_tolerance: 0.01", "spaced_sign: true");
        let task = Task::from_yaml(&spaced, &[]).unwrap();
        let any: &dyn std::any::Any = task.scorers[0].scorer.as_ref();
        let n = any.downcast_ref::<Bound<NumericMatchCheck>>().unwrap();
        assert_eq!(n.check.reading, NumberReading { spaced_sign: true });
    }
}
