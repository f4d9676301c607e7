//! The registry is the one list of scorer kinds: every kind's example loads, names are
//! unique, unknown keys are checked against each kind's options, and the committed scorer
//! reference is the one the registry renders.
#![allow(clippy::unwrap_used)]

use evalscore_scorers::reference::{example_task, render};
use evalscore_scorers::registry::{self, SCORER_TYPES};
use evalscore_scorers::Task;
use std::collections::BTreeSet;

/// The keys every scorer takes.
const COMMON: &str =
    "type key display_name purpose metrics normalize extract write_scores write_fields";

#[test]
fn every_example_loads_as_its_kind() {
    for kind in SCORER_TYPES {
        let task = Task::from_yaml(&example_task(kind.example()), &[])
            .unwrap_or_else(|e| panic!("{}: {e}", kind.example()));
        let s = &task.scorers[0];
        assert!(
            kind.names().contains(&s.scorer_type.as_str()),
            "{}",
            kind.example()
        );
        assert_eq!(s.scorer.fields().first().map(|f| f.written), Some(true));
        // A model-graded kind asks its model; no other kind's example takes `normalize:`
        // away.
        assert_eq!(s.scorer.judge().is_some(), !kind.text_options());
    }
}

#[test]
fn names_and_options_are_unique() {
    let names = registry::type_names();
    let distinct: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(distinct.len(), names.len(), "{names:?}");
    for kind in SCORER_TYPES {
        let keys: Vec<&str> = kind.options().iter().map(|o| o.key).collect();
        let distinct: BTreeSet<&str> = keys.iter().copied().collect();
        assert_eq!(distinct.len(), keys.len(), "{keys:?}");
        let common: Vec<&str> = COMMON.split(' ').collect();
        assert!(keys.iter().all(|k| !common.contains(k)), "{keys:?}");
        for name in kind.names() {
            assert_eq!(registry::find(name).unwrap().names(), kind.names());
        }
    }
    assert!(registry::find("string_equal").is_none());
}

/// An unknown key names the scorer and lists what it takes: the common keys and the
/// kind's own options, from the registry.
#[test]
fn unknown_keys_list_each_kinds_options() {
    for kind in SCORER_TYPES {
        let example = kind.example();
        let with_bogus = format!("{{bogus_key: 1, {}", &example[1..]);
        let e = Task::from_yaml(&example_task(&with_bogus), &[]).unwrap_err();
        let task = Task::from_yaml(&example_task(example), &[]).unwrap();
        let name = &task.scorers[0].scorer_type;
        assert_eq!(
            e.message,
            format!("unknown key `bogus_key` in scorer `{name}`")
        );
        let hint = e.hint.unwrap();
        let allowed: Vec<&str> = hint
            .split("allowed keys: ")
            .nth(1)
            .unwrap()
            .split(", ")
            .collect();
        for o in kind.options() {
            assert!(allowed.contains(&o.key), "{hint}");
        }
        assert_eq!(hint.contains("normalize"), kind.text_options(), "{hint}");
    }
}

/// docs/scorer-reference.md is the registry's rendering. To regenerate it after changing a
/// kind: `EVALSCORE_UPDATE_REFERENCE=1 cargo test -p evalscore-scorers --test it reference`.
#[test]
fn reference_doc_is_up_to_date() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/scorer-reference.md"
    );
    let committed = evalscore_test_support::generated::check(
        path,
        &render(),
        "EVALSCORE_UPDATE_REFERENCE=1 cargo test -p evalscore-scorers --test it reference",
    );
    for name in registry::type_names() {
        assert!(committed.contains(&format!("`{name}`")), "{name}");
    }
}

/// docs/contributing.md walks through `not_regex`, showing its whole file: the file as it is.
#[test]
fn contributing_shows_not_regex_as_it_is() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let doc = std::fs::read_to_string(format!("{root}/docs/contributing.md")).unwrap();
    let file =
        std::fs::read_to_string(format!("{root}/crates/scorers/src/scorers/not_regex.rs")).unwrap();
    assert!(
        doc.contains(&format!("```rust\n{file}```")),
        "docs/contributing.md must show crates/scorers/src/scorers/not_regex.rs as it is"
    );
}
