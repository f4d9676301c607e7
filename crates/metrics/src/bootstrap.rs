//! Poisson bootstrap intervals for mean-like metrics (`interval: bootstrap`, `replicates`,
//! `seed`, `row_key`), mergeable across batches, row groups, files, Spark partitions and
//! Ray blocks.
//!
//! A classic bootstrap resamples n rows with replacement, which needs every row in one place.
//! The Poisson bootstrap gives each row, in each replicate, a weight drawn from Poisson(1)
//! instead: the weights of different rows are independent, so a state can fold any subset of
//! the rows and states merge by adding their sums. The weights are drawn from a stream
//! seeded by the row's key and the metric's `seed`, so a row gets the same weights whichever
//! batch, file or machine folds it: the figures do not depend on how the data is split.
//!
//! The stream of a row: the FNV-1a 64 hash of its key's text (as labels read it: integers
//! in decimal), XORed with the SplitMix64 mix of `seed`, mixed again, is the state of a
//! SplitMix64 generator; each of its 64-bit outputs gives two replicates their weights (its
//! low 32 bits the even replicate's, its high 32 bits the next one's), each a Poisson(1)
//! variate by inversion of the 32-bit draw against the distribution's cumulative
//! probabilities (resolution 2⁻³², so weights above 12, of probability 6e-11, are not drawn).
//!
//! A replicate keeps Σw (an integer), Σw·2x over values 0, 0.5 and 1 (an integer: scores and
//! win-rate verdicts are summed exactly) and Σw·x over other values in double-double, so the
//! sums, and the figures, are the same in any order of folding and merging. A replicate's
//! mean is Σw·x / Σw (a replicate whose rows all drew weight 0 is left out); `stderr` is the
//! standard deviation (n − 1) of the replicates' means, `ci_low` and `ci_high` their
//! percentiles at the task's `confidence`, interpolated linearly as numpy's default does.
//! The cost is `replicates` draws per row; memory is 24 bytes per replicate per group
//! (40 with values other than 0, 0.5 and 1), bounded by [`MAX_CELLS`].

use crate::metric_type::{OptionDoc, ParseCx};
use crate::moments::Dd;
use crate::{Figure, MetricError};
use arrow::array::Array;
use evalscore_task::TaskError;
use std::sync::LazyLock;

/// Most replicates a metric may ask for.
pub const MAX_REPLICATES: u64 = 10_000;
/// Most replicates a metric's states hold together (groups, overall included, × replicates).
pub const MAX_CELLS: usize = 10_000_000;
/// The row key column when `row_key` is not given.
pub const DEFAULT_ROW_KEY: &str = "id";

/// The options a mean-like metric type lists for its interval.
pub const OPTIONS: [OptionDoc; 4] = [
    OptionDoc::optional(
        "interval",
        "`analytic` (default: Wilson's or Student's t) or `bootstrap` (a Poisson bootstrap, mergeable across partitions)",
    ),
    OptionDoc::optional(
        "replicates",
        "with `interval: bootstrap`, the replicates, 1 to 10,000 (default 1000)",
    ),
    OptionDoc::optional(
        "seed",
        "with `interval: bootstrap`, the seed of the rows' weights (default 0)",
    ),
    OptionDoc::optional(
        "row_key",
        "with `interval: bootstrap`, the column or template that identifies a row and seeds its weights (default `id`)",
    ),
];

/// A metric's bootstrap: how many replicates, from which seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bootstrap {
    pub replicates: u32,
    pub seed: u64,
}

/// Whether the metric asks for `interval: bootstrap`; an error for another value, or for
/// `replicates`, `seed` or `row_key` without it.
pub(crate) fn wanted(cx: &ParseCx<'_>) -> Result<bool, TaskError> {
    let bootstrap = match cx.get("interval") {
        None => false,
        Some(n) => match n.scalar_string("interval")?.as_str() {
            "analytic" => false,
            "bootstrap" => true,
            other => {
                return Err(n
                    .err(format!(
                        "unknown interval `{other}` of metric `{}`",
                        cx.metric_type
                    ))
                    .with_hint("`interval: analytic` (the default) or `interval: bootstrap`"))
            }
        },
    };
    if !bootstrap {
        for key in ["replicates", "seed", "row_key"] {
            if let Some(n) = cx.get(key) {
                return Err(n
                    .err(format!(
                        "`{key}` of metric `{}` is an option of the bootstrap",
                        cx.metric_type
                    ))
                    .with_hint("add `interval: bootstrap`, or remove it"));
            }
        }
    }
    Ok(bootstrap)
}

