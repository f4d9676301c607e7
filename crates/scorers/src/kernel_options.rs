//! Options that build kernel types once, when the task is loaded: regular expressions (with
//! the task's size limits) and JSON Schemas.

use crate::input::options::pattern_error;
use crate::scorer::ParseCx;
use evalscore_kernels::pattern::SearchPattern;
use evalscore_kernels::JsonSchema;
use evalscore_task::{Node, TaskError};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `schema:` an inline JSON Schema (a mapping), or the path of a JSON (or YAML) file.
pub fn parse_schema(node: Node<'_>, base_dir: Option<&Path>) -> Result<JsonSchema, TaskError> {
    let hint = "give the schema inline (`schema: {type: object, required: [answer]}`) or as a file path; supported keywords: "
        .to_owned()
        + &evalscore_kernels::json::SCHEMA_KEYWORDS.join(", ");
    // Inline: a mapping, or `true` / `false` (the schemas that pass or fail everything).
    let json = if node.as_map().is_some() || node.is_bool() {
        node.to_json()
    } else {
        let path = node.scalar_string("schema")?;
        let full: PathBuf = match base_dir {
            Some(b) if Path::new(&path).is_relative() => b.join(&path),
            _ => PathBuf::from(&path),
        };
        let text = std::fs::read_to_string(&full).map_err(|e| {
            node.err(format!("cannot read schema file `{}`: {e}", full.display()))
                .with_hint(hint.clone())
        })?;
        serde_json::from_str::<Value>(&text)
            .map_err(|e| node.err(format!("schema file `{}` is not JSON: {e}", full.display())))?
    };
    JsonSchema::compile(&json)
        .map_err(|e| node.err(format!("invalid `schema`: {e}")).with_hint(hint))
}

/// `pattern:`, required: the regular expression `regex` and `not_regex` search the value
/// for (`what` names it in errors, `example` is the hint's). Returns its node too.
pub fn search_pattern<'a>(
    cx: &ParseCx<'a>,
    what: &str,
    example: &str,
) -> Result<(SearchPattern, Node<'a>), TaskError> {
    let node = cx.required("pattern", example)?;
    let text = node.scalar_string("pattern")?;
    let pattern = SearchPattern::new(&text).map_err(|e| {
        pattern_error(node, what, e, "patterns use Rust regex syntax (https://docs.rs/regex): inline flags like (?i), no look-around or backreferences")
    })?;
    Ok((pattern, node))
}

/// `schema:`, optional: see [`parse_schema`].
pub fn schema_option(cx: &ParseCx<'_>) -> Result<Option<JsonSchema>, TaskError> {
    match cx.given("schema") {
        Some(n) => Ok(Some(parse_schema(n, cx.base_dir())?)),
        None => Ok(None),
    }
}
