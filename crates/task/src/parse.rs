//! Reading a task file: the YAML walked into the typed [`Task`] of `spec.rs`, every error at
//! its line and column.

use crate::placeholders::substitute_placeholders;
use crate::raw::{MapNode, Node, Tree};
use crate::spec::*;
use crate::template::{Template, TemplateCompiler, TemplateKind};
use crate::{Location, TaskError};
use evalscore_kernels::checks::text_as_list;
use evalscore_kernels::extract::DEFAULT_FALLBACK;
use evalscore_kernels::normalize::STEP_NAMES;
use evalscore_kernels::pattern::{self, PatternError};
use evalscore_kernels::{Extractor, JsonSchema, MatchMode, Needles, Normalizer, Step, UnicodeForm};
use serde_json::Value;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCORER_TYPES: &[&str] = &[
    "string_equals",
    "string_equals_mcqa",
    "match",
    "includes",
    "fuzzy_match",
    "not_match",
    "not_includes",
    "not_fuzzy_match",
    "valid_json",
    "check_injection",
    "custom",
    "exact",
    "regex",
    "pass_fail",
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
    "model_as_a_judge_classifier",
    "model_as_a_judge_scorer",
    "model_graded_fact",
    "model_graded_closed_qa",
    "model_graded_security",
    "model_graded_custom",
];
const COMMON_SCORER_KEYS: &[&str] = &[
    "type",
    "key",
    "display_name",
    "purpose",
    "metrics",
    "normalize",
    "extract",
    "write_scores",
];
const DEFINITION_KEYS: &[&str] = &["scorers", "output_column", "confidence"];

impl Task {
    /// Parses a task file's text. `overrides` are the `--set NAME=VALUE` pairs; they win over
    /// the file's `config:`.
    pub fn from_yaml(text: &str, overrides: &[(String, String)]) -> Result<Task, TaskError> {
        Task::from_yaml_in(text, overrides, None)
    }

    /// [`Task::from_yaml`] for a task file in `base_dir`: relative file paths in the task
    /// (a `valid_json` `schema:` file) are resolved against it. `None`: the current directory.
    pub fn from_yaml_in(
        text: &str,
        overrides: &[(String, String)],
        base_dir: Option<&Path>,
    ) -> Result<Task, TaskError> {
        // Every pattern of the task counts against one budget of compiled size.
        pattern::with_task_budget(|| Task::load(text, overrides, base_dir))
    }