/// The metric's bootstrap, when it asks for one (`interval: bootstrap`).
pub(crate) fn parse(cx: &ParseCx<'_>) -> Result<Option<Bootstrap>, TaskError> {
    if !wanted(cx)? {
        return Ok(None);
    }
    Ok(Some(Bootstrap {
        replicates: cx.whole_number("replicates", 1000, 1, MAX_REPLICATES)? as u32,
        seed: cx.whole_number("seed", 0, 0, u64::MAX)?,
    }))
}

/// The running sums of a bootstrap's replicates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Replicates {
    boot: Bootstrap,
    /// Per replicate: Σw. Empty until the first row.
    weight: Vec<u64>,
    /// Per replicate: Σw·2x over the rows whose value x is 0, 0.5 or 1.
    halves: Vec<u64>,
    /// Per replicate: Σw·x over the other rows. Empty until such a row.
    other: Vec<Dd>,
}

impl Replicates {
    pub fn new(boot: Bootstrap) -> Self {
        Replicates {
            boot,
            weight: Vec::new(),
            halves: Vec::new(),
            other: Vec::new(),
        }
    }

    /// How many groups' states a metric with this bootstrap may hold.
    pub fn group_limit(&self) -> usize {
        MAX_CELLS / self.boot.replicates.max(1) as usize
    }

    /// Folds the rows of `values` (each `Some(x)` a row to count, `None` one left out) with
    /// their `keys` (the metric's last input); every counted row needs a key.
    pub fn update(
        &mut self,
        values: impl Iterator<Item = Option<f64>>,
        keys: &dyn Array,
    ) -> Result<(), MetricError> {
        let texts = crate::values::key_text(keys)?;
        let keys = crate::values::column(&texts)?;
        let r = self.boot.replicates as usize;
        let seed = mix(self.boot.seed);
        let thresholds = &*THRESHOLDS;
        for (i, x) in values.enumerate() {
            let Some(x) = x else { continue };
            let key = keys.get(i).ok_or_else(|| {
                MetricError::Invalid(
                    "a row's key is null, and the bootstrap draws each row's weights from its key; give every row a key (`row_key`)".to_owned(),
                )
            })?;
            if self.weight.is_empty() {
                self.weight = vec![0; r];
                self.halves = vec![0; r];
            }
            let mut weights = Weights::new(mix(fnv1a(key.as_bytes()) ^ seed), thresholds);
            let half = 2.0 * x;
            if half == 0.0 || half == 1.0 || half == 2.0 {
                let (ws, hs) = (&mut self.weight[..r], &mut self.halves[..r]);
                fold_dyadic(&mut weights, half as u64, ws, hs);
            } else {
                if self.other.is_empty() {
                    self.other = vec![Dd::default(); r];
                }
                let (ws, os) = (&mut self.weight[..r], &mut self.other[..r]);
                weights.each(r, |i, w| {
                    ws[i] += w;
                    if w > 0 {
                        os[i] = os[i].add(Dd::product(x, w as f64));
                    }
                });
            }
        }
        Ok(())
    }

    pub fn merge(&mut self, other: &Replicates) {
        add_into(&mut self.weight, &other.weight, |a, b| *a += b);
        add_into(&mut self.halves, &other.halves, |a, b| *a += b);
        add_into(&mut self.other, &other.other, |a, b| *a = a.add(*b));
    }

    /// The replicates' means, in replicate order, without those of no weight.
    fn means(&self) -> Vec<f64> {
        (0..self.weight.len())
            .filter(|&r| self.weight[r] > 0)
            .map(|r| {
                let other = self.other.get(r).copied().unwrap_or_default();
                let sum = other.add_f64(self.halves[r] as f64 * 0.5);
                sum.div_f64(self.weight[r] as f64).value()
            })
            .collect()
    }

