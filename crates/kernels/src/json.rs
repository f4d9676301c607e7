//! JSON in the value: `valid_json` (the whole value is one JSON text) and `contains_json`
//! (some substring is a JSON object or array), each optionally against a JSON Schema
//! ([`schema`]).

mod schema;

pub use schema::{JsonSchema, SCHEMA_KEYWORDS};

use crate::contract::{Batch, Scored};
use crate::KernelError;
use serde::de::IgnoredAny;
use serde_json::Value;
use std::borrow::Cow;

/// The `details` text of a value that parses (and validates).
pub const JSON_VALID: &str = "valid JSON";

/// The deepest nesting of arrays and objects `valid_json` accepts, and of schemas in a
/// schema. serde_json's recursion limit (128) stops its `Value` parser at the 128th level, so
/// 127 is the deepest a value can be and still be validated against a schema; the same limit
/// applies without a schema, so both give the same verdict. A value nested deeper scores 0.0
/// without being parsed, so no input can exhaust the stack.
pub const MAX_DEPTH: usize = 127;

/// Where (line, column, both 1-based) the nesting of `s` first exceeds [`MAX_DEPTH`], if it
/// does. Brackets inside strings do not count.
fn too_deep(s: &str) -> Option<(usize, usize)> {
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    let (mut line, mut col) = (1usize, 0usize);
    for b in s.bytes() {
        if b == b'\n' {
            line += 1;
            col = 0;
        } else if b & 0xC0 != 0x80 {
            col += 1;
        }
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some((line, col));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// `valid_json`: 1.0 when the whole value is one JSON text (RFC 8259: surrounding whitespace
/// allowed, nothing else after the value) and, with `schema`, it validates. `details` is
/// [`JSON_VALID`], `invalid JSON: <the parser's message with line and column>`, or
/// `schema: <pointer>: <violation>`.
///
/// Nesting deeper than [`MAX_DEPTH`] (127) arrays/objects scores 0.0 with `details`
/// `invalid JSON: nesting exceeds the depth limit of 127 at line L column C`, found by a
/// linear scan before parsing, so a hostile value cannot exhaust the stack.
///
/// Null rule: a null value scores 0.0 with null `details` and counts as missing. An empty
/// value is invalid (`EOF while parsing a value`).
pub fn valid_json(batch: Batch<'_>, schema: Option<&JsonSchema>) -> Result<Scored, KernelError> {
    batch.rows().explained(
        |_, v, ()| {
            let result = match (too_deep(v), schema) {
                (Some((line, col)), _) => Err(format!(
                    "invalid JSON: nesting exceeds the depth limit of {MAX_DEPTH} at line {line} column {col}"
                )),
                (None, None) => serde_json::from_str::<IgnoredAny>(v)
                    .map(|_| ())
                    .map_err(|e| format!("invalid JSON: {e}")),
                (None, Some(s)) => match serde_json::from_str::<Value>(v) {
                    Err(e) => Err(format!("invalid JSON: {e}")),
                    Ok(doc) => match s.validate(&doc) {
                        None => Ok(()),
                        Some(m) => Err(format!("schema: {m}")),
                    },
                },
            };
            match result {
                Ok(()) => (true, Cow::Borrowed(JSON_VALID)),
                Err(m) => (false, Cow::Owned(m)),
            }
        },
        |_| None,
    )
}

/// The `details` text of `contains_json` when the value holds no JSON object or array.
pub const NO_JSON: &str = "no JSON object or array found";

/// The JSON values in `s`: at each `{` or `[`, left to right, the one JSON object or array
/// that starts there, if one does (serde_json's parser, whose recursion limit of 128 bounds
/// the nesting). A value found is skipped over whole, so its members are not found again.
fn json_values(s: &str) -> impl Iterator<Item = serde_json::Value> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        while let Some(off) = s[at..].find(['{', '[']) {
            let start = at + off;
            let mut stream =
                serde_json::Deserializer::from_str(&s[start..]).into_iter::<serde_json::Value>();
            match stream.next() {
                Some(Ok(v)) => {
                    at = start + stream.byte_offset();
                    return Some(v);
                }
                _ => at = start + 1,
            }
        }
        None
    })
}

