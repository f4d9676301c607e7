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

/// Whether a Utf8View cell may hold a JSON chat value, from its 16-byte view alone:
/// serde_json skips only JSON whitespace (space, tab, line feed, carriage return) before a
/// value, and a chat value starts with `{` or `[`. A view holds a cell of up to 12 bytes
/// whole and a longer one's first 4 bytes; a long cell whose first 4 bytes are whitespace
/// may still go on to `{`, so it is looked at.
fn may_be_json(view: u128) -> bool {
    let len = view as u32;
    let seen = if len <= 12 { len } else { 4 };
    for k in 0..seen {
        match (view >> (32 + 8 * k)) as u8 {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b => return b == b'{' || b == b'[',
        }
    }
    len > 12
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
            // Over Utf8View a cell's first bytes are in its view: only cells that may be
            // JSON there (`may_be_json`) are looked at.
            let maybe_json = text
                .as_string_view_opt()
                .map(|v| evalscore_text::view_bits(v.views(), may_be_json));
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

    /// Over Utf8View, cells are looked at only when their view allows JSON; a chat cell
    /// behind JSON whitespace, long or short, is still found, and the result is the one Utf8
    /// gives (a cell behind other whitespace is no JSON to serde_json either way).
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

    /// The view test never misses a cell that serde_json could read as JSON starting with
    /// `{` or `[`: over short and long cells behind every kind of whitespace, each cell it
    /// rejects fails that reading.
    #[test]
    fn the_view_test_misses_no_json() {
        use arrow::array::StringViewArray;
        let bodies = ["{}", "[1]", "B. because", "x", "", "{\"a\": 1}", "[", "é{"];
        let pads = [
            "",
            " ",
            "  \n",
            "\t\r ",
            "    ",
            "          ",
            "\u{3000}",
            "\u{b}",
            "\u{c}",
        ];
        let mut cells = Vec::new();
        for pad in pads {
            for body in bodies {
                cells.push(format!("{pad}{body}"));
                cells.push(format!("{pad}{body}{}", " ".repeat(20)));
            }
        }
        let views = StringViewArray::from(cells.clone());
        let mut kept = 0;
        for (cell, &view) in cells.iter().zip(views.views()) {
            let t = cell.trim_start_matches([' ', '\t', '\n', '\r']);
            let json_like = t.starts_with('{') || t.starts_with('[');
            if json_like {
                assert!(may_be_json(view), "{cell:?}");
            }
            kept += usize::from(may_be_json(view));
        }
        // Rejected: every cell that starts with other text or other whitespace.
        assert!(kept < cells.len() / 2, "{kept} of {}", cells.len());
        assert!(!may_be_json(
            StringViewArray::from(vec![" B. because it is"]).views()[0]
        ));
        assert!(may_be_json(
            StringViewArray::from(vec!["      {\"choices\": []}"]).views()[0]
        ));
    }
}
