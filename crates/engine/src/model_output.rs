//! The model output column as text.
//!
//! A string column is the text itself, except that a cell holding a JSON chat completion
//! (`{"choices": [{"message": {"content": ...}}]}`) or a JSON list of messages
//! (`[{"role": ..., "content": ...}, ...]`) yields the content of the (last) message. A struct
//! or list column in the same shapes is read the same way.

use crate::row_error::RowError;
use arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use arrow::datatypes::DataType;
use evalscore_task::cell_to_value;
use evalscore_text::{to_text, TextColumn};
use serde_json::Value;
use std::sync::Arc;

/// Whether a Utf8View cell may hold a chat completion, from its view alone. serde_json skips
/// JSON whitespace only (space, tab, LF, CR), so the first other byte must be `{` or `[`. A
/// view holds the cell's first four bytes (all of it up to 12), so most cells are decided
/// here; one whose first four bytes are all JSON whitespace is looked at whole.
fn may_be_chat(view: u128) -> bool {
    let len = view as u32 as usize;
    let prefix = ((view >> 32) as u32).to_le_bytes();
    for &c in &prefix[..len.min(4)] {
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b'{' | b'[' => return true,
            _ => return false,
        }
    }
    len > 4
}

pub(crate) fn model_output_text(col: &ArrayRef, name: &str) -> Result<ArrayRef, RowError> {
    match col.data_type() {
        DataType::Struct(_) | DataType::List(_) | DataType::LargeList(_) => nested(col, name),
        _ => {
            let text = to_text(col, name).map_err(|e| RowError {
                row: 0,
                message: format!("model output {e}"),
                hint: Some(
                    "use `--output-column` to name the column that holds the model output text"
                        .to_owned(),
                ),
                ..RowError::default()
            })?;
            let tc = TextColumn::new(text.as_ref(), name).map_err(|e| RowError {
                row: 0,
                message: e.to_string(),
                hint: None,
                ..RowError::default()
            })?;
            // Only rebuild the column when some cell is a JSON chat completion.
            let looks_json = |s: &str| {
                let t = s.trim_start();
                t.starts_with('{') || t.starts_with('[')
            };
            // Over Utf8View only the cells whose view allows a chat completion are looked at.
            let maybe_json = text
                .as_string_view_opt()
                .map(|v| evalscore_text::view_bits(v.views(), may_be_chat));
            let is_chat = |r: usize| {
                tc.get(r).is_some_and(|s| {
                    looks_json(s)
                        && serde_json::from_str::<Value>(s)
                            .ok()
                            .as_ref()
                            .and_then(chat_content)
                            .is_some()
                })
            };
            // Only the candidate rows are visited (usually none).
            let first = match &maybe_json {
                Some(m) => m.set_indices().find(|&r| is_chat(r)),
                None => (0..text.len()).find(|&r| is_chat(r)),
            };
            let Some(_) = first else { return Ok(text) };
            let mut b = StringBuilder::with_capacity(text.len(), 0);
            for r in 0..text.len() {
                match tc.get(r) {
                    None => b.append_null(),
                    Some(s) if looks_json(s) => {
                        match serde_json::from_str::<Value>(s)
                            .ok()
                            .as_ref()
                            .and_then(chat_content)
                        {
                            Some(Some(c)) => b.append_value(c),
                            Some(None) => b.append_null(),
                            None => b.append_value(s),
                        }
                    }
                    Some(s) => b.append_value(s),
                }
            }
            Ok(Arc::new(b.finish()))
        }
    }
}

fn nested(col: &ArrayRef, name: &str) -> Result<ArrayRef, RowError> {
    let mut b = StringBuilder::with_capacity(col.len(), 0);
    for r in 0..col.len() {
        if col.is_null(r) {
            b.append_null();
            continue;
        }
        let v = serde_json::to_value(cell_to_value(col.as_ref(), r)).unwrap_or(Value::Null);
        match chat_content(&v) {
            Some(Some(c)) => b.append_value(c),
            Some(None) => b.append_null(),
            None => {
                return Err(RowError {
                    row: r,
                    message: format!(
                        "model output column `{name}` has type {}, and this cell is not a chat completion (`choices[0].message.content`) or a list of messages",
                        col.data_type()
                    ),
                    hint: Some("use `--output-column` to name a text column, or give the scorer a `value:` template".to_owned()), ..RowError::default()
                })
            }
        }
    }
    Ok(Arc::new(b.finish()))
}

