//! Property tests: the kernels never panic on random rows, and report bad values as errors.
#![allow(clippy::unwrap_used)]

use arrow::array::{
    Array, ArrayRef, ListBuilder, StringArray, StringBuilder, StringViewArray, StringViewBuilder,
};
use evalscore_kernels::pattern::SearchPattern;
use evalscore_kernels::{
    match_check, missing_count, parse_choice_list, regex_check, string_equals, string_equals_mcqa,
    string_equals_mcqa_with, Batch, BatchMemo, Choices, Expected, MatchMode, TextColumn,
};
use proptest::prelude::*;
use std::sync::Arc;

fn column(n: usize) -> impl Strategy<Value = Vec<Option<String>>> {
    proptest::collection::vec(proptest::option::of("(?s).{0,6}"), n)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn string_equals_never_panics((v, g) in (0usize..20).prop_flat_map(|n| (column(n), column(n)))) {
        let va = StringArray::from(v.clone());
        let ga = StringArray::from(g.clone());
        let vc = TextColumn::new(&va, "v").unwrap();
        let s = string_equals(Batch::new(vc, None, v.len()), TextColumn::new(&ga, "g").unwrap())
            .unwrap()
            .is_correct;
        prop_assert_eq!(s.len(), v.len());
        prop_assert_eq!(s.null_count(), 0);
        for i in 0..v.len() {
            let same = v[i].is_some() && v[i] == g[i];
            prop_assert_eq!(s.value(i), same);
        }
        let scalar = TextColumn::scalar(g.first().and_then(|s| s.as_deref()));
        let _ = string_equals(Batch::new(vc, None, v.len()), scalar).unwrap();
    }

    /// Two Utf8View columns (compared view by view) score as the same texts as Utf8: texts
    /// that often share their length and 4-byte prefix on both sides of the 12-byte inline
    /// limit, and random ones.
    #[test]
    fn string_equals_over_views_agrees_with_utf8(
        (v, g) in (0usize..40).prop_flat_map(|n| {
            let near = proptest::sample::select(vec![
                "", "abcd", "abce", "abcdefghijkl", "abcdefghijkm", "abcdefghijklm",
                "abcdefghijkln", "abcdXfghijklm", "The answer is B", "The answer is C",
            ])
            .prop_map(str::to_owned);
            let text = prop_oneof![near, "[ab]{0,14}"];
            let col = proptest::collection::vec(proptest::option::of(text), n);
            (col.clone(), col)
        }),
        cut in 0usize..5,
    ) {
        let n = v.len();
        let cut = cut.min(n);
        let score = |a: &dyn Array, b: &dyn Array| {
            let len = a.len();
            string_equals(
                Batch::new(TextColumn::new(a, "v").unwrap(), None, len),
                TextColumn::new(b, "g").unwrap(),
            )
            .unwrap()
            .is_correct
        };
        let (vu, gu) = (StringArray::from(v.clone()), StringArray::from(g.clone()));
        let (vv, gv) = (StringViewArray::from(v), StringViewArray::from(g));
        prop_assert_eq!(score(&vv, &gv), score(&vu, &gu));
        // Sliced: the views start mid-array, the bitmaps at an offset.
        let (vs, gs) = (vv.slice(cut, n - cut), gv.slice(0, n - cut));
        prop_assert_eq!(score(&vs, &gs), score(&vu.slice(cut, n - cut), &gu.slice(0, n - cut)));
    }

    #[test]
    fn mcqa_never_panics(
        (v, g, c) in (0usize..20).prop_flat_map(|n| (column(n), column(n), column(n))),
        fixed in proptest::collection::vec(".{0,2}", 0..5),
    ) {
        let n = v.len();
        let va = StringArray::from(v);
        let ga = StringArray::from(g);
        let ca: ArrayRef = Arc::new(StringArray::from(c));
        let vc = TextColumn::new(&va, "value").unwrap();
        let gc = TextColumn::new(&ga, "ground truth").unwrap();
        for choices in [Choices::None, Choices::Fixed(&fixed), Choices::PerRow(ca.as_ref())] {
            if let Ok(out) = string_equals_mcqa(vc, gc, choices, n) {
                prop_assert_eq!(out.is_correct.len(), n);
                prop_assert_eq!(out.completion_validity.len(), n);
            }
        }
        prop_assert!(missing_count(&vc, &gc, n) <= n);
    }

    #[test]
    fn choice_lists_never_panic(text in "(?s)\\[?.{0,40}\\]?") {
        let _ = parse_choice_list(&text);
    }

    /// `match`/`includes` over two Utf8View columns decide most rows from the views alone;
    /// they give what the general path gives over Utf8 for the same rows. Values cross the
    /// 12-byte inline limit and hold multi-byte text; expected cells are 1 to 4 bytes (the
    /// fast path's shape), or anything (the general path on both sides).
    #[test]
    fn view_checks_agree_with_the_general_path(
        (v, e) in (0usize..80).prop_flat_map(|n| (
            proptest::collection::vec(proptest::option::of("[abAé ]{0,16}"), n),
            prop_oneof![
                proptest::collection::vec(proptest::option::of("[abA][abé]{0,2}"), n),
                proptest::collection::vec(proptest::option::of("[ab \\[é]{0,5}"), n),
            ],
        )),
        negate in any::<bool>(),
    ) {
        let n = v.len();
        let (v8, e8) = (StringArray::from(v.clone()), StringArray::from(e.clone()));
        let (vv, ev) = (StringViewArray::from(v), StringViewArray::from(e));
        for mode in [MatchMode::Prefix, MatchMode::Substring, MatchMode::Fuzzy] {
            let general = match_check(Batch::new(TextColumn::new(&v8, "v").unwrap(), None, n), Expected::PerRow(&e8), mode, negate).unwrap();
            let views = match_check(Batch::new(TextColumn::new(&vv, "v").unwrap(), None, n), Expected::PerRow(&ev), mode, negate).unwrap();
            prop_assert_eq!(&general, &views, "{:?}", mode);
        }
    }

    /// The regex over Utf8View skips texts shorter than any match; the scores are the ones
    /// the general path gives over Utf8.
    #[test]
    fn view_regex_agrees_with_the_general_path(
        v in proptest::collection::vec(proptest::option::of(prop_oneof![
            "(answer|ANSWER|Answer)(:| is)? ?[A-Da-d]?",
            "[a-zA-Z :é]{0,20}",
            "(answer is [a-dA-D] ){3,5}",
        ]), 0..80),
    ) {
        let n = v.len();
        let (v8, vv) = (StringArray::from(v.clone()), StringViewArray::from(v));
        for p in [r"(?i)answer(?: is)?:?\s*\(?([A-D])\b", r"é", r"x*", r"^$"] {
            let p = SearchPattern::new(p).unwrap();
            let general = regex_check(Batch::new(TextColumn::new(&v8, "v").unwrap(), None, n), &p, None).unwrap();
            let views = regex_check(Batch::new(TextColumn::new(&vv, "v").unwrap(), None, n), &p, None).unwrap();
            prop_assert_eq!(general, views);
        }
    }

    /// The regex prefilter never rules out a text the regex matches, over texts built from
    /// the patterns' own words in every case, Unicode case variants (`ſ`, the Kelvin sign)
    /// and noise.
    #[test]
    fn the_regex_prefilter_never_rejects_a_match(
        texts in proptest::collection::vec(
            "(answer|ANSWER|AnSwEr|anſwer|an|sw|er|ok|OK|oK|#### |[0-9]|[A-D]|[ :()\\n]|é|x){0,12}",
            1..40),
    ) {
        for p in [
            r"(?i)answer(?: is)?:?\s*\(?([A-D])\b",
            r"(?i)ok",
            r"#### (\-?[0-9.,]+)",
            r"(?:answer|er) [A-D]",
            r"(?i)sw",
        ] {
            let p = SearchPattern::new(p).unwrap();
            let f = p.prefilter().expect("each of these patterns has a prefilter");
            for t in &texts {
                if p.regex().is_match(t) {
                    prop_assert!(f.may_match(t.as_bytes()), "{:?} matches {:?}", t, p.regex().as_str());
                }
            }
        }
    }

    /// `string_equals_mcqa` over Utf8View output and truth with a list of choices decides
    /// rows from the views; it gives what the general path gives over Utf8, errors included
    /// (a truth or choice of more than one character).
    #[test]
    fn view_mcqa_agrees_with_the_general_path(
        rows in proptest::collection::vec((
            proptest::option::of(prop_oneof![4 => "[A-Lab ]{0,3}", 1 => "[ÉB日]{0,2}"]),
            proptest::option::of(prop_oneof![8 => "[A-L]", 1 => "(AB|É|)"]),
            proptest::option::of(proptest::collection::vec(
                prop_oneof![40 => "[A-La]", 1 => "(É|AB)"], 0..12)),
        ), 0..80),
    ) {
        let (general, views) = mcqa_both_paths(&rows);
        prop_assert_eq!(general, views);
    }

    /// The same over rows of the fast path's shape only (one-ASCII-character truths and
    /// items; outputs of any first character, as exports have them: fullwidth letters, CJK,
    /// combining marks, spaces), so that whole batches are scored from the views:
    /// lists of 0 to 11 items cross the eight items searched in one 64-bit word.
    #[test]
    fn view_mcqa_agrees_with_the_general_path_on_clean_rows(
        rows in proptest::collection::vec((
            proptest::option::of(prop_oneof![
                6 => "[A-Lab ]{0,3}",
                1 => "[ＡＢ日答É\u{301}\u{308}][A-L ]{0,2}",
            ]),
            proptest::option::of("[A-L]"),
            proptest::option::of(proptest::collection::vec("[A-La]", 0..12)),
        ), 0..150),
    ) {
        let (general, views) = mcqa_both_paths(&rows);
        prop_assert!(general.is_ok());
        prop_assert_eq!(general, views);
    }
}

