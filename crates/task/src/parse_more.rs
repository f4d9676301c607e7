//! The options of the scorers `numeric_match`, `includes_all`, `not_regex`, `contains_json`
//! and the graded scorers (`f1`, `rouge`, `bleu`, `chrf`, `levenshtein`, `similarity`).

use crate::parse::{parse_schema, pattern_error};
use crate::raw::MapNode;
use crate::spec::{GradedMeasure, ScorerKind, ScorerSpec};
use crate::template::Template;
use crate::{ModelSpec, TaskError};
use evalscore_kernels::pattern;
use evalscore_kernels::{Lexical, RougeVariant, Tolerance};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The scorer types of this module.
pub(crate) const TYPES: &[&str] = &[
    "numeric_match",
    "includes_all",
    "not_regex",
    "contains_json",
    "f1",
    "rouge",
    "bleu",
    "chrf",
    "levenshtein",
    "similarity",
];

/// The similarity methods of `similarity`.
const METHODS: &[&str] = &["f1", "rouge", "chrf", "levenshtein", "embedding"];

/// The options a scorer type of this module accepts (besides the common ones); `None` for the
/// other types.
pub(crate) fn own_keys(scorer_type: &str) -> Option<&'static [&'static str]> {
    Some(match scorer_type {
        "numeric_match" => &["expected", "abs_tolerance", "rel_tolerance", "value"],
        "includes_all" => &["expected", "value"],
        "not_regex" => &["pattern", "value"],
        "contains_json" => &["schema", "value"],
        "f1" | "bleu" | "chrf" | "levenshtein" => &["expected", "threshold", "value"],
        "rouge" => &["expected", "threshold", "variant", "value"],
        "similarity" => &[
            "expected",
            "threshold",
            "method",
            "variant",
            "model_key",
            "value",
        ],
        _ => return None,
    })
}

type Compile<'c> = dyn FnMut(&str) -> Result<Option<Template>, TaskError> + 'c;

/// The typed options of a scorer of [`TYPES`]; `template` compiles the template at a key.
pub(crate) fn parse_kind(
    scorer_type: &str,
    map: &MapNode<'_>,
    template: &mut Compile<'_>,
    base_dir: Option<&Path>,
) -> Result<ScorerKind, TaskError> {
    let mut required = |key: &str, example: &str| -> Result<Template, TaskError> {
        template(key)?.ok_or_else(|| {
            map.err(format!("scorer `{scorer_type}` needs `{key}`"))
                .with_hint(format!("e.g. `{key}: {example}`"))
        })
    };
    Ok(match scorer_type {
        "numeric_match" => {
            let expected = required("expected", "\"{{ sample.answer }}\"")?;
            let tolerance = Tolerance {
                abs: non_negative(map, "abs_tolerance")?,
                rel: non_negative(map, "rel_tolerance")?,
            };
            ScorerKind::NumericMatch {
                expected,
                tolerance,
                value: template("value")?,
            }
        }
        "includes_all" => {
            let expected = required("expected", "[Paris, France] or \"{{ sample.keywords }}\"")?;
            ScorerKind::IncludesAll {
                expected,
                value: template("value")?,
            }
        }
        "not_regex" => {
            let node = map.get("pattern").filter(|n| !n.is_null()).ok_or_else(|| {
                map.err("scorer `not_regex` needs `pattern`")
                    .with_hint("e.g. `pattern: \"(?i)\\\\bsorry\\\\b\"`")
            })?;
            let text = node.scalar_string("pattern")?;
            let pattern = pattern::SearchPattern::new(&text).map_err(|e| {
                pattern_error(node, "not_regex.pattern", e, "patterns use Rust regex syntax (https://docs.rs/regex): inline flags like (?i), no look-around or backreferences")
            })?;
            ScorerKind::NotRegex {
                pattern: Arc::new(pattern),
                value: template("value")?,
            }
        }
        "contains_json" => {
            let schema = match map.get("schema") {
                Some(n) if !n.is_null() => Some(Arc::new(parse_schema(n, base_dir)?)),
                _ => None,
            };
            ScorerKind::ContainsJson {
                schema,
                value: template("value")?,
            }
        }
        "f1" => graded(
            scorer_type,
            map,
            GradedMeasure::Lexical(Lexical::F1),
            template,
        )?,
        "bleu" => graded(
            scorer_type,
            map,
            GradedMeasure::Lexical(Lexical::Bleu),
            template,
        )?,
        "chrf" => graded(
            scorer_type,
            map,
            GradedMeasure::Lexical(Lexical::Chrf),
            template,
        )?,
        "levenshtein" => graded(
            scorer_type,
            map,
            GradedMeasure::Lexical(Lexical::Levenshtein),
            template,
        )?,
        "rouge" => graded(
            scorer_type,
            map,
            GradedMeasure::Lexical(Lexical::Rouge(variant(scorer_type, map)?)),
            template,
        )?,
        _ => {
            let node = map.get("method").ok_or_else(|| {
                map.err("scorer `similarity` needs `method`")
                    .with_hint(format!("methods: {}", METHODS.join(", ")))
            })?;
            let method = node.scalar_string("method")?;
            let model_key = map.get("model_key");
            if method != "embedding" {
                if let Some(k) = model_key {
                    return Err(k
                        .err(format!("`model_key` is for `method: embedding`, and this similarity uses `method: {method}`"))
                        .with_hint("remove `model_key`, or use `method: embedding`"));
                }
            }
            if method != "rouge" {
                if let Some(v) = map.get("variant") {
                    return Err(v
                        .err(format!("`variant` is for `method: rouge`, and this similarity uses `method: {method}`"))
                        .with_hint("remove `variant`, or use `method: rouge`"));
                }
            }
            let measure = match method.as_str() {
                "f1" => GradedMeasure::Lexical(Lexical::F1),
                "chrf" => GradedMeasure::Lexical(Lexical::Chrf),
                "levenshtein" => GradedMeasure::Lexical(Lexical::Levenshtein),
                "rouge" => GradedMeasure::Lexical(Lexical::Rouge(variant("similarity", map)?)),
                "embedding" => {
                    let k = model_key.ok_or_else(|| {
                        map.err("`similarity` with `method: embedding` needs `model_key`")
                            .with_hint("name an embedding endpoint of the task's `models:` map, e.g. `model_key: embedder`")
                    })?;
                    GradedMeasure::Embedding {
                        model_key: k.scalar_string("model_key")?,
                        location: k.location,
                    }
                }
                other => {
                    let h = match crate::error::did_you_mean(other, METHODS) {
                        Some(s) => format!("did you mean `{s}`? methods: {}", METHODS.join(", ")),
                        None => format!("methods: {}", METHODS.join(", ")),
                    };
                    return Err(node
                        .err(format!("unknown similarity method `{other}`"))
                        .with_hint(h));
                }
            };
            graded(scorer_type, map, measure, template)?
        }
    })
}

