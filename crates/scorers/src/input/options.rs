//! The common options of the scorers that score a text: `normalize:` (steps applied to both
//! sides of the comparison) and `extract:` (what is taken out of the value before scoring).

use evalscore_kernels::extract::DEFAULT_FALLBACK;
use evalscore_kernels::normalize::STEP_NAMES;
use evalscore_kernels::pattern::{self, PatternError};
use evalscore_kernels::{Extractor, Normalizer, Step, UnicodeForm};
use evalscore_task::{did_you_mean, Node, TaskError};

/// `normalize:` a list of steps, each a name (`strip`) or a one-key mapping
/// (`{regexes_to_ignore: [...]}`, `{unicode: nfc}`).
pub(crate) fn parse_normalize(node: Node<'_>) -> Result<Normalizer, TaskError> {
    let hint = || {
        format!(
            "normalize steps: {}; e.g. `normalize: [{{regexes_to_ignore: [\"the \"]}}, ignore_case, {{unicode: nfkc}}]`",
            STEP_NAMES.join(", ")
        )
    };
    let mut steps = Vec::new();
    for item in node.seq("`normalize`").map_err(|e| e.with_hint(hint()))? {
        let (name, arg) = match item.as_map() {
            Some(m) if m.len() == 1 => match m.iter().next() {
                Some((k, v)) => (k.to_owned(), Some(v)),
                None => (String::new(), None),
            },
            Some(_) => {
                return Err(item
                    .err("a normalize step with options is a mapping with one key")
                    .with_hint(hint()))
            }
            None => (item.scalar_string("normalize step")?, None),
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
                let h = match did_you_mean(other, STEP_NAMES) {
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
pub(crate) fn parse_extract(node: Node<'_>) -> Result<Extractor, TaskError> {
    let hint = "`extract: answer_letter`, `extract: last_number`, or `extract: {regex: \"#### (\\\\-?[0-9.,]+)\", group_select: -1, fallback: \"[invalid]\"}`";
    let preset = |name: &str, fallback: String, n: Node<'_>| match name {
        "answer_letter" => Ok(Extractor::AnswerLetter { fallback }),
        "last_number" => Ok(Extractor::LastNumber { fallback }),
        other => {
            let h = match did_you_mean(other, EXTRACT_PRESETS) {
                Some(s) => format!("did you mean `{s}`? {hint}"),
                None => hint.to_owned(),
            };
            Err(n.err(format!("unknown extraction `{other}`")).with_hint(h))
        }
    };
    if node.as_map().is_none() {
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
        Some(n) => match n.as_i64() {
            Some(i) => i,
            None => {
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
pub fn pattern_error(node: Node<'_>, what: &str, e: PatternError, syntax_hint: &str) -> TaskError {
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
