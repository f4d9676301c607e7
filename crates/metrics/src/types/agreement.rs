//! Agreement between two raters over a (ground truth, prediction) pair of label fields:
//! `cohen_kappa` (unweighted, or `weights: linear | quadratic` over ordered `labels:`) and
//! `matthews_corrcoef` (multiclass), as scikit-learn computes them from the confusion
//! matrix. One state ([`PairCounts`]) serves both: the count of every (ground truth,
//! prediction) label pair, bounded by [`MAX_CONFUSION_CELLS`], so it merges exactly across
//! batches, files and machines.
//!
//! A row with a null label on either side is left out and not counted in `n`. Labels are
//! compared by value ([`crate::values`]).

use crate::accumulator::{first, State};
use crate::dropped::{self, Dropped};
use crate::metric_type::{About, Kind, OptionDoc, ParseCx, Setup};
use crate::{Figure, MetricError, MAX_CONFUSION_CELLS};
use arrow::array::Array;
use evalscore_task::{MetricReads, TaskError};
use std::collections::BTreeMap;

/// An agreement metric type over label pairs.
pub struct AgreementMetric {
    about: &'static About,
    measure: Measure,
}

/// Which figure an agreement state reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Measure {
    CohenKappa,
    Matthews,
    Krippendorff,
}

/// How disagreements between ordered labels weigh in Cohen's kappa.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Weights {
    /// Every disagreement weighs 1.
    None,
    /// `|i - j|` for labels at positions `i` and `j` of `labels:`.
    Linear,
    /// `(i - j)²`.
    Quadratic,
}

/// The options of an agreement metric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgreementOptions {
    /// The labels, in order; rows with another label are left out.
    pub labels: Option<Vec<String>>,
    pub weights: Weights,
}

const LABELS: OptionDoc = OptionDoc::optional(
    "labels",
    "the labels, in order (default: every label seen, sorted); rows with another label are left out",
);

pub static COHEN_KAPPA: AgreementMetric = AgreementMetric {
    about: &About {
        name: "cohen_kappa",
        doc: "Cohen's kappa between two label fields (two raters: a judge and a human, two annotators): agreement beyond chance, as scikit-learn's `cohen_kappa_score`. With `weights: linear` or `quadratic`, disagreements weigh by the distance of the two labels' positions in `labels:`, which is then required. Null on either side: the row is left out. Undefined (null) when chance agreement is total.",
        reads: MetricReads::Pair,
        options: &[
            LABELS,
            OptionDoc::optional(
                "weights",
                "`linear` or `quadratic`: disagreements weigh by distance in `labels:` (default: unweighted)",
            ),
        ],
        example: "{type: cohen_kappa, field_gt: ground_truth, field_pred: value}",
        figures: "`value`",
        confusion: false,
    },
    measure: Measure::CohenKappa,
};

pub static MATTHEWS: AgreementMetric = AgreementMetric {
    about: &About {
        name: "matthews_corrcoef",
        doc: "The Matthews correlation coefficient of a prediction against its ground truth, two classes or more, as scikit-learn's `matthews_corrcoef` (0 when either side has a single label). Null on either side: the row is left out.",
        reads: MetricReads::Pair,
        options: &[LABELS],
        example: "{type: matthews_corrcoef, field_gt: ground_truth, field_pred: value}",
        figures: "`value`",
        confusion: false,
    },
    measure: Measure::Matthews,
};

pub static KRIPPENDORFF: AgreementMetric = AgreementMetric {
    about: &About {
        name: "krippendorff_alpha",
        doc: "Krippendorff's alpha (nominal) between two raters' label fields, as the `krippendorff` package computes it: 1 minus observed over expected disagreement, from the coincidence matrix of the rows both rated. Null on either side: the row is left out (it is not pairable). Undefined (null) when a single label occurs.",
        reads: MetricReads::Pair,
        options: &[LABELS],
        example: "{type: krippendorff_alpha, field_gt: ground_truth, field_pred: value}",
        figures: "`value`",
        confusion: false,
    },
    measure: Measure::Krippendorff,
};

impl Kind for AgreementMetric {
    type Options = AgreementOptions;
    type State = PairCounts;

