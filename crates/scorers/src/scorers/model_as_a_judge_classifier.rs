//! `model_as_a_judge_classifier`: the judge names a label; correct when it
//! is one of `correct_labels`.

use crate::input::text;
use crate::judge::kind::{JudgeKind, JudgeScorer, ReadOut, Replies};
use crate::judge::parse::{judge_prompts, labels, MODEL_KEY, SYSTEM_PROMPT, USER_PROMPT};
use crate::judge::runtime::Reading;
use crate::judge::window::Prompt;
use crate::row_error::RowError;
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer};
use arrow::array::{Float64Array, StringArray};
use evalscore_kernels::judge::parse_label;
use evalscore_task::{ScorerField, TaskError, Template};
use std::sync::Arc;

/// The kind `model_as_a_judge_classifier`.
#[derive(Debug)]
pub struct ModelAsAJudgeClassifier;

impl Kind for ModelAsAJudgeClassifier {
    const ABOUT: About = About::new(
        &["model_as_a_judge_classifier"],
        "A judge classifier: the judge answers with a label (JSON `prediction`, `reasoning`, `confidence`); `is_correct` is 1.0 when it is one of `correct_labels`.",
        &[
            MODEL_KEY,
            SYSTEM_PROMPT,
            USER_PROMPT,
            OptionDoc::required("correct_labels", "the labels that count as correct"),
            OptionDoc::optional("incorrect_labels", "the other labels the judge may give"),
            OptionDoc::optional(
                "ground_truth_label",
                "template of the row's true label, for classification metrics",
            ),
        ],
        r#"{type: model_as_a_judge_classifier, model_key: judge, user_prompt: "Is this reply polite? {{ solver_output.output }}", correct_labels: ["yes"], incorrect_labels: ["no"]}"#,
    )
    .judge();

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        let (model_key, model, system_prompt, user_prompt) = judge_prompts(
            cx,
            r#""Response: {{ model_output.choices[0].message.content }}""#,
        )?;
        let ground_truth_label = cx.template("ground_truth_label")?;
        let correct_labels = labels(cx, "correct_labels", true)?;
        let incorrect_labels = labels(cx, "incorrect_labels", false)?;
        if let Some(l) = correct_labels.iter().find(|l| incorrect_labels.contains(l)) {
            return Err(cx.err_at(
                "incorrect_labels",
                format!("label `{l}` is in both `correct_labels` and `incorrect_labels`"),
            ));
        }
        Ok(Box::new(JudgeScorer::new(
            model_key,
            model,
            Classifier {
                system_prompt,
                user_prompt,
                correct_labels,
                incorrect_labels,
                ground_truth_label,
            },
        )))
    }
}

/// A bound classifier judge.
#[derive(Debug)]
struct Classifier {
    system_prompt: Option<Template>,
    user_prompt: Template,
    correct_labels: Vec<String>,
    incorrect_labels: Vec<String>,
    ground_truth_label: Option<Template>,
}

impl Classifier {
    /// The labels the judge may give: the correct ones, then the incorrect ones.
    fn labels(&self) -> Vec<&str> {
        self.correct_labels
            .iter()
            .chain(&self.incorrect_labels)
            .map(String::as_str)
            .collect()
    }
}

/// The instruction appended to a classifier's system prompt.
fn instruction(labels: &[&str]) -> String {
    let quoted: Vec<String> = labels
        .iter()
        .map(|l| serde_json::Value::String((*l).to_owned()).to_string())
        .collect();
    format!(
        "Answer with a JSON object and nothing else: {{\"prediction\": one of {}, \"reasoning\": \"one or two sentences\", \"confidence\": a number from 0 to 1}}.",
        quoted.join(", ")
    )
}

const FIELDS: &[ScorerField] = &[
    ScorerField::number("is_correct"),
    ScorerField::text("predicted_label"),
    ScorerField::text("ground_truth_label"),
    ScorerField::text("reasoning"),
    ScorerField::number("confidence"),
    ScorerField::text("judge_status"),
];

impl JudgeKind for Classifier {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.system_prompt
            .iter()
            .chain(std::iter::once(&self.user_prompt))
            .chain(self.ground_truth_label.iter())
            .collect()
    }

    fn value(&self) -> Option<&Template> {
        Some(&self.user_prompt)
    }

    fn prompt(&self) -> Prompt<'_> {
        Prompt::SystemUser {
            system: self.system_prompt.as_ref(),
            user: &self.user_prompt,
            instruction: instruction(&self.labels()),
        }
    }

    fn digest(&self, content: &str, keep_reasoning: bool) -> Reading {
        let reply = parse_label(content, &self.labels(), &["prediction", "label"]);
        Reading::labelled(reply, keep_reasoning)
    }

    fn read(&self, r: &Replies<'_>, out: &mut ReadOut) -> Result<(), RowError> {
        let rows = r.rows;
        let mut correct = Vec::with_capacity(rows);
        let mut predicted = Vec::with_capacity(rows);
        let mut reasons = Vec::with_capacity(rows);
        let mut confidence = Vec::with_capacity(rows);
        for parsed in r.replies {
            out.status(parsed.map(|p| p.from));
            let label = parsed.and_then(|p| p.label.clone());
            correct.push(Some(f64::from(u8::from(
                label
                    .as_ref()
                    .is_some_and(|l| self.correct_labels.contains(l)),
            ))));
            predicted.push(label);
            reasons.push(parsed.and_then(|p| p.reasoning.clone()));
            confidence.push(parsed.and_then(|p| p.confidence));
        }
        let fields = &mut out.fields;
        fields.insert("is_correct", Arc::new(Float64Array::from(correct)));
        if r.want("predicted_label") {
            fields.insert("predicted_label", Arc::new(StringArray::from(predicted)));
        }
        if r.want("reasoning") {
            fields.insert("reasoning", Arc::new(StringArray::from(reasons)));
        }
        if r.want("confidence") {
            fields.insert("confidence", Arc::new(Float64Array::from(confidence)));
        }
        if r.want("ground_truth_label") {
            let gt = match &self.ground_truth_label {
                Some(t) => text(Some(t), r.ctx)?.array(rows),
                None => Arc::new(StringArray::new_null(rows)),
            };
            let gt = evalscore_text::to_text(&gt, "ground_truth_label").map_err(|e| RowError {
                row: 0,
                message: e.to_string(),
                ..RowError::default()
            })?;
            fields.insert("ground_truth_label", gt);
        }
        Ok(())
    }
}
