//! A task's top-level `filter:`: its text and where it is, for the engine to parse with
//! `--where`'s language; never an ignored key.
#![allow(clippy::unwrap_used)]

use evalscore_task::{Location, TaskDocument, TaskFilter};

const SCORERS: &str = "definition:\n  scorers:\n    - {type: string_equals, ground_truth: x}\n";

#[test]
fn the_filter_is_read_with_its_location() {
    let doc = TaskDocument::parse(
        &format!("{SCORERS}filter: model = 'm1' and date >= '2001-02-03'\n"),
        &[],
    )
    .unwrap();
    assert_eq!(
        doc.filter,
        Some(TaskFilter {
            text: "model = 'm1' and date >= '2001-02-03'".to_owned(),
            location: Some(Location::new(4, 9)),
        })
    );
    assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    // A `<< config.NAME >>` placeholder fills it as any other value.
    let doc = TaskDocument::parse(
        &format!("config: {{model: m1}}\nfilter: \"model = '<< config.model >>'\"\n{SCORERS}"),
        &[("model".to_owned(), "m2".to_owned())],
    )
    .unwrap();
    assert_eq!(doc.filter.unwrap().text, "model = 'm2'");
    let doc = TaskDocument::parse(&format!("{SCORERS}filter:\n"), &[]).unwrap();
    assert_eq!(doc.filter, None);
}

#[test]
fn a_filter_that_is_not_text_is_an_error_at_its_line() {
    let e = TaskDocument::parse(&format!("{SCORERS}filter: [model]\n"), &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 4, column 9: `filter` must be a string, found a list"
    );
}
