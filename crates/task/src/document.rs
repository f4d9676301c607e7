//! A task file read up to its scorers: `config:` and `--set` values substituted into the
//! placeholders, the YAML parsed with its locations, and the top-level keys that are not
//! scorers (`definition.output_column`, `confidence`, `models:`, `filter:`) checked and typed. The
//! scorers are left as located nodes for the scorer registry to parse.

use crate::placeholders::substitute_placeholders;
use crate::raw::{Node, Tree};
use crate::{Location, ModelSpec, TaskError};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

const DEFINITION_KEYS: &[&str] = &["scorers", "output_column", "confidence"];

/// A task's top-level `filter:`: an expression over the inputs' Hive partition columns (the
/// language of `--where`, which the reader crate parses), ANDed with `--where`; only the
/// files it matches are read.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFilter {
    /// The expression as written.
    pub text: String,
    /// Where its value is in the task file, for messages.
    pub location: Option<Location>,
}

/// A task file whose scorers are not parsed yet.
#[derive(Debug)]
pub struct TaskDocument {
    /// The model output column named by `definition.output_column`, if any.
    pub output_column: Option<String>,
    /// Non-fatal remarks so far (ignored keys).
    pub warnings: Vec<String>,
    /// The `config:` values after `--set` overrides, as used for the placeholders.
    pub config: BTreeMap<String, String>,
    /// The level of every confidence interval (`confidence:`, default 0.95).
    pub confidence: f64,
    /// The judge endpoints of `models:`, by name.
    pub models: BTreeMap<String, ModelSpec>,
    /// SHA-256 of the task text after `<< config.NAME >>` substitution.
    pub fingerprint: [u8; 32],
    /// `filter:`, the task's partition filter.
    pub filter: Option<TaskFilter>,
    /// The entries of `definition.scorers` (at least one).
    scorers: Vec<Spanned<Tree>>,
}

impl TaskDocument {
    /// Reads a task file's text up to its scorers. `overrides` are the `--set NAME=VALUE`
    /// pairs; they win over the file's `config:`.
    pub fn parse(text: &str, overrides: &[(String, String)]) -> Result<TaskDocument, TaskError> {
        // Pass 1: read `config:` from the text with placeholders blanked out, so that a
        // placeholder in an unquoted position cannot make the YAML unreadable.
        let blanked = blank_placeholders(text);
        let doc: Spanned<Tree> = parse_yaml(&blanked)?;
        let mut config = BTreeMap::new();
        if let Tree::Map(entries) = &doc.value {
            if let Some((_, cfg)) = entries.iter().find(|(k, _)| k.value == "config") {
                let node = Node::new(cfg);
                if !node.is_null() {
                    let map = node.map("`config`")?;
                    for (k, v) in map.entries {
                        let value = Node::new(v).scalar_string(&format!("config.{}", k.value))?;
                        config.insert(k.value.clone(), value);
                    }
                }
            }
        }
        for (k, v) in overrides {
            config.insert(k.clone(), v.clone());
        }

        // Pass 2: the real text.
        let text = substitute_placeholders(text, &config)?;
        let doc: Spanned<Tree> = parse_yaml(&text)?;
        let root = Node::new(&doc).map("the task file")?;
        let mut warnings = Vec::new();
        for (key, loc) in root.keys() {
            if !matches!(
                key,
                "config" | "definition" | "confidence" | "models" | "filter"
            ) {
                warnings.push(format!(
                    "ignoring top-level key `{key}`{}",
                    loc.map(|l| format!(" at {l}")).unwrap_or_default()
                ));
            }
        }
        let definition = root.get("definition").ok_or_else(|| {
            root.err("the task file has no `definition:`")
                .with_hint("a task file looks like `definition: {scorers: [{type: string_equals, ground_truth: \"{{ sample.answer }}\"}]}`")
        })?;
        let definition = definition.map("`definition`")?;
        for (key, loc) in definition.keys() {
            if !DEFINITION_KEYS.contains(&key) {
                warnings.push(format!(
                    "ignoring `definition.{key}`{}: evalscore scores existing outputs and does not use it",
                    loc.map(|l| format!(" at {l}")).unwrap_or_default()
                ));
            }
        }
        let confidence = match definition
            .get("confidence")
            .or_else(|| root.get("confidence"))
        {
            None => 0.95,
            Some(n) => {
                let text = n.scalar_string("confidence")?;
                match text.parse::<f64>() {
                    Ok(c) if c > 0.0 && c < 1.0 => c,
                    _ => {
                        return Err(n
                            .err(format!(
                                "`confidence` must be a number between 0 and 1, found `{text}`"
                            ))
                            .with_hint("e.g. `confidence: 0.9` for 90% intervals"))
                    }
                }
            }
        };
        let models = crate::models::parse_models(root.get("models"))?;
        let filter = match root.get("filter").filter(|n| !n.is_null()) {
            None => None,
            Some(n) => Some(TaskFilter {
                text: n.scalar_string("filter")?,
                location: n.location,
            }),
        };
        let output_column = definition
            .get("output_column")
            .map(|n| n.scalar_string("output_column"))
            .transpose()?;
        let scorers_node = definition.get("scorers").ok_or_else(|| {
            definition
                .err("`definition` has no `scorers:` list")
                .with_hint("add `scorers:` with at least one scorer")
        })?;
        if scorers_node.seq("`scorers`")?.is_empty() {
            return Err(scorers_node.err("`scorers` is empty; a task needs at least one scorer"));
        }
        let scorers = match scorers_node.tree {
            Tree::Seq(items) => items.clone(),
            _ => Vec::new(),
        };
        let fingerprint = {
            use sha2::Digest;
            sha2::Sha256::digest(text.as_bytes()).into()
        };
        Ok(TaskDocument {
            output_column,
            warnings,
            config,
            confidence,
            models,
            fingerprint,
            filter,
            scorers,
        })
    }

