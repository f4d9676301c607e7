//! The rows of `compare`'s stdout table, for a run comparison and a suite's alike.

use evalscore_compare::compare::p_text;
use evalscore_compare::CompareRow;

/// The columns of the stdout table.
pub(crate) const HEADER: [&str; 10] = [
    "column", "group", "pairs", "base", "new", "diff", "interval", "p", "p_holm", "verdict",
];

/// Whether a column of [`HEADER`] is a number (`pairs` to `p_holm`), right-aligned.
pub(crate) fn is_number(i: usize) -> bool {
    (2..9).contains(&i)
}

/// A row of the stdout table, under [`HEADER`].
pub(crate) fn cells(r: &CompareRow) -> Vec<String> {
    let f = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.4}"));
    let p = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), p_text);
    vec![
        r.column.clone(),
        r.group.clone().unwrap_or_else(|| "(all)".to_owned()),
        r.n_pairs.to_string(),
        f(r.base_mean),
        f(r.new_mean),
        r.diff
            .map_or_else(|| "-".to_owned(), |x| format!("{x:+.4}")),
        match (r.ci_low, r.ci_high) {
            (Some(l), Some(h)) => format!("[{l:+.4}, {h:+.4}]"),
            _ => "-".to_owned(),
        },
        p(r.p_value),
        p(r.p_value_holm),
        r.verdict.to_owned(),
    ]
}
