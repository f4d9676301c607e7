//! `check_injection` (Baserun): a heuristic list of prompt-injection patterns.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, score_array, TextInput};
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use arrow::array::ArrayRef;
use evalscore_kernels::check_injection;
use evalscore_task::{ScorerField, TaskError, Template};
use evalscore_text::TextColumn;
use std::sync::Arc;

/// The kind `check_injection`.
#[derive(Debug)]
pub struct CheckInjection;

impl ScorerType for CheckInjection {
    fn names(&self) -> &'static [&'static str] {
        &["check_injection"]
    }

    fn doc(&self) -> &'static str {
        "Baserun's `check_injection` (a heuristic): `is_correct` is 1.0 when the value shows none of a fixed list of prompt-injection patterns; `details` names the one found."
    }

    fn options(&self) -> &'static [OptionDoc] {
        &[crate::scorer::VALUE_OPTION]
    }

    fn example(&self) -> &'static str {
        "{type: check_injection}"
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        Ok(Box::new(CheckInjectionScorer {
            input: cx.text_input()?,
        }))
    }
}

/// A bound `check_injection`.
#[derive(Debug)]
struct CheckInjectionScorer {
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("details"),
    ScorerField::compared("value"),
];

impl Scorer for CheckInjectionScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.input.value().into_iter().collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let normalized;
            let vc = match v.normalize {
                Some(n) => {
                    normalized = n.column(&v.column, rows);
                    TextColumn::new(normalized.as_ref(), "value").map_err(|e| row_err(None, e))?
                }
                None => v.column,
            };
            let out = check_injection(vc, rows);
            fields.insert("is_correct", score_array(out.is_correct));
            fields.insert("details", Arc::new(out.details) as ArrayRef);
            Ok(out.missing)
        })
    }
}
