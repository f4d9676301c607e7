use super::*;
use crate::normalize::{Normalizer, Step};
use crate::test_columns::{col, layouts};
use arrow::array::{ArrayRef, ListBuilder, StringArray, StringBuilder, StringViewArray};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use std::sync::Arc;
use views::{match_views, shaped_once, view_has_byte};

fn norm(steps: Vec<Step>) -> Normalizer {
    Normalizer::new(steps)
}

/// The fuzzy-match reference table of docs/compatibility.md, with its normalization (lower,
/// punctuation, articles, whitespace) written as normalize steps. Both argument orders must
/// agree, as in the reference.
#[test]
fn fuzzy_match_reference_table() {
    let n = norm(vec![
        Step::IgnoreCase,
        Step::IgnorePunctuation,
        Step::RemoveArticles,
        Step::IgnoreWhitespace,
        Step::Strip,
    ]);
    let table: [(&str, &str, bool); 9] = [
        // The reference says true; evalscore's documented rule: an empty string never matches.
        ("", "", false),
        ("x", "", false),
        ("Hello", "Hello", true),
        ("hello", "othello", true),
        ("hello", "oh tello", false),
        ("Hello World", "foo\nhello world", true),
        ("who's there?", "whos there", true),
        ("who's there?", "whosthere", false),
        ("an apple a day that the", "apple day that", true),
    ];
    for (s1, s2, want) in table {
        for (v, e) in [(s1, s2), (s2, s1)] {
            let needles = Needles::new([e], Some(&n));
            let a: ArrayRef = Arc::new(StringArray::from(vec![v]));
            let out = match_check(
                Batch::new(col(&a), Some(&n), 1),
                Expected::Fixed(&needles),
                MatchMode::Fuzzy,
                false,
            )
            .unwrap();
            assert_eq!(out.is_correct.value(0), want, "{v:?} vs {e:?}");
            // The same through a per-row expected column.
            let ea: ArrayRef = Arc::new(StringArray::from(vec![e]));
            let out = match_check(
                Batch::new(col(&a), Some(&n), 1),
                Expected::PerRow(ea.as_ref()),
                MatchMode::Fuzzy,
                false,
            )
            .unwrap();
            assert_eq!(out.is_correct.value(0), want, "per row {v:?} vs {e:?}");
        }
    }
}

const VALUES: [Option<&str>; 8] = [
    Some("Paris is the capital"),
    Some("the capital is Paris"),
    Some("Par"),
    Some(""),
    None,
    Some("日本は東京"),
    Some("London"),
    Some("PARIS"),
];