/// A graded scorer: `expected` and `threshold` are required.
fn graded(
    scorer_type: &str,
    map: &MapNode<'_>,
    measure: GradedMeasure,
    template: &mut Compile<'_>,
) -> Result<ScorerKind, TaskError> {
    let threshold = threshold(scorer_type, map)?;
    let expected = template("expected")?.ok_or_else(|| {
        map.err(format!("scorer `{scorer_type}` needs `expected`"))
            .with_hint("e.g. `expected: \"{{ sample.answer }}\"` or a list of references")
    })?;
    Ok(ScorerKind::Graded {
        measure,
        expected,
        threshold,
        value: template("value")?,
    })
}

/// `threshold:`, required: a number from 0 to 1.
fn threshold(scorer_type: &str, map: &MapNode<'_>) -> Result<f64, TaskError> {
    let hint = "`is_correct` is `score >= threshold`; e.g. `threshold: 0.5`";
    let node = map.get("threshold").ok_or_else(|| {
        map.err(format!("scorer `{scorer_type}` needs `threshold`"))
            .with_hint(hint)
    })?;
    let text = node.scalar_string("threshold")?;
    match text.trim().parse::<f64>() {
        Ok(t) if (0.0..=1.0).contains(&t) => Ok(t),
        _ => Err(node
            .err(format!(
                "`threshold` must be a number from 0 to 1, found `{text}`"
            ))
            .with_hint(hint)),
    }
}

/// `variant:` of ROUGE, required.
fn variant(scorer_type: &str, map: &MapNode<'_>) -> Result<RougeVariant, TaskError> {
    let hint = format!("variants: {}", RougeVariant::NAMES.join(", "));
    let node = map.get("variant").ok_or_else(|| {
        map.err(format!("scorer `{scorer_type}` with ROUGE needs `variant`"))
            .with_hint(hint.clone())
    })?;
    let name = node.scalar_string("variant")?;
    RougeVariant::from_name(&name).ok_or_else(|| {
        let h = match crate::error::did_you_mean(&name, RougeVariant::NAMES) {
            Some(s) => format!("did you mean `{s}`? {hint}"),
            None => hint,
        };
        node.err(format!("unknown ROUGE variant `{name}`"))
            .with_hint(h)
    })
}

/// A tolerance option: a finite number >= 0, default 0.
fn non_negative(map: &MapNode<'_>, key: &str) -> Result<f64, TaskError> {
    let Some(node) = map.get(key) else {
        return Ok(0.0);
    };
    let text = node.scalar_string(key)?;
    match text.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(node
            .err(format!("`{key}` must be a number >= 0, found `{text}`"))
            .with_hint("e.g. `abs_tolerance: 0.01` or `rel_tolerance: 0.001`")),
    }
}

/// Every `similarity` with `method: embedding` names an endpoint of `models:`.
pub(crate) fn check_model_keys(
    scorers: &[ScorerSpec],
    models: &BTreeMap<String, ModelSpec>,
) -> Result<(), TaskError> {
    for s in scorers {
        if let ScorerKind::Graded {
            measure:
                GradedMeasure::Embedding {
                    model_key,
                    location,
                },
            ..
        } = &s.kind
        {
            if !models.contains_key(model_key) {
                let names: Vec<&str> = models.keys().map(String::as_str).collect();
                let hint = if names.is_empty() {
                    "the task has no `models:`; add one, e.g. `models: {embedder: {base_url: \"http://127.0.0.1:8080/v1\", model: nomic-embed}}`".to_owned()
                } else {
                    match crate::error::did_you_mean(model_key, &names) {
                        Some(n) => format!("did you mean `{n}`? models: {}", names.join(", ")),
                        None => format!("models: {}", names.join(", ")),
                    }
                };
                return Err(TaskError::new(
                    format!("`model_key: {model_key}` names no entry of `models:`"),
                    *location,
                )
                .with_hint(hint));
            }
        }
    }
    Ok(())
}