    fn load(
        text: &str,
        overrides: &[(String, String)],
        base_dir: Option<&Path>,
    ) -> Result<Task, TaskError> {
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
            if !matches!(key, "config" | "definition" | "confidence" | "models") {
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
        let output_column = definition
            .get("output_column")
            .map(|n| n.scalar_string("output_column"))
            .transpose()?;
        let scorers_node = definition.get("scorers").ok_or_else(|| {
            definition
                .err("`definition` has no `scorers:` list")
                .with_hint("add `scorers:` with at least one scorer")
        })?;
        let scorer_nodes = scorers_node.seq("`scorers`")?;
        if scorer_nodes.is_empty() {
            return Err(scorers_node.err("`scorers` is empty; a task needs at least one scorer"));
        }

        let mut compiler = TemplateCompiler::new();
        let mut scorers = Vec::with_capacity(scorer_nodes.len());
        for node in scorer_nodes {
            scorers.push(parse_scorer(
                node,
                &mut compiler,
                &mut warnings,
                base_dir,
                &models,
            )?);
        }
        assign_keys(&mut scorers)?;
        crate::parse_more::check_model_keys(&scorers, &models)?;
        let env = Arc::new(compiler.finish());
        for s in &mut scorers {
            for t in s.kind.templates_mut() {
                t.attach(&env);
            }
        }
        let fingerprint = {
            use sha2::Digest;
            sha2::Sha256::digest(text.as_bytes()).into()
        };
        Ok(Task {
            output_column,
            scorers,
            warnings,
            config,
            confidence,
            models,
            fingerprint,
        })
    }

    /// Whether any scorer reads the model output (a missing `value`, or a template naming
    /// `solver_output`).
    pub fn needs_model_output(&self) -> bool {
        self.scorers.iter().any(|s| {
            s.kind.value().is_none() || s.kind.templates().iter().any(|t| t.uses_model_output())
        })
    }
}

/// YAML parser events a task file may produce (aliases expanded); real tasks use a few hundred.
const MAX_EVENTS: usize = 20_000;

fn parse_yaml(text: &str) -> Result<Spanned<Tree>, TaskError> {
    let mut options = serde_saphyr::Options::default();
    // Task files are small; these limits stop alias bombs and deeply nested input early.
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = MAX_EVENTS;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_depth = 64;
    options.budget = Some(budget);
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

fn parse_scorer(
    node: Node<'_>,
    compiler: &mut TemplateCompiler,
    warnings: &mut Vec<String>,
    base_dir: Option<&Path>,
    models: &BTreeMap<String, crate::ModelSpec>,
) -> Result<ScorerSpec, TaskError> {
    let mut condition_slot: Option<Template> = None;
    let map = node.map("a scorer")?;
    let type_node = map.get("type").ok_or_else(|| {
        map.err("scorer has no `type`")
            .with_hint(format!("scorer types: {}", SCORER_TYPES.join(", ")))
    })?;
    let scorer_type = type_node.scalar_string("type")?;
    let own_keys: &[&str] = match scorer_type.as_str() {
        "string_equals" => &["ground_truth", "value"],
        "string_equals_mcqa" => &[
            "ground_truth_choice",
            "choices",
            "value",
            "ground_truth_choice_field",
            "choices_field",
        ],
        "match" | "includes" | "fuzzy_match" | "not_match" | "not_includes" | "not_fuzzy_match" => {
            &["expected", "value"]
        }
        "valid_json" => &["schema", "value"],
        "check_injection" => &["value"],
        "custom" => &["condition", "function", "ground_truth", "value"],
        "exact" | "pass_fail" => &["expected_output", "value"],
        "regex" => &["pattern", "ground_truth", "value"],
        t if crate::parse_more::own_keys(t).is_some() => {
            crate::parse_more::own_keys(t).unwrap_or_default()
        }
        t if crate::judge::own_keys(t).is_some() => crate::judge::own_keys(t).unwrap_or(&[]),
        other => {
            let hint = match crate::error::did_you_mean(other, SCORER_TYPES) {
                Some(s) => format!(
                    "did you mean `{s}`? scorer types: {}",
                    SCORER_TYPES.join(", ")
                ),
                None => format!("scorer types: {}", SCORER_TYPES.join(", ")),
            };
            return Err(type_node
                .err(format!("unknown scorer type `{other}`"))
                .with_hint(hint));
        }
    };
    let judged = crate::judge::JUDGE_TYPES.contains(&scorer_type.as_str());
    // A judge reads the whole reply: `normalize:` and `extract:` have nothing to apply to.
    let common: &[&str] = if judged {
        &COMMON_SCORER_KEYS[..COMMON_SCORER_KEYS.len() - 3]
    } else {
        COMMON_SCORER_KEYS
    };
    let allowed: Vec<&str> = common
        .iter()
        .chain(own_keys)
        .chain(judged.then_some(&"write_scores"))
        .copied()
        .collect();
    map.check_keys(&allowed, &format!("scorer `{scorer_type}`"))?;

    let what = |key: &str| format!("{scorer_type}.{key}");
    let normalize = match map.get("normalize") {
        Some(n) if !n.is_null() => Some(Arc::new(parse_normalize(n)?)),
        _ => None,
    };
    let extract = match map.get("extract") {
        Some(n) if !n.is_null() => Some(Arc::new(parse_extract(n)?)),
        _ => None,
    };
    if let Some(n) = map.get("condition") {
        if scorer_type == "custom" {
            let c = compiler.compile_condition(n, &what("condition"))?;
            condition_slot = Some(c);
        }
    }
    let mut judge = if judged {
        Some(crate::judge::parse_judge(
            &scorer_type,
            &map,
            compiler,
            models,
        )?)
    } else {
        None
    };
    let mut template = |key: &str| -> Result<Option<Template>, TaskError> {
        match map.get(key) {
            None => Ok(None),
            Some(n) if n.is_null() => Ok(None),
            Some(n) => compiler.compile(n, &what(key)).map(Some),
        }
    };
    let required = |t: Option<Template>, key: &str, example: &str| {
        t.ok_or_else(|| {
            map.err(format!("scorer `{scorer_type}` needs `{key}`"))
                .with_hint(format!("e.g. `{key}: {example}`"))
        })
    };
    let kind = match scorer_type.as_str() {
        _ if judged => match judge.take() {
            Some(j) => ScorerKind::Judge(Box::new(j)),
            None => return Err(map.err("internal error: judge scorer not parsed")),
        },
        t @ ("match" | "includes" | "fuzzy_match" | "not_match" | "not_includes"
        | "not_fuzzy_match") => {
            let negate = t.starts_with("not_");
            let mode = match t.trim_start_matches("not_") {
                "match" => MatchMode::Prefix,
                "includes" => MatchMode::Substring,
                _ => MatchMode::Fuzzy,
            };
            let expected = required(
                template("expected")?,
                "expected",
                "\"{{ sample.answer }}\" or a list such as [Paris, paris]",
            )?;
            let needles = match &expected.kind {
                TemplateKind::Literal(s) => Some(Arc::new(Needles::new(
                    text_as_list(s).unwrap_or_else(|| vec![s.clone()]),
                    normalize.as_deref(),
                ))),
                TemplateKind::LiteralList(l) => {
                    Some(Arc::new(Needles::new(l, normalize.as_deref())))
                }
                _ => None,
            };
            ScorerKind::Match {
                mode,
                negate,
                expected,
                needles,
                value: template("value")?,
            }
        }
        "valid_json" => {
            let schema = match map.get("schema") {
                Some(n) if !n.is_null() => Some(Arc::new(parse_schema(n, base_dir)?)),
                _ => None,
            };
            ScorerKind::ValidJson {
                schema,
                value: template("value")?,
            }
        }
        "check_injection" => ScorerKind::CheckInjection {
            value: template("value")?,
        },
        "custom" => {
            let function = map
                .get("function")
                .filter(|n| !n.is_null())
                .map(|n| function_ref(n, "custom.function"))
                .transpose()?;
            let condition = condition_slot.take();
            match (&condition, &function) {
                (None, None) => {
                    return Err(map
                        .err("scorer `custom` needs `condition` or `function`")
                        .with_hint(
                            "e.g. `condition: \"value | length <= 280 and 'sorry' not in value | lower\"`, or `function: my_check` with the Python package's `functions={\"my_check\": fn}`",
                        ))
                }
                (Some(_), Some(_)) => {
                    let at = map.get("function").map_or(map.location, |n| n.location);
                    return Err(TaskError::new(
                        "scorer `custom` takes `condition` or `function`, not both",
                        at,
                    )
                    .with_hint("keep one: a minijinja `condition`, or a Python `function`"));
                }
                _ => {}
            }
            ScorerKind::Custom {
                condition,
                function,
                ground_truth: template("ground_truth")?,
                value: template("value")?,
            }
        }
        "exact" => {
            let expected_output = required(
                template("expected_output")?,
                "expected_output",
                "\"{{ sample.expected_output }}\"",
            )?;
            let value = template("value")?;
            ScorerKind::Exact {
                expected_output,
                value,
            }
        }
        "pass_fail" => ScorerKind::PassFail {
            expected_output: template("expected_output")?,
            value: template("value")?,
        },
        "regex" => {
            let node = map.get("pattern").filter(|n| !n.is_null()).ok_or_else(|| {
                map.err("scorer `regex` needs `pattern`")
                    .with_hint("e.g. `pattern: \"(?i)answer: (\\\\d+)\"`")
            })?;
            let text = node.scalar_string("pattern")?;
            let pattern = pattern::SearchPattern::new(&text).map_err(|e| {
                pattern_error(node, "regex.pattern", e, "patterns use Rust regex syntax (https://docs.rs/regex): inline flags like (?i), no look-around or backreferences")
            })?;
            let ground_truth = template("ground_truth")?;
            if ground_truth.is_some() && pattern.regex().captures_len() < 2 {
                return Err(node
                    .err("`regex.pattern` has no capture group, but `ground_truth` is given")
                    .with_hint("with `ground_truth`, the first capture group is compared: e.g. `answer: (\\d+)`"));
            }
            ScorerKind::Regex {
                pattern: Arc::new(pattern),
                ground_truth,
                value: template("value")?,
            }
        }
        t if crate::parse_more::TYPES.contains(&t) => {
            crate::parse_more::parse_kind(t, &map, &mut template, base_dir)?
        }
        "string_equals" => {
            let ground_truth = template("ground_truth")?.ok_or_else(|| {
                map.err("scorer `string_equals` needs `ground_truth`")
                    .with_hint("e.g. `ground_truth: \"{{ sample.answer }}\"`")
            })?;
            ScorerKind::StringEquals {
                ground_truth,
                value: template("value")?,
            }
        }
        _ => {
            let mut ground_truth_choice = template("ground_truth_choice")?;
            let mut choices = template("choices")?;
            let value = template("value")?;
            if let Some(n) = map.get("ground_truth_choice_field") {
                let col = n.scalar_string("ground_truth_choice_field")?;
                warnings.push(format!(
                    "`ground_truth_choice_field` is deprecated; use `ground_truth_choice: \"{{{{ sample.{col} }}}}\"`"
                ));
                if ground_truth_choice.is_some() {
                    return Err(n.err("give `ground_truth_choice` or the deprecated `ground_truth_choice_field`, not both"));
                }
                ground_truth_choice = Some(Template::column(
                    col,
                    n.location,
                    &what("ground_truth_choice_field"),
                ));
            }
            if let Some(n) = map.get("choices_field") {
                let col = n.scalar_string("choices_field")?;
                warnings.push(format!(
                    "`choices_field` is deprecated; use `choices: \"{{{{ sample.{col} }}}}\"`"
                ));
                if choices.is_some() {
                    return Err(n.err("give `choices` or the deprecated `choices_field`, not both"));
                }
                choices = Some(Template::column(col, n.location, &what("choices_field")));
            }
            let ground_truth_choice = ground_truth_choice.ok_or_else(|| {
                map.err("scorer `string_equals_mcqa` needs `ground_truth_choice`")
                    .with_hint("e.g. `ground_truth_choice: \"{{ sample.answer }}\"`")
            })?;
            ScorerKind::StringEqualsMcqa {
                ground_truth_choice,
                choices,
                value,
            }
        }
    };

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
    let mut metrics = Vec::new();
    if let Some(n) = map.get("metrics") {
        for m in n.seq("`metrics`")? {
            metrics.push(parse_metric(m, &kind, &scorer_type)?);
        }
    }
    let write_scores = map
        .get("write_scores")
        .map(|n| n.boolean("write_scores"))
        .transpose()?
        .unwrap_or(true);
    Ok(ScorerSpec {
        write_scores,
        key: key.unwrap_or_default(),
        scorer_type,
        display_name,
        purpose,
        kind,
        normalize,
        extract,
        metrics,
        location: map.location,
    })
}

/// `normalize:` a list of steps, each a name (`strip`) or a one-key mapping
/// (`{regexes_to_ignore: [...]}`, `{unicode: nfc}`).
fn parse_normalize(node: Node<'_>) -> Result<Normalizer, TaskError> {
    let hint = || {
        format!(
            "normalize steps: {}; e.g. `normalize: [{{regexes_to_ignore: [\"the \"]}}, ignore_case, {{unicode: nfkc}}]`",
            STEP_NAMES.join(", ")
        )
    };
    let mut steps = Vec::new();
    for item in node.seq("`normalize`").map_err(|e| e.with_hint(hint()))? {
        let (name, arg) = match item.tree {
            Tree::Map(entries) if entries.len() == 1 => {
                let (k, v) = &entries[0];
                (k.value.clone(), Some(Node::new(v)))
            }
            Tree::Map(_) => {
                return Err(item
                    .err("a normalize step with options is a mapping with one key")
                    .with_hint(hint()))
            }
            _ => (item.scalar_string("normalize step")?, None),
        };
        let step = match (name.as_str(), arg) {
            ("strip", None) => Step::Strip,
            ("ignore_case", None) => Step::IgnoreCase,
            ("ignore_punctuation", None) => Step::IgnorePunctuation,
            ("ignore_whitespace", None) => Step::IgnoreWhitespace,
            ("remove_articles", None) => Step::RemoveArticles,
            ("ignore_numbers", None) => Step::IgnoreNumbers,
            ("regexes_to_ignore", Some(arg)) => {
                let mut list = Vec::new();
                for r in arg.seq("`regexes_to_ignore`")? {
                    let text = r.scalar_string("regexes_to_ignore")?;
                    list.push(pattern::IgnorePattern::new(&text).map_err(|e| {
                        pattern_error(
                            r,
                            "regexes_to_ignore",
                            e,
                            "patterns use Rust regex syntax (https://docs.rs/regex)",
                        )
                    })?);
                }
                Step::RegexesToIgnore(list)
            }
            ("unicode", Some(arg)) => match arg.scalar_string("unicode")?.to_lowercase().as_str() {
                "nfc" => Step::Unicode(UnicodeForm::Nfc),
                "nfkc" => Step::Unicode(UnicodeForm::Nfkc),
                other => {
                    return Err(arg
                        .err(format!("unknown Unicode form `{other}`"))
                        .with_hint("`unicode: nfc` or `unicode: nfkc`"))
                }
            },
            ("regexes_to_ignore" | "unicode", None) => {
                return Err(item
                    .err(format!("normalize step `{name}` needs a value"))
                    .with_hint(hint()))
            }
            (n, Some(_)) if STEP_NAMES.contains(&n) => {
                return Err(item
                    .err(format!("normalize step `{name}` takes no value"))
                    .with_hint(hint()))
            }
            (other, _) => {
                let h = match crate::error::did_you_mean(other, STEP_NAMES) {
                    Some(s) => format!("did you mean `{s}`? {}", hint()),
                    None => hint(),
                };
                return Err(item
                    .err(format!("unknown normalize step `{other}`"))
                    .with_hint(h));
            }
        };
        steps.push(step);
    }
    Ok(Normalizer::new(steps))
}

const EXTRACT_PRESETS: &[&str] = &["answer_letter", "last_number"];

/// `extract:` `answer_letter`, `last_number`, or `{regex: P, group_select: N, fallback: F}`
/// (a preset may also be written `{type: answer_letter, fallback: F}`).
fn parse_extract(node: Node<'_>) -> Result<Extractor, TaskError> {
    let hint = "`extract: answer_letter`, `extract: last_number`, or `extract: {regex: \"#### (\\\\-?[0-9.,]+)\", group_select: -1, fallback: \"[invalid]\"}`";
    let preset = |name: &str, fallback: String, n: Node<'_>| match name {
        "answer_letter" => Ok(Extractor::AnswerLetter { fallback }),
        "last_number" => Ok(Extractor::LastNumber { fallback }),
        other => {
            let h = match crate::error::did_you_mean(other, EXTRACT_PRESETS) {
                Some(s) => format!("did you mean `{s}`? {hint}"),
                None => hint.to_owned(),
            };
            Err(n.err(format!("unknown extraction `{other}`")).with_hint(h))
        }
    };
    if !matches!(node.tree, Tree::Map(_)) {
        let name = node.scalar_string("extract")?;
        return preset(&name, DEFAULT_FALLBACK.to_owned(), node);
    }
    let map = node.map("`extract`")?;
    let fallback = map
        .get("fallback")
        .map(|n| n.scalar_string("fallback"))
        .transpose()?
        .unwrap_or_else(|| DEFAULT_FALLBACK.to_owned());
    if let Some(t) = map.get("type") {
        map.check_keys(&["type", "fallback"], "`extract`")?;
        return preset(&t.scalar_string("type")?, fallback, t);
    }
    map.check_keys(&["regex", "group_select", "fallback"], "`extract`")?;
    let rnode = map.get("regex").ok_or_else(|| {
        map.err("`extract` needs `regex` (or `type`)")
            .with_hint(hint)
    })?;
    let text = rnode.scalar_string("regex")?;
    let regex = pattern::compile(&text).map_err(|e| {
        pattern_error(
            rnode,
            "extract.regex",
            e,
            "patterns use Rust regex syntax (https://docs.rs/regex)",
        )
    })?;
    let group_select = match map.get("group_select") {
        None => 0,
        Some(n) => match n.tree {
            Tree::Scalar(Value::Number(x)) if x.is_i64() => x.as_i64().unwrap_or(0),
            _ => {
                return Err(n
                    .err("`group_select` must be an integer")
                    .with_hint("0 is the first match, -1 the last"))
            }
        },
    };
    Ok(Extractor::Regex {
        regex,
        group_select,
        fallback,
    })
}

/// The load error of a task pattern at `node`: invalid syntax, or over the size limits of
/// [`pattern`].
pub(crate) fn pattern_error(
    node: Node<'_>,
    what: &str,
    e: PatternError,
    syntax_hint: &str,
) -> TaskError {
    match e {
        PatternError::Syntax(m) => node
            .err(format!("invalid regular expression in `{what}`: {m}"))
            .with_hint(syntax_hint),
        PatternError::TaskBudget => node
            .err(format!(
                "the regular expression in `{what}` takes the task's regular expressions over {} MiB compiled together",
                pattern::TASK_REGEX_BUDGET >> 20
            ))
            .with_hint("use fewer or smaller patterns; counted repetitions of Unicode classes (`\\w{20}`) weigh most"),
        PatternError::TooLarge => node
            .err(format!(
                "the regular expression in `{what}` is too large: compiled, it exceeds the size limit of {} MiB",
                pattern::REGEX_SIZE_LIMIT >> 20
            ))
            .with_hint("counted repetitions multiply (`\\w{5000}`, `(?:a{1000}){1000}`): use a smaller count, or `+` or `*`"),
    }
}

/// `schema:` an inline JSON Schema (a mapping), or the path of a JSON (or YAML) file.
pub(crate) fn parse_schema(
    node: Node<'_>,
    base_dir: Option<&Path>,
) -> Result<JsonSchema, TaskError> {
    let hint = "give the schema inline (`schema: {type: object, required: [answer]}`) or as a file path; supported keywords: "
        .to_owned()
        + &evalscore_kernels::json::SCHEMA_KEYWORDS.join(", ");
    let json = match node.tree {
        Tree::Map(_) | Tree::Scalar(Value::Bool(_)) => node.tree.to_json(),
        _ => {
            let path = node.scalar_string("schema")?;
            let full: PathBuf = match base_dir {
                Some(b) if Path::new(&path).is_relative() => b.join(&path),
                _ => PathBuf::from(&path),
            };
            let text = std::fs::read_to_string(&full).map_err(|e| {
                node.err(format!("cannot read schema file `{}`: {e}", full.display()))
                    .with_hint(hint.clone())
            })?;
            serde_json::from_str::<Value>(&text).map_err(|e| {
                node.err(format!("schema file `{}` is not JSON: {e}", full.display()))
            })?
        }
    };
    JsonSchema::compile(&json)
        .map_err(|e| node.err(format!("invalid `schema`: {e}")).with_hint(hint))
}

/// A user function's name (`function:`, `merge:`, `finish:`): a non-empty string.
fn function_ref(node: Node<'_>, what: &str) -> Result<FunctionRef, TaskError> {
    let name = node.scalar_string(what)?;
    if name.trim().is_empty() {
        return Err(node
            .err(format!("`{what}` is empty"))
            .with_hint("name a function given to the Python package's `functions=`"));
    }
    Ok(FunctionRef {
        name,
        location: node.location,
    })
}

fn parse_metric(
    node: Node<'_>,
    scorer: &ScorerKind,
    scorer_type: &str,
) -> Result<MetricSpec, TaskError> {
    let map: MapNode<'_> = node.map("a metric")?;
    let names: Vec<&str> = MetricKind::ALL.iter().map(|(n, _)| *n).collect();
    let type_node = map.get("type").ok_or_else(|| {
        map.err("metric has no `type`")
            .with_hint(format!("metric types: {}", names.join(", ")))
    })?;
    let metric_type = type_node.scalar_string("type")?;
    let kind = MetricKind::ALL
        .iter()
        .find(|(n, _)| *n == metric_type)
        .map(|(_, k)| *k)
        .ok_or_else(|| {
            let hint = match crate::error::did_you_mean(&metric_type, &names) {
                Some(s) => format!("did you mean `{s}`? metric types: {}", names.join(", ")),
                None => format!("metric types: {}", names.join(", ")),
            };
            type_node
                .err(format!("unknown metric type `{metric_type}`"))
                .with_hint(hint)
        })?;
    map.check_keys(kind.keys(), &format!("metric `{metric_type}`"))?;
    let text = |key: &str| -> Result<Option<String>, TaskError> {
        map.get(key).map(|n| n.scalar_string(key)).transpose()
    };
    let required = |key: &str, example: &str| -> Result<(String, Node<'_>), TaskError> {
        let n = map.get(key).ok_or_else(|| {
            map.err(format!("metric `{metric_type}` needs `{key}`"))
                .with_hint(format!(
                    "e.g. `{key}: {example}`; {}",
                    field_hint(scorer, scorer_type)
                ))
        })?;
        Ok((n.scalar_string(key)?, n))
    };
    let check_field = |field: &str, n: &Node<'_>| -> Result<FieldKind, TaskError> {
        scorer
            .fields()
            .iter()
            .find(|f| f.name == field)
            .map(|f| f.kind)
            .ok_or_else(|| {
                n.err(format!("scorer `{scorer_type}` has no field `{field}`"))
                    .with_hint(field_hint(scorer, scorer_type))
            })
    };
    let (field, inputs) = if kind.classification() {
        let (gt, gt_node) = required("field_gt", "ground_truth")?;
        let (pred, pred_node) = required("field_pred", "value")?;
        check_field(&gt, &gt_node)?;
        check_field(&pred, &pred_node)?;
        (format!("{gt},{pred}"), vec![gt, pred])
    } else {
        let (field, field_node) = required("field", "is_correct")?;
        let fk = check_field(&field, &field_node)?;
        if kind.numeric() && fk != FieldKind::Number {
            let numeric: Vec<&str> = scorer
                .fields()
                .iter()
                .filter(|f| f.kind == FieldKind::Number)
                .map(|f| f.name)
                .collect();
            return Err(field_node
                .err(format!(
                    "metric `{metric_type}` needs a numeric field, and `{field}` of scorer `{scorer_type}` is text"
                ))
                .with_hint(format!(
                    "numeric fields: {}; use `frequency` to count text values",
                    numeric.join(", ")
                )));
        }
        (field.clone(), vec![field])
    };
    let mut positive_answer = None;
    let mut negative_answer = None;
    match kind {
        MetricKind::BinaryClassification
        | MetricKind::Precision
        | MetricKind::Recall
        | MetricKind::F1Score => {
            positive_answer = Some(required("positive_answer", "\"yes\"")?.0);
            negative_answer = if kind == MetricKind::BinaryClassification {
                Some(required("negative_answer", "\"no\"")?.0)
            } else {
                text("negative_answer")?
            };
            if positive_answer == negative_answer {
                return Err(map
                    .err(format!("`positive_answer` and `negative_answer` of metric `{metric_type}` are both `{}`", positive_answer.unwrap_or_default()))
                    .with_hint("the two answers must differ"));
            }
        }
        _ => {}
    }
    let labels = match map.get("labels") {
        None => None,
        Some(n) => {
            let json = n.tree.to_json();
            let list = crate::value::literal_list(&json)
                .filter(|l| !l.is_empty())
                .ok_or_else(|| {
                    n.err("`labels` must be a non-empty list of strings")
                        .with_hint("e.g. `labels: [cat, dog, pig]`")
                })?;
            Some(list)
        }
    };
    let group_by = match map.get("group_by") {
        None => Vec::new(),
        Some(n) => match n.tree {
            Tree::Seq(_) => {
                let json = n.tree.to_json();
                crate::value::literal_list(&json)
                    .ok_or_else(|| n.err("`group_by` must be a list of column names"))?
            }
            _ => vec![n.scalar_string("group_by")?],
        },
    };
    let python = if kind == MetricKind::Python {
        let f = |key: &str, example: &str| -> Result<FunctionRef, TaskError> {
            let n = map.get(key).filter(|n| !n.is_null()).ok_or_else(|| {
                map.err(format!("metric `python` needs `{key}`"))
                    .with_hint(format!("e.g. `{key}: {example}`, a function given to the Python package's `functions=`"))
            })?;
            function_ref(n, &format!("python.{key}"))
        };
        Some(PythonMetric {
            function: f("function", "fold_batch")?,
            merge: f("merge", "merge_states")?,
            finish: f("finish", "finish_state")?,
        })
    } else {
        None
    };
    let name = text("name")?.unwrap_or_else(|| metric_type.clone());
    let key = text("key")?;
    Ok(MetricSpec {
        python,
        name,
        metric_type,
        kind,
        field,
        inputs,
        positive_answer,
        negative_answer,
        labels,
        group_by,
        key,
        location: map.location,
    })
}

fn field_hint(scorer: &ScorerKind, scorer_type: &str) -> String {
    let names: Vec<&str> = scorer.fields().iter().map(|f| f.name).collect();
    format!("fields of `{scorer_type}`: {}", names.join(", "))
}

/// Gives every scorer its warehouse-safe key: the `key` as written with characters outside
/// `[A-Za-z0-9_]` replaced by `_`, else the type, then `type_2`, `type_3`, ... on repeats.
fn assign_keys(scorers: &mut [ScorerSpec]) -> Result<(), TaskError> {
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
