//! `<< config.NAME >>` placeholders, filled in the YAML text before it is parsed.

use crate::{Location, TaskError};
use std::collections::BTreeMap;

/// Replaces every `<< config.NAME >>` in `text` with `values[NAME]`.
///
/// Whitespace inside the brackets is optional. A `<<` that is not followed by `config.` (a YAML
/// merge key, say) is left alone. An unknown NAME is an error naming it and its line and column.
pub fn substitute_placeholders(
    text: &str,
    values: &BTreeMap<String, String>,
) -> Result<String, TaskError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut consumed = 0usize;
    while let Some(start) = rest.find("<<") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match parse_placeholder(after) {
            Some((name, len)) => {
                match values.get(name) {
                    Some(v) => out.push_str(v),
                    None => {
                        let loc = location_of(text, consumed + start);
                        let mut known: Vec<&str> = values.keys().map(String::as_str).collect();
                        known.sort_unstable();
                        let hint = if known.is_empty() {
                            format!(
                                "add `config: {{{name}: ...}}` to the task file or pass `--set {name}=VALUE`"
                            )
                        } else {
                            format!(
                                "known config names: {}; or pass `--set {name}=VALUE`",
                                known.join(", ")
                            )
                        };
                        return Err(TaskError::new(
                            format!("placeholder `<< config.{name} >>` has no value"),
                            Some(loc),
                        )
                        .with_hint(hint));
                    }
                }
                let used = start + 2 + len;
                consumed += used;
                rest = &rest[used..];
            }
            None => {
                out.push_str("<<");
                consumed += start + 2;
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Parses ` config.NAME >>` at the start of `s`; returns NAME and the length consumed.
fn parse_placeholder(s: &str) -> Option<(&str, usize)> {
    let trimmed = s.trim_start_matches([' ', '\t']);
    let lead = s.len() - trimmed.len();
    let body = trimmed.strip_prefix("config.")?;
    let name_len = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(body.len());
    if name_len == 0 {
        return None;
    }
    let name = &body[..name_len];
    let tail = &body[name_len..];
    let tail_trimmed = tail.trim_start_matches([' ', '\t']);
    tail_trimmed.strip_prefix(">>")?;
    let total = lead + "config.".len() + name_len + (tail.len() - tail_trimmed.len()) + 2;
    Some((name, total))
}

pub(crate) fn location_of(text: &str, byte: usize) -> Location {
    let before = &text[..byte.min(text.len())];
    let line = before.matches('\n').count() as u64 + 1;
    let col_start = before.rfind('\n').map_or(0, |i| i + 1);
    Location::new(line, before[col_start..].chars().count() as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn fills_placeholders_with_and_without_spaces() {
        let v = vals(&[("answer_column", "answer"), ("pos", "yes")]);
        assert_eq!(
            substitute_placeholders("a: \"{{ sample.<< config.answer_column >> }}\"", &v).unwrap(),
            "a: \"{{ sample.answer }}\""
        );
        assert_eq!(
            substitute_placeholders("p: <<config.pos>>", &v).unwrap(),
            "p: yes"
        );
    }

    #[test]
    fn leaves_merge_keys_alone() {
        let v = vals(&[]);
        assert_eq!(
            substitute_placeholders("<<: *base\n", &v).unwrap(),
            "<<: *base\n"
        );
    }

    #[test]
    fn unknown_name_is_an_error_with_its_line() {
        let v = vals(&[("a", "1")]);
        let err = substitute_placeholders("x: 1\ny: \"<< config.b >>\"\n", &v).unwrap_err();
        assert_eq!(err.message, "placeholder `<< config.b >>` has no value");
        assert_eq!(err.location, Some(Location::new(2, 5)));
        assert_eq!(
            err.hint.as_deref(),
            Some("known config names: a; or pass `--set b=VALUE`")
        );
    }
}
