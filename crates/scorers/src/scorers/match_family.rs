//! The match family: `match` (the value starts with an expected string), `includes`
//! (contains one), `fuzzy_match` (contains one, or is contained in one), and with `not_`
//! their negations. One kind with a mode; each name is one mode.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, EXPECTED_FIELDS};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use evalscore_kernels::{match_check, text_as_list, MatchMode, Needles};
use evalscore_task::{ScorerField, TaskError, TemplateKind};

/// The kind of `match`, `includes`, `fuzzy_match` and their `not_` forms.
#[derive(Debug)]
pub struct MatchFamily;

impl Kind for MatchFamily {
    const ABOUT: About = About::new(
        &[
            "match",
            "includes",
            "fuzzy_match",
            "not_match",
            "not_includes",
            "not_fuzzy_match",
        ],
        "`match` (the value starts with an expected string), `includes` (an expected string is in the value), `fuzzy_match` (either contains the other); the `not_` forms score 1.0 exactly when the positive form scores 0.0, except on missing rows.",
        &[
            OptionDoc::required("expected", "one string or a list: a literal, a literal list, a list column, or a JSON or Python list text"),
            VALUE_OPTION,
        ],
        "{type: includes, expected: [Paris, paris]}",
    );

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
        let check = MatchCheck {
            mode,
            negate,
            needles,
        };
        cx.bind(check, Some(expected))
    }
}

/// A bound scorer of the match family: the value against the `expected` strings.
#[derive(Debug)]
struct MatchCheck {
    mode: MatchMode,
    negate: bool,
    /// The expected strings prepared once, when `expected` is a literal or literal list.
    needles: Option<Needles>,
}

impl Check for MatchCheck {
    const FIELDS: &'static [ScorerField] = EXPECTED_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_strings(input, self.needles.as_ref(), |batch, e| {
            match_check(batch, e, self.mode, self.negate)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::MatchCheck;
    use crate::bound::Bound;
    use crate::Task;

    #[test]
    fn every_form_prepares_literal_needles_once() {
        for t in <super::MatchFamily as crate::scorer::Kind>::ABOUT.names {
            let text = format!(
                "definition:\n  scorers:\n    - {{type: {t}, expected: [a, b], normalize: [strip]}}\n"
            );
            let task = Task::from_yaml(&text, &[]).unwrap();
            let any: &dyn std::any::Any = task.scorers[0].scorer.as_ref();
            let m = any.downcast_ref::<Bound<MatchCheck>>().unwrap();
            assert_eq!(m.check.negate, t.starts_with("not_"));
            assert_eq!(m.check.needles.as_ref().unwrap().len(), 2);
            assert!(m.input.normalize().is_some());
        }
    }
}
