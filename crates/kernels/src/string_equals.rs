//! `string_equals`: the value equals the ground truth byte for byte (arrow's `eq` kernel), or
//! after `normalize:`.

use crate::contract::{missing_count, Batch, Scored};
use crate::{pass_bits, KernelError};
use arrow::array::{Array, ArrayRef, Datum, StringArray};
use arrow::buffer::BooleanBuffer;
use arrow::compute::cast;
use arrow::datatypes::DataType;
use evalscore_text::TextColumn;
use std::sync::Arc;

/// `string_equals`: the pass mask, true (score 1.0) where the value and `ground_truth` are
/// equal byte for byte (case and whitespace count), else false (0.0). With `normalize:`, they
/// are equal when [`crate::normalized_equal`].
///
/// Without `normalize:`, two Utf8View columns are compared view by view (`view_eq`); other
/// layouts by arrow's `cmp::eq` kernel, a scalar on either side as arrow's scalar operand.
///
/// Null rule: a null on either side scores 0.0 and counts as missing.
pub fn string_equals(
    batch: Batch<'_>,
    ground_truth: TextColumn<'_>,
) -> Result<Scored, KernelError> {
    if batch.norm.is_some() {
        let value = batch.value;
        // Two texts that both normalize to the empty string are equal only when they were
        // equal before.
        return batch
            .with_text(ground_truth)
            .pass(|r, v, g| v == g && (!v.is_empty() || value.get(r) == ground_truth.get(r)));
    }
    if let (TextColumn::Utf8View(v), TextColumn::Utf8View(g)) = (&batch.value, &ground_truth) {
        let pass = crate::view_eq::views_eq(v, g);
        let missing = missing_count(&batch.value, &ground_truth, batch.len);
        return Ok(Scored::pass(pass, missing));
    }
    let (v, v_scalar) = operand(batch.value);
    let (g, g_scalar) = operand(ground_truth);
    // arrow's comparison wants one string layout on both sides.
    let (v, g) = if v.data_type() == g.data_type() {
        (v, g)
    } else {
        (
            cast(&v, &DataType::Utf8View)?,
            cast(&g, &DataType::Utf8View)?,
        )
    };
    let eq = arrow::compute::kernels::cmp::eq(&Operand(v, v_scalar), &Operand(g, g_scalar))?;
    let pass = pass_bits(&eq);
    // Two scalars are compared once: the answer holds for every row.
    let pass = match (pass.len() == batch.len, pass.len() == 1 && pass.value(0)) {
        (true, _) => pass,
        (false, true) => BooleanBuffer::new_set(batch.len),
        (false, false) => BooleanBuffer::new_unset(batch.len),
    };
    let missing = missing_count(&batch.value, &ground_truth, batch.len);
    Ok(Scored::pass(pass, missing))
}

/// A text column as arrow's operand: the array (its buffers shared), or a one-row array
/// marked scalar.
fn operand(c: TextColumn<'_>) -> (ArrayRef, bool) {
    match c {
        TextColumn::Utf8(a) => (Arc::new(a.clone()), false),
        TextColumn::LargeUtf8(a) => (Arc::new(a.clone()), false),
        TextColumn::Utf8View(a) => (Arc::new(a.clone()), false),
        TextColumn::Scalar(s) => (Arc::new(StringArray::from(vec![s])), true),
    }
}

#[derive(Debug)]
struct Operand(ArrayRef, bool);

