//! Ranking and calibration of a score against its 0/1 truth (`field: SCORE`, `field_gt:
//! TRUTH`): `roc_auc`, `average_precision` and `brier_score` as scikit-learn computes them,
//! and `expected_calibration_error` over equal-width bins. One state ([`ScoredTruths`])
//! serves all four: the count of positives and negatives at every distinct score, at most
//! [`MAX_DISTINCT_VALUES`] scores, so the figures are exact and the state merges across
//! batches, files and machines.
//!
//! A row whose score or truth is null or NaN is left out and not counted in `n`; a truth
//! other than 0 or 1 (true or false) is an error, and so is a score outside [0, 1] for the
//! Brier score and the calibration error (they read it as a probability).

use crate::accumulator::{first, State};
use crate::dropped::{self, Dropped};
use crate::metric_type::{About, Kind, OptionDoc, ParseCx, Setup};
use crate::{Figure, MetricError, MAX_DISTINCT_VALUES};
use arrow::array::Array;
use evalscore_task::{MetricReads, TaskError};
use std::collections::BTreeMap;

/// Which figure a state reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Ranking {
    RocAuc,
    AveragePrecision,
    Brier,
    Calibration,
}

/// A ranking or calibration metric type.
pub struct RankingMetric {
    about: &'static About,
    ranking: Ranking,
}

/// The options: the calibration error's bins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankingOptions {
    pub bins: u32,
}

/// The bins of `expected_calibration_error` when the task gives none.
pub const DEFAULT_BINS: u32 = 10;
/// The most bins it takes.
pub const MAX_BINS: u32 = 10_000;

const fn about(
    name: &'static str,
    doc: &'static str,
    options: &'static [OptionDoc],
    example: &'static str,
    figures: &'static str,
) -> About {
    About {
        name,
        doc,
        reads: MetricReads::ScoreTruth,
        options,
        example,
        figures,
        confusion: false,
    }
}

pub static ROC_AUC: RankingMetric = RankingMetric {
    about: &about(
        "roc_auc",
        "The area under the ROC curve of a score against its 0/1 truth, as scikit-learn's `roc_auc_score` (tied scores count half). Null without both a positive and a negative row. Exact while the field has at most 100,000 distinct scores.",
        &[],
        "{type: roc_auc, field: confidence, field_gt: is_correct}",
        "`value`",
    ),
    ranking: Ranking::RocAuc,
};

pub static AVERAGE_PRECISION: RankingMetric = RankingMetric {
    about: &about(
        "average_precision",
        "Average precision of a score against its 0/1 truth, as scikit-learn's `average_precision_score`: the precision at each distinct score threshold, weighted by the recall it adds. Null without a positive row. Exact while the field has at most 100,000 distinct scores.",
        &[],
        "{type: average_precision, field: confidence, field_gt: is_correct}",
        "`value`",
    ),
    ranking: Ranking::AveragePrecision,
};

pub static BRIER: RankingMetric = RankingMetric {
    about: &about(
        "brier_score",
        "The Brier score of a probability against its 0/1 truth, as scikit-learn's `brier_score_loss`: the mean squared difference. Scores must be in [0, 1].",
        &[],
        "{type: brier_score, field: confidence, field_gt: is_correct}",
        "`value`",
    ),
    ranking: Ranking::Brier,
};

pub static CALIBRATION: RankingMetric = RankingMetric {
    about: &about(
        "expected_calibration_error",
        "The expected calibration error of a probability (a judge's `confidence`) against its 0/1 truth: over `bins` equal-width bins of [0, 1] (a score `s` falls in bin `min(floor(s × bins), bins − 1)`, so 1.0 is in the last), the mean over rows of |accuracy − mean score| of the row's bin. Scores must be in [0, 1].",
        &[OptionDoc::optional(
            "bins",
            "the number of equal-width bins of [0, 1], from 1 to 10,000 (default 10)",
        )],
        "{type: expected_calibration_error, field: confidence, field_gt: is_correct, bins: 10}",
        "`value`; per non-empty bin (`label` `[low, high)`, the last `[low, 1]`, each bound exact: a decimal, or a fraction such as `1/3` when it has no short decimal): `bin_accuracy`, `bin_confidence` (`n`: its rows)",
    ),
    ranking: Ranking::Calibration,
};

impl Kind for RankingMetric {
    type Options = RankingOptions;
    type State = ScoredTruths;

