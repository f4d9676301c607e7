//! `model_graded_custom`: the task's own prompt and choices, each worth a
//! score.

use crate::judge::choice::{part, ChoiceFamily, ChoiceJudge};
use crate::judge::parse::{score_value, MODEL_KEY, PASS_THRESHOLD};
use crate::scorer::{About, Kind, OptionDoc, ParseCx, Scorer};
use evalscore_task::TaskError;

/// The kind `model_graded_custom`.
#[derive(Debug)]
pub struct ModelGradedCustom;

/// The prompt, its parts and its choices.
static FAMILY: ChoiceFamily = ChoiceFamily {
    parts: &[("prompt", true)],
    value_part: "prompt",
    default_choices: &[],
    prompt,
};

impl Kind for ModelGradedCustom {
    const ABOUT: About = About::new(
        &["model_graded_custom"],
        "A judge with the task's own prompt and choices: the judge answers with one of `choices`, whose score is the row's.",
        &[
            MODEL_KEY,
            OptionDoc::required("prompt", "template of the question put to the judge"),
            OptionDoc::required(
                "choices",
                "a map from each answer the judge may give to its score (0 to 1), at least two",
            ),
            PASS_THRESHOLD,
        ],
        r#"{type: model_graded_custom, model_key: judge, prompt: "Is this a haiku? {{ solver_output.output }}", choices: {"Yes": 1.0, "No": 0.0}}"#,
    )
    .judge();

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        ChoiceJudge::parse(cx, &FAMILY, choices)
    }
}

/// The user message, from the parts' rendered texts in order.
fn prompt(parts: &[&str], choices: &[(String, f64)]) -> String {
    let labels: Vec<&str> = choices.iter().map(|(l, _)| l.as_str()).collect();
    format!(
        "{}\n\nReason briefly, then write your answer, exactly one of {}, alone on the last line.",
        part(parts, 0),
        labels.join(", ")
    )
}

/// `choices: {label: score}`, in the order written.
fn choices(cx: &ParseCx<'_>, _family: &ChoiceFamily) -> Result<Vec<(String, f64)>, TaskError> {
    let n = cx.required("choices", "{Good: 1.0, Partial: 0.5, Bad: 0.0}")?;
    let m = n.map("`model_graded_custom.choices`")?;
    let mut choices: Vec<(String, f64)> = Vec::new();
    for (k, v) in m.iter() {
        let label = k.trim().to_owned();
        if label.is_empty() {
            return Err(v.err("`model_graded_custom.choices` has an empty label"));
        }
        let score = score_value(v, &format!("model_graded_custom.choices.{label}"))?;
        choices.push((label, score));
    }
    if choices.len() < 2 {
        return Err(n
            .err("`model_graded_custom.choices` needs at least two choices")
            .with_hint("e.g. `choices: {Good: 1.0, Bad: 0.0}`"));
    }
    Ok(choices)
}
