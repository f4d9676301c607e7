//! The `model_graded_*` kinds: a fixed prompt around the scorer's templated parts, and a
//! fixed set of choices, each worth a score. Each kind's file holds its [`ChoiceFamily`]
//! (prompt, parts, default scores); this is what they share.

use crate::judge::kind::{JudgeKind, JudgeScorer, ReadOut, Replies};
use crate::judge::parse::{model, pass_threshold, score_value};
use crate::judge::runtime::Reading;
use crate::judge::window::Prompt;
use crate::row_error::RowError;
use crate::scorer::{About, ParseCx, Scorer, ScorerType};
use arrow::array::Float64Array;
use evalscore_kernels::judge::parse_label;
use evalscore_task::{ScorerField, TaskError, Template};
use std::sync::Arc;

/// The user message of a family, from the parts' rendered texts and the choices.
pub(crate) type PromptFn = fn(&[&str], &[(String, f64)]) -> String;

/// How a kind reads its choices and their scores from the scorer's options.
pub(crate) type ChoicesFn =
    fn(&ParseCx<'_>, &ChoiceFamily) -> Result<Vec<(String, f64)>, TaskError>;

/// A `model_graded_*` kind's fixed parts.
#[derive(Debug)]
pub(crate) struct ChoiceFamily {
    /// The prompt's templated parts in order: (option, required). An optional part left out
    /// is the model output (only `submission` may be).
    pub parts: &'static [(&'static str, bool)],
    /// The part whose absence makes a row missing.
    pub value_part: &'static str,
    /// The default score of each choice (`choice_scores:` overrides them); empty when the
    /// task gives the choices (`choices:`).
    pub default_choices: &'static [(&'static str, f64)],
    /// The user message, from the parts' rendered texts in `parts` order and the choices.
    pub prompt: PromptFn,
}

/// A bound `model_graded_*` judge.
#[derive(Debug)]
pub(crate) struct ChoiceJudge {
    family: &'static ChoiceFamily,
    /// The prompt's parts in order: (option name, template); `None` is the model output.
    parts: Vec<(&'static str, Option<Template>)>,
    /// (label, score) in the order the prompt lists them.
    choices: Vec<(String, f64)>,
    pass_threshold: f64,
}

const FIELDS: &[ScorerField] = &[
    ScorerField::text("choice"),
    ScorerField::number("score"),
    ScorerField::number("is_correct"),
    ScorerField::text("judge_status"),
];

impl ChoiceJudge {
    /// Parses a scorer of `family`: `model_key`, the parts, the choices (`choices` reads the
    /// task's own), `pass_threshold` (default 1).
    pub fn parse(
        cx: &mut ParseCx<'_>,
        family: &'static ChoiceFamily,
        choices: ChoicesFn,
    ) -> Result<Box<dyn Scorer>, TaskError> {
        let (model_key, model) = model(cx)?;
        let mut parts = Vec::new();
        for &(name, needed) in family.parts {
            let t = cx.template(name)?;
            if needed && t.is_none() {
                return Err(cx.needs(name, &format!("\"{{{{ sample.{name} }}}}\"")));
            }
            parts.push((name, t));
        }
        let choices = choices(cx, family)?;
        let pass_threshold = pass_threshold(cx, 1.0)?;
        Ok(Box::new(JudgeScorer::new(
            model_key,
            model,
            ChoiceJudge {
                family,
                parts,
                choices,
                pass_threshold,
            },
        )))
    }
}

/// A `model_graded_*` kind whose choices are its family's defaults (`choice_scores:`
/// overrides their scores): the kind is its description and its family.
#[derive(Debug)]
pub(crate) struct FixedChoices {
    pub about: &'static About,
    pub family: &'static ChoiceFamily,
}

impl ScorerType for FixedChoices {
    fn about(&self) -> &'static About {
        self.about
    }

    fn parse(&self, _name: &str, cx: &mut ParseCx<'_>) -> Result<Box<dyn Scorer>, TaskError> {
        ChoiceJudge::parse(cx, self.family, choice_scores)
    }
}

/// The rendered text of part `i` of a prompt (empty when absent).
pub(crate) fn part<'a>(parts: &[&'a str], i: usize) -> &'a str {
    parts.get(i).copied().unwrap_or("")
}

/// `choice_scores:` of a family with default choices: overrides of the default table, by
/// label.
pub(crate) fn choice_scores(
    cx: &ParseCx<'_>,
    family: &ChoiceFamily,
) -> Result<Vec<(String, f64)>, TaskError> {
    let scorer_type = cx.scorer_type();
    let mut choices: Vec<(String, f64)> = family
        .default_choices
        .iter()
        .map(|(l, s)| ((*l).to_owned(), *s))
        .collect();
    let Some(n) = cx.given("choice_scores") else {
        return Ok(choices);
    };
    let scores = n.map(&format!("`{scorer_type}.choice_scores`"))?;
    for (label, v) in scores.iter() {
        let slot = choices
            .iter_mut()
            .find(|(l, _)| l == label)
            .ok_or_else(|| {
                let names: Vec<&str> = family.default_choices.iter().map(|(l, _)| *l).collect();
                v.err(format!("`{scorer_type}` has no choice `{label}`"))
                    .with_hint(format!("its choices: {}", names.join(", ")))
            })?;
        slot.1 = score_value(v, &format!("{scorer_type}.choice_scores.{label}"))?;
    }
    Ok(choices)
}

impl JudgeKind for ChoiceJudge {
    fn fields(&self) -> &'static [ScorerField] {
        FIELDS
    }

    fn templates(&self) -> Vec<&Template> {
        self.parts.iter().filter_map(|(_, t)| t.as_ref()).collect()
    }

    fn value(&self) -> Option<&Template> {
        self.parts
            .iter()
            .find(|(n, _)| *n == self.family.value_part)
            .and_then(|(_, t)| t.as_ref())
    }

    fn prompt(&self) -> Prompt<'_> {
        Prompt::User {
            parts: self.parts.iter().map(|(_, t)| t.as_ref()).collect(),
            message: Box::new(|parts| (self.family.prompt)(parts, &self.choices)),
        }
    }

    /// The choice; no reasoning (the kind writes none).
    fn digest(&self, content: &str, _keep_reasoning: bool) -> Reading {
        let labels: Vec<&str> = self.choices.iter().map(|(l, _)| l.as_str()).collect();
        Reading::labelled(parse_label(content, &labels, &["choice", "answer"]), false)
    }

    fn read(&self, r: &Replies<'_>, out: &mut ReadOut) -> Result<(), RowError> {
        let rows = r.rows;
        let (mut choice, mut score, mut correct) = (
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
        );
        for parsed in r.replies {
            out.status(parsed.map(|p| p.from));
            let label = parsed.and_then(|p| p.label.clone());
            let s = label
                .as_ref()
                .and_then(|l| self.choices.iter().find(|(c, _)| c == l))
                .map_or(0.0, |(_, s)| *s);
            score.push(Some(s));
            correct.push(Some(f64::from(u8::from(
                label.is_some() && s >= self.pass_threshold,
            ))));
            choice.push(label);
        }
        out.fields
            .insert("score", Arc::new(Float64Array::from(score)));
        out.fields
            .insert("is_correct", Arc::new(Float64Array::from(correct)));
        if r.want("choice") {
            out.fields
                .insert("choice", Arc::new(arrow::array::StringArray::from(choice)));
        }
        Ok(())
    }
}