#[test]
fn match_family_over_every_layout() {
    let needles = Needles::new(["Paris", "東京", ""], None);
    let cases: [(MatchMode, bool, [f64; 8]); 6] = [
        (
            MatchMode::Prefix,
            false,
            [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ),
        (
            MatchMode::Substring,
            false,
            [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
        ),
        (
            MatchMode::Fuzzy,
            false,
            [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
        ),
        (
            MatchMode::Prefix,
            true,
            [0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0],
        ),
        (
            MatchMode::Substring,
            true,
            [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0],
        ),
        (
            MatchMode::Fuzzy,
            true,
            [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0],
        ),
    ];
    for a in layouts(&VALUES) {
        for (mode, negate, want) in cases {
            let out = match_check(
                Batch::new(col(&a), None, 8),
                Expected::Fixed(&needles),
                mode,
                negate,
            )
            .unwrap();
            assert_eq!(crate::score_vec(&out.is_correct), want, "{mode:?} {negate}");
            assert_eq!(out.missing, 1);
        }
    }
    // ignore_case makes "PARIS" match.
    let n = norm(vec![Step::IgnoreCase]);
    let needles = Needles::new(["Paris"], Some(&n));
    let a = &layouts(&VALUES)[2];
    let out = match_check(
        Batch::new(col(a), Some(&n), 8),
        Expected::Fixed(&needles),
        MatchMode::Prefix,
        false,
    )
    .unwrap();
    assert_eq!(
        crate::score_vec(&out.is_correct),
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    );
}

#[test]
fn per_row_expected_lists() {
    let v: ArrayRef = Arc::new(StringArray::from(vec![
        Some("red apple"),
        Some("green pear"),
        Some("blue"),
        Some("x"),
        Some("[invalid]"),
    ]));
    // A list column, a JSON array string, a quoted Python list, a plain string.
    let mut lb = ListBuilder::new(StringBuilder::new());
    lb.append_value([Some("apple"), Some("plum")]);
    lb.append_value([Some("plum")]);
    lb.append_value([Some("blue")]);
    lb.append_null();
    lb.append_value([Some("[invalid]")]);
    let lists: ArrayRef = Arc::new(lb.finish());
    let out = match_check(
        Batch::new(col(&v), None, 5),
        Expected::PerRow(lists.as_ref()),
        MatchMode::Substring,
        false,
    )
    .unwrap();
    assert_eq!(crate::score_vec(&out.is_correct), [1.0, 0.0, 1.0, 0.0, 1.0]);
    assert_eq!(out.missing, 1);
    let text: ArrayRef = Arc::new(StringArray::from(vec![
        Some(r#"["apple", "plum"]"#),
        Some("['plum', 'pear']"),
        Some("blue"),
        None,
        Some("[invalid]"),
    ]));
    let out = match_check(
        Batch::new(col(&v), None, 5),
        Expected::PerRow(text.as_ref()),
        MatchMode::Substring,
        false,
    )
    .unwrap();
    assert_eq!(crate::score_vec(&out.is_correct), [1.0, 1.0, 1.0, 0.0, 1.0]);
    // A missing expected scores 0.0 for a not_ form too.
    let out = match_check(
        Batch::new(col(&v), None, 5),
        Expected::PerRow(text.as_ref()),
        MatchMode::Substring,
        true,
    )
    .unwrap();
    assert_eq!(crate::score_vec(&out.is_correct), [0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(crate::text_as_list("[invalid]"), None);
    assert_eq!(
        crate::text_as_list("[1, 2]"),
        Some(vec!["1".into(), "2".into()])
    );
    assert_eq!(crate::text_as_list("[]"), Some(vec![]));
}

/// The view fast path of `match`/`includes` takes batches whose expected cells are 1 to 4
/// plain bytes, and decides inline values, out-of-line values, empty values and nulls.
#[test]
fn match_over_views_takes_the_fast_path() {
    let values = StringViewArray::from(vec![
        Some("B"),
        Some("The answer is B"),
        Some("b"),
        Some(""),
        None,
        Some("AB. because long enough to be out of line"),
        Some("ABCD"),
        Some("xyzzyABCD"),
    ]);
    let expected = StringViewArray::from(vec![
        Some("B"),
        Some("B"),
        Some("B"),
        Some("B"),
        Some("B"),
        Some("B"),
        Some("ABCD"),
        None,
    ]);
    let prefix = match_views(&values, &expected, MatchMode::Prefix).unwrap();
    let substring = match_views(&values, &expected, MatchMode::Substring).unwrap();
    let valid = [true, true, true, true, false, true, true, false];
    let bits =
        |b: &BooleanBuffer| -> Vec<bool> { b.iter().zip(valid).map(|(b, ok)| b && ok).collect() };
    assert_eq!(
        bits(&prefix),
        [true, false, false, false, false, false, true, false]
    );
    assert_eq!(
        bits(&substring),
        [true, true, false, false, false, true, true, false]
    );
    let out = match_check(
        Batch::new(col(&(Arc::new(values) as ArrayRef)), None, 8),
        Expected::PerRow(&expected),
        MatchMode::Substring,
        true,
    )
    .unwrap();
    assert_eq!(
        crate::score_vec(&out.is_correct),
        [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(out.missing, 2);
    // A list-shaped, empty or long expected cell sends the batch to the general path.
    for e in ["[\"B\"]", "", "ABCDE", " B"] {
        let expected = StringViewArray::from(vec![e]);
        let one = StringViewArray::from(vec!["B"]);
        assert!(
            match_views(&one, &expected, MatchMode::Prefix).is_none(),
            "{e:?}"
        );
    }
}

/// The inline byte test looks at the string's bytes only, not at bytes past its length.
#[test]
fn inline_byte_test_stops_at_the_length() {
    // Length 3, data "abc", then bytes that would match if read.
    let mut view = [0u8; 16];
    view[0] = 3;
    view[4..16].copy_from_slice(b"abcZZZZZZZZZ");
    let view = u128::from_le_bytes(view);
    assert!(view_has_byte(view, view as u32, b'a'));
    assert!(view_has_byte(view, view as u32, b'c'));
    assert!(!view_has_byte(view, view as u32, b'Z'));
    assert!(!view_has_byte(view, view as u32, 0));
    let mut full = [0u8; 16];
    full[0] = 12;
    full[4..16].copy_from_slice(b"abcdefghijkl");
    let full = u128::from_le_bytes(full);
    assert!(view_has_byte(full, full as u32, b'l'));
    assert!(!view_has_byte(full, full as u32, b'm'));
}

/// The view byte search agrees with a plain scan for every inline length, every position
/// of the byte, and texts that hold the byte's neighbours (borrows in the zero-byte test);
/// on an out-of-line text (13 to 20 bytes), over the four bytes its view holds.
#[test]
fn inline_byte_search_agrees_with_a_scan() {
    let alphabet = [b'A', b'@', b'B', b'a', 0x80, b' '];
    for len in 0..=20usize {
        for seed in 0..200usize {
            let text: Vec<u8> = (0..len)
                .map(|i| alphabet[(seed * 7 + i * (seed % 5 + 1)) % alphabet.len()])
                .collect();
            let text = String::from_utf8_lossy(&text).into_owned();
            let views = arrow::array::StringViewArray::from(vec![text.as_str()]);
            let view = views.views()[0];
            let inline = view as u32 <= 12;
            if inline != (len <= 12) {
                continue; // lossy decoding made it longer
            }
            for byte in [b'A', b'B', b'@', b' ', b'a'] {
                if inline {
                    assert_eq!(
                        view_has_byte(view, view as u32, byte),
                        text.as_bytes().contains(&byte),
                        "{text:?} {byte}"
                    );
                }
                let first = (view as u32).min(4);
                assert_eq!(
                    view_has_byte(view, first, byte),
                    text.as_bytes()[..first as usize].contains(&byte),
                    "{text:?} {byte}"
                );
            }
        }
    }
}

/// The remembered shape answer is the one of the column asked about: alternating between a
/// column of the view path's shape, one that is not (a list cell), slices of both (one that
/// starts where the column does and stops before the list cell), a copy, and the same views
/// under a null mask that hides the list cell never returns another column's answer.
#[test]
fn the_shape_of_an_expected_column_is_remembered_per_column() {
    let shaped = StringViewArray::from(vec![Some("A"), None, Some("BC")]);
    let listy = StringViewArray::from(vec![Some("A"), Some("[x]"), Some("B")]);
    let tail = listy.slice(2, 1);
    let head = listy.slice(0, 1);
    let copy = StringViewArray::from(vec![Some("A"), Some("[x]"), Some("B")]);
    let masked = StringViewArray::try_new(
        listy.views().clone(),
        listy.data_buffers().to_vec(),
        Some(NullBuffer::from(vec![true, false, true])),
    )
    .unwrap();
    for _ in 0..3 {
        assert!(shaped_once(&shaped));
        assert!(shaped_once(&shaped));
        assert!(!shaped_once(&listy));
        assert!(shaped_once(&head));
        assert!(!shaped_once(&listy));
        assert!(shaped_once(&masked));
        assert!(!shaped_once(&listy));
        assert!(shaped_once(&tail));
        assert!(!shaped_once(&copy));
        assert!(shaped_once(&shaped.slice(1, 2)));
    }
}

#[test]
fn includes_all_rows() {
    let values = [
        Some("Paris is the capital of France"),
        Some("Paris"),
        Some(""),
        None,
    ];
    let fixed = Needles::new(["Paris", "France", ""], None);
    for a in layouts(&values) {
        let out = includes_all(Batch::new(col(&a), None, 4), Expected::Fixed(&fixed)).unwrap();
        assert_eq!(crate::score_vec(&out.is_correct), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(out.missing, 1);
        let per_row = StringArray::from(vec![
            Some(r#"["capital", "Paris"]"#),
            Some("Paris"),
            Some("x"),
            Some("x"),
        ]);
        let out = includes_all(Batch::new(col(&a), None, 4), Expected::PerRow(&per_row)).unwrap();
        assert_eq!(crate::score_vec(&out.is_correct), [1.0, 1.0, 0.0, 0.0]);
        // A list of only empty strings passes any non-empty value.
        let empty = Needles::new([""], None);
        let out = includes_all(Batch::new(col(&a), None, 4), Expected::Fixed(&empty)).unwrap();
        assert_eq!(crate::score_vec(&out.is_correct), [1.0, 1.0, 0.0, 0.0]);
    }
}