/// The message content of a chat completion or the last message of a message list.
/// `None`: not that shape. `Some(None)`: that shape with null content.
fn chat_content(v: &Value) -> Option<Option<String>> {
    let message = if let Some(choices) = v.get("choices").and_then(Value::as_array) {
        choices.first()?.get("message")?
    } else if let Some(list) = v.as_array() {
        let last = list.last()?;
        last.get("content")?;
        last
    } else if v.get("role").is_some() {
        v
    } else {
        return None;
    };
    match message.get("content")? {
        Value::String(s) => Some(Some(s.clone())),
        Value::Null => Some(None),
        Value::Array(parts) => Some(Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{AsArray, StringArray};

    #[test]
    fn chat_json_cells_yield_their_content() {
        let col: ArrayRef = Arc::new(StringArray::from(vec![
            Some(r#"{"choices":[{"message":{"role":"assistant","content":"B"}}]}"#),
            Some(r#"[{"role":"user","content":"Q?"},{"role":"assistant","content":"C. yes"}]"#),
            Some("plain A"),
            Some("[not json"),
            None,
        ]));
        let out = model_output_text(&col, "output").unwrap();
        let out = out.as_string::<i32>();
        let v: Vec<Option<&str>> = out.iter().collect();
        assert_eq!(
            v,
            [
                Some("B"),
                Some("C. yes"),
                Some("plain A"),
                Some("[not json"),
                None
            ]
        );
    }

    #[test]
    fn plain_text_is_passed_through_untouched() {
        let col: ArrayRef = Arc::new(StringArray::from(vec!["A", "{}", "[1,2]"]));
        let out = model_output_text(&col, "output").unwrap();
        assert!(Arc::ptr_eq(&out, &col));
    }

    /// Over Utf8View, cells are looked at only when their view allows a chat completion; a
    /// chat cell behind whitespace, long or short, is still found, and the result is the one
    /// Utf8 gives.
    #[test]
    fn views_find_chat_cells_behind_any_whitespace() {
        use arrow::array::StringViewArray;
        let chat = r#"{"choices":[{"message":{"content":"D"}}]}"#;
        let cases: [Vec<Option<String>>; 3] = [
            vec![Some("plain".into()), Some(format!("  \n{chat}"))],
            vec![Some("B".into()), None, Some(format!("\u{3000}{chat}"))],
            vec![
                Some("x".into()),
                Some("[not json at all, long enough".into()),
            ],
        ];
        for cells in cases {
            let utf8: ArrayRef = Arc::new(StringArray::from(cells.clone()));
            let views: ArrayRef = Arc::new(StringViewArray::from(cells.clone()));
            let a = model_output_text(&utf8, "output").unwrap();
            let b = model_output_text(&views, "output").unwrap();
            let text = |x: &ArrayRef| -> Vec<Option<String>> {
                let x = evalscore_text::to_text(x, "o").unwrap();
                let t = TextColumn::new(x.as_ref(), "o").unwrap();
                (0..x.len()).map(|r| t.get(r).map(str::to_owned)).collect()
            };
            assert_eq!(text(&a), text(&b), "{cells:?}");
        }
        // (serde_json skips JSON whitespace only, so the U+3000 cell above stays text.)
        let views: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("B".to_owned()),
            Some(format!(" \t{chat}")),
        ]));
        let out = model_output_text(&views, "output").unwrap();
        assert_eq!(out.as_string::<i32>().value(1), "D");
    }

    /// Every cell of up to five characters over an alphabet of JSON and other whitespace,
    /// brackets and other text: whenever serde_json could read the cell as an object or an
    /// array, its view lets it be looked at; up to four bytes, the view decides exactly.
    #[test]
    fn the_view_test_misses_no_cell_serde_could_read_as_a_chat() {
        use arrow::array::StringViewArray;
        let alphabet = [
            " ", "\t", "\n", "\r", "\u{b}", "\u{c}", "{", "[", "}", "a", "é", "\u{3000}",
        ];
        let mut cells = vec![String::new()];
        let mut level = vec![String::new()];
        for _ in 0..5 {
            level = level
                .iter()
                .flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}")))
                .collect();
            cells.extend(level.iter().cloned());
        }
        let views = StringViewArray::from_iter_values(cells.iter());
        for (cell, &view) in cells.iter().zip(views.views()) {
            let readable = cell
                .trim_start_matches([' ', '\t', '\n', '\r'])
                .starts_with(['{', '[']);
            if readable {
                assert!(may_be_chat(view), "{cell:?}");
            } else if cell.len() <= 4 {
                assert!(!may_be_chat(view), "{cell:?}");
            }
        }
    }
}
