//! Unit tests of the classification states.

use super::*;
use std::sync::Arc;

/// Binary counts over two Utf8View columns (the one-pass view path) equal those over
/// the same labels as Utf8 (arrow's `eq` path): nulls, other labels, labels that share a
/// prefix with the classes, short and 12-byte class names, sliced arrays, 64-row edges.
#[test]
fn view_pair_counts_agree_with_the_eq_path() {
    let pick = |i: usize, k: usize, names: &[&'static str]| -> Option<&'static str> {
        match (((i * k + 1) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 11 {
            0 => None,
            1 => Some("other"),
            2 => Some(""),
            3 => Some("yesss"),
            n => Some(names[(n % 2) as usize]),
        }
    };
    for names in [
        ["yes", "no"],
        ["positivelong", "negativelong"],
        ["y", "no-but-long"],
    ] {
        let g: Vec<Option<&str>> = (0..300).map(|i| pick(i, 7, &names)).collect();
        let p: Vec<Option<&str>> = (0..300).map(|i| pick(i, 5, &names)).collect();
        let run = |ga: ArrayRef, pa: ArrayRef| {
            let mut c = Confusion::new(
                ClassMode::Binary,
                Some(names[0].to_owned()),
                Some(names[1].to_owned()),
                None,
                0.95,
            );
            c.update(&ga.slice(3, 290), &pa.slice(3, 290)).unwrap();
            (c.cells(), c.counts.excluded, c.nulls, c.seen)
        };
        let views = run(
            Arc::new(StringViewArray::from(g.clone())),
            Arc::new(StringViewArray::from(p.clone())),
        );
        let utf8 = run(
            Arc::new(StringArray::from(g.clone())),
            Arc::new(StringArray::from(p.clone())),
        );
        assert_eq!(views, utf8, "{names:?}");
        let both = (3..293)
            .filter(|&i| {
                names.contains(&g[i].unwrap_or("-")) && names.contains(&p[i].unwrap_or("-"))
            })
            .count() as u64;
        assert_eq!(views.1, 290 - both, "{names:?}");
        let nulls = (3..293).filter(|&i| g[i].is_none() || p[i].is_none());
        assert_eq!(views.2, nulls.count() as u64, "{names:?}");
        let seen: BTreeSet<&str> = (3..293)
            .filter_map(|i| g[i].zip(p[i]))
            .flat_map(|(a, b)| [a, b])
            .filter(|l| !names.contains(l))
            .collect();
        assert_eq!(views.3.labels().collect::<BTreeSet<_>>(), seen, "{names:?}");
        assert_eq!(seen.len(), 3, "{names:?}");
        assert!(
            views.0.iter().all(|c| c.2 > 0) && views.0.len() == 4,
            "{names:?}"
        );
    }
}

/// The view comparison (a cell's view under [`view_key`]'s mask against its key) agrees
/// with arrow's `eq` kernel for every label length up to the inline limit and past it,
/// against cells of every length, on a sliced array.
#[test]
fn view_key_compare_agrees_with_arrow_eq() {
    let view_equals = |a: &StringViewArray, v: &str| -> Option<Vec<bool>> {
        let (mask, want) = view_key(v)?;
        Some(a.views().iter().map(|&view| view & mask == want).collect())
    };
    let cells: Vec<Option<String>> = (0..400)
        .map(|i| match i % 9 {
            0 => None,
            1 => Some(String::new()),
            k => Some("yesnomaybeyesno"[..(i * 7 + k) % 16].to_owned()),
        })
        .collect();
    let all = StringViewArray::from_iter(cells.iter().map(|c| c.as_deref()));
    let part = all.slice(5, 390);
    for label in [
        "",
        "y",
        "yes",
        "no",
        "yesnomaybe",
        "yesnomaybeye",
        "yesnomaybeyes",
    ] {
        let scalar = Scalar::new(StringViewArray::from(vec![label]));
        let want = cmp::eq(&part, &scalar).unwrap();
        match view_equals(&part, label) {
            Some(got) => {
                for (i, got) in got.into_iter().enumerate() {
                    if part.is_valid(i) {
                        assert_eq!(got, want.value(i), "{label:?} row {i}");
                    }
                }
            }
            None => assert!(label.len() > 12),
        }
    }
}

/// States folding the same columns through one memo share one count of them, and end as
/// states folding alone do: each notes the odd labels itself. Other buffers (even with the
/// same labels), another slice or other classes are counted again.
#[test]
fn a_memo_counts_each_pair_of_columns_once() {
    let g: ArrayRef = Arc::new(StringViewArray::from(vec![
        Some("yes"),
        Some("no"),
        None,
        Some("maybe"),
        Some("yes"),
    ]));
    let p: ArrayRef = Arc::new(StringViewArray::from(vec![
        Some("yes"),
        Some("yes"),
        Some("no"),
        Some("no"),
        Some("other"),
    ]));
    let state = |pos: &str, neg: &str| {
        Confusion::new(
            ClassMode::Binary,
            Some(pos.to_owned()),
            Some(neg.to_owned()),
            None,
            0.95,
        )
    };
    let memo = FoldMemo::new();
    let mut alone = state("yes", "no");
    alone.update(&g, &p).unwrap();
    let mut shared = [state("yes", "no"), state("yes", "no")];
    for s in &mut shared {
        s.update_with(&g, &p, Some(&memo)).unwrap();
        assert_eq!(*s, alone);
    }
    assert_eq!(memo.pair_counts.len(), 1);
    assert_eq!(
        alone.cells(),
        vec![
            ("no".to_owned(), "yes".to_owned(), 1),
            ("yes".to_owned(), "yes".to_owned(), 1)
        ]
    );
    assert_eq!(
        alone.seen.labels().collect::<BTreeSet<_>>(),
        BTreeSet::from(["maybe", "other"])
    );
    // The same labels in other buffers, a slice, other classes: each its own count.
    let copy: ArrayRef = Arc::new(StringViewArray::from(vec![
        Some("yes"),
        Some("no"),
        None,
        Some("maybe"),
        Some("yes"),
    ]));
    let mut s = state("yes", "no");
    s.update_with(&copy, &p, Some(&memo)).unwrap();
    assert_eq!(s, alone);
    let mut sliced = state("yes", "no");
    sliced
        .update_with(&g.slice(1, 3), &p.slice(1, 3), Some(&memo))
        .unwrap();
    let mut sliced_alone = state("yes", "no");
    sliced_alone.update(&g.slice(1, 3), &p.slice(1, 3)).unwrap();
    assert_eq!(sliced, sliced_alone);
    let mut flipped = state("no", "yes");
    flipped.update_with(&g, &p, Some(&memo)).unwrap();
    let mut flipped_alone = state("no", "yes");
    flipped_alone.update(&g, &p).unwrap();
    assert_eq!(flipped, flipped_alone);
    assert_eq!(memo.pair_counts.len(), 4);
}
