//! 0/1 checks of what the value contains: its number (`numeric_match`), every expected
//! string (`includes_all`), no match of a pattern (`not_regex`), a JSON object or array
//! (`contains_json`).

use crate::checks::{regex_check, CheckOutput, ExpectedReader};
use crate::extract::last_number;
use crate::graded::References;
use crate::json::{JsonSchema, JSON_VALID};
use crate::normalize::Normalizer;
use crate::pattern::SearchPattern;
use crate::text::TextColumn;
use crate::KernelError;
use arrow::array::{BooleanArray, StringArray};
use std::borrow::Cow;

fn apply<'a>(norm: Option<&Normalizer>, s: &'a str) -> Cow<'a, str> {
    match norm {
        Some(n) => n.apply(s),
        None => Cow::Borrowed(s),
    }
}

/// The number of a text as `extract: last_number` reads it: the last number, without `$` and
/// thousands commas (`"$1,234.50"` is 1234.5).
pub fn number_of(s: &str) -> Option<f64> {
    last_number(s)?.parse::<f64>().ok()
}

/// How close two numbers must be to match: Python's `math.isclose` rule,
/// `|v - e| <= max(rel * max(|v|, |e|), abs)`. Both 0: exact equality.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tolerance {
    pub abs: f64,
    pub rel: f64,
}

impl Tolerance {
    pub fn close(&self, v: f64, e: f64) -> bool {
        v == e || (v - e).abs() <= (self.rel * v.abs().max(e.abs())).max(self.abs)
    }
}

/// `numeric_match`: 1.0 when the number of the value ([`number_of`], on the value after
/// `extract:` and `norm`) is within `tol` of the expected number. A value that holds no number
/// scores 0.0.
///
/// Null rule: a null value or a null expected scores 0.0 and counts as missing. An expected
/// text that holds no number is an error naming its row.
pub fn numeric_match(
    value: TextColumn<'_>,
    expected: TextColumn<'_>,
    tol: Tolerance,
    norm: Option<&Normalizer>,
    len: usize,
) -> Result<CheckOutput, KernelError> {
    let mut scores = Vec::with_capacity(len);
    let mut missing = 0;
    let mut last: Option<(&str, f64)> = None;
    for r in 0..len {
        let (Some(v), Some(e)) = (value.get(r), expected.get(r)) else {
            missing += 1;
            scores.push(false);
            continue;
        };
        let want = match last {
            Some((text, n)) if text == e => n,
            _ => {
                let n = number_of(&apply(norm, e)).ok_or_else(|| KernelError::Value {
                    row: r,
                    input: "expected".to_owned(),
                    value: e.to_owned(),
                    message: "holds no number".to_owned(),
                })?;
                last = Some((e, n));
                n
            }
        };
        scores.push(number_of(&apply(norm, v)).is_some_and(|got| tol.close(got, want)));
    }
    Ok(CheckOutput {
        is_correct: BooleanArray::from(scores),
        missing,
    })
}

/// `includes_all`: 1.0 when every expected string is a substring of the value (after `norm`).
/// As in the match family, an empty value never passes and empty expected strings are
/// ignored (so a list of only empty strings passes any non-empty value).
///
/// Null rule: a null value or a null expected cell scores 0.0 and counts as missing.
pub fn includes_all(
    value: TextColumn<'_>,
    expected: References<'_>,
    norm: Option<&Normalizer>,
    len: usize,
) -> Result<CheckOutput, KernelError> {
    let fixed: Option<Vec<String>> = match expected {
        References::Fixed(l) => Some(l.iter().map(|s| apply(norm, s).into_owned()).collect()),
        References::PerRow(_) => None,
    };
    let mut reader = match expected {
        References::PerRow(a) => Some(ExpectedReader::new(a, norm)?),
        References::Fixed(_) => None,
    };
    let mut scores = Vec::with_capacity(len);
    let mut missing = 0;
    for r in 0..len {
        let items: Option<&[String]> = match (&fixed, reader.as_mut()) {
            (Some(f), _) => Some(f),
            (None, Some(rd)) => rd.row(r),
            (None, None) => None,
        };
        match (value.get(r), items) {
            (Some(v), Some(items)) => {
                let v = apply(norm, v);
                scores.push(
                    !v.is_empty()
                        && items.iter().all(|e| {
                            e.is_empty()
                                || memchr::memmem::find(v.as_bytes(), e.as_bytes()).is_some()
                        }),
                );
            }
            _ => {
                missing += 1;
                scores.push(false);
            }
        }
    }
    Ok(CheckOutput {
        is_correct: BooleanArray::from(scores),
        missing,
    })
}

/// `not_regex`: 1.0 when `pattern` is not found anywhere in the (normalized) value.
///
/// Null rule: a null value scores 0.0 and counts as missing. An empty value passes unless
/// the pattern matches the empty text.
pub fn not_regex(
    value: TextColumn<'_>,
    pattern: &SearchPattern,
    norm: Option<&Normalizer>,
    len: usize,
) -> CheckOutput {
    let found = regex_check(value, pattern, None, norm, len);
    let scores: Vec<bool> = (0..len)
        .map(|r| value.get(r).is_some() && !found.is_correct.value(r))
        .collect();
    CheckOutput {
        is_correct: BooleanArray::from(scores),
        missing: found.missing,
    }
}

/// The `details` text of `contains_json` when the value holds no JSON object or array.
pub const NO_JSON: &str = "no JSON object or array found";

