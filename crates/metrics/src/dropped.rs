//! Rows a metric left out, by reason, so that no exclusion is silent: every state that
//! drops rows counts them here, its figures' `n` leaves them out, and its warning (in
//! run.json's `warnings` and on stderr) says how many and why.

use crate::values::SeenLabels;
use std::collections::BTreeMap;

/// A null input (a NaN label is read as null: [`crate::values`]).
pub const NULL: &str = "null";
/// A NaN number.
pub const NAN: &str = "NaN";
/// A label that is none of those the metric expects.
pub const OTHER_LABEL: &str = "with another label";

/// Rows left out, by reason, and the unexpected labels among them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Dropped {
    reasons: BTreeMap<String, u64>,
    seen: SeenLabels,
}

impl Dropped {
    /// Counts `n` rows left out for `reason`.
    pub fn add(&mut self, reason: &str, n: u64) {
        if n > 0 {
            *self.reasons.entry(reason.to_owned()).or_default() += n;
        }
    }

    /// Counts a row left out for its label, which the metric did not expect.
    pub fn other_label(&mut self, label: &str) {
        self.add(OTHER_LABEL, 1);
        self.seen.note(label);
    }

    /// Counts `rows` rows left out for their labels `labels` (none: the rows are kept).
    pub fn other_labels<'a>(&mut self, labels: impl IntoIterator<Item = &'a str>, rows: u64) {
        let mut any = false;
        for l in labels {
            self.seen.note(l);
            any = true;
        }
        if any {
            self.add(OTHER_LABEL, rows);
        }
    }

    /// Rows left out, for every reason.
    pub fn total(&self) -> u64 {
        self.reasons.values().sum()
    }

    /// Rows left out for `reason`.
    pub fn count(&self, reason: &str) -> u64 {
        self.reasons.get(reason).copied().unwrap_or(0)
    }

    /// Folds another's counts in.
    pub fn merge(&mut self, other: &Dropped) {
        for (r, n) in &other.reasons {
            *self.reasons.entry(r.clone()).or_default() += n;
        }
        self.seen.merge(&other.seen);
    }

    /// The warning when a row was left out for a reason other than a null input (nulls are
    /// only counted: they are the usual way to say "no value"): how many of `rows`, why, the
    /// labels seen that were not expected and, when given, those `expected`.
    pub fn warning(&self, rows: u64, expected: Option<&str>) -> Option<String> {
        if self.reasons.keys().all(|r| r == NULL) {
            return None;
        }
        let why: Vec<String> = self
            .reasons
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect();
        let mut out = format!(
            "excluded {} of {rows} rows: {}",
            self.total(),
            why.join(", ")
        );
        if self.count(OTHER_LABEL) > 0 {
            out.push_str(&format!("; other labels seen: {}", self.seen.listed()));
            if let Some(e) = expected {
                out.push_str(&format!("; expected: {e}"));
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_alone_are_counted_without_a_warning() {
        let mut d = Dropped::default();
        d.add(NULL, 3);
        assert_eq!(d.warning(10, None), None);
        d.other_label("2.5");
        d.add(NAN, 2);
        assert_eq!(d.total(), 6);
        assert_eq!(
            d.warning(10, Some(r#""2", "1", "1.5""#)).as_deref(),
            Some(
                r#"excluded 6 of 10 rows: 2 NaN, 3 null, 1 with another label; other labels seen: "2.5"; expected: "2", "1", "1.5""#
            )
        );
    }
}
