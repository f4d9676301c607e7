//! `evalscore_kernels::JsonSchema` beside the `jsonschema` crate (a dev-dependency only): what
//! each does with the schemas and documents a `schema:` option meets, and how fast. The module
//! doc of `kernels/src/json/schema.rs` gives the figures and the reasons it keeps its own code;
//! these tests keep those reasons checkable when `jsonschema` moves.
//!
//! `promises` runs with the other tests; the throughput comparison is ignored (run it in
//! release):
//! `cargo test --release -p evalscore-kernels --test it schema_vs_jsonschema -- --ignored --nocapture`

use evalscore_kernels::json::MAX_DEPTH;
use evalscore_kernels::pattern::{REGEX_DFA_SIZE_LIMIT, REGEX_SIZE_LIMIT};
use evalscore_kernels::JsonSchema;
use serde_json::{json, Value};
use std::time::Instant;

/// `jsonschema` set up as close to the project's promises as its options go: draft 2020-12,
/// the `regex` engine (not backtracking `fancy-regex`) under the project's size limits, and no
/// retriever for anything outside the schema.
fn theirs(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(
            jsonschema::PatternOptions::regex()
                .size_limit(REGEX_SIZE_LIMIT)
                .dfa_size_limit(REGEX_DFA_SIZE_LIMIT),
        )
        .offline()
        .build(schema)
        .map_err(|e| e.to_string())
}

/// `jsonschema`'s first error in the project's `<pointer>: <what>` shape.
fn their_first(v: &jsonschema::Validator, doc: &Value) -> Option<String> {
    v.validate(doc).err().map(|e| {
        let p = e.instance_path().as_str();
        format!("{}: {e}", if p.is_empty() { "/" } else { p })
    })
}

fn judge_schema() -> Value {
    json!({
        "type": "object",
        "required": ["verdict", "score", "reason"],
        "additionalProperties": false,
        "properties": {
            "verdict": {"enum": ["correct", "incorrect", "partial"]},
            "score": {"type": "number", "minimum": 0, "maximum": 10},
            "reason": {"type": "string", "minLength": 1, "maxLength": 400},
            "id": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{4}$"}
        }
    })
}

/// `n` judge replies, about one in five breaking the schema in one of five ways.
fn judge_replies(n: usize) -> Vec<Value> {
    let verdicts = ["correct", "incorrect", "partial"];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut doc = json!({
                "verdict": verdicts[(x % 3) as usize],
                "score": (x % 1000) as f64 / 100.0,
                "reason": "The answer names the right city and gives the correct year of founding.",
                "id": format!("AB-{:04}", x % 10_000),
            });
            match (i % 25, &mut doc) {
                (1, Value::Object(m)) => drop(m.remove("reason")),
                (2, Value::Object(m)) => drop(m.insert("verdict".into(), json!("maybe"))),
                (3, Value::Object(m)) => drop(m.insert("score".into(), json!(11))),
                (4, Value::Object(m)) => drop(m.insert("id".into(), json!("ab-12"))),
                (5, Value::Object(m)) => drop(m.insert("extra".into(), json!(true))),
                _ => {}
            }
            doc
        })
        .collect()
}

