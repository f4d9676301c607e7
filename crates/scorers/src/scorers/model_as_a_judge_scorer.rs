//! `model_as_a_judge_scorer`: the judge gives a grade in
//! `[score_min, score_max]`, rescaled to a score in [0, 1].

use crate::judge::kind::{JudgeKind, JudgeScorer, ReadOut, Replies};
use crate::judge::parse::{
    judge_prompts, number_option, pass_threshold, MODEL_KEY, SYSTEM_PROMPT, USER_PROMPT,
};
use crate::judge::runtime::Reading;
use crate::judge::window::Prompt;
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer};
use arrow::array::{Float64Array, StringArray};
use evalscore_kernels::judge::{parse_grade, reasoning};
use evalscore_task::{ScorerField, TaskError, Template};
use std::sync::Arc;

/// The kind `model_as_a_judge_scorer`.
#[derive(Debug)]
pub struct ModelAsAJudgeScorer;

impl Kind for ModelAsAJudgeScorer {
    const ABOUT: About = About::new(
        &["model_as_a_judge_scorer"],
        "A judge scorer: the judge answers with a grade (JSON `score`, `reasoning`); `score` is the grade rescaled to [0, 1] and `is_correct` is `score >= pass_threshold`.",
        &[
            MODEL_KEY,
            SYSTEM_PROMPT,
            USER_PROMPT,
            OptionDoc::optional("score_min", "the lowest grade (default 0)"),
            OptionDoc::optional("score_max", "the highest grade (default 10)"),
            OptionDoc::optional(
                "pass_threshold",
                "from 0 to 1: `is_correct` is `score >= pass_threshold` (default 0.5)",
            ),
        ],
        r#"{type: model_as_a_judge_scorer, model_key: judge, user_prompt: "Rate the answer from 0 to 10: {{ solver_output.output }}"}"#,
    )
    .judge();

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let (model_key, model, system_prompt, user_prompt) = judge_prompts(
            cx,
            r#""Rate the answer from 0 to 10: {{ solver_output.output }}""#,
        )?;
        let score_min = number_option(cx, "score_min", 0.0)?;
        let score_max = number_option(cx, "score_max", 10.0)?;
        if score_max <= score_min {
            return Err(cx.err_at(
                "score_max",
                format!("`score_max` ({score_max}) must be greater than `score_min` ({score_min})"),
            ));
        }
        let pass_threshold = pass_threshold(cx, 0.5)?;
        Ok(Box::new(JudgeScorer::new(
            model_key,
            model,
            Grader {
                system_prompt,
                user_prompt,
                score_min,
                score_max,
                pass_threshold,
            },
        )))
    }
}

/// A bound grading judge.
#[derive(Debug)]
struct Grader {
    system_prompt: Option<Template>,
    user_prompt: Template,
    score_min: f64,
    score_max: f64,
    pass_threshold: f64,
}

/// The instruction appended to a grader's system prompt.
fn instruction(min: f64, max: f64) -> String {
    format!(
        "Answer with a JSON object and nothing else: {{\"score\": a number from {min} to {max}, \"reasoning\": \"one or two sentences\"}}."
    )
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("score"),
    ScorerField::number("is_correct"),
    ScorerField::number("grade"),
    ScorerField::text("reasoning"),
    ScorerField::text("judge_status"),
];

impl JudgeKind for Grader {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.system_prompt
            .iter()
            .chain(std::iter::once(&self.user_prompt))
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        Some(&self.user_prompt)
    }

    fn prompt(&self) -> Prompt<'_> {
        Prompt::SystemUser {
            system: self.system_prompt.as_ref(),
            user: &self.user_prompt,
            instruction: instruction(self.score_min, self.score_max),
        }
    }

    /// The grade; the reasoning (a second read of the reply) only when it is written.
    fn digest(&self, content: &str, keep_reasoning: bool) -> Reading {
        let (min, max) = (self.score_min, self.score_max);
        Reading::graded(
            parse_grade(content, min, max, &["score", "grade"]),
            keep_reasoning.then(|| reasoning(content)).flatten(),
        )
    }

    fn read(&self, r: &Replies<'_>, out: &mut ReadOut) -> Result<(), RowError> {
        let rows = r.rows;
        let min = self.score_min;
        let max = self.score_max;
        let (mut score, mut correct, mut grade, mut reasons) = (
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
        );
        for parsed in r.replies {
            out.status(parsed.map(|p| p.from));
            let g = parsed.and_then(|p| p.grade);
            let s = g.map_or(0.0, |g| (g - min) / (max - min));
            score.push(Some(s));
            correct.push(Some(f64::from(u8::from(
                g.is_some() && s >= self.pass_threshold,
            ))));
            grade.push(g);
            reasons.push(parsed.and_then(|p| p.reasoning.clone()));
        }
        let fields = &mut out.fields;
        fields.insert("score", Arc::new(Float64Array::from(score)));
        fields.insert("is_correct", Arc::new(Float64Array::from(correct)));
        if r.want("grade") {
            fields.insert("grade", Arc::new(Float64Array::from(grade)));
        }
        if r.want("reasoning") {
            fields.insert("reasoning", Arc::new(StringArray::from(reasons)));
        }
        Ok(())
    }
}
