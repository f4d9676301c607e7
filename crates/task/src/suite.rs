//! A suite file: many tasks scored in one run. A YAML file whose top level has `tasks:` is a
//! suite; `inputs:` and `labels:` are shared by its tasks, and each task is a task file
//! (`task:`, relative to the suite file) or an inline `definition:`, with its own `inputs:`
//! and `set:` values. Every error points at the suite file's line and column.

use crate::document::parse_yaml;
use crate::raw::{MapNode, Node, Tree};
use crate::{Location, TaskError};

const SUITE_KEYS: &[&str] = &["inputs", "labels", "tasks"];
const TASK_KEYS: &[&str] = &["name", "task", "definition", "filter", "inputs", "set"];

/// The longest task name, in bytes (it names a folder).
pub const MAX_TASK_NAME_BYTES: usize = 128;

/// A parsed suite file.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteFile {
    /// `inputs:` as written (paths relative to the suite file, globs, URLs); empty when the
    /// suite gives none.
    pub inputs: Vec<String>,
    /// `labels:` in the order written.
    pub labels: Vec<(String, String)>,
    /// `tasks:` in the order written (at least one).
    pub tasks: Vec<SuiteTask>,
}

/// One entry of `tasks:`.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteTask {
    /// `name:`: a safe folder name, unique in the suite.
    pub name: String,
    pub source: TaskSource,
    /// `inputs:` of this task instead of the shared ones.
    pub inputs: Option<Vec<String>>,
    /// `set:` values, as `--set NAME=VALUE` pairs in the order written.
    pub sets: Vec<(String, String)>,
    /// Where the entry starts in the suite file.
    pub location: Option<Location>,
}

/// Where a suite task's definition is.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskSource {
    /// `task:`: a task file, as written (relative to the suite file).
    File(String),
    /// `definition:`: the task's `definition` mapping as the text of a task file whose lines
    /// and columns are the suite file's (the lines before it blank), so that the task's
    /// errors point into the suite file; and where the mapping starts.
    Inline {
        text: String,
        location: Option<Location>,
    },
}

impl SuiteFile {
    /// Whether `text` is a suite: YAML whose top level is a mapping with a `tasks:` key.
    pub fn is_suite(text: &str) -> bool {
        // A task file with `<< config.X >>` placeholders may not be YAML before substitution:
        // it is not a suite either way.
        match parse_yaml(text) {
            Ok(doc) => {
                matches!(&doc.value, Tree::Map(entries) if entries.iter().any(|(k, _)| k.value == "tasks"))
            }
            // Not YAML: a suite all the same when a line opens a top-level `tasks:` (no task
            // file has one), so that its YAML error is reported as the suite file's.
            Err(_) => text.lines().any(|l| l.starts_with("tasks:")),
        }
    }

    /// Parses a suite file's text.
    pub fn parse(text: &str) -> Result<SuiteFile, TaskError> {
        let source = text;
        let doc = parse_yaml(text)?;
        let root = Node::new(&doc).map("the suite file")?;
        root.check_keys(SUITE_KEYS, "the suite file")?;
        let inputs = match root.get("inputs") {
            Some(n) => input_list(n)?,
            None => Vec::new(),
        };
        let labels = match root.get("labels") {
            Some(n) => pairs(n, "labels")?,
            None => Vec::new(),
        };
        let tasks_node = root.get("tasks").ok_or_else(|| root.err("no `tasks:`"))?;
        let entries = tasks_node.seq("`tasks`")?;
        if entries.is_empty() {
            return Err(tasks_node
                .err("`tasks` is empty; a suite needs at least one task")
                .with_hint("e.g. `tasks: [{name: qa, task: qa.yaml}]`"));
        }
        let mut tasks: Vec<SuiteTask> = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let task = suite_task(source, entry, i + 1)?;
            if let Some(first) = tasks.iter().find(|t| t.name == task.name) {
                let at = first
                    .location
                    .map(|l| format!(" (first at {l})"))
                    .unwrap_or_default();
                return Err(TaskError::new(
                    format!("task name `{}` is given twice{at}", task.name),
                    task.location,
                )
                .with_hint("each task writes to DIR/task=NAME/: give every task its own name"));
            }
            tasks.push(task);
        }
        Ok(SuiteFile {
            inputs,
            labels,
            tasks,
        })
    }
}

/// Entry `number` (1-based) of `tasks:`.
fn suite_task(source: &str, node: &Node<'_>, number: usize) -> Result<SuiteTask, TaskError> {
    let map: MapNode<'_> = node.map(&format!("task {number} of `tasks`"))?;
    map.check_keys(TASK_KEYS, &format!("task {number} of `tasks`"))?;
    let name = map
        .get("name")
        .ok_or_else(|| map.err(format!("task {number} of `tasks` has no `name:`")))?;
    let name_text = name.scalar_string("name")?;
    check_name(&name_text).map_err(|m| name.err(m))?;
    let source = match (map.get("task"), map.get("definition")) {
        (Some(_), Some(_)) => {
            return Err(map
                .err(format!(
                    "task `{name_text}` has both `task:` and `definition:`"
                ))
                .with_hint("give a task file (`task: qa.yaml`) or an inline `definition:`, not both"))
        }
        (None, None) => {
            return Err(map
                .err(format!(
                    "task `{name_text}` has neither `task:` nor `definition:`"
                ))
                .with_hint("give a task file (`task: qa.yaml`, relative to the suite file) or an inline `definition: {scorers: [...]}`"))
        }
        (Some(t), None) => {
            if let Some(f) = map.get("filter") {
                return Err(f
                    .err(format!("task `{name_text}` has `filter:` beside `task:`"))
                    .with_hint("a task file gives its own `filter:`; or filter every task with `--where`"));
            }
            TaskSource::File(t.scalar_string("task")?)
        }
        (None, Some(d)) => {
            d.map("`definition`")?;
            let key_of = |name: &str| map.keys().find(|(k, _)| *k == name).and_then(|(_, l)| l);
            let filter = match map.get("filter").filter(|n| !n.is_null()) {
                Some(f) => Some((f.scalar_string("filter")?, key_of("filter"))),
                None => None,
            };
            let text = match (key_of("definition"), d.location) {
                (Some(key), Some(value)) => inline_text(source, key, value, filter.as_ref()),
                _ => {
                    let mut doc = serde_json::json!({ "definition": d.to_json() });
                    if let Some((f, _)) = &filter {
                        doc["filter"] = serde_json::Value::String(f.clone());
                    }
                    serde_json::to_string_pretty(&doc).unwrap_or_default()
                }
            };
            TaskSource::Inline {
                text,
                location: d.location,
            }
        }
    };
    let inputs = map.get("inputs").map(input_list).transpose()?;
    let sets = match map.get("set") {
        Some(n) => pairs(n, "set")?,
        None => Vec::new(),
    };
    Ok(SuiteTask {
        name: name_text,
        source,
        inputs,
        sets,
        location: map.location,
    })
}

