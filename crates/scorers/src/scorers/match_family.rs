//! The match family (Baserun): `match` (the value starts with an expected string),
//! `includes` (contains one), `fuzzy_match` (contains one, or is contained in one), and with
//! `not_` their negations. One kind with a mode; each name is one mode.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{evaluate_any, is_list, list_as_text, row_err, score_array, TextInput};
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use arrow::array::{ArrayRef, StringArray};
use evalscore_kernels::{match_check, text_as_list, Expected, MatchMode, Needles};
use evalscore_task::{ScorerField, TaskError, Template, TemplateKind, TemplateOutput};
use std::sync::Arc;

/// The kind of `match`, `includes`, `fuzzy_match` and their `not_` forms.
#[derive(Debug)]
pub struct MatchFamily;

impl ScorerType for MatchFamily {
    fn names(&self) -> &'static [&'static str] {
        &[
            "match",
            "includes",
            "fuzzy_match",
            "not_match",
            "not_includes",
            "not_fuzzy_match",
        ]
    }

    fn doc(&self) -> &'static str {
        "Baserun's checks: `match` (the value starts with an expected string), `includes` (an expected string is in the value), `fuzzy_match` (either contains the other); the `not_` forms score 1.0 exactly when the positive form scores 0.0, except on missing rows."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
                OptionDoc::required("expected", "one string or a list: a literal, a literal list, a list column, or a JSON or Python list text"),
                crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        "{type: includes, expected: [Paris, paris]}"
    }

    fn parse(&self, name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let negate = name.starts_with("not_");
        let mode = match name.trim_start_matches("not_") {
            "match" => MatchMode::Prefix,
            "includes" => MatchMode::Substring,
            _ => MatchMode::Fuzzy,
        };
        let expected = cx.required_list_template(
            "expected",
            r#""{{ sample.answer }}" or a list such as [Paris, paris]"#,
        )?;
        // Literal expected strings are normalized and prepared once, here.
        let needles = match &expected.kind {
            TemplateKind::Literal(s) => Some(Needles::new(
                text_as_list(s).unwrap_or_else(|| vec![s.clone()]),
                cx.normalize(),
            )),
            TemplateKind::LiteralList(l) => Some(Needles::new(l, cx.normalize())),
            _ => None,
        };
        Ok(Box::new(MatchScorer {
            mode,
            negate,
            expected,
            needles,
            input: cx.text_input()?,
        }))
    }
}

/// A bound scorer of the match family.
#[derive(Debug)]
struct MatchScorer {
    mode: MatchMode,
    negate: bool,
    expected: Template,
    /// The expected strings prepared once, when `expected` is a literal or literal list.
    needles: Option<Needles>,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
    ScorerField::compared("expected"),
];

impl Scorer for MatchScorer {
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
            let e = evaluate_any(&self.expected, input.ctx)?;
            let fallback;
            let (arg, expected_field): (Expected<'_>, Option<ArrayRef>) = match &e {
                TemplateOutput::Scalar(_) | TemplateOutput::List(_) => {
                    let n = match &self.needles {
                        Some(n) => n,
                        None => {
                            fallback = match &e {
                                TemplateOutput::List(l) => Needles::new(l, v.normalize),
                                TemplateOutput::Scalar(s) => Needles::new(
                                    text_as_list(s).unwrap_or_else(|| vec![s.clone()]),
                                    v.normalize,
                                ),
                                TemplateOutput::Array(_) => {
                                    Needles::new(Vec::<String>::new(), v.normalize)
                                }
                            };
                            &fallback
                        }
                    };
                    let field = input.want("expected").then(|| {
                        let text = match &e {
                            TemplateOutput::Scalar(s) => s.clone(),
                            TemplateOutput::List(l) => serde_json::to_string(l).unwrap_or_default(),
                            TemplateOutput::Array(_) => String::new(),
                        };
                        Arc::new(StringArray::from(vec![text.as_str(); rows])) as ArrayRef
                    });
                    (Expected::Fixed(n), field)
                }
                TemplateOutput::Array(a) => {
                    let field = input.want("expected").then(|| {
                        if is_list(a.as_ref()) {
                            list_as_text(a.as_ref())
                        } else {
                            Arc::clone(a)
                        }
                    });
                    (Expected::PerRow(a.as_ref()), field)
                }
            };
            let out = match_check(v.column, arg, self.mode, self.negate, v.normalize, rows)
                .map_err(|e| row_err(Some(&self.expected), e))?;
            fields.insert("is_correct", score_array(out.is_correct));
            if let Some(f) = expected_field {
                fields.insert("expected", f);
            }
            Ok(out.missing)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::MatchScorer;
    use crate::Task;

    #[test]
    fn every_form_prepares_literal_needles_once() {
        for t in [
            "match",
            "includes",
            "fuzzy_match",
            "not_match",
            "not_includes",
            "not_fuzzy_match",
        ] {
            let text = format!(
                "definition:\n  scorers:\n    - {{type: {t}, expected: [a, b], normalize: [strip]}}\n"
            );
            let task = Task::from_yaml(&text, &[]).unwrap();
            let any: &dyn std::any::Any = task.scorers[0].scorer.as_ref();
            let m = any.downcast_ref::<MatchScorer>().unwrap();
            assert_eq!(m.negate, t.starts_with("not_"));
            assert_eq!(m.needles.as_ref().unwrap().len(), 2);
            assert!(m.input.normalize().is_some());
        }
    }
}
