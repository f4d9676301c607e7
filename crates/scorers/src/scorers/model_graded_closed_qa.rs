//! `model_graded_closed_qa`: the judge says whether a submission to a task
//! meets a criterion, Y or N.

use crate::judge::choice::{part, ChoiceFamily, FixedChoices};
use crate::judge::parse::{CHOICE_SCORES, MODEL_KEY, PASS_THRESHOLD};
use crate::scorer::{About, OptionDoc};

/// The prompt, its parts and its choices.
static FAMILY: ChoiceFamily = ChoiceFamily {
    parts: &[("task", true), ("submission", false), ("criterion", true)],
    value_part: "submission",
    default_choices: &[("Y", 1.0), ("N", 0.0)],
    prompt,
};

static ABOUT: About = About::new(
    &["model_graded_closed_qa"],
    "A closed-QA judge: the judge says whether the submission meets the criterion, `Y` (1.0) or `N` (0.0).",
    &[
            MODEL_KEY,
            OptionDoc::required("task", "template of the task the submission answers"),
            OptionDoc::optional(
                "submission",
                "template of the submission judged; default: the model output",
            ),
            OptionDoc::required(
                "criterion",
                "template of the criterion the submission must meet",
            ),
            CHOICE_SCORES,
            PASS_THRESHOLD,
        ],
    r#"{type: model_graded_closed_qa, model_key: judge, task: "{{ sample.question }}", criterion: "The answer is in French."}"#,
)
.judge();

/// The kind `model_graded_closed_qa`.
pub(crate) static MODEL_GRADED_CLOSED_QA: FixedChoices = FixedChoices {
    about: &ABOUT,
    family: &FAMILY,
};

/// The user message, from the parts' rendered texts in order.
fn prompt(parts: &[&str], _choices: &[(String, f64)]) -> String {
    format!(
        "You are checking whether a submission to a task meets a criterion.\n\n\
         [Task]\n{}\n\n[Submission]\n{}\n\n[Criterion]\n{}\n\n\
         Does the submission meet the criterion? Reason step by step, then write Y (it meets the criterion) \
         or N (it does not) alone on the last line.",
        part(parts, 0),
        part(parts, 1),
        part(parts, 2)
    )
}