#[test]
fn promises() {
    // A misspelt keyword: refused at load by the project; `jsonschema` (as the specification
    // asks) ignores it, so the schema silently checks less than it says.
    let typo = json!({"type": "object", "requird": ["answer"]});
    assert_eq!(
        JsonSchema::compile(&typo).unwrap_err().split(" (").next(),
        Some("schema keyword `requird` at / is not supported")
    );
    let t = theirs(&typo).unwrap();
    assert!(t.is_valid(&json!({})));

    // The first violation: same pointer, different words.
    let s = judge_schema();
    let (ours, t) = (JsonSchema::compile(&s).unwrap(), theirs(&s).unwrap());
    let doc = json!({"verdict": "correct", "score": 11, "reason": "ok"});
    assert_eq!(
        ours.validate(&doc).as_deref(),
        Some("/score: 11 is greater than the maximum 10")
    );
    assert_eq!(
        their_first(&t, &doc).as_deref(),
        Some("/score: 11 is greater than the maximum of 10")
    );
    let doc = json!({"verdict": "maybe", "score": 1, "reason": "ok"});
    assert_eq!(
        ours.validate(&doc).as_deref(),
        Some("/verdict: \"maybe\" is not one of the `enum` values")
    );
    assert_eq!(
        their_first(&t, &doc).as_deref(),
        Some("/verdict: \"maybe\" is not one of \"correct\", \"incorrect\" or \"partial\"")
    );

    // A pattern is compiled by the project with its size and nesting limits and counted
    // against the task's regex budget; `jsonschema` takes the size limits but has no nesting
    // limit and no budget, and reads the pattern as ECMA-262: `\d` is ASCII there, any Unicode
    // digit for every other pattern in a task.
    let nested = format!("{}a{}", "(".repeat(70), ")".repeat(70));
    let p = json!({"pattern": nested});
    assert_eq!(
        JsonSchema::compile(&p).unwrap_err(),
        "`pattern` at /: exceed the maximum number of nested parentheses/brackets (64)"
    );
    assert!(theirs(&p).is_ok());
    let digits = json!({"type": "string", "pattern": "^\\d+$"});
    let (ours, t) = (
        JsonSchema::compile(&digits).unwrap(),
        theirs(&digits).unwrap(),
    );
    assert_eq!(ours.validate(&json!("٣٤")), None);
    assert!(!t.is_valid(&json!("٣٤")));

    // Nesting: the project refuses a schema deeper than MAX_DEPTH; `jsonschema` has no bound.
    let mut deep = json!({"type": "integer"});
    for _ in 0..=MAX_DEPTH {
        deep = json!({"items": deep});
    }
    assert!(JsonSchema::compile(&deep).is_err());
    assert!(theirs(&deep).is_ok());

    // References to other files or hosts: both refuse (the project knows no `$ref`;
    // `jsonschema` without its default features has no retriever).
    for r in ["https://example.com/s.json", "file:///etc/hostname"] {
        let s = json!({"$ref": r});
        assert!(JsonSchema::compile(&s).is_err());
        assert!(theirs(&s).is_err(), "{r}");
    }
}

/// Validation throughput on the same parsed documents: the first violation as a message (what
/// a scorer writes to `details`) for both, and `jsonschema`'s yes/no alone.
#[test]
#[ignore = "a measurement: run in release with --nocapture"]
fn throughput() {
    const N: usize = 200_000;
    let s = judge_schema();
    let docs = judge_replies(N);
    let t0 = Instant::now();
    let ours = JsonSchema::compile(&s).unwrap();
    let ours_compile = t0.elapsed();
    let t0 = Instant::now();
    let t = theirs(&s).unwrap();
    let their_compile = t0.elapsed();

    let mut disagree = 0;
    for d in &docs {
        if ours.validate(d).is_none() != t.is_valid(d) {
            disagree += 1;
        }
    }
    assert_eq!(disagree, 0);
    // The same first violation's pointer, in other words.
    let pointer = |m: String| m.split(": ").next().map(str::to_owned);
    let elsewhere = docs
        .iter()
        .filter(|d| ours.validate(d).map(pointer) != their_first(&t, d).map(pointer))
        .count();
    assert_eq!(elsewhere, 0);
    for d in &docs[1..6] {
        println!("  ours:       {}", ours.validate(d).unwrap_or_default());
        println!("  jsonschema: {}", their_first(&t, d).unwrap_or_default());
    }
    let invalid = docs.iter().filter(|d| ours.validate(d).is_some()).count();

    let best = |f: &dyn Fn() -> usize| {
        (0..5)
            .map(|_| {
                let t0 = Instant::now();
                std::hint::black_box(f());
                N as f64 / t0.elapsed().as_secs_f64()
            })
            .fold(0.0, f64::max)
    };
    let ours_rate = best(&|| docs.iter().filter_map(|d| ours.validate(d)).count());
    let their_rate = best(&|| docs.iter().filter_map(|d| their_first(&t, d)).count());
    let their_bool = best(&|| docs.iter().filter(|d| !t.is_valid(d)).count());
    println!("{N} judge replies, {invalid} invalid; best of 5");
    println!(
        "evalscore JsonSchema::validate   {ours_rate:>12.0} docs/s  (compile {ours_compile:?})"
    );
    println!(
        "jsonschema first error, message  {their_rate:>12.0} docs/s  (compile {their_compile:?})"
    );
    println!("jsonschema is_valid              {their_bool:>12.0} docs/s");
}