    fn about(&self) -> &'static About {
        self.about
    }

    fn parse(&self, cx: &ParseCx<'_>) -> Result<AgreementOptions, TaskError> {
        let labels = cx.labels(2, "[bad, fair, good]")?;
        let weights = match cx.get("weights") {
            None => Weights::None,
            Some(n) => match n.scalar_string("weights")?.as_str() {
                "linear" => Weights::Linear,
                "quadratic" => Weights::Quadratic,
                other => {
                    return Err(n
                        .err(format!("unknown `weights` `{other}`"))
                        .with_hint("`weights: linear` or `weights: quadratic`"))
                }
            },
        };
        if weights != Weights::None && labels.is_none() {
            return Err(cx
                .err(format!(
                    "metric `{}` with `weights` needs `labels:`, in order",
                    cx.metric_type
                ))
                .with_hint("weighted kappa weighs a disagreement by the distance of the two labels in `labels:`, e.g. `labels: [bad, fair, good]`"));
        }
        Ok(AgreementOptions { labels, weights })
    }

    fn state(&self, options: &AgreementOptions, _setup: &Setup) -> PairCounts {
        PairCounts {
            measure: self.measure,
            labels: options.labels.clone(),
            weights: options.weights,
            counts: BTreeMap::new(),
            nulls: 0,
        }
    }
}

/// The count of every (ground truth, prediction) label pair.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairCounts {
    measure: Measure,
    labels: Option<Vec<String>>,
    weights: Weights,
    counts: BTreeMap<(String, String), u64>,
    /// Rows with a null label on either side.
    nulls: u64,
}

impl PairCounts {
    /// The labels of the matrix, in order, and the matrix (rows: ground truth).
    fn matrix(&self) -> (Vec<&str>, Vec<Vec<f64>>) {
        let labels: Vec<&str> = match &self.labels {
            Some(l) => l.iter().map(String::as_str).collect(),
            None => {
                let mut all: Vec<&str> = self
                    .counts
                    .keys()
                    .flat_map(|(a, b)| [a.as_str(), b.as_str()])
                    .collect();
                all.sort_unstable();
                all.dedup();
                all
            }
        };
        let at = |l: &str| labels.iter().position(|x| *x == l);
        let mut m = vec![vec![0.0; labels.len()]; labels.len()];
        for ((a, b), n) in &self.counts {
            if let (Some(i), Some(j)) = (at(a), at(b)) {
                m[i][j] += *n as f64;
            }
        }
        (labels, m)
    }
}

/// Cohen's kappa of a confusion matrix, as scikit-learn's `cohen_kappa_score`; `None` when
/// undefined.
pub fn cohen_kappa(m: &[Vec<f64>], weights: Weights) -> Option<f64> {
    let k = m.len();
    let rows: Vec<f64> = m.iter().map(|r| r.iter().sum()).collect();
    let cols: Vec<f64> = (0..k).map(|j| m.iter().map(|r| r[j]).sum()).collect();
    let n: f64 = rows.iter().sum();
    if n == 0.0 {
        return None;
    }
    let w = |i: usize, j: usize| -> f64 {
        let d = i.abs_diff(j) as f64;
        match weights {
            Weights::None => f64::from(u8::from(i != j)),
            Weights::Linear => d,
            Weights::Quadratic => d * d,
        }
    };
    let (mut observed, mut expected) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            observed += w(i, j) * m[i][j];
            expected += w(i, j) * rows[i] * cols[j] / n;
        }
    }
    (expected != 0.0).then(|| 1.0 - observed / expected)
}

/// Krippendorff's alpha (nominal) of two raters' confusion matrix: each unit both rated
/// adds 1 to the coincidences (c, k) and (k, c); `None` when a single value occurs.
pub fn krippendorff_nominal(m: &[Vec<f64>]) -> Option<f64> {
    let k = m.len();
    // Coincidences o[c][k] = m[c][k] + m[k][c]; their row sums n_c.
    let o = |c: usize, d: usize| m[c][d] + m[d][c];
    let nc: Vec<f64> = (0..k).map(|c| (0..k).map(|d| o(c, d)).sum()).collect();
    let n: f64 = nc.iter().sum();
    let (mut observed, mut expected) = (0.0, 0.0);
    for c in 0..k {
        for d in 0..k {
            if c != d {
                observed += o(c, d);
                expected += nc[c] * nc[d];
            }
        }
    }
    (expected > 0.0 && n > 1.0).then(|| 1.0 - (n - 1.0) * observed / expected)
}

