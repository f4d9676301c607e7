//! `string_equals` (AI GO!'s seed scorer): the value equals the ground truth, byte for byte
//! (arrow's `eq` kernel), or after `normalize:`.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, score_array, text, TextInput};
use crate::row_error::RowError;
use crate::scorer::{OptionDoc, ParseCx, Scorer, ScorerType};
use arrow::array::{ArrayRef, BooleanArray};
use evalscore_kernels::{missing_count, string_equals, string_equals_normalized};
use evalscore_task::{ScorerField, TaskError, Template};
use std::sync::Arc;

/// The kind `string_equals`.
#[derive(Debug)]
pub struct StringEquals;

impl ScorerType for StringEquals {
    fn names(&self) -> &'static [&'static str] {
        &["string_equals"]
    }

    fn doc(&self) -> &'static str {
        "AI GO!'s `string_equals`: `is_correct` is 1.0 when the value and `ground_truth` are equal byte for byte (or after `normalize:`)."
    }

    fn options(&self) -> &'static [OptionDoc] {
        const OPTIONS: &[OptionDoc] = &[
            OptionDoc::required("ground_truth", "template of the expected text"),
            crate::scorer::VALUE_OPTION,
        ];
        OPTIONS
    }

    fn example(&self) -> &'static str {
        r#"{type: string_equals, ground_truth: "{{ sample.answer }}"}"#
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let ground_truth = cx.required_template("ground_truth", r#""{{ sample.answer }}""#)?;
        Ok(Box::new(StringEqualsScorer {
            ground_truth,
            input: cx.text_input()?,
        }))
    }
}

/// A bound `string_equals`.
#[derive(Debug)]
struct StringEqualsScorer {
    ground_truth: Template,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::compared("value"),
    ScorerField::compared("ground_truth"),
];

impl Scorer for StringEqualsScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        std::iter::once(&self.ground_truth)
            .chain(self.input.value())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let rows = input.rows;
        self.input.score(input, |v, fields| {
            let g = text(Some(&self.ground_truth), input.ctx)?;
            let gc = g
                .column()
                .map_err(|e| row_err(Some(&self.ground_truth), e))?;
            // A metrics-only scorer (`write_scores: false`) whose metrics read other fields
            // does not need the comparison at all.
            if input.want("is_correct") {
                let scores: ArrayRef = match v.normalize {
                    Some(n) => score_array(string_equals_normalized(v.column, gc, n, rows)),
                    None => {
                        let scores = string_equals(v.text.datum().as_ref(), g.datum().as_ref())
                            .map_err(|e| row_err(None, e))?;
                        if scores.len() == rows {
                            Arc::new(scores)
                        } else {
                            let s = scores.len() == 1 && scores.value(0);
                            Arc::new(BooleanArray::from(vec![s; rows]))
                        }
                    }
                };
                fields.insert("is_correct", scores);
            }
            let missing = missing_count(&v.column, &gc, rows);
            if input.want("ground_truth") {
                fields.insert("ground_truth", g.array(rows));
            }
            Ok(missing)
        })
    }
}
