//! Correlation of two numeric fields (a judge's grade against a human's, a score against a
//! reference): `pearson`, `spearman` and `kendall_tau` (tau-b), as scipy's `pearsonr`,
//! `spearmanr` and `kendalltau` compute them. `pearson` keeps centred co-moments
//! ([`CoMoments`]: double-double sums merged by Chan's update, so its state is a few numbers
//! whatever the rows). The rank correlations share one state ([`NumberPairs`]): the count of
//! every distinct (x, y) pair, at most [`MAX_DISTINCT_VALUES`] of them, so the figures are
//! exact and the state merges across batches, files and machines. Kendall's tau counts
//! concordant and discordant pairs with a Fenwick tree over the ranks of y: O(k log k) for k
//! distinct pairs.
//!
//! A row with a null or NaN on either side is left out and not counted in `n`; `pearson`
//! leaves out a row with an infinite value too, with a warning.

use crate::accumulator::{first, State};
use crate::dropped::{self, Dropped};
use crate::metric_type::{About, Setup, Simple};
use crate::{CoMoments, Figure, MetricError, MAX_DISTINCT_VALUES};
use arrow::array::Array;
use evalscore_task::MetricReads;
use std::collections::BTreeMap;

/// Which coefficient a state reports (`pearson` has its own state, [`CoMoments`]; its variant
/// stays so that the others keep their encoding in state bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Coefficient {
    Pearson,
    Spearman,
    Kendall,
}

const fn about(name: &'static str, doc: &'static str, example: &'static str) -> About {
    About {
        name,
        doc,
        reads: MetricReads::NumberPair,
        options: &[],
        example,
        figures: "`value`",
        confusion: false,
    }
}

pub struct PearsonMetric;
pub struct SpearmanMetric;
pub struct KendallMetric;

impl Simple for PearsonMetric {
    const ABOUT: About = about(
        "pearson",
        "Pearson's correlation of two numeric fields (`field_gt`, `field_pred`), as scipy's `pearsonr`, from centred sums kept to about 106 bits (values near 1e15 keep their digits, values near 1e300 do not overflow). Rows with a null or NaN on either side are left out, and rows with an infinite value, with a warning. Null when either side is constant or there are fewer than two rows.",
        "{type: pearson, field_gt: human_score, field_pred: is_correct}",
    );
    type State = CoMoments;
    fn state(&self, _setup: &Setup) -> CoMoments {
        CoMoments::default()
    }
}

impl Simple for SpearmanMetric {
    const ABOUT: About = about(
        "spearman",
        "Spearman's rank correlation of two numeric fields, as scipy's `spearmanr`: Pearson's correlation of their average ranks (ties share the mean of their ranks). Rows with a null or NaN on either side are left out; at most 100,000 distinct (x, y) pairs.",
        "{type: spearman, field_gt: human_score, field_pred: is_correct}",
    );
    type State = NumberPairs;
    fn state(&self, _setup: &Setup) -> NumberPairs {
        NumberPairs::new(Coefficient::Spearman)
    }
}

impl Simple for KendallMetric {
    const ABOUT: About = about(
        "kendall_tau",
        "Kendall's tau-b of two numeric fields, as scipy's `kendalltau` (ties corrected). Rows with a null or NaN on either side are left out; at most 100,000 distinct (x, y) pairs.",
        "{type: kendall_tau, field_gt: human_score, field_pred: is_correct}",
    );
    type State = NumberPairs;
    fn state(&self, _setup: &Setup) -> NumberPairs {
        NumberPairs::new(Coefficient::Kendall)
    }
}

/// The count of every distinct (x, y) pair, by the bits of the two numbers (`-0.0` read as
/// `0.0`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NumberPairs {
    coefficient: Coefficient,
    counts: BTreeMap<(u64, u64), u64>,
    /// Rows left out: a null or NaN on either side.
    dropped: Dropped,
}