/// The text of an inline task: the suite file's lines of its `definition:` block where they
/// are, the key's line rewritten to start with `definition:`, every other line blank. A
/// block ends at the first line (not blank, not a comment) indented no deeper than its key.
/// The entry's `filter:` (its text and key) becomes the task's own, on its line when that
/// line is free (else after the block).
fn inline_text(
    source: &str,
    key: Location,
    value: Location,
    filter: Option<&(String, Option<Location>)>,
) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let key_line = key.line as usize;
    let indent = (key.column as usize).saturating_sub(1);
    let mut out = "\n".repeat(key_line.saturating_sub(1));
    out.push_str("definition:");
    if value.line == key.line {
        // `definition: {scorers: [...]}`: the value stays at its column.
        let at = (value.column as usize).saturating_sub(1);
        let line = lines.get(key_line - 1).copied().unwrap_or_default();
        out.push_str(&" ".repeat(at.saturating_sub("definition:".len()).max(1)));
        let rest: String = line.chars().skip(at).collect();
        // In a flow entry (`- {name: x, definition: {...}, filter: ...}`) the value ends
        // at its closing bracket, not with the line.
        let end = flow_end(&rest).unwrap_or(rest.len());
        out.push_str(&rest[..end]);
    }
    out.push('\n');
    for line in lines.iter().skip(key_line) {
        let body = line.trim_start();
        if !body.is_empty() && !body.starts_with('#') && line.len() - body.len() <= indent {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    let Some((text, at)) = filter else {
        return out;
    };
    let line = format!("filter: {}", serde_json::Value::String(text.clone()));
    let mut lines: Vec<String> = out.lines().map(str::to_owned).collect();
    match at.map(|l| (l.line as usize).saturating_sub(1)) {
        Some(i) if lines.get(i).is_none_or(|l| l.trim().is_empty()) => {
            if lines.len() <= i {
                lines.resize(i + 1, String::new());
            }
            lines[i] = line;
        }
        _ => lines.push(line),
    }
    lines.join("\n") + "\n"
}

/// Where the flow collection opening `text` (`{...}` or `[...]`) ends: the byte just past its
/// closing bracket, quotes heeded; `None` when it is not one or does not close on this line.
fn flow_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some('"'), '\\') => {
                chars.next();
            }
            (Some('\''), '\'') if chars.peek().is_some_and(|&(_, n)| n == '\'') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if depth > 0 => quote = Some(c),
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            (None, _) if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// A task name names its output folder `task=NAME`: letters, digits, `_`, `-` and `.`,
/// not starting with `.`.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_TASK_NAME_BYTES
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "task name `{}` is not a safe folder name: use 1 to {MAX_TASK_NAME_BYTES} letters, digits, `_`, `-` or `.`, not starting with `.`",
            name.escape_debug()
        ))
    }
}

/// `inputs:`: a list of paths (or one path).
fn input_list(node: Node<'_>) -> Result<Vec<String>, TaskError> {
    if node.as_map().is_none() && !matches!(node.tree, Tree::Seq(_)) && !node.is_null() {
        return Ok(vec![node.scalar_string("inputs")?]);
    }
    let items = node.seq("`inputs`")?;
    if items.is_empty() {
        return Err(node.err("`inputs` is empty"));
    }
    items.iter().map(|i| i.scalar_string("inputs")).collect()
}

/// A mapping of scalar values (`labels:`, `set:`), in the order written.
fn pairs(node: Node<'_>, what: &str) -> Result<Vec<(String, String)>, TaskError> {
    if node.is_null() {
        return Ok(Vec::new());
    }
    let map = node.map(&format!("`{what}`"))?;
    map.iter()
        .map(|(k, v)| Ok((k.to_owned(), v.scalar_string(&format!("{what}.{k}"))?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::flow_end;

    #[test]
    fn a_flow_value_ends_at_its_closing_bracket() {
        assert_eq!(flow_end("{a: [1, 2]}, b: 3}"), Some(11));
        assert_eq!(flow_end("{a: \"}\", b: 'it''s ]'} x"), Some(22));
        assert_eq!(flow_end("{a: \"\\\"}\"} x"), Some(10));
        assert_eq!(flow_end("[x, {y: z}]"), Some(11));
        assert_eq!(flow_end("{a: [1,"), None);
        assert_eq!(flow_end("plain"), None);
    }
}
