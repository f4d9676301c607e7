//! `numeric_match`'s reading of a sign spaced from its number (`spaced_sign`).
#![allow(clippy::unwrap_used)]

use arrow::array::{Array, StringArray};
use evalscore_kernels::{
    numeric_match, numeric_match_with, Batch, NumberReading, TextColumn, Tolerance,
};

const SPACED: NumberReading = NumberReading { spaced_sign: true };

#[test]
fn spaced_sign_reads_the_equation_intercept() {
    let cases: &[(&str, f64, f64)] = &[
        // (text, default reading, spaced_sign reading)
        ("y = 0.91x - 8.97", 8.97, -8.97),
        ("y = 0.91x + 8.97", 8.97, 8.97),
        ("y = 0.91x -8.97", -8.97, -8.97),
        ("- 5", 5.0, -5.0),
        ("x = - 3", 3.0, -3.0),
        ("2 * - 3", 3.0, -3.0),
        ("costs 5 - $3", 3.0, 3.0),
        ("( - $1,234.5)", 1234.5, -1234.5),
        // A dash between two things that is not on the right of `=`: not a sign.
        ("pages 10 - 20", 20.0, 20.0),
        ("the answer - 42", 42.0, 42.0),
        ("-\u{a0}7", 7.0, -7.0),
    ];
    for &(text, default, spaced) in cases {
        assert_eq!(
            NumberReading::default().number_of(text),
            Some(default),
            "{text}"
        );
        assert_eq!(SPACED.number_of(text), Some(spaced), "{text}");
    }
    assert_eq!(SPACED.number_of("y = x -"), None);
}

#[test]
fn numeric_match_with_spaced_sign() {
    let expected = StringArray::from(vec!["y = 0.91x - 8.97"; 3]);
    let values = StringArray::from(vec![Some("-8.97"), Some("The intercept is 8.97"), None]);
    let run = |reading: Option<NumberReading>| {
        let batch = Batch::new(TextColumn::new(&values, "v").unwrap(), None, 3);
        let e = TextColumn::new(&expected, "e").unwrap();
        let out = match reading {
            None => numeric_match(batch, e, Tolerance::default()),
            Some(r) => numeric_match_with(batch, e, Tolerance::default(), r),
        }
        .unwrap();
        let bits: Vec<bool> = (0..3).map(|i| out.is_correct.value(i)).collect();
        (bits, out.missing, out.is_correct.null_count())
    };
    // Inspect AI's reading, the default: the intercept is +8.97.
    assert_eq!(run(None), (vec![false, true, false], 1, 0));
    assert_eq!(
        run(Some(NumberReading::default())),
        (vec![false, true, false], 1, 0)
    );
    assert_eq!(run(Some(SPACED)), (vec![true, false, false], 1, 0));
}