/// The Matthews correlation coefficient of a confusion matrix, as scikit-learn's
/// `matthews_corrcoef`: 0 when either side's labels do not vary.
pub fn matthews(m: &[Vec<f64>]) -> Option<f64> {
    let k = m.len();
    let t: Vec<f64> = m.iter().map(|r| r.iter().sum()).collect();
    let p: Vec<f64> = (0..k).map(|j| m.iter().map(|r| r[j]).sum()).collect();
    let n: f64 = t.iter().sum();
    if n == 0.0 {
        return None;
    }
    let correct: f64 = (0..k).map(|i| m[i][i]).sum();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let cov_tp = correct * n - dot(&t, &p);
    let cov_pp = n * n - dot(&p, &p);
    let cov_tt = n * n - dot(&t, &t);
    if cov_pp * cov_tt == 0.0 {
        return Some(0.0);
    }
    Some(cov_tp / (cov_tt * cov_pp).sqrt())
}

impl State for PairCounts {
    fn reads(&self) -> MetricReads {
        MetricReads::Pair
    }

    fn metric_type(&self) -> &'static str {
        match self.measure {
            Measure::CohenKappa => COHEN_KAPPA.about.name,
            Measure::Matthews => MATTHEWS.about.name,
            Measure::Krippendorff => KRIPPENDORFF.about.name,
        }
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let gt = first(inputs)?;
        let pred = inputs
            .get(1)
            .ok_or_else(|| MetricError::Invalid("agreement needs two inputs".to_owned()))?;
        let (gt, pred) = (crate::values::per_row(gt)?, crate::values::per_row(*pred)?);
        let (g, p) = (crate::values::column(&gt)?, crate::values::column(&pred)?);
        // Runs of equal pairs are counted once per run: label columns repeat.
        let mut run: Option<(&str, &str, u64)> = None;
        for i in 0..gt.len() {
            let (Some(a), Some(b)) = (g.get(i), p.get(i)) else {
                self.nulls += 1;
                continue;
            };
            match &mut run {
                Some((x, y, n)) if *x == a && *y == b => *n += 1,
                _ => {
                    if let Some((x, y, n)) = run.take() {
                        *self.counts.entry((x.to_owned(), y.to_owned())).or_default() += n;
                    }
                    run = Some((a, b, 1));
                }
            }
        }
        if let Some((x, y, n)) = run {
            *self.counts.entry((x.to_owned(), y.to_owned())).or_default() += n;
        }
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        for (pair, n) in &other.counts {
            *self.counts.entry(pair.clone()).or_default() += n;
        }
        self.nulls += other.nulls;
    }

    /// Rows with a null label, and those with a label outside `labels:` (left out of the
    /// matrix when the figures are made).
    fn exclusion_warning(&self) -> Option<String> {
        let mut dropped = Dropped::default();
        dropped.add(dropped::NULL, self.nulls);
        let mut rows = self.nulls;
        for ((a, b), n) in &self.counts {
            rows += n;
            let Some(labels) = &self.labels else { continue };
            let outside = [a, b].into_iter().filter(|l| !labels.contains(l));
            dropped.other_labels(outside.map(String::as_str), *n);
        }
        let expected = self.labels.as_ref().map(|ls| {
            ls.iter()
                .map(|l| format!("{l:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        });
        dropped.warning(rows, expected.as_deref())
    }

    fn check_size(&self) -> Result<(), MetricError> {
        if self.counts.len() > MAX_CONFUSION_CELLS {
            return Err(MetricError::Invalid(format!(
                "the two fields have more than {MAX_CONFUSION_CELLS} distinct (ground truth, prediction) pairs, the limit of `{}`",
                self.metric_type()
            )));
        }
        Ok(())
    }

    fn figures(&self) -> Vec<Figure> {
        let (_, m) = self.matrix();
        let n = m.iter().flatten().sum::<f64>() as u64;
        let value = match self.measure {
            Measure::CohenKappa => cohen_kappa(&m, self.weights),
            Measure::Matthews => matthews(&m),
            Measure::Krippendorff => krippendorff_nominal(&m),
        };
        vec![Figure::new("value", None, value, n)]
    }
}