    fn about(&self) -> &'static About {
        self.about
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<RankingOptions, TaskError> {
        let bins = cx
            .whole_number("bins", u64::from(DEFAULT_BINS), 1, u64::from(MAX_BINS))
            .map_err(|e| e.with_hint("e.g. `bins: 10`"))? as u32;
        Ok(RankingOptions { bins })
    }

    fn state(&self, options: &RankingOptions, _setup: &Setup) -> ScoredTruths {
        ScoredTruths {
            ranking: self.ranking,
            bins: options.bins,
            counts: BTreeMap::new(),
            dropped: Dropped::default(),
        }
    }
}

/// Per distinct score (by its bits, `-0.0` read as `0.0`): the negatives and positives.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScoredTruths {
    ranking: Ranking,
    bins: u32,
    counts: BTreeMap<u64, [u64; 2]>,
    /// Rows left out: a null or NaN score or truth.
    dropped: Dropped,
}

impl ScoredTruths {
    /// (score, negatives, positives), by ascending score.
    fn sorted(&self) -> Vec<(f64, f64, f64)> {
        let mut v: Vec<(f64, f64, f64)> = self
            .counts
            .iter()
            .map(|(&b, &[neg, pos])| (f64::from_bits(b), neg as f64, pos as f64))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }
}

impl ScoredTruths {
    /// Per equal-width bin of [0, 1]: rows, positives, sum of scores.
    fn bins(&self, sorted: &[(f64, f64, f64)]) -> Vec<(f64, f64, f64)> {
        let bins = self.bins as usize;
        let mut per = vec![(0.0f64, 0.0f64, 0.0f64); bins];
        for &(s, neg, pos) in sorted {
            let b = ((s * bins as f64).floor() as usize).min(bins - 1);
            per[b].0 += neg + pos;
            per[b].1 += pos;
            per[b].2 += s * (neg + pos);
        }
        per
    }
}

/// The area under the ROC curve: the share of (positive, negative) pairs the score orders
/// right, ties counting half (equal to the trapezoidal area scikit-learn computes).
fn roc_auc(sorted: &[(f64, f64, f64)]) -> Option<f64> {
    let (negatives, positives): (f64, f64) = sorted
        .iter()
        .fold((0.0, 0.0), |(n, p), s| (n + s.1, p + s.2));
    if negatives == 0.0 || positives == 0.0 {
        return None;
    }
    let (mut below, mut area) = (0.0, 0.0);
    for &(_, neg, pos) in sorted {
        area += pos * (below + neg / 2.0);
        below += neg;
    }
    Some(area / (positives * negatives))
}

/// Average precision: Σ (Rₙ − Rₙ₋₁) Pₙ over the distinct thresholds, highest first.
fn average_precision(sorted: &[(f64, f64, f64)]) -> Option<f64> {
    let positives: f64 = sorted.iter().map(|s| s.2).sum();
    if positives == 0.0 {
        return None;
    }
    let (mut tp, mut fp, mut ap) = (0.0, 0.0, 0.0);
    for &(_, neg, pos) in sorted.iter().rev() {
        tp += pos;
        fp += neg;
        if pos > 0.0 {
            ap += (pos / positives) * (tp / (tp + fp));
        }
    }
    Some(ap)
}

/// The bound `i / bins` of a calibration bin, exactly: a decimal when it has one of at most
/// six places (`0.25`), else the reduced fraction (`1/3`).
fn bound(i: u64, bins: u64) -> String {
    let mut scale = 1u64;
    for places in 0..=6 {
        if (i * scale).is_multiple_of(bins) {
            let v = i * scale / bins;
            return match places {
                0 => v.to_string(),
                _ => {
                    let digits = format!("{v:0>width$}", width = places + 1);
                    let (whole, frac) = digits.split_at(digits.len() - places);
                    format!("{whole}.{}", frac.trim_end_matches('0'))
                }
            };
        }
        scale *= 10;
    }
    let (mut a, mut b) = (i, bins);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    format!("{}/{}", i / a, bins / a)
}

impl State for ScoredTruths {
    fn reads(&self) -> MetricReads {
        MetricReads::ScoreTruth
    }