type McqaRow = (Option<String>, Option<String>, Option<Vec<String>>);

/// `string_equals_mcqa` over the rows (output, truth, choices) twice: output, truth and
/// choice items as Utf8 (the general path) and as Utf8View, as the reader gives them (the
/// view path), errors as their messages. The view path is also run through one batch memo
/// by two scorers, and must give the same both times.
#[allow(clippy::type_complexity)]
fn mcqa_both_paths(
    rows: &[McqaRow],
) -> (
    Result<evalscore_kernels::McqaOutput, String>,
    Result<evalscore_kernels::McqaOutput, String>,
) {
    let n = rows.len();
    let out: Vec<Option<&str>> = rows.iter().map(|r| r.0.as_deref()).collect();
    let truth: Vec<Option<&str>> = rows.iter().map(|r| r.1.as_deref()).collect();
    let mut lists = ListBuilder::new(StringBuilder::new());
    let mut view_lists = ListBuilder::new(StringViewBuilder::new());
    for r in rows {
        match &r.2 {
            Some(items) => {
                for i in items {
                    lists.values().append_value(i);
                    view_lists.values().append_value(i);
                }
                lists.append(true);
                view_lists.append(true);
            }
            None => {
                lists.append(false);
                view_lists.append(false);
            }
        }
    }
    let lists: ArrayRef = Arc::new(lists.finish());
    let view_lists: ArrayRef = Arc::new(view_lists.finish());
    let (o8, t8) = (
        StringArray::from(out.clone()),
        StringArray::from(truth.clone()),
    );
    let (ov, tv) = (StringViewArray::from(out), StringViewArray::from(truth));
    let general = string_equals_mcqa(
        TextColumn::new(&o8, "o").unwrap(),
        TextColumn::new(&t8, "t").unwrap(),
        Choices::PerRow(lists.as_ref()),
        n,
    );
    let memo = BatchMemo::new();
    let view_path = |memo| {
        string_equals_mcqa_with(
            TextColumn::new(&ov, "o").unwrap(),
            TextColumn::new(&tv, "t").unwrap(),
            Choices::PerRow(view_lists.as_ref()),
            n,
            None,
            None,
            memo,
        )
    };
    let views = view_path(None);
    assert_eq!(view_path(Some(&memo)), views);
    assert_eq!(view_path(Some(&memo)), views);
    (
        general.map_err(|e| e.to_string()),
        views.map_err(|e| e.to_string()),
    )
}
