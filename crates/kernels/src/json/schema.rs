//! A small JSON Schema subset ([`SCHEMA_KEYWORDS`]): compiled once when the task is loaded,
//! then a document's first violation as `<pointer>: <what>`.
//!
//! # Why not the `jsonschema` crate
//!
//! `jsonschema` 0.61.2 (no default features, draft 2020-12, its `regex` engine under
//! [`REGEX_SIZE_LIMIT`](crate::pattern::REGEX_SIZE_LIMIT), offline) was measured beside this
//! module by `tests/it/schema_vs_jsonschema.rs`. It is faster, but it breaks four of the
//! promises a `schema:` option makes (docs/scorers.md), and keeping them around it would keep
//! most of this module:
//!
//! - **Unknown keywords:** it ignores them, as the specification asks, so `requird: [answer]`
//!   checks nothing; here any keyword outside the subset is a load error.
//! - **Messages:** the first violation has the same pointer but other words
//!   (`/score: 11 is greater than the maximum of 10`, `/: "reason" is a required property`);
//!   `details` would change on every existing run unless each error kind were reworded.
//! - **Patterns:** it reads `pattern` as ECMA-262 (`\d` is ASCII: `"٣٤"` fails `^\d+$`), where
//!   every other pattern in a task is Rust regex syntax, compiled by [`crate::pattern::compile`]
//!   with its nesting limit and counted against the task's regex budget; `jsonschema` takes the
//!   size limits only (a pattern nested 70 deep loads there, not here).
//! - **Depth:** nothing bounds a schema's nesting; here [`MAX_DEPTH`] does.
//!
//! Remote and file `$ref`s are refused by both. Measured in release on the 2-core build
//! machine under other load, validating 200,000 parsed judge replies (required keys, an
//! `enum`, a number range, a `pattern`, `additionalProperties: false`; one in five invalid, both
//! giving the same verdict and pointer on every one): this module 3.9-4.0 M docs/s,
//! `jsonschema` 4.8-5.6 M docs/s with the first error formatted, 5.4-5.6 M for `is_valid`
//! alone; compiling the schema 0.35 ms here, 2.4 ms there. As a normal dependency it would add
//! 35 crates (`cargo tree -p evalscore-kernels -e normal --prefix none | sort -u | wc -l`: 93,
//! 134 with it), among them `fancy-regex` and `num-bigint`, and about 320 s of release compile
//! units under that load (`jsonschema` itself 163 s). Rerun the comparison with
//! `cargo test --release -p evalscore-kernels --test it schema_vs_jsonschema -- --ignored --nocapture`;
//! its `promises` test, run with the others, fails when `jsonschema` changes any of the above.

use super::MAX_DEPTH;
use regex::Regex;
use serde_json::{Map, Value};

/// The schema keywords evalscore checks. Annotation keywords (`$schema`, `$id`, `title`,
/// `description`, `$comment`, `default`, `examples`) are accepted and ignored; any other
/// keyword is an error when the task is loaded, so a schema never silently checks less than
/// it says.
pub const SCHEMA_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
];
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "title",
    "description",
    "$comment",
    "default",
    "examples",
];
const TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// A compiled JSON Schema (the subset in [`SCHEMA_KEYWORDS`]).
#[derive(Debug, Clone)]
pub struct JsonSchema {
    root: Node,
}

#[derive(Debug, Clone, Default)]
struct Node {
    /// `false` schema: nothing validates.
    never: bool,
    types: Option<Vec<String>>,
    properties: Vec<(String, Node)>,
    required: Vec<String>,
    /// `None`: any; `Some(None)`: forbidden (`false`); `Some(Some(n))`: must validate.
    additional: Option<Option<Box<Node>>>,
    items: Option<Box<Node>>,
    enumeration: Option<Vec<Value>>,
    constant: Option<Value>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    pattern: Option<Regex>,
}

impl JsonSchema {
    /// Compiles `schema`; the error names the JSON pointer of the offending keyword.
    /// A schema nested deeper than [`MAX_DEPTH`] is an error.
    pub fn compile(schema: &Value) -> Result<JsonSchema, String> {
        Ok(JsonSchema {
            root: compile(schema, "", 0)?,
        })
    }

    /// The first violation, as `"<pointer>: <what>"`, or `None` when `v` is valid.
    pub fn validate(&self, v: &Value) -> Option<String> {
        let mut path = String::new();
        check(&self.root, v, &mut path, 0)
    }
}

