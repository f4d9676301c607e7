//! Property tests: the kernels never panic on random rows, and report bad values as errors.
#![allow(clippy::unwrap_used)]

use arrow::array::{ArrayRef, Scalar, StringArray};
use evalscore_kernels::{
    missing_count, parse_choice_list, string_equals, string_equals_mcqa, Choices, TextColumn,
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
        let s = string_equals(&va, &ga).unwrap();
        prop_assert_eq!(s.len(), v.len());
        for i in 0..v.len() {
            let same = v[i].is_some() && v[i] == g[i];
            prop_assert_eq!(s.value(i), if same { 1.0 } else { 0.0 });
        }
        let scalar = Scalar::new(StringArray::from(vec![g.first().cloned().flatten()]));
        let _ = string_equals(&va, &scalar).unwrap();
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
}
