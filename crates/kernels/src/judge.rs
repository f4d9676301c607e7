//! A judge model's reply read as one of the allowed labels, or as a numeric grade: tolerant of
//! what small models really write, and deterministic (the same reply always gives the same
//! result, so a cached reply scores the same on every rerun).
//!
//! Order, for labels ([`parse_label`]):
//! 1. **JSON.** The first of these that parses as a JSON object: the whole reply; the body of
//!    its first fenced block (```` ```json ````); the text from its first `{` to its last `}`.
//!    The first of `keys` present in it (`prediction`, `choice`, ...) gives the label, matched
//!    as in step 3. A JSON answer naming no allowed label is invalid: the judge answered
//!    explicitly, and a guess from its prose would be worse. `reasoning` (a string) and
//!    `confidence` (a number, or a numeric string) are taken when present.
//! 2. **The last line that names exactly one label.** Lines are read from the last; a line
//!    naming none, or two different labels, is skipped. A label is named when it appears
//!    between non-alphanumeric characters (or the ends of the line).
//! 3. **Matching.** Labels of one character (`A` to `E`) match only in their own case, so the
//!    English article "a" is not choice A; longer labels match in any case (`Yes`, `YES`).
//!
//! Grades ([`parse_grade`]) follow the same order: a JSON number (or numeric string) under one
//! of `keys`, else the last line holding exactly one number inside `[min, max]` (`8/10` with a
//! maximum of 10 counts as 8). A grade outside the range is invalid.

/// Where a parsed answer came from; `Invalid` when no answer could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParsedFrom {
    Json,
    LastLine,
    Invalid,
}

impl ParsedFrom {
    /// The `judge_status` text: `ok` for an answer read either way, else `invalid`.
    pub fn status(self) -> &'static str {
        match self {
            ParsedFrom::Json | ParsedFrom::LastLine => "ok",
            ParsedFrom::Invalid => "invalid",
        }
    }
}

/// A reply read as a label.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelReply {
    /// The allowed label, spelled as given in `labels`.
    pub label: Option<String>,
    pub reasoning: Option<String>,
    pub confidence: Option<f64>,
    pub from: ParsedFrom,
}

/// Reads `reply` as one of `labels` (see the module docs), looking up `keys` in a JSON answer.
pub fn parse_label(reply: &str, labels: &[&str], keys: &[&str]) -> LabelReply {
    let mut wanted: Vec<&str> = keys.to_vec();
    wanted.extend(["reasoning", "confidence"]);
    if let Some(mut members) = json_members(reply, &wanted) {
        let confidence = members[keys.len() + 1].as_ref().and_then(json_number);
        let reasoning = match members[keys.len()].take() {
            Some(serde_json::Value::String(s)) => Some(s),
            _ => None,
        };
        if let Some(value) = members[..keys.len()].iter().find_map(Option::as_ref) {
            let (label, from) = json_label(value, labels);
            return LabelReply {
                label,
                reasoning,
                confidence,
                from,
            };
        }
    }
    let label = reply.lines().rev().find_map(|line| {
        let mut named = labels.iter().filter(|l| names(line, l));
        match (named.next(), named.next()) {
            (Some(l), None) => Some((*l).to_owned()),
            _ => None,
        }
    });
    let from = if label.is_some() {
        ParsedFrom::LastLine
    } else {
        ParsedFrom::Invalid
    };
    LabelReply {
        label,
        reasoning: None,
        confidence: None,
        from,
    }
}

/// The `reasoning` string of a JSON answer, if the reply is one that has it.
pub fn reasoning(reply: &str) -> Option<String> {
    match json_members(reply, &["reasoning"])?.pop()? {
        Some(serde_json::Value::String(s)) => Some(s),
        _ => None,
    }
}

/// Reads `reply` as a number in `[min, max]` (see the module docs).
pub fn parse_grade(reply: &str, min: f64, max: f64, keys: &[&str]) -> (Option<f64>, ParsedFrom) {
    let in_range = |g: f64| (min..=max).contains(&g);
    if let Some(members) = json_members(reply, keys) {
        if let Some(value) = members.iter().find_map(Option::as_ref) {
            return match json_number(value).filter(|g| in_range(*g)) {
                Some(g) => (Some(g), ParsedFrom::Json),
                None => (None, ParsedFrom::Invalid),
            };
        }
    }
    for line in reply.lines().rev() {
        let grades: Vec<f64> = numbers(line, max)
            .into_iter()
            .filter(|g| in_range(*g))
            .collect();
        if let [g] = grades[..] {
            return (Some(g), ParsedFrom::LastLine);
        }
    }
    (None, ParsedFrom::Invalid)
}