/// Compiles the schema `s` found at pointer `at`, `depth` schemas below the root. The depth
/// bound keeps the recursion shallow whatever the schema file holds.
fn compile(s: &Value, at: &str, depth: usize) -> Result<Node, String> {
    let here = if at.is_empty() { "/" } else { at };
    if depth > MAX_DEPTH {
        return Err(format!(
            "schema at {here} is nested deeper than the depth limit of {MAX_DEPTH}"
        ));
    }
    let map = match s {
        Value::Bool(true) => return Ok(Node::default()),
        Value::Bool(false) => {
            return Ok(Node {
                never: true,
                ..Node::default()
            })
        }
        Value::Object(m) => m,
        _ => return Err(format!("schema at {here} must be an object or a boolean")),
    };
    let mut n = Node::default();
    let num = |k: &str, v: &Value| {
        v.as_f64()
            .ok_or_else(|| format!("`{k}` at {here} must be a number"))
    };
    let count = |k: &str, v: &Value| {
        v.as_u64()
            .ok_or_else(|| format!("`{k}` at {here} must be a non-negative integer"))
    };
    for (k, v) in map {
        match k.as_str() {
            "type" => {
                let list: Vec<String> = match v {
                    Value::String(t) => vec![t.clone()],
                    Value::Array(a) => a
                        .iter()
                        .map(|t| t.as_str().map(str::to_owned))
                        .collect::<Option<_>>()
                        .ok_or_else(|| {
                            format!("`type` at {here} must be a string or a list of strings")
                        })?,
                    _ => {
                        return Err(format!(
                            "`type` at {here} must be a string or a list of strings"
                        ))
                    }
                };
                if let Some(bad) = list.iter().find(|t| !TYPES.contains(&t.as_str())) {
                    return Err(format!(
                        "unknown type `{bad}` at {here} (types: {})",
                        TYPES.join(", ")
                    ));
                }
                n.types = Some(list);
            }
            "properties" => {
                let m = v
                    .as_object()
                    .ok_or_else(|| format!("`properties` at {here} must be an object"))?;
                for (name, sub) in m {
                    n.properties.push((
                        name.clone(),
                        compile(sub, &format!("{at}/properties/{name}"), depth + 1)?,
                    ));
                }
            }
            "required" => {
                n.required = v
                    .as_array()
                    .and_then(|a| {
                        a.iter()
                            .map(|x| x.as_str().map(str::to_owned))
                            .collect::<Option<_>>()
                    })
                    .ok_or_else(|| format!("`required` at {here} must be a list of strings"))?;
            }
            "additionalProperties" => {
                n.additional = match v {
                    Value::Bool(true) => None,
                    Value::Bool(false) => Some(None),
                    other => Some(Some(Box::new(compile(
                        other,
                        &format!("{at}/additionalProperties"),
                        depth + 1,
                    )?))),
                };
            }
            "items" => n.items = Some(Box::new(compile(v, &format!("{at}/items"), depth + 1)?)),
            "enum" => {
                n.enumeration = Some(
                    v.as_array()
                        .cloned()
                        .ok_or_else(|| format!("`enum` at {here} must be a list"))?,
                )
            }
            "const" => n.constant = Some(v.clone()),
            "minimum" => n.minimum = Some(num(k, v)?),
            "maximum" => n.maximum = Some(num(k, v)?),
            "exclusiveMinimum" => n.exclusive_minimum = Some(num(k, v)?),
            "exclusiveMaximum" => n.exclusive_maximum = Some(num(k, v)?),
            "minLength" => n.min_length = Some(count(k, v)?),
            "maxLength" => n.max_length = Some(count(k, v)?),
            "minItems" => n.min_items = Some(count(k, v)?),
            "maxItems" => n.max_items = Some(count(k, v)?),
            "pattern" => {
                let p = v
                    .as_str()
                    .ok_or_else(|| format!("`pattern` at {here} must be a string"))?;
                n.pattern = Some(
                    crate::pattern::compile(p).map_err(|e| format!("`pattern` at {here}: {e}"))?,
                );
            }
            a if ANNOTATIONS.contains(&a) => {}
            other => {
                return Err(format!(
                    "schema keyword `{other}` at {here} is not supported (supported: {})",
                    SCHEMA_KEYWORDS.join(", ")
                ))
            }
        }
    }
    Ok(n)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        t => type_name(v) == t,
    }
}

fn at(path: &str) -> &str {
    if path.is_empty() {
        "/"
    } else {
        path
    }
}