    fn metric_type(&self) -> &'static str {
        let about = match self.ranking {
            Ranking::RocAuc => ROC_AUC.about,
            Ranking::AveragePrecision => AVERAGE_PRECISION.about,
            Ranking::Brier => BRIER.about,
            Ranking::Calibration => CALIBRATION.about,
        };
        about.name
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let scores = crate::numbers(first(inputs)?)?;
        let truth = inputs
            .get(1)
            .ok_or_else(|| MetricError::Invalid("a ranking metric needs two inputs".to_owned()))?;
        let truth = crate::numbers(*truth)?;
        let probability = matches!(self.ranking, Ranking::Brier | Ranking::Calibration);
        for i in 0..scores.len() {
            if scores.is_null(i) || truth.is_null(i) {
                self.dropped.add(dropped::NULL, 1);
                continue;
            }
            let (s, t) = (scores.value(i), truth.value(i));
            if s.is_nan() || t.is_nan() {
                self.dropped.add(dropped::NAN, 1);
                continue;
            }
            let positive = if t == 0.0 {
                0
            } else if t == 1.0 {
                1
            } else {
                return Err(MetricError::Invalid(format!(
                    "a truth of `{}` is {t}, and must be 0 or 1",
                    self.metric_type()
                )));
            };
            if probability && !(0.0..=1.0).contains(&s) {
                return Err(MetricError::Invalid(format!(
                    "a score of `{}` is {s}, and must be a probability in [0, 1]",
                    self.metric_type()
                )));
            }
            self.counts.entry((s + 0.0).to_bits()).or_default()[positive] += 1;
        }
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        for (score, [neg, pos]) in &other.counts {
            let c = self.counts.entry(*score).or_default();
            c[0] += neg;
            c[1] += pos;
        }
        self.dropped.merge(&other.dropped);
    }

    fn exclusion_warning(&self) -> Option<String> {
        let kept: u64 = self.counts.values().flatten().sum();
        self.dropped.warning(kept + self.dropped.total(), None)
    }

    fn check_size(&self) -> Result<(), MetricError> {
        if self.counts.len() > MAX_DISTINCT_VALUES {
            return Err(MetricError::Invalid(format!(
                "the score has more than {MAX_DISTINCT_VALUES} distinct values, the limit of `{}`",
                self.metric_type()
            )));
        }
        Ok(())
    }

    fn figures(&self) -> Vec<Figure> {
        let sorted = self.sorted();
        let n: f64 = sorted.iter().map(|s| s.1 + s.2).sum();
        let value = match self.ranking {
            Ranking::RocAuc => roc_auc(&sorted),
            Ranking::AveragePrecision => average_precision(&sorted),
            Ranking::Brier => (n > 0.0).then(|| {
                sorted
                    .iter()
                    .map(|&(s, neg, pos)| neg * s * s + pos * (1.0 - s) * (1.0 - s))
                    .sum::<f64>()
                    / n
            }),
            Ranking::Calibration => {
                let per = self.bins(&sorted);
                let value = (n > 0.0).then(|| {
                    per.iter()
                        .filter(|b| b.0 > 0.0)
                        .map(|&(rows, pos, sum)| (rows / n) * (pos / rows - sum / rows).abs())
                        .sum()
                });
                // Each non-empty bin's accuracy and mean score: the reliability diagram.
                let mut out = vec![Figure::new("value", None, value, n as u64)];
                let bins = u64::from(self.bins);
                for (b, &(rows, pos, sum)) in per.iter().enumerate().filter(|(_, b)| b.0 > 0.0) {
                    let b = b as u64;
                    let label = Some(format!(
                        "[{}, {}{}",
                        bound(b, bins),
                        bound(b + 1, bins),
                        if b + 1 == bins { "]" } else { ")" }
                    ));
                    out.push(Figure::new(
                        "bin_accuracy",
                        label.clone(),
                        Some(pos / rows),
                        rows as u64,
                    ));
                    out.push(Figure::new(
                        "bin_confidence",
                        label,
                        Some(sum / rows),
                        rows as u64,
                    ));
                }
                return out;
            }
        };
        vec![Figure::new("value", None, value, n as u64)]
    }
}

#[cfg(test)]
mod bound_tests {
    #[test]
    fn bounds_are_exact() {
        let b = |i, n| super::bound(i, n);
        assert_eq!([b(0, 10), b(1, 10), b(10, 10)], ["0", "0.1", "1"]);
        assert_eq!([b(1, 3), b(2, 3), b(3, 3)], ["1/3", "2/3", "1"]);
        assert_eq!([b(1, 4), b(3, 8), b(1, 7)], ["0.25", "0.375", "1/7"]);
    }
}