impl Datum for Operand {
    fn get(&self) -> (&dyn Array, bool) {
        (self.0.as_ref(), self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::{Normalizer, Step, UnicodeForm};
    use crate::to_text;
    use arrow::array::{DictionaryArray, LargeStringArray, StringViewArray};
    use arrow::datatypes::Int32Type;

    /// The scores of `v` (read as text) against `g`.
    fn run(v: &dyn Array, g: TextColumn<'_>, norm: Option<&Normalizer>) -> Vec<f64> {
        let v = to_text(&arrow::array::make_array(v.to_data()), "v").unwrap();
        let out = string_equals(
            Batch::new(TextColumn::new(v.as_ref(), "v").unwrap(), norm, v.len()),
            g,
        )
        .unwrap();
        assert_eq!(out.is_correct.null_count(), 0);
        crate::score_vec(&out.is_correct)
    }

    const VALUES: [Option<&str>; 7] = [
        Some("yes"),
        Some("Yes"),
        Some("yes "),
        None,
        Some(""),
        Some("日本"),
        Some("no"),
    ];
    const TRUTH: [Option<&str>; 7] = [
        Some("yes"),
        Some("yes"),
        Some("yes"),
        Some("yes"),
        Some(""),
        Some("日本"),
        None,
    ];
    const EXPECTED: [f64; 7] = [1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0];

    #[test]
    fn byte_exact_over_every_string_layout() {
        let utf8 = StringArray::from(VALUES.to_vec());
        let large = LargeStringArray::from(VALUES.to_vec());
        let view = StringViewArray::from(VALUES.to_vec());
        let dict: DictionaryArray<Int32Type> = VALUES.into_iter().collect();
        let truth = StringArray::from(TRUTH.to_vec());
        let g = TextColumn::new(&truth, "g").unwrap();
        for v in [
            &utf8 as &dyn Array,
            &large as &dyn Array,
            &view as &dyn Array,
            &dict as &dyn Array,
        ] {
            assert_eq!(run(v, g, None), EXPECTED, "{:?}", v.data_type());
        }
        let vc = TextColumn::new(&utf8, "v").unwrap();
        let out = string_equals(Batch::new(vc, None, 7), g).unwrap();
        assert_eq!(out.missing, 2);
    }

    #[test]
    fn scalar_ground_truth() {
        let v = StringViewArray::from(vec![Some("YES"), Some("yes"), None]);
        let g = TextColumn::scalar(Some("YES"));
        assert_eq!(run(&v, g, None), [1.0, 0.0, 0.0]);
        // Two scalars: one comparison, every row.
        let out = string_equals(Batch::new(g, None, 3), g).unwrap();
        assert_eq!(crate::score_vec(&out.is_correct), [1.0, 1.0, 1.0]);
        let none = TextColumn::scalar(None);
        let out = string_equals(Batch::new(g, None, 2), none).unwrap();
        assert_eq!(
            (crate::score_vec(&out.is_correct), out.missing),
            (vec![0.0, 0.0], 2)
        );
    }

    #[test]
    fn numbers_compare_as_text() {
        let v = StringArray::from(vec!["3", "3.0", "4"]);
        let g = to_text(
            &(Arc::new(arrow::array::Int64Array::from(vec![3, 3, 3])) as ArrayRef),
            "g",
        )
        .unwrap();
        assert_eq!(
            run(&v, TextColumn::new(g.as_ref(), "g").unwrap(), None),
            [1.0, 0.0, 0.0]
        );
    }

    #[test]
    fn normalized_over_layouts() {
        let n = Normalizer::new(vec![
            Step::Strip,
            Step::IgnoreCase,
            Step::Unicode(UnicodeForm::Nfc),
        ]);
        let values = [
            Some(" Yes\n"),
            Some("YES"),
            None,
            Some(""),
            Some("Cafe\u{301}"),
            Some("no"),
        ];
        let truth = StringArray::from(vec![
            Some("yes"),
            Some("yes"),
            Some("yes"),
            Some(""),
            Some("café"),
            None,
        ]);
        let utf8 = StringArray::from(values.to_vec());
        let large = LargeStringArray::from(values.to_vec());
        let view = StringViewArray::from(values.to_vec());
        for a in [&utf8 as &dyn Array, &large, &view] {
            let g = TextColumn::new(&truth, "g").unwrap();
            assert_eq!(run(a, g, Some(&n)), [1.0, 1.0, 0.0, 1.0, 1.0, 0.0]);
            let g = TextColumn::scalar(Some("YES "));
            assert_eq!(run(a, g, Some(&n)), [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        }
    }

    fn re(list: &[&str]) -> Step {
        Step::RegexesToIgnore(
            list.iter()
                .map(|p| crate::pattern::IgnorePattern::new(p).unwrap())
                .collect(),
        )
    }

    /// The `normalize:` steps of the exact-match metric's documented examples (see
    /// docs/compatibility.md): the mean over four pairs per case.
    #[test]
    fn exact_match_examples() {
        let refs = ["the cat", "theater", "YELLING", "agent007"];
        let preds = ["cat?", "theater", "yelling", "agent"];
        let mean = |n: Option<&Normalizer>, refs: &[&str], preds: &[&str]| {
            let v = StringArray::from(preds.to_vec());
            let g = StringArray::from(refs.to_vec());
            let s = run(&v, TextColumn::new(&g, "g").unwrap(), n);
            (s.iter().sum::<f64>() / s.len() as f64 * 100.0).round() / 100.0
        };
        assert_eq!(mean(None, &refs, &preds), 0.25);
        let n2 = Normalizer::new(vec![
            re(&["the ", "yell"]),
            Step::IgnoreCase,
            Step::IgnorePunctuation,
        ]);
        assert_eq!(mean(Some(&n2), &refs, &preds), 0.5);
        let n3 = Normalizer::new(vec![
            re(&["the ", "yell", "YELL"]),
            Step::IgnoreCase,
            Step::IgnorePunctuation,
        ]);
        assert_eq!(mean(Some(&n3), &refs, &preds), 0.75);
        let n4 = Normalizer::new(vec![
            re(&["the ", "yell", "YELL"]),
            Step::IgnoreCase,
            Step::IgnorePunctuation,
            Step::IgnoreNumbers,
        ]);
        assert_eq!(mean(Some(&n4), &refs, &preds), 1.0);
        let refs5 = [
            "The cat sat on the mat.",
            "Theaters are great.",
            "It's like comparing oranges and apples.",
        ];
        let preds5 = [
            "The cat sat on the mat?",
            "Theaters are great.",
            "It's like comparing apples and oranges.",
        ];
        assert_eq!(mean(None, &refs5, &preds5), 0.33);
        // Both sides normalized away: equal only if they were equal before.
        let p = Normalizer::new(vec![Step::IgnorePunctuation]);
        assert!(!crate::normalized_equal("?!", "...", Some(&p)));
        assert!(crate::normalized_equal("?!", "?!", Some(&p)));
    }
}