fn escape_pointer(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The first violation of `n` by `v`, which is `depth` levels below the document's root.
///
/// The recursion follows the schema and the document together, so it is bounded by the
/// schema's depth (at most [`MAX_DEPTH`], see [`compile`]) and the document's (at most
/// [`MAX_DEPTH`], checked before parsing); the explicit bound below states it.
fn check(n: &Node, v: &Value, path: &mut String, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return Some(format!(
            "{}: nesting exceeds the depth limit of {MAX_DEPTH}",
            at(path)
        ));
    }
    if n.never {
        return Some(format!("{}: no value is allowed here", at(path)));
    }
    if let Some(types) = &n.types {
        if !types.iter().any(|t| has_type(v, t)) {
            return Some(format!(
                "{}: expected type {}, got {}",
                at(path),
                types.join(" or "),
                type_name(v)
            ));
        }
    }
    if let Some(e) = &n.enumeration {
        if !e.iter().any(|x| json_eq(x, v)) {
            return Some(format!("{}: {v} is not one of the `enum` values", at(path)));
        }
    }
    if let Some(c) = &n.constant {
        if !json_eq(c, v) {
            return Some(format!("{}: {v} is not the `const` value {c}", at(path)));
        }
    }
    match v {
        Value::Number(num) => {
            let f = num.as_f64().unwrap_or(f64::NAN);
            let fail = |what: &str, lim: f64| Some(format!("{}: {f} is {what} {lim}", at(path)));
            if let Some(m) = n.minimum.filter(|&m| f < m) {
                return fail("less than the minimum", m);
            }
            if let Some(m) = n.maximum.filter(|&m| f > m) {
                return fail("greater than the maximum", m);
            }
            if let Some(m) = n.exclusive_minimum.filter(|&m| f <= m) {
                return fail("not greater than the exclusive minimum", m);
            }
            if let Some(m) = n.exclusive_maximum.filter(|&m| f >= m) {
                return fail("not less than the exclusive maximum", m);
            }
        }
        Value::String(s) => {
            let len = s.chars().count() as u64;
            if let Some(m) = n.min_length.filter(|&m| len < m) {
                return Some(format!(
                    "{}: string of {len} characters is shorter than minLength {m}",
                    at(path)
                ));
            }
            if let Some(m) = n.max_length.filter(|&m| len > m) {
                return Some(format!(
                    "{}: string of {len} characters is longer than maxLength {m}",
                    at(path)
                ));
            }
            if let Some(p) = n.pattern.as_ref().filter(|p| !p.is_match(s)) {
                return Some(format!(
                    "{}: string does not match pattern {}",
                    at(path),
                    p.as_str()
                ));
            }
        }
        Value::Array(a) => {
            let len = a.len() as u64;
            if let Some(m) = n.min_items.filter(|&m| len < m) {
                return Some(format!(
                    "{}: array of {len} items has fewer than minItems {m}",
                    at(path)
                ));
            }
            if let Some(m) = n.max_items.filter(|&m| len > m) {
                return Some(format!(
                    "{}: array of {len} items has more than maxItems {m}",
                    at(path)
                ));
            }
            if let Some(items) = &n.items {
                for (i, item) in a.iter().enumerate() {
                    let keep = path.len();
                    path.push_str(&format!("/{i}"));
                    let r = check(items, item, path, depth + 1);
                    path.truncate(keep);
                    if r.is_some() {
                        return r;
                    }
                }
            }
        }
        Value::Object(m) => return check_object(n, m, path, depth),
        _ => {}
    }
    None
}

fn check_object(
    n: &Node,
    m: &Map<String, Value>,
    path: &mut String,
    depth: usize,
) -> Option<String> {
    for r in &n.required {
        if !m.contains_key(r) {
            return Some(format!("{}: missing required property `{r}`", at(path)));
        }
    }
    for (k, v) in m {
        let keep = path.len();
        path.push('/');
        path.push_str(&escape_pointer(k));
        let r = match n.properties.iter().find(|(name, _)| name == k) {
            Some((_, sub)) => check(sub, v, path, depth + 1),
            None => match &n.additional {
                None => None,
                Some(None) => Some(format!(
                    "{}: additional property `{k}` is not allowed",
                    at(&path[..keep])
                )),
                Some(Some(sub)) => check(sub, v, path, depth + 1),
            },
        };
        path.truncate(keep);
        if r.is_some() {
            return r;
        }
    }
    None
}

/// JSON equality with numbers compared by value (`1` equals `1.0`). Its recursion is as deep
/// as the shallower value: a document (at most [`MAX_DEPTH`]) or a schema's `enum`/`const`
/// (parsed by serde_json or the task's YAML parser, both depth-limited).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_nesting_is_bounded() {
        let mut deep = serde_json::json!({"type": "integer"});
        for _ in 0..MAX_DEPTH {
            deep = serde_json::json!({"items": deep});
        }
        let s = JsonSchema::compile(&deep).unwrap();
        let doc = nest_value(MAX_DEPTH, serde_json::json!("x"));
        let at = "/0".repeat(MAX_DEPTH);
        assert_eq!(
            s.validate(&doc),
            Some(format!("{at}: expected type integer, got string"))
        );
        let deeper = serde_json::json!({"items": deep});
        assert_eq!(
            JsonSchema::compile(&deeper).unwrap_err(),
            format!(
                "schema at {} is nested deeper than the depth limit of 127",
                "/items".repeat(MAX_DEPTH + 1)
            )
        );
    }

    fn nest_value(n: usize, inner: Value) -> Value {
        (0..n).fold(inner, |v, _| Value::Array(vec![v]))
    }

    #[test]
    fn unsupported_keywords_are_errors() {
        let e = JsonSchema::compile(&serde_json::json!({"properties": {"a": {"oneOf": []}}}))
            .unwrap_err();
        assert!(
            e.starts_with("schema keyword `oneOf` at /properties/a is not supported"),
            "{e}"
        );
        assert!(JsonSchema::compile(&serde_json::json!({"type": "strin"})).is_err());
    }
}