    /// `stderr`, `ci_low` and `ci_high` from the replicates, each with `n`.
    pub fn figures(&self, confidence: f64, n: u64) -> [Figure; 3] {
        let mut means = self.means();
        let count = means.len();
        let stderr = (count >= 2).then(|| {
            let mu = means.iter().sum::<f64>() / count as f64;
            let ss: f64 = means.iter().map(|m| (m - mu) * (m - mu)).sum();
            (ss / (count - 1) as f64).sqrt()
        });
        means.sort_by(f64::total_cmp);
        let bound = |q: f64| (count > 0).then(|| crate::intervals::quantile(&means, q));
        [
            Figure::new("stderr", None, stderr, n),
            Figure::new("ci_low", None, bound((1.0 - confidence) / 2.0), n),
            Figure::new("ci_high", None, bound((1.0 + confidence) / 2.0), n),
        ]
    }
}

/// How many groups a metric with `boot` (or without a bootstrap) may hold.
pub(crate) fn group_limit(boot: &Option<Replicates>) -> usize {
    boot.as_ref()
        .map_or(crate::MAX_GROUPS, Replicates::group_limit)
}

/// Merges `from`'s replicates into `into`'s (both of one metric: both or neither have them).
pub(crate) fn merge(into: &mut Option<Replicates>, from: &Option<Replicates>) {
    if let (Some(mine), Some(theirs)) = (into, from) {
        mine.merge(theirs);
    }
}

/// The row keys: a bootstrapped metric's last input.
pub(crate) fn keys<'a>(inputs: &[&'a dyn Array]) -> Result<&'a dyn Array, MetricError> {
    match inputs {
        [_, .., keys] => Ok(*keys),
        _ => Err(MetricError::Invalid(
            "a bootstrapped metric needs its row keys".to_owned(),
        )),
    }
}

/// Replaces a mean's `stderr`, `ci_low` and `ci_high` with the bootstrap's.
pub(crate) fn replace_interval(figures: &mut [Figure], boot: [Figure; 3]) {
    for b in boot {
        if let Some(f) = figures
            .iter_mut()
            .find(|f| f.stat == b.stat && f.label.is_none())
        {
            *f = b;
        }
    }
}

/// Adds `from` into `into` element by element; an empty side is all zeros.
fn add_into<T: Clone>(into: &mut Vec<T>, from: &[T], add: impl Fn(&mut T, &T)) {
    if from.is_empty() {
        return;
    }
    if into.is_empty() {
        into.extend_from_slice(from);
        return;
    }
    for (a, b) in into.iter_mut().zip(from) {
        add(a, b);
    }
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// SplitMix64's output mix.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// SplitMix64: a fixed, platform-independent stream, so weights are the same everywhere.
struct SplitMix(u64);

impl SplitMix {
    #[inline(always)]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
}

/// The Poisson(1) cumulative probabilities P(X ≤ k), scaled to 2³² and floored, for
/// k = 0 .. 11; a draw at or above the last is 12.
static THRESHOLDS: LazyLock<[u32; 12]> = LazyLock::new(|| {
    let mut t = [u32::MAX; 12];
    let (mut p, mut cdf) = ((-1.0f64).exp(), 0.0);
    for (k, slot) in t.iter_mut().enumerate() {
        cdf += p;
        p /= (k + 1) as f64;
        *slot = (cdf * 4_294_967_296.0).min(u32::MAX as f64) as u32;
    }
    t
});

/// A Poisson(1) variate from a uniform 32-bit draw, by inversion. The first thresholds are
/// compared without branches: weights above 4 come one row in 270.
#[inline(always)]
fn poisson(u: u32, t: &[u32; 12]) -> u64 {
    let w =
        u64::from(u >= t[0]) + u64::from(u >= t[1]) + u64::from(u >= t[2]) + u64::from(u >= t[3]);
    if w < 4 {
        return w;
    }
    let mut k = 4;
    while k < t.len() && u >= t[k] {
        k += 1;
    }
    k as u64
}

/// A row's weights, replicate after replicate: two from each 64-bit output of its stream.
struct Weights<'a> {
    rng: SplitMix,
    thresholds: &'a [u32; 12],
}

