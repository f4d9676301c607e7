//! The scorers of a task file walked into [`ScorerSpec`]s: the common keys (`type`, `key`,
//! `display_name`, `purpose`, `metrics`, `write_scores`, `write_fields`; `normalize` and `extract` for the
//! kinds that score a text) here, each kind's own options by its [`ScorerType`] found in the
//! registry. Every error is at its line and column.

use crate::registry;
use crate::scorer::ParseCx;
use crate::spec::ScorerSpec;
use evalscore_task::{
    did_you_mean, sanitize, Location, ModelSpec, Node, Purpose, ScorerField, ScorerOptions,
    TaskError, TemplateCompiler,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The keys every scorer takes, in the order "allowed keys" lists them; a kind without
/// [`ScorerType::text_options`] takes the first five, its own, then the last two.
const COMMON_SCORER_KEYS: &[&str] = &[
    "type",
    "key",
    "display_name",
    "purpose",
    "metrics",
    "normalize",
    "extract",
    "write_scores",
    "write_fields",
];

/// Everything a scorer's parser reads besides its mapping.
pub(crate) struct TaskScope<'a> {
    pub compiler: &'a mut TemplateCompiler,
    pub warnings: &'a mut Vec<String>,
    pub base_dir: Option<&'a Path>,
    pub models: &'a BTreeMap<String, ModelSpec>,
}

/// The hint that lists every scorer type, after a suggestion when one is close.
fn types_hint(suggestion: Option<&str>) -> String {
    let names = registry::type_names().join(", ");
    match suggestion {
        Some(s) => format!("did you mean `{s}`? scorer types: {names}"),
        None => format!("scorer types: {names}"),
    }
}

/// Parses one entry of `definition.scorers`. Its key is assigned later ([`assign_keys`]).
pub(crate) fn parse_scorer(
    node: Node<'_>,
    scope: &mut TaskScope<'_>,
) -> Result<ScorerSpec, TaskError> {
    let map = node.map("a scorer")?;
    let type_node = map
        .get("type")
        .ok_or_else(|| map.err("scorer has no `type`").with_hint(types_hint(None)))?;
    let scorer_type = type_node.scalar_string("type")?;
    let Some(kind) = registry::find(&scorer_type) else {
        let names = registry::type_names();
        return Err(type_node
            .err(format!("unknown scorer type `{scorer_type}`"))
            .with_hint(types_hint(did_you_mean(&scorer_type, &names))));
    };
    let own = kind.options().iter().map(|o| o.key);
    let allowed: Vec<&str> = if kind.text_options() {
        COMMON_SCORER_KEYS.iter().copied().chain(own).collect()
    } else {
        COMMON_SCORER_KEYS[..5]
            .iter()
            .copied()
            .chain(own)
            .chain(COMMON_SCORER_KEYS[7..].iter().copied())
            .collect()
    };
    map.check_keys(&allowed, &format!("scorer `{scorer_type}`"))?;
    let options = ScorerOptions::new(
        map,
        &scorer_type,
        scope.compiler,
        scope.warnings,
        scope.base_dir,
        scope.models,
    );
    let mut cx = ParseCx::new(options, kind.text_options())?;
    let scorer = kind.parse(&scorer_type, &mut cx)?;

    let purpose = match map.get("purpose") {
        None => Purpose::Score,
        Some(n) => match n.scalar_string("purpose")?.as_str() {
            "score" => Purpose::Score,
            "qa" => Purpose::Qa,
            other => {
                return Err(n
                    .err(format!("unknown purpose `{other}`"))
                    .with_hint("purpose is `score` or `qa`"))
            }
        },
    };
    let key = map.get("key").map(|n| n.scalar_string("key")).transpose()?;
    let display_name = map
        .get("display_name")
        .map(|n| n.scalar_string("display_name"))
        .transpose()?;
    let metrics = match map.get("metrics") {
        Some(n) => {
            evalscore_metrics::parse_metrics(n, scorer.fields(), &scorer_type, scope.compiler)?
        }
        None => Vec::new(),
    };
    let write_scores = map
        .get("write_scores")
        .map(|n| n.boolean("write_scores"))
        .transpose()?
        .unwrap_or(true);
    let write_fields = match map.get("write_fields") {
        None => Vec::new(),
        Some(n) => write_fields(n, scorer.fields(), &scorer_type)?,
    };
    Ok(ScorerSpec {
        write_scores,
        write_fields,
        key: key.unwrap_or_default(),
        scorer_type,
        display_name,
        purpose,
        scorer,
        metrics,
        location: map.location,
    })
}

/// `write_fields:`, the fields written to scores.parquet besides the default ones: each a
/// field of the scorer, once.
fn write_fields(
    node: Node<'_>,
    fields: &[ScorerField],
    scorer_type: &str,
) -> Result<Vec<&'static str>, TaskError> {
    let mut out: Vec<&'static str> = Vec::new();
    for n in node.seq("`write_fields`")? {
        let name = n.scalar_string("write_fields")?;
        let Some(f) = fields.iter().find(|f| f.name == name) else {
            let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
            return Err(n
                .err(format!("scorer `{scorer_type}` has no field `{name}`"))
                .with_hint(format!("fields of `{scorer_type}`: {}", names.join(", "))));
        };
        if out.contains(&f.name) {
            return Err(n.err(format!("`write_fields` lists `{name}` twice")));
        }
        out.push(f.name);
    }
    Ok(out)
}

/// Gives every scorer its warehouse-safe key: the `key` as written with characters outside
/// `[A-Za-z0-9_]` replaced by `_`, else the type, then `type_2`, `type_3`, ... on repeats.
pub(crate) fn assign_keys(scorers: &mut [ScorerSpec]) -> Result<(), TaskError> {
    let mut seen: BTreeMap<String, Option<Location>> = BTreeMap::new();
    let explicit: BTreeSet<String> = scorers
        .iter()
        .filter(|s| !s.key.is_empty())
        .map(|s| sanitize(&s.key))
        .collect();
    let mut type_counts: BTreeMap<String, usize> = BTreeMap::new();
    for s in scorers.iter_mut() {
        let key = if s.key.is_empty() {
            let base = sanitize(&s.scorer_type);
            let mut n = type_counts.get(&base).copied().unwrap_or(0);
            loop {
                n += 1;
                let candidate = if n == 1 {
                    base.clone()
                } else {
                    format!("{base}_{n}")
                };
                if !explicit.contains(&candidate) && !seen.contains_key(&candidate) {
                    type_counts.insert(base, n);
                    break candidate;
                }
            }
        } else {
            sanitize(&s.key)
        };
        if let Some(prev) = seen.get(&key) {
            let prev = prev
                .map(|l| format!(" (the other is at {l})"))
                .unwrap_or_default();
            let original = if s.key.is_empty() || s.key == key {
                String::new()
            } else {
                format!(" (`{}` made warehouse-safe)", s.key)
            };
            return Err(TaskError::new(
                format!("two scorers have the key `{key}`{original}{prev}"),
                s.location,
            )
            .with_hint(
                "give each scorer a distinct `key:`; keys may use only A-Z, a-z, 0-9 and _",
            ));
        }
        seen.insert(key.clone(), s.location);
        s.key = key;
    }
    Ok(())
}