impl NumberPairs {
    fn new(coefficient: Coefficient) -> Self {
        NumberPairs {
            coefficient,
            counts: BTreeMap::new(),
            dropped: Dropped::default(),
        }
    }

    /// The pairs as numbers with their counts.
    fn pairs(&self) -> Vec<(f64, f64, f64)> {
        self.counts
            .iter()
            .map(|(&(x, y), &c)| (f64::from_bits(x), f64::from_bits(y), c as f64))
            .collect()
    }
}

/// Pearson's correlation of weighted pairs `(x, y, count)`, centred in two passes.
pub fn pearson(pairs: &[(f64, f64, f64)]) -> Option<f64> {
    let n: f64 = pairs.iter().map(|p| p.2).sum();
    if n < 2.0 {
        return None;
    }
    let mx = pairs.iter().map(|p| p.0 * p.2).sum::<f64>() / n;
    let my = pairs.iter().map(|p| p.1 * p.2).sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for &(x, y, c) in pairs {
        let (dx, dy) = (x - mx, y - my);
        sxy += c * dx * dy;
        sxx += c * dx * dx;
        syy += c * dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
}

/// The average rank (1-based, ties sharing the mean of their ranks) of each distinct value
/// of `values` (value, count).
fn average_ranks(values: &BTreeMap<u64, f64>) -> BTreeMap<u64, f64> {
    let mut sorted: Vec<(f64, u64, f64)> = values
        .iter()
        .map(|(&bits, &c)| (f64::from_bits(bits), bits, c))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut below = 0.0;
    let mut ranks = BTreeMap::new();
    for (_, bits, c) in sorted {
        ranks.insert(bits, below + (c + 1.0) / 2.0);
        below += c;
    }
    ranks
}

/// Kendall's tau-b of weighted pairs, as scipy's `kendalltau`.
fn kendall(pairs: &[(f64, f64, f64)]) -> Option<f64> {
    let n: f64 = pairs.iter().map(|p| p.2).sum();
    if n < 2.0 {
        return None;
    }
    // y's distinct values, sorted, as Fenwick positions.
    let mut ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    ys.sort_by(f64::total_cmp);
    ys.dedup();
    let pos = |y: f64| ys.partition_point(|v| v.total_cmp(&y).is_lt());
    let mut tree = vec![0.0f64; ys.len() + 1];
    let add = |tree: &mut Vec<f64>, i: usize, w: f64| {
        let mut i = i + 1;
        while i < tree.len() {
            tree[i] += w;
            i += i & i.wrapping_neg();
        }
    };
    let below = |tree: &Vec<f64>, i: usize| {
        // The weight of positions < i.
        let (mut i, mut s) = (i, 0.0);
        while i > 0 {
            s += tree[i];
            i -= i & i.wrapping_neg();
        }
        s
    };
    let mut by_x = pairs.to_vec();
    by_x.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let (mut s, mut seen) = (0.0f64, 0.0f64);
    let (mut xtie, mut i) = (0.0f64, 0usize);
    while i < by_x.len() {
        let mut j = i;
        while j < by_x.len() && by_x[j].0 == by_x[i].0 {
            j += 1;
        }
        let group = &by_x[i..j];
        let mut count_x = 0.0;
        for &(_, y, c) in group {
            let p = pos(y);
            let lower = below(&tree, p);
            let higher = seen - below(&tree, p + 1);
            s += c * (lower - higher);
            count_x += c;
        }
        xtie += count_x * (count_x - 1.0) / 2.0;
        for &(_, y, c) in group {
            add(&mut tree, pos(y), c);
            seen += c;
        }
        i = j;
    }
    let mut per_y: BTreeMap<u64, f64> = BTreeMap::new();
    for &(_, y, c) in pairs {
        *per_y.entry(y.to_bits()).or_default() += c;
    }
    let ytie: f64 = per_y.values().map(|c| c * (c - 1.0) / 2.0).sum();
    let total = n * (n - 1.0) / 2.0;
    if total == xtie || total == ytie {
        return None;
    }
    Some((s / (total - xtie).sqrt() / (total - ytie).sqrt()).clamp(-1.0, 1.0))
}

impl State for NumberPairs {
    fn reads(&self) -> MetricReads {
        MetricReads::NumberPair
    }

    fn metric_type(&self) -> &'static str {
        match self.coefficient {
            Coefficient::Pearson => PearsonMetric::ABOUT.name,
            Coefficient::Spearman => SpearmanMetric::ABOUT.name,
            Coefficient::Kendall => KendallMetric::ABOUT.name,
        }
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let x = crate::numbers(first(inputs)?)?;
        let y = inputs
            .get(1)
            .ok_or_else(|| MetricError::Invalid("a correlation needs two inputs".to_owned()))?;
        let y = crate::numbers(*y)?;
        for i in 0..x.len() {
            if x.is_null(i) || y.is_null(i) {
                self.dropped.add(dropped::NULL, 1);
                continue;
            }
            let (a, b) = (x.value(i), y.value(i));
            if a.is_nan() || b.is_nan() {
                self.dropped.add(dropped::NAN, 1);
                continue;
            }
            // `+ 0.0` makes `-0.0` the same pair as `0.0`.
            *self
                .counts
                .entry(((a + 0.0).to_bits(), (b + 0.0).to_bits()))
                .or_default() += 1;
        }
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        for (pair, n) in &other.counts {
            *self.counts.entry(*pair).or_default() += n;
        }
        self.dropped.merge(&other.dropped);
    }

    fn exclusion_warning(&self) -> Option<String> {
        let kept: u64 = self.counts.values().sum();
        self.dropped.warning(kept + self.dropped.total(), None)
    }

    fn check_size(&self) -> Result<(), MetricError> {
        if self.counts.len() > MAX_DISTINCT_VALUES {
            return Err(MetricError::Invalid(format!(
                "the two fields have more than {MAX_DISTINCT_VALUES} distinct (x, y) pairs, the limit of `{}`",
                self.metric_type()
            )));
        }
        Ok(())
    }

    fn figures(&self) -> Vec<Figure> {
        let pairs = self.pairs();
        let n = self.counts.values().sum::<u64>();
        let value = match self.coefficient {
            Coefficient::Pearson => pearson(&pairs),
            Coefficient::Spearman => {
                let (mut xs, mut ys) = (BTreeMap::new(), BTreeMap::new());
                for &(x, y, c) in &pairs {
                    *xs.entry(x.to_bits()).or_insert(0.0) += c;
                    *ys.entry(y.to_bits()).or_insert(0.0) += c;
                }
                let (rx, ry) = (average_ranks(&xs), average_ranks(&ys));
                let ranked: Vec<(f64, f64, f64)> = pairs
                    .iter()
                    .map(|&(x, y, c)| (rx[&x.to_bits()], ry[&y.to_bits()], c))
                    .collect();
                pearson(&ranked)
            }
            Coefficient::Kendall => kendall(&pairs),
        };
        vec![Figure::new("value", None, value, n)]
    }
}

impl State for CoMoments {
    fn reads(&self) -> MetricReads {
        MetricReads::NumberPair
    }

    fn metric_type(&self) -> &'static str {
        PearsonMetric::ABOUT.name
    }

    fn update(&mut self, inputs: &[&dyn Array]) -> Result<(), MetricError> {
        let x = crate::numbers(first(inputs)?)?;
        let y = inputs
            .get(1)
            .ok_or_else(|| MetricError::Invalid("a correlation needs two inputs".to_owned()))?;
        CoMoments::update(self, &x, &crate::numbers(*y)?);
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        CoMoments::merge(self, other);
    }

    fn exclusion_warning(&self) -> Option<String> {
        let d = self.dropped();
        d.warning(self.n() + d.total(), None)
    }

    fn figures(&self) -> Vec<Figure> {
        vec![Figure::new("value", None, self.pearson(), self.n())]
    }
}
