//! `string_equals_mcqa` (multiple choice): the first character of the value
//! against a single-character ground-truth choice, among the row's `choices`.

use crate::batch::{BatchInput, ScoreColumns};
use crate::input::{row_err, template_err, text, TextInput};
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer};
use arrow::array::ArrayRef;
use evalscore_kernels::{
    missing_count, parse_choice_list, string_equals_mcqa_with, Choices, KernelError,
};
use evalscore_task::{ScorerField, TaskError, Template, TemplateOutput};
use std::sync::Arc;

/// The kind `string_equals_mcqa`.
#[derive(Debug)]
pub struct StringEqualsMcqa;

impl Kind for StringEqualsMcqa {
    const ABOUT: About = About::new(
        &["string_equals_mcqa"],
        "The first character of the value against `ground_truth_choice`; `completion_validity` is `VALID` when that character is one of the row's `choices`.",
        &[
            OptionDoc::required(
                "ground_truth_choice",
                "template of the correct choice (one character)",
            ),
            OptionDoc::optional(
                "choices",
                "the row's choices: a list column, a JSON or Python list text, or a literal list",
            ),
            crate::scorer::VALUE_OPTION,
            OptionDoc::optional(
                "ground_truth_choice_field",
                "deprecated: the column of `ground_truth_choice`",
            ),
            OptionDoc::optional("choices_field", "deprecated: the column of `choices`"),
        ],
        r#"{type: string_equals_mcqa, ground_truth_choice: "{{ sample.answer }}", choices: [A, B, C, D]}"#,
    );

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let mut ground_truth_choice = cx.template("ground_truth_choice")?;
        let mut choices = cx.list_template("choices")?;
        let input = cx.text_input()?;
        if let Some(n) = cx.get("ground_truth_choice_field") {
            let col = n.scalar_string("ground_truth_choice_field")?;
            cx.warn(format!(
                "`ground_truth_choice_field` is deprecated; use `ground_truth_choice: \"{{{{ sample.{col} }}}}\"`"
            ));
            if ground_truth_choice.is_some() {
                return Err(n.err("give `ground_truth_choice` or the deprecated `ground_truth_choice_field`, not both"));
            }
            ground_truth_choice = Some(cx.column_template("ground_truth_choice_field", col, false));
        }
        if let Some(n) = cx.get("choices_field") {
            let col = n.scalar_string("choices_field")?;
            cx.warn(format!(
                "`choices_field` is deprecated; use `choices: \"{{{{ sample.{col} }}}}\"`"
            ));
            if choices.is_some() {
                return Err(n.err("give `choices` or the deprecated `choices_field`, not both"));
            }
            choices = Some(cx.column_template("choices_field", col, true));
        }
        let ground_truth_choice = ground_truth_choice
            .ok_or_else(|| cx.needs("ground_truth_choice", r#""{{ sample.answer }}""#))?;
        Ok(Box::new(McqaScorer {
            ground_truth_choice,
            choices,
            input,
        }))
    }
}

/// A bound `string_equals_mcqa`.
#[derive(Debug)]
struct McqaScorer {
    ground_truth_choice: Template,
    choices: Option<Template>,
    input: TextInput,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("completion_validity"),
    ScorerField::compared("value"),
    ScorerField::compared("ground_truth"),
];

impl Scorer for McqaScorer {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        std::iter::once(&self.ground_truth_choice)
            .chain(self.choices.as_ref())
            .chain(self.input.value())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        self.input.value()
    }

    fn score(&self, input: &BatchInput<'_>) -> Result<ScoreColumns, RowError> {
        let (ctx, rows) = (input.ctx, input.rows);
        self.input.score(input, |v, fields| {
            let gt = &self.ground_truth_choice;
            let g = text(Some(gt), ctx)?;
            let gc = g.column().map_err(|e| row_err(Some(gt), e))?;
            let choice_out = match &self.choices {
                Some(t) => Some(t.evaluate(ctx).map_err(|e| template_err(t, e))?),
                None => None,
            };
            let parsed;
            let choice_arg = match &choice_out {
                None => Choices::None,
                Some(TemplateOutput::List(l)) => Choices::Fixed(l),
                Some(TemplateOutput::Array(a)) => Choices::PerRow(a.as_ref()),
                Some(TemplateOutput::Scalar(s)) => {
                    parsed = parse_choice_list(s).ok_or_else(|| RowError {
                        row: 0,
                        message: format!("`choices` gives {s:?}, which is not a list"),
                        hint: Some("give choices as a list: `choices: [A, B, C]`, a list column, or a JSON array string".to_owned()),
                        ..RowError::default()
                    })?;
                    Choices::Fixed(&parsed)
                }
            };
            let out = string_equals_mcqa_with(
                v.column,
                gc,
                choice_arg,
                rows,
                v.normalize,
                v.found,
                input.memo,
            )
                .map_err(|e| {
                    let t = match &e {
                        KernelError::Value { input, .. } if input == "choices" => {
                            self.choices.as_ref()
                        }
                        _ => Some(gt),
                    };
                    row_err(t, e)
                })?;
            let missing = missing_count(&v.column, &gc, rows);
            fields.insert("is_correct", Arc::new(out.is_correct) as ArrayRef);
            fields.insert(
                "completion_validity",
                Arc::new(out.completion_validity) as ArrayRef,
            );
            if input.want("ground_truth") {
                fields.insert("ground_truth", g.array(rows));
            }
            Ok(missing)
        })
    }
}
