//! What the judge kinds' parsers share: the `models:` entry a scorer asks (`model_key`), and
//! the typed options (`pass_threshold`, numbers, labels, scores), each error at its line.

use crate::scorer::{OptionDoc, ParseCx};
use evalscore_task::{literal_list, ModelSpec, Node, TaskError, Template};
use std::collections::BTreeMap;

/// `model_key:` of every judge kind.
pub(crate) const MODEL_KEY: OptionDoc = OptionDoc::required(
    "model_key",
    "the judge endpoint's key in the task's `models:`",
);

/// `system_prompt:` of the judges with a system and a user prompt.
pub(crate) const SYSTEM_PROMPT: OptionDoc = OptionDoc::optional(
    "system_prompt",
    "template of the system message, before evalscore's instruction",
);

/// `user_prompt:` of the judges with a system and a user prompt.
pub(crate) const USER_PROMPT: OptionDoc =
    OptionDoc::required("user_prompt", "template of the user message");

/// What a judge with a system and a user prompt parses first: `model_key:` (and its
/// `models:` entry), `system_prompt:`, and `user_prompt:` (required; `example` for its hint).
pub(crate) fn judge_prompts(
    cx: &mut ParseCx<'_>,
    example: &str,
) -> Result<(String, ModelSpec, Option<Template>, Template), TaskError> {
    let (model_key, model) = model(cx)?;
    let system_prompt = cx.template("system_prompt")?;
    let user_prompt = cx.required_template("user_prompt", example)?;
    Ok((model_key, model, system_prompt, user_prompt))
}

/// `pass_threshold:` of the `model_graded_*` kinds.
pub(crate) const PASS_THRESHOLD: OptionDoc = OptionDoc::optional(
    "pass_threshold",
    "from 0 to 1: `is_correct` is `score >= pass_threshold` (default 1)",
);

/// `choice_scores:` of the `model_graded_*` kinds with fixed choices.
pub(crate) const CHOICE_SCORES: OptionDoc = OptionDoc::optional(
    "choice_scores",
    "a map from choice to score (0 to 1) overriding the default scores",
);

/// `model_key:`, required, and the `models:` entry it names.
pub(crate) fn model(cx: &ParseCx<'_>) -> Result<(String, ModelSpec), TaskError> {
    let models = cx.models();
    let key_node = cx.get("model_key").ok_or_else(|| {
        cx.err(format!("scorer `{}` needs `model_key`", cx.scorer_type()))
            .with_hint(models_hint(models))
    })?;
    let model_key = key_node.scalar_string("model_key")?;
    let model = models.get(&model_key).cloned().ok_or_else(|| {
        key_node
            .err(format!(
                "`model_key` `{model_key}` is not a model of the task's `models:`"
            ))
            .with_hint(models_hint(models))
    })?;
    Ok((model_key, model))
}

fn models_hint(models: &BTreeMap<String, ModelSpec>) -> String {
    if models.is_empty() {
        "add a top-level `models:` map, e.g. `models: {judge: {base_url: \"http://127.0.0.1:8080/v1\", model: gpt-4o-mini}}`, and set `model_key: judge`".to_owned()
    } else {
        let names: Vec<&str> = models.keys().map(String::as_str).collect();
        format!("models of this task: {}", names.join(", "))
    }
}

/// `pass_threshold:` from 0 to 1, or `default`.
pub(crate) fn pass_threshold(cx: &ParseCx<'_>, default: f64) -> Result<f64, TaskError> {
    let t = number_option(cx, "pass_threshold", default)?;
    if !(0.0..=1.0).contains(&t) {
        return Err(cx.err_at(
            "pass_threshold",
            format!(
                "`{}.pass_threshold` must be from 0 to 1, found `{t}`",
                cx.scorer_type()
            ),
        ));
    }
    Ok(t)
}

/// A number option, or its default.
pub(crate) fn number_option(cx: &ParseCx<'_>, key: &str, default: f64) -> Result<f64, TaskError> {
    let Some(n) = cx.given(key) else {
        return Ok(default);
    };
    let text = n.scalar_string(key)?;
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(n.err(format!(
            "`{}.{key}` must be a number, found `{text}`",
            cx.scorer_type()
        ))),
    }
}

/// A list of label strings (a single string counts as a list of one).
pub(crate) fn labels(
    cx: &ParseCx<'_>,
    key: &str,
    required: bool,
) -> Result<Vec<String>, TaskError> {
    let scorer_type = cx.scorer_type();
    let Some(n) = cx.given(key) else {
        if required {
            return Err(cx.needs(key, "[\"yes\"]"));
        }
        return Ok(Vec::new());
    };
    let list = match literal_list(&n.to_json()) {
        Some(l) => l,
        None => vec![n.scalar_string(key)?],
    };
    let list: Vec<String> = list.into_iter().map(|l| l.trim().to_owned()).collect();
    if list.is_empty() && required {
        return Err(n.err(format!("`{scorer_type}.{key}` is empty")));
    }
    if let Some(l) = list.iter().find(|l| l.is_empty()) {
        return Err(n.err(format!("`{scorer_type}.{key}` holds an empty label `{l}`")));
    }
    Ok(list)
}

/// A choice's score: a number from 0 to 1.
pub(crate) fn score_value(n: Node<'_>, what: &str) -> Result<f64, TaskError> {
    let text = n.scalar_string(what)?;
    match text.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(n
            .err(format!(
                "`{what}` must be a score from 0 to 1, found `{text}`"
            ))
            .with_hint("scores are written to scores.parquet as they are and averaged by `mean`")),
    }
}
