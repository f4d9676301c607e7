//! `numeric_match` (inspect_ai's `match(numeric=True)`): the value's number equals the
//! expected number within a tolerance.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, score_array, text, TextInput};
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use evalscore_kernels::{numeric_match, Tolerance};
use evalscore_task::{ScorerField, TaskError, Template};

/// The kind `numeric_match`.
#[derive(Debug)]
pub struct NumericMatch;

impl ScorerType for NumericMatch {
    fn names(&self) -> &'static [&'static str] {
        &["numeric_match"]
    }

    fn doc(&self) -> &'static str {
        "inspect_ai's `match(numeric=True)`: `is_correct` is 1.0 when the value's number equals the expected number within `abs_tolerance` or `rel_tolerance`."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::required("expected", "template of the expected number"),
            OptionDoc::optional(
                "abs_tolerance",
                "largest absolute difference that still matches (>= 0, default 0)",
            ),
            OptionDoc::optional(
                "rel_tolerance",
                "largest difference relative to the expected number (>= 0, default 0)",
            ),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        r#"{type: numeric_match, expected: "{{ sample.answer }}", abs_tolerance: 0.01}"#
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let expected = cx.required_template("expected", r#""{{ sample.answer }}""#)?;
        let tolerance = Tolerance {
            abs: non_negative(cx, "abs_tolerance")?,
            rel: non_negative(cx, "rel_tolerance")?,
        };
        Ok(Box::new(NumericMatchScorer {
            expected,
            tolerance,
            input: cx.text_input()?,
        }))
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

/// A bound `numeric_match`.
#[derive(Debug)]
struct NumericMatchScorer {
    expected: Template,
    tolerance: Tolerance,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
    ScorerField::compared("expected"),
];

impl Scorer for NumericMatchScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        std::iter::once(&self.expected)
            .chain(self.input.value())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let t = &self.expected;
            let e = text(Some(t), input.ctx)?;
            let ec = e.column().map_err(|err| row_err(Some(t), err))?;
            let out = numeric_match(v.column, ec, self.tolerance, v.normalize, rows)
                .map_err(|err| row_err(Some(t), err))?;
            fields.insert("is_correct", score_array(out.is_correct));
            if input.want("expected") {
                fields.insert("expected", e.array(rows));
            }
            Ok(out.missing)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::NumericMatchScorer;
    use crate::Task;
    use evalscore_kernels::Tolerance;

    #[test]
    fn tolerances_are_typed() {
        let text = "definition:\n  scorers:\n    - {type: numeric_match, expected: \"{{ sample.n }}\", rel_tolerance: 0.01}\n";
        let task = Task::from_yaml(text, &[]).unwrap();
        let any: &dyn std::any::Any = task.scorers[0].scorer.as_ref();
        let n = any.downcast_ref::<NumericMatchScorer>().unwrap();
        assert_eq!(
            n.tolerance,
            Tolerance {
                abs: 0.0,
                rel: 0.01
            }
        );
    }
}
