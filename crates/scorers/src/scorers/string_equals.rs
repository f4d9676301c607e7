//! `string_equals`: the value equals the ground truth, byte for byte (arrow's `eq` kernel), or
//! after `normalize:`.

use crate::batch::{BatchInput, ScoreColumns};
use crate::bound::{Bound, Check, GROUND_TRUTH_FIELDS};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer, VALUE_OPTION};
use arrow::array::BooleanArray;
use arrow::buffer::BooleanBuffer;
use evalscore_kernels::{missing_count, string_equals, Scored};
use evalscore_task::{ScorerField, TaskError};

/// The kind `string_equals`: it is its own `Check`, with nothing to hold beyond what `Bound` holds.
#[derive(Debug)]
pub struct StringEquals;

impl Kind for StringEquals {
    const ABOUT: About = About::new(
        &["string_equals"],
        "`is_correct` is 1.0 when the value and `ground_truth` are equal byte for byte (or after `normalize:`).",
        &[
            OptionDoc::required("ground_truth", "template of the expected text"),
            VALUE_OPTION,
        ],
        r#"{type: string_equals, ground_truth: "{{ sample.answer }}"}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let ground_truth = cx.required_template("ground_truth", r#""{{ sample.answer }}""#)?;
        cx.bind(StringEquals, Some(ground_truth))
    }
}

impl Check for StringEquals {
    const FIELDS: &'static [ScorerField] = GROUND_TRUTH_FIELDS;

    fn score(&self, b: &Bound<Self>, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        b.score_text(input, "ground_truth", |batch, g| {
            if input.want("is_correct") {
                return string_equals(batch, g);
            }
            // A metrics-only scorer (`write_scores: false`) whose metrics read other fields
            // does not need the comparison at all.
            Ok(Scored {
                is_correct: BooleanArray::new(BooleanBuffer::new_unset(batch.len), None),
                score: None,
                details: None,
                missing: missing_count(&batch.value, &g, batch.len),
            })
        })
    }
}
