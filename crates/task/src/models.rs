//! The task's `models:` map: the judge endpoints that model-graded scorers name by
//! `model_key`. Keys never live in a task file: `api_key_env` names the environment variable
//! that holds one.

use crate::raw::{MapNode, Node};
use crate::TaskError;
use std::collections::BTreeMap;

/// One judge endpoint (an OpenAI-compatible API) and how to call it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// The API root, such as `http://127.0.0.1:8080/v1` (`http` or `https`).
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key, if the endpoint needs one.
    pub api_key_env: Option<String>,
    pub temperature: f64,
    pub seed: Option<i64>,
    pub max_tokens: Option<u64>,
    pub concurrency: u32,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
    pub timeout_s: f64,
    pub max_retries: u32,
}

const MODEL_KEYS: &[&str] = &[
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "seed",
    "max_tokens",
    "concurrency",
    "requests_per_minute",
    "tokens_per_minute",
    "timeout_s",
    "max_retries",
];

/// Reads `models:` (absent or null: no models).
pub(crate) fn parse_models(
    node: Option<Node<'_>>,
) -> Result<BTreeMap<String, ModelSpec>, TaskError> {
    let mut models = BTreeMap::new();
    let Some(node) = node.filter(|n| !n.is_null()) else {
        return Ok(models);
    };
    let map = node.map("`models`")?;
    for (key, value) in map.entries {
        let name = key.value.clone();
        let spec = Node::new(value).map(&format!("`models.{name}`"))?;
        spec.check_keys(MODEL_KEYS, &format!("`models.{name}`"))?;
        models.insert(name.clone(), parse_model(&name, spec)?);
    }
    Ok(models)
}

fn parse_model(name: &str, spec: MapNode<'_>) -> Result<ModelSpec, TaskError> {
    let field = |k: &str| format!("models.{name}.{k}");
    let required = |k: &str| {
        spec.get(k).ok_or_else(|| {
            spec.err(format!("`models.{name}` has no `{k}`"))
                .with_hint("a model needs `base_url` (an OpenAI-compatible API root such as `http://127.0.0.1:8080/v1`) and `model`")
        })
    };
    let base_node = required("base_url")?;
    let base_url = base_node.scalar_string(&field("base_url"))?;
    if !(base_url.starts_with("http://") || base_url.starts_with("https://"))
        || base_url.len() <= "https://".len()
    {
        return Err(base_node
            .err(format!(
                "`{}` must be an http:// or https:// URL, found `{base_url}`",
                field("base_url")
            ))
            .with_hint(
                "the API root, such as `http://127.0.0.1:8080/v1` or `https://api.openai.com/v1`",
            ));
    }
    let model = required("model")?.scalar_string(&field("model"))?;
    let api_key_env = match spec.get("api_key_env") {
        None => None,
        Some(n) => {
            let v = n.scalar_string(&field("api_key_env"))?;
            let valid = v
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(n
                    .err(format!(
                        "`{}` must name an environment variable (letters, digits, _), found `{v}`",
                        field("api_key_env")
                    ))
                    .with_hint("put the key in an environment variable and name it here, e.g. `api_key_env: OPENAI_API_KEY`; keys never go in task files"));
            }
            Some(v)
        }
    };
    Ok(ModelSpec {
        base_url,
        model,
        api_key_env,
        temperature: number(&spec, name, "temperature", 0.0, 0.0, 2.0)?,
        seed: integer(&spec, name, "seed", i64::MIN as f64, i64::MAX as f64)?.map(|v| v as i64),
        max_tokens: integer(&spec, name, "max_tokens", 1.0, 1e9)?.map(|v| v as u64),
        concurrency: integer(&spec, name, "concurrency", 1.0, 1024.0)?.map_or(8, |v| v as u32),
        requests_per_minute: integer(&spec, name, "requests_per_minute", 1.0, 1e9)?
            .map(|v| v as u32),
        tokens_per_minute: integer(&spec, name, "tokens_per_minute", 1.0, 1e15)?.map(|v| v as u64),
        timeout_s: number(&spec, name, "timeout_s", 60.0, 0.001, 86_400.0)?,
        max_retries: integer(&spec, name, "max_retries", 0.0, 100.0)?.map_or(5, |v| v as u32),
    })
}

/// A number option in `[min, max]`, or its default.
fn number(
    spec: &MapNode<'_>,
    name: &str,
    key: &str,
    default: f64,
    min: f64,
    max: f64,
) -> Result<f64, TaskError> {
    let Some(n) = spec.get(key) else {
        return Ok(default);
    };
    let text = n.scalar_string(&format!("models.{name}.{key}"))?;
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && (min..=max).contains(&v) => Ok(v),
        _ => Err(n.err(format!(
            "`models.{name}.{key}` must be a number from {min} to {max}, found `{text}`"
        ))),
    }
}

/// A whole-number option in `[min, max]`, if given.
fn integer(
    spec: &MapNode<'_>,
    name: &str,
    key: &str,
    min: f64,
    max: f64,
) -> Result<Option<i128>, TaskError> {
    let Some(n) = spec.get(key) else {
        return Ok(None);
    };
    let text = n.scalar_string(&format!("models.{name}.{key}"))?;
    match text.parse::<i128>() {
        Ok(v) if (min..=max).contains(&(v as f64)) => Ok(Some(v)),
        _ => Err(n.err(format!(
            "`models.{name}.{key}` must be a whole number from {min} to {max}, found `{text}`"
        ))),
    }
}