    /// The entries of `definition.scorers`, in the order written.
    pub fn scorers(&self) -> impl Iterator<Item = Node<'_>> {
        self.scorers.iter().map(Node::new)
    }
}

/// YAML parser events a task file may produce (aliases expanded); real tasks use a few hundred.
const MAX_EVENTS: usize = 20_000;

pub(crate) fn parse_yaml(text: &str) -> Result<Spanned<Tree>, TaskError> {
    let mut options = serde_saphyr::Options::default();
    // Task files are small; these limits stop alias bombs and deeply nested input early.
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = MAX_EVENTS;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_depth = 64;
    options.budget = Some(budget);
    // YAML 1.2's core schema: `yes`, `no`, `on`, `y` are text, and so are `010` and `1_000`,
    // as written, not the booleans and numbers YAML 1.1 made of them (a task named `y`
    // would write to `task=true`, a label `010` read `10.0`).
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.underscored_numbers_as_strings = true;
    serde_saphyr::from_str_with_options::<Spanned<Tree>>(text, options).map_err(|e| {
        let location = e.location().and_then(|l| Location::from_saphyr(&l));
        TaskError::new(format!("invalid YAML: {}", yaml_message(&e)), location)
    })
}

/// The YAML error's own sentence, without the location and snippet we render ourselves.
fn yaml_message(e: &serde_saphyr::Error) -> String {
    let text = e.without_snippet().to_string();
    if let Some(rest) = text.split("budget breached: ").nth(1) {
        let what = rest
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or_default()
            .to_lowercase();
        return format!(
            "the YAML is too large once aliases are expanded (too many {what}); limits: {MAX_EVENTS} events, 1000 aliases and anchors, nesting depth 64"
        );
    }
    let first = text.lines().next().unwrap_or_default().trim().to_owned();
    // Drop a trailing " at line X, column Y" that duplicates our own location.
    match first.rfind(" at line ") {
        Some(i) => first[..i].to_owned(),
        None => first,
    }
}

fn blank_placeholders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<<") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let after_open = after[2..].trim_start();
        if after_open.starts_with("config.") {
            if let Some(end) = after.find(">>") {
                out.push('x');
                rest = &after[end + 2..];
                continue;
            }
        }
        out.push_str("<<");
        rest = &after[2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// YAML 1.2's core schema: only `true` and `false` are booleans, and numbers written with
    /// a leading zero or underscores stay the text written.
    #[test]
    fn values_are_read_as_yaml_1_2_reads_them() {
        let doc = parse_yaml("a: yes\nb: 010\nc: 1_000\nd: true\ne: 0x1F\nf: on\ng: 7\n").unwrap();
        let json = doc.value.to_json();
        assert_eq!(
            json,
            serde_json::json!({"a": "yes", "b": "010", "c": "1_000", "d": true, "e": 31, "f": "on", "g": 7})
        );
    }
}