impl<'a> Weights<'a> {
    fn new(state: u64, thresholds: &'a [u32; 12]) -> Self {
        Weights {
            rng: SplitMix(state),
            thresholds,
        }
    }

    /// The weights of the next two replicates.
    #[inline(always)]
    fn pair(&mut self) -> [u64; 2] {
        let z = self.rng.next();
        [
            poisson(z as u32, self.thresholds),
            poisson((z >> 32) as u32, self.thresholds),
        ]
    }

    /// Calls `f` with each replicate's index and weight, for `n` replicates.
    #[inline(always)]
    fn each(&mut self, n: usize, mut f: impl FnMut(usize, u64)) {
        for k in 0..n / 2 {
            let [a, b] = self.pair();
            f(2 * k, a);
            f(2 * k + 1, b);
        }
        if n % 2 == 1 {
            f(n - 1, self.pair()[0]);
        }
    }
}

/// Adds the row's weight in each replicate to `weight`, and the weight times `h` to
/// `halves` (a row of value h / 2): two replicates per draw of the row's stream, over pairs
/// of slots, so the loop has no index to check.
fn fold_dyadic(weights: &mut Weights<'_>, h: u64, weight: &mut [u64], halves: &mut [u64]) {
    let mut w2 = weight.chunks_exact_mut(2);
    let mut h2 = halves.chunks_exact_mut(2);
    for (w, hh) in (&mut w2).zip(&mut h2) {
        let [a, b] = weights.pair();
        w[0] += a;
        w[1] += b;
        hh[0] += a * h;
        hh[1] += b * h;
    }
    let (w, hh) = (w2.into_remainder(), h2.into_remainder());
    if let (Some(w), Some(hh)) = (w.first_mut(), hh.first_mut()) {
        let a = weights.pair()[0];
        *w += a;
        *hh += a * h;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inversion gives Poisson(1): mean and variance 1, P(0) = P(1) = 1/e, over a
    /// million weights of one row's stream (within five standard errors).
    #[test]
    fn weights_are_poisson_one() {
        let mut draws = vec![0; 1_000_000];
        Weights::new(mix(7), &THRESHOLDS).each(draws.len(), |i, w| draws[i] = w);
        let n = draws.len() as f64;
        let mean = draws.iter().sum::<u64>() as f64 / n;
        let var = draws
            .iter()
            .map(|&w| (w as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        assert!((mean - 1.0).abs() < 5.0 * (1.0 / n).sqrt(), "{mean}");
        assert!((var - 1.0).abs() < 5.0 * (2.0 / n).sqrt() * 1.3, "{var}");
        let e = (-1.0f64).exp();
        for k in [0, 1] {
            let p = draws.iter().filter(|&&w| w == k).count() as f64 / n;
            assert!(
                (p - e).abs() < 5.0 * (e * (1.0 - e) / n).sqrt(),
                "P({k}) = {p}"
            );
        }
        assert!(draws.iter().any(|&w| w >= 6));
    }

    /// The thresholds rise to the top, and the draw at each threshold is its k.
    #[test]
    fn inversion_edges() {
        let t = &*THRESHOLDS;
        assert!(t.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(t[0], 1_580_030_168); // e⁻¹ · 2³², floored
        assert_eq!(poisson(0, t), 0);
        assert_eq!(poisson(t[0] - 1, t), 0);
        assert_eq!(poisson(t[0], t), 1);
        assert_eq!(poisson(t[3], t), 4);
        assert_eq!(poisson(t[4], t), 5);
        assert_eq!(poisson(u32::MAX, t), 12);
    }

    /// The stream's values are fixed: a change would move every published interval.
    #[test]
    fn stream_is_fixed() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        // SplitMix64 from state 0: the reference implementation's first output.
        assert_eq!(SplitMix(0).next(), 0xe220_a839_7b1d_cdaf);
    }
}
