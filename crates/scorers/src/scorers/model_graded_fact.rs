//! `model_graded_fact`: the judge compares a submitted answer with an
//! expert answer and picks one of five statements, A to E.

use crate::judge::choice::{part, ChoiceFamily, FixedChoices};
use crate::judge::parse::{CHOICE_SCORES, MODEL_KEY, PASS_THRESHOLD};
use crate::scorer::{About, OptionDoc};

/// The prompt, its parts and its choices.
static FAMILY: ChoiceFamily = ChoiceFamily {
    parts: &[("question", true), ("expert", true), ("submission", false)],
    value_part: "submission",
    // Every answer consistent with the expert's passes.
    default_choices: &[("A", 1.0), ("B", 1.0), ("C", 1.0), ("D", 0.0), ("E", 1.0)],
    prompt,
};

static ABOUT: About = About::new(
    &["model_graded_fact"],
    "A factuality judge: the judge picks how the submission relates to the expert answer (A subset, B superset, C same details, D disagreement, E differences that do not matter); A, B, C and E score 1.0 by default (every answer consistent with the expert's), D 0.0.",
    &[
            MODEL_KEY,
            OptionDoc::required("question", "template of the question"),
            OptionDoc::required("expert", "template of the expert's answer"),
            OptionDoc::optional(
                "submission",
                "template of the answer judged; default: the model output",
            ),
            CHOICE_SCORES,
            PASS_THRESHOLD,
        ],
    r#"{type: model_graded_fact, model_key: judge, question: "{{ sample.question }}", expert: "{{ sample.answer }}"}"#,
)
.judge();

/// The kind `model_graded_fact`.
pub(crate) static MODEL_GRADED_FACT: FixedChoices = FixedChoices {
    about: &ABOUT,
    family: &FAMILY,
};

/// The user message, from the parts' rendered texts in order.
fn prompt(parts: &[&str], _choices: &[(String, f64)]) -> String {
    format!(
        "You are checking a submitted answer against an expert answer to the same question.\n\n\
         [Question]\n{}\n\n[Expert answer]\n{}\n\n[Submitted answer]\n{}\n\n\
         Compare only the factual content of the two answers; ignore differences of style, grammar and punctuation. \
         Choose the one statement that applies:\n\
         A: The submitted answer is a subset of the expert answer and fully consistent with it.\n\
         B: The submitted answer is a superset of the expert answer and fully consistent with it.\n\
         C: The submitted answer contains all of the same details as the expert answer.\n\
         D: There is a disagreement between the submitted answer and the expert answer.\n\
         E: The answers differ, but these differences do not matter from the perspective of factuality.\n\n\
         Explain your reasoning in a few sentences, then write the letter of your choice (A, B, C, D or E) alone on the last line.",
        part(parts, 0),
        part(parts, 1),
        part(parts, 2)
    )
}