/// The fields of `contains_json` for one batch.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainsJsonOutput {
    /// The pass mask; no nulls.
    pub is_correct: BooleanArray,
    /// [`JSON_VALID`], [`NO_JSON`], or `schema: <pointer>: <violation>` of the first JSON
    /// value found; null where the value is null.
    pub details: StringArray,
    pub missing: usize,
}

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
/// array (promptfoo's `contains-json`: the value need not be JSON as a whole), and, with
/// `schema`, some such value validates. A bare number or string inside text does not count.
///
/// Null rule: a null value scores 0.0 with null `details` and counts as missing. An empty
/// value fails with [`NO_JSON`].
pub fn contains_json(
    value: TextColumn<'_>,
    schema: Option<&JsonSchema>,
    norm: Option<&Normalizer>,
    len: usize,
) -> ContainsJsonOutput {
    let mut scores = Vec::with_capacity(len);
    let mut details: Vec<Option<String>> = Vec::with_capacity(len);
    let mut missing = 0;
    for r in 0..len {
        let Some(v) = value.get(r) else {
            missing += 1;
            scores.push(false);
            details.push(None);
            continue;
        };
        let v = apply(norm, v);
        let mut first_violation = None;
        let mut pass = false;
        for doc in json_values(&v) {
            match schema.and_then(|s| s.validate(&doc)) {
                None => {
                    pass = true;
                    break;
                }
                Some(m) => {
                    first_violation.get_or_insert(m);
                }
            }
        }
        scores.push(pass);
        details.push(Some(match (pass, first_violation) {
            (true, _) => JSON_VALID.to_owned(),
            (false, Some(m)) => format!("schema: {m}"),
            (false, None) => NO_JSON.to_owned(),
        }));
    }
    ContainsJsonOutput {
        is_correct: BooleanArray::from(scores),
        details: StringArray::from(details),
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, LargeStringArray, StringViewArray};

    fn layouts(values: &[Option<&str>]) -> Vec<Box<dyn Array>> {
        vec![
            Box::new(StringArray::from(values.to_vec())),
            Box::new(LargeStringArray::from(values.to_vec())),
            Box::new(StringViewArray::from(values.to_vec())),
        ]
    }

    fn bits(b: &BooleanArray) -> Vec<bool> {
        b.iter().map(|x| x == Some(true)).collect()
    }

    #[test]
    fn numeric_match_rows() {
        let values = [
            Some("The answer is $1,234.50."),
            Some("about 3.14159"),
            Some("no number"),
            None,
            Some("-5 degrees"),
            Some("100"),
        ];
        let expected = StringArray::from(vec!["1234.5", "3.14", "1", "1", "-5", "101"]);
        let ec = TextColumn::new(&expected, "e").unwrap();
        for a in layouts(&values) {
            let vc = TextColumn::new(a.as_ref(), "v").unwrap();
            let out = numeric_match(vc, ec, Tolerance::default(), None, 6).unwrap();
            assert_eq!(
                bits(&out.is_correct),
                [true, false, false, false, true, false]
            );
            assert_eq!(out.missing, 1);
            let tol = Tolerance {
                abs: 0.01,
                rel: 0.0,
            };
            let out = numeric_match(vc, ec, tol, None, 6).unwrap();
            assert_eq!(
                bits(&out.is_correct),
                [true, true, false, false, true, false]
            );
            let tol = Tolerance {
                abs: 0.0,
                rel: 0.01,
            };
            let out = numeric_match(vc, ec, tol, None, 6).unwrap();
            assert_eq!(
                bits(&out.is_correct),
                [true, true, false, false, true, true]
            );
        }
        let bad = StringArray::from(vec!["1", "1", "one"]);
        let v = StringArray::from(vec!["1", "1", "1"]);
        let err = numeric_match(
            TextColumn::new(&v, "v").unwrap(),
            TextColumn::new(&bad, "e").unwrap(),
            Tolerance::default(),
            None,
            3,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "expected value \"one\" holds no number");
    }

    #[test]
    fn includes_all_rows() {
        let values = [
            Some("Paris is the capital of France"),
            Some("Paris"),
            Some(""),
            None,
        ];
        let fixed = ["Paris".to_owned(), "France".to_owned(), String::new()];
        for a in layouts(&values) {
            let vc = TextColumn::new(a.as_ref(), "v").unwrap();
            let out = includes_all(vc, References::Fixed(&fixed), None, 4).unwrap();
            assert_eq!(bits(&out.is_correct), [true, false, false, false]);
            assert_eq!(out.missing, 1);
            let per_row = StringArray::from(vec![
                Some(r#"["capital", "Paris"]"#),
                Some("Paris"),
                Some("x"),
                Some("x"),
            ]);
            let out = includes_all(vc, References::PerRow(&per_row), None, 4).unwrap();
            assert_eq!(bits(&out.is_correct), [true, true, false, false]);
        }
    }

    #[test]
    fn not_regex_rows() {
        let p = SearchPattern::new(r"(?i)\bsorry\b").unwrap();
        for a in layouts(&[Some("Sorry, no"), Some("fine"), Some(""), None]) {
            let vc = TextColumn::new(a.as_ref(), "v").unwrap();
            let out = not_regex(vc, &p, None, 4);
            assert_eq!(bits(&out.is_correct), [false, true, true, false]);
            assert_eq!(out.missing, 1);
        }
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
            let out = contains_json(vc, None, None, 6);
            assert_eq!(
                bits(&out.is_correct),
                [true, true, false, true, false, false]
            );
            assert_eq!(
                out.details.iter().collect::<Vec<_>>(),
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
            let out = contains_json(vc, Some(&schema), None, 6);
            assert_eq!(
                bits(&out.is_correct),
                [false, false, false, true, false, false]
            );
            assert_eq!(
                out.details.value(0),
                "schema: /: missing required property `b`"
            );
            assert_eq!(
                out.details.value(1),
                "schema: /: expected type object, got array"
            );
        }
    }
}