const QUOTES: &[char] = &['"', '\'', '`', '*', '.', '(', ')', '[', ']'];

/// `text` as one of `labels`: exactly, else ignoring case for labels longer than one character.
fn match_label(text: &str, labels: &[&str]) -> Option<String> {
    labels
        .iter()
        .find(|l| **l == text)
        .or_else(|| {
            labels
                .iter()
                .find(|l| l.chars().count() > 1 && l.eq_ignore_ascii_case(text))
        })
        .map(|l| (*l).to_owned())
}

/// Whether `line` names `label` between non-alphanumeric characters.
fn names(line: &str, label: &str) -> bool {
    if label.is_empty() {
        return false;
    }
    let single = label.chars().count() == 1;
    let (hay, needle) = if single {
        (line.to_owned(), label.to_owned())
    } else {
        (line.to_lowercase(), label.to_lowercase())
    };
    let mut start = 0;
    while let Some(i) = hay[start..].find(&needle) {
        let at = start + i;
        let end = at + needle.len();
        let before = hay[..at].chars().next_back();
        let after = hay[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        start = at + needle.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The members `names` of the JSON object in a reply (see the module docs for where it is
/// looked for), each the last of its name, as a `serde_json` map would hold them; `None`
/// when no candidate text is a JSON object. The other members are read (the whole text must
/// be JSON) but not kept.
fn json_members(reply: &str, names: &[&str]) -> Option<Vec<Option<serde_json::Value>>> {
    json_candidates(reply).find_map(|text| {
        let mut de = serde_json::Deserializer::from_str(text.trim());
        let members = serde::de::DeserializeSeed::deserialize(Members(names), &mut de).ok()?;
        de.end().ok()?;
        Some(members)
    })
}

/// The label a JSON answer's value names: read from JSON, or invalid when it names none of
/// `labels` (an explicit answer outside the labels is not guessed from the prose).
fn json_label(value: &serde_json::Value, labels: &[&str]) -> (Option<String>, ParsedFrom) {
    let owned;
    let text = match value {
        serde_json::Value::String(s) => s.as_str(),
        other => {
            owned = other.to_string();
            owned.as_str()
        }
    };
    let label = match_label(text.trim().trim_matches(QUOTES), labels);
    let from = if label.is_some() {
        ParsedFrom::Json
    } else {
        ParsedFrom::Invalid
    };
    (label, from)
}

/// Where a reply's JSON answer is looked for, in order: the whole reply, the body of its first
/// fenced block, the text from its first `{` to its last `}`.
fn json_candidates(reply: &str) -> impl Iterator<Item = &str> {
    let trimmed = reply.trim();
    let fenced = trimmed.find("```").and_then(|i| {
        let body = &trimmed[i + 3..];
        let body = body.strip_prefix("json").unwrap_or(body);
        body.find("```").map(|j| &body[..j])
    });
    let braces = match (trimmed.find('{'), trimmed.rfind('}')) {
        (Some(a), Some(b)) if a < b => Some(&trimmed[a..=b]),
        _ => None,
    };
    [Some(trimmed), fenced, braces].into_iter().flatten()
}

/// Reads a JSON object, keeping the members named in `.0` (see [`json_members`]).
struct Members<'n>(&'n [&'n str]);

impl<'de> serde::de::DeserializeSeed<'de> for Members<'_> {
    type Value = Vec<Option<serde_json::Value>>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Members<'_> {
    type Value = Vec<Option<serde_json::Value>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<Option<serde_json::Value>> = vec![None; self.0.len()];
        while let Some(name) = map.next_key::<Name<'de>>()? {
            let name = name.0.as_ref();
            match self.0.iter().position(|n| *n == name) {
                Some(i) => {
                    let v: serde_json::Value = map.next_value()?;
                    for (j, n) in self.0.iter().enumerate().skip(i + 1) {
                        if *n == name {
                            out[j] = Some(v.clone());
                        }
                    }
                    out[i] = Some(v);
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// A member name, borrowed from the reply unless it has escapes.
struct Name<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Name<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(std::borrow::Cow::Borrowed(s)))
            }

            fn visit_str<E>(self, s: &str) -> Result<Name<'de>, E> {
                Ok(Name(std::borrow::Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

fn json_number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().parse().ok().filter(|f: &f64| f.is_finite()),
        _ => None,
    }
}

/// The numbers written in `line` (digits with an optional sign and decimal part); `X/max`
/// counts as X alone.
fn numbers(line: &str, max: f64) -> Vec<f64> {
    let bytes = line.as_bytes();
    let mut out: Vec<f64> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            || (bytes[i] == b'-'
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()));
        if !starts {
            i += 1;
            continue;
        }
        let begin = i;
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        let Ok(n) = line[begin..i].parse::<f64>() else {
            continue;
        };
        // `8/10` on a scale to 10: the denominator is the scale, not a second grade.
        if bytes.get(i) == Some(&b'/') {
            let rest = &line[i + 1..];
            let len = rest.bytes().take_while(u8::is_ascii_digit).count();
            if rest[..len].parse::<f64>().ok() == Some(max) {
                out.push(n);
                i += 1 + len;
                continue;
            }
        }
        out.push(n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const YES_NO: &[&str] = &["yes", "no"];
    const KEYS: &[&str] = &["prediction", "choice"];
    const CHOICES: &[&str] = &["A", "B", "C", "D", "E"];

    fn label(reply: &str, labels: &[&str]) -> (Option<String>, ParsedFrom) {
        let r = parse_label(reply, labels, KEYS);
        (r.label, r.from)
    }

    #[test]
    fn json_answers_come_first_with_reasoning_and_confidence() {
        let r = parse_label(
            "{\"prediction\": \"Yes\", \"reasoning\": \"it says no to nothing\", \"confidence\": \"0.8\"}",
            YES_NO,
            KEYS,
        );
        assert_eq!(
            r,
            LabelReply {
                label: Some("yes".into()),
                reasoning: Some("it says no to nothing".into()),
                confidence: Some(0.8),
                from: ParsedFrom::Json,
            }
        );
        // Fenced, and surrounded by prose that names the other label.
        assert_eq!(
            label(
                "Sure, no problem.\n```json\n{\"prediction\": \"no\"}\n```\nThat is yes-ish.",
                YES_NO
            ),
            (Some("no".into()), ParsedFrom::Json)
        );
        // Between the first { and the last }.
        assert_eq!(
            label("Answer: {\"choice\": \"C\"} done", CHOICES),
            (Some("C".into()), ParsedFrom::Json)
        );
        // An explicit JSON answer outside the labels is invalid, not guessed from the prose.
        assert_eq!(
            label("{\"prediction\": \"maybe\"}\nyes", YES_NO),
            (None, ParsedFrom::Invalid)
        );
        // JSON without any of the keys: the lines decide.
        assert_eq!(
            label("{\"verdict\": 1}\nno", YES_NO),
            (Some("no".into()), ParsedFrom::LastLine)
        );
    }

    /// [`parse_label`] through a whole `serde_json` map of the JSON answer, as it was first
    /// written: the reference of the test below.
    fn map_parse_label(reply: &str, labels: &[&str], keys: &[&str]) -> LabelReply {
        let obj = json_candidates(reply).find_map(|text| match serde_json::from_str(text.trim()) {
            Ok(serde_json::Value::Object(map)) => Some(map),
            _ => None,
        });
        if let Some(obj) = obj {
            if let Some(value) = keys.iter().find_map(|k| obj.get(*k)) {
                let (label, from) = json_label(value, labels);
                return LabelReply {
                    label,
                    reasoning: obj
                        .get("reasoning")
                        .and_then(|v| v.as_str())
                        .map(str::to_owned),
                    confidence: obj.get("confidence").and_then(json_number),
                    from,
                };
            }
        }
        // No JSON answer: the lines decide, as `parse_label` does (tested on its own below).
        parse_label(
            &format!("\n{}", reply.replace(['{', '}'], " ")),
            labels,
            &[],
        )
    }

    /// The members read from a JSON answer are what a `serde_json` map of it holds: the last
    /// of a repeated name, names with escapes, any value type; a JSON text that is not an
    /// object, or has text after it, is no JSON answer.
    #[test]
    fn json_answers_are_read_as_a_serde_json_map_reads_them() {
        let cases = [
            "{\"prediction\": \"no\", \"prediction\": \"yes\", \"reasoning\": \"a\", \"reasoning\": 3}",
            "{\"pred\\u0069ction\": \"yes\", \"reas\\u006fning\": \"r \\\"q\\\"\", \"confidence\": \" 0.25 \"}",
            "{\"other\": {\"prediction\": \"no\", \"x\": [1, {\"y\": null}]}, \"label\": \"Yes\", \"confidence\": 1e400}",
            "{\"prediction\": [\"yes\"], \"confidence\": true}",
            "{\"prediction\": null, \"label\": \"no\"}",
            "{}",
            "[{\"prediction\": \"yes\"}]\nno",
            "\"{\\\"prediction\\\": \\\"yes\\\"}\"\nno",
            "{\"prediction\": \"yes\"} trailing\nno",
            "{\"prediction\": \"yes\",}\nno",
        ];
        let keys = &["prediction", "label"];
        for reply in cases.iter().flat_map(|c| {
            [
                c.to_string(),
                format!("Here:\n```json\n{c}\n```"),
                format!("So {c} ok"),
            ]
        }) {
            assert_eq!(
                parse_label(&reply, YES_NO, keys),
                map_parse_label(&reply, YES_NO, keys),
                "{reply}"
            );
        }
        assert_eq!(
            reasoning("{\"reasoning\": \"one\", \"reasoning\": \"two\"}").as_deref(),
            Some("two")
        );
        assert_eq!(reasoning("{\"reasoning\": 1}"), None);
        assert_eq!(reasoning("not json"), None);
    }

    #[test]
    fn the_last_line_naming_exactly_one_label_decides() {
        assert_eq!(
            label("The answer could be yes or no.\nFinal answer: No.", YES_NO),
            (Some("no".into()), ParsedFrom::LastLine)
        );
        // The last line names both: skipped; the one before names one.
        assert_eq!(
            label("Verdict: YES\nNot a clear yes or no though", YES_NO),
            (Some("yes".into()), ParsedFrom::LastLine)
        );
        // Inside words does not count: "nothing", "eyes".
        assert_eq!(
            label("nothing in the eyes", YES_NO),
            (None, ParsedFrom::Invalid)
        );
        // One-letter choices match in their own case only: the article "a" is not A.
        assert_eq!(
            label("This is a close call.\n(B)", CHOICES),
            (Some("B".into()), ParsedFrom::LastLine)
        );
        assert_eq!(
            label("It is a draw between A and C", CHOICES),
            (None, ParsedFrom::Invalid)
        );
        assert_eq!(label("", YES_NO), (None, ParsedFrom::Invalid));
        // What SmolLM2-135M under llama-server really answered when asked for JSON with a
        // yes/no prediction: prose naming neither label.
        assert_eq!(
            label(
                "The answer is incorrect. The correct answer is \"Paris\" and the sentence \"Paris\" is a French phrase that translates to \"Paris\" in English.",
                YES_NO
            ),
            (None, ParsedFrom::Invalid)
        );
        assert_eq!(ParsedFrom::Invalid.status(), "invalid");
        assert_eq!(ParsedFrom::LastLine.status(), "ok");
    }

    #[test]
    fn grades_from_json_or_the_last_line_within_range() {
        let keys = &["score", "grade"];
        assert_eq!(
            parse_grade("{\"score\": 4, \"reasoning\": \"fine\"}", 1.0, 5.0, keys),
            (Some(4.0), ParsedFrom::Json)
        );
        assert_eq!(
            parse_grade("{\"score\": \"7\"}", 1.0, 5.0, keys),
            (None, ParsedFrom::Invalid)
        );
        assert_eq!(
            parse_grade("Looks good overall.\nRating: 8/10", 0.0, 10.0, keys),
            (Some(8.0), ParsedFrom::LastLine)
        );
        assert_eq!(
            parse_grade("Grade: 3.5\nfrom 1 to 5, see above", 1.0, 5.0, keys),
            (Some(3.5), ParsedFrom::LastLine)
        );
        assert_eq!(
            parse_grade("between 2 and 3", 1.0, 5.0, keys),
            (None, ParsedFrom::Invalid)
        );
        assert_eq!(
            parse_grade("score -1, item-2", -1.0, 1.0, keys),
            (Some(-1.0), ParsedFrom::LastLine)
        );
    }
}