/// `contains_json`: 1.0 when some substring of the (normalized) value is one JSON object or
/// array (the value need not be JSON as a whole), and, with `schema`, some such value
/// validates. A bare number or string inside text does not count. `details` is
/// [`JSON_VALID`], [`NO_JSON`], or `schema: <pointer>: <violation>` of the first JSON value
/// found.
///
/// Null rule: a null value scores 0.0 with null `details` and counts as missing. An empty
/// value fails with [`NO_JSON`].
pub fn contains_json(batch: Batch<'_>, schema: Option<&JsonSchema>) -> Result<Scored, KernelError> {
    batch.rows().explained(
        |_, v, ()| {
            let mut first_violation = None;
            for doc in json_values(v) {
                match schema.and_then(|s| s.validate(&doc)) {
                    None => return (true, Cow::Borrowed(JSON_VALID)),
                    Some(m) => {
                        first_violation.get_or_insert(m);
                    }
                }
            }
            match first_violation {
                Some(m) => (false, Cow::Owned(format!("schema: {m}"))),
                None => (false, Cow::Borrowed(NO_JSON)),
            }
        },
        |_| None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_columns::{bits, layouts};
    use arrow::array::{Array, LargeStringArray, StringArray, StringViewArray};
    use evalscore_text::TextColumn;

    fn run(values: &dyn Array, schema: Option<&JsonSchema>) -> Vec<(f64, Option<String>)> {
        let col = TextColumn::new(values, "v").unwrap();
        let out = valid_json(Batch::new(col, None, values.len()), schema).unwrap();
        crate::score_vec(&out.is_correct)
            .into_iter()
            .zip(out.details_text())
            .map(|(s, d)| (s, d.map(str::to_owned)))
            .collect()
    }

    const VALUES: [Option<&str>; 8] = [
        Some(r#"{"a": [1, 2, {"b": null}]}"#),
        Some(" 42 \n"),
        Some(r#"{"a": 1} trailing"#),
        Some(""),
        None,
        Some(r#"{"name": "日本", "n": 1.5}"#),
        Some("{'a': 1}"),
        Some("\"tab\there\""),
    ];

    #[test]
    fn whole_value_over_every_layout() {
        let utf8 = StringArray::from(VALUES.to_vec());
        let large = LargeStringArray::from(VALUES.to_vec());
        let view = StringViewArray::from(VALUES.to_vec());
        for a in [&utf8 as &dyn Array, &large, &view] {
            let r = run(a, None);
            let scores: Vec<f64> = r.iter().map(|x| x.0).collect();
            assert_eq!(scores, [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
            assert_eq!(r[0].1.as_deref(), Some("valid JSON"));
            assert_eq!(
                r[2].1.as_deref(),
                Some("invalid JSON: trailing characters at line 1 column 10")
            );
            assert_eq!(
                r[3].1.as_deref(),
                Some("invalid JSON: EOF while parsing a value at line 1 column 0")
            );
            assert_eq!(r[4].1, None);
            assert_eq!(
                r[6].1.as_deref(),
                Some("invalid JSON: key must be a string at line 1 column 2")
            );
            assert!(r[7].1.as_deref().unwrap().contains("control character"));
        }
    }

    #[test]
    fn depth_limit() {
        let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
        let (deeper, limit) = (nest(MAX_DEPTH + 1), nest(MAX_DEPTH));
        let a = StringArray::from(vec![deeper.as_str(), limit.as_str()]);
        let schema = JsonSchema::compile(&serde_json::json!({"type": "array"})).unwrap();
        // The same verdict with and without a schema (serde_json's `Value` parser, used for
        // schemas, stops at 128 levels; its skipping parser, used without, has no limit).
        for r in [run(&a, None), run(&a, Some(&schema))] {
            assert_eq!(
                r[0],
                (
                    0.0,
                    Some(
                        "invalid JSON: nesting exceeds the depth limit of 127 at line 1 column 128"
                            .to_owned()
                    )
                )
            );
            assert_eq!(r[1], (1.0, Some(JSON_VALID.to_owned())));
        }
    }

    #[test]
    fn hostile_nesting_never_reaches_the_parser() {
        // 100,000 levels, on a small stack: nothing may recurse once per level of the input.
        let arrays = "[".repeat(100_000);
        let objects = "{\"a\":".repeat(100_000) + "1" + &"}".repeat(100_000);
        let mixed = format!("{{\"s\": \"[[[[\",\n \"x\": {}", "[{\"b\":".repeat(50_000));
        let schema = JsonSchema::compile(&serde_json::json!({"type": "object"})).unwrap();
        let out = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let a = StringArray::from(vec![arrays.as_str(), objects.as_str(), mixed.as_str()]);
                (run(&a, None), run(&a, Some(&schema)))
            })
            .unwrap()
            .join()
            .unwrap();
        for r in [out.0, out.1] {
            let d: Vec<String> = r.iter().map(|x| x.1.clone().unwrap()).collect();
            assert!(r.iter().all(|x| x.0 == 0.0));
            assert_eq!(
                d,
                [
                    "invalid JSON: nesting exceeds the depth limit of 127 at line 1 column 128",
                    "invalid JSON: nesting exceeds the depth limit of 127 at line 1 column 636",
                    // Brackets inside strings do not count.
                    "invalid JSON: nesting exceeds the depth limit of 127 at line 2 column 385",
                ]
            );
        }
    }

    #[test]
    fn schema_subset() {
        let schema: Value = serde_json::from_str(
            r#"{"type": "object", "required": ["name", "age"],
                "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 5},
                               "age": {"type": "integer", "minimum": 0, "maximum": 150},
                               "tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
                "additionalProperties": false}"#,
        )
        .unwrap();
        let s = JsonSchema::compile(&schema).unwrap();
        let a = StringArray::from(vec![
            r#"{"name": "Ann", "age": 30, "tags": ["a"]}"#,
            r#"{"name": "Ann"}"#,
            r#"{"name": "Ann", "age": -1}"#,
            r#"{"name": "Annabel", "age": 1}"#,
            r#"{"name": "Ann", "age": 1, "tags": ["a", "c"]}"#,
            r#"{"name": "Ann", "age": 1, "x": 0}"#,
            r#"{"name": "Ann", "age": 1.5}"#,
            r#"[1]"#,
        ]);
        let r = run(&a, Some(&s));
        let d: Vec<String> = r.iter().map(|x| x.1.clone().unwrap()).collect();
        assert_eq!(
            d,
            [
                "valid JSON",
                "schema: /: missing required property `age`",
                "schema: /age: -1 is less than the minimum 0",
                "schema: /name: string of 7 characters is longer than maxLength 5",
                "schema: /tags/1: \"c\" is not one of the `enum` values",
                "schema: /: additional property `x` is not allowed",
                "schema: /age: expected type integer, got number",
                "schema: /: expected type object, got array",
            ]
        );
        assert_eq!(r[0].0, 1.0);
        assert!(r[1..].iter().all(|x| x.0 == 0.0));
    }

    #[test]
    fn contains_json_rows() {
        let values = [
            Some(r#"Here: {"a": 1} done"#),
            Some("the list [1, 2] and {bad"),
            Some("just 42 and \"text\""),
            Some("{oops} then {\"b\": [true]}"),
            Some(""),
            None,
        ];
        for a in layouts(&values) {
            let vc = TextColumn::new(a.as_ref(), "v").unwrap();
            let out = contains_json(Batch::new(vc, None, 6), None).unwrap();
            assert_eq!(
                bits(&out.is_correct),
                [true, true, false, true, false, false]
            );
            assert_eq!(
                out.details_text(),
                [
                    Some(JSON_VALID),
                    Some(JSON_VALID),
                    Some(NO_JSON),
                    Some(JSON_VALID),
                    Some(NO_JSON),
                    None
                ]
            );
            let schema =
                JsonSchema::compile(&serde_json::json!({"type": "object", "required": ["b"]}))
                    .unwrap();
            let out = contains_json(Batch::new(vc, None, 6), Some(&schema)).unwrap();
            assert_eq!(
                bits(&out.is_correct),
                [false, false, false, true, false, false]
            );
            assert_eq!(
                out.details_text()[0].unwrap(),
                "schema: /: missing required property `b`"
            );
            assert_eq!(
                out.details_text()[1].unwrap(),
                "schema: /: expected type object, got array"
            );
        }
    }
}
