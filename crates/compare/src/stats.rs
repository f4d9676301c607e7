//! The statistics of one paired comparison: the differences `new − base` over the pairs
//! present in both runs, their standard error (paired, or cluster-robust), a Student t
//! interval, the p-value (McNemar's exact test, the paired t test, or the cluster-robust t
//! test), the minimum detectable difference, and Holm's adjustment across comparisons.

use statrs::distribution::{Continuous, ContinuousCDF, StudentsT};

/// The power the minimum detectable difference is computed for.
pub const POWER: f64 = 0.8;

/// Which test gave the p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// McNemar's exact two-sided test on the discordant pairs (both columns 0/1).
    McNemarExact,
    /// The paired t test (`scipy.stats.ttest_rel`), n − 1 degrees of freedom.
    PairedT,
    /// The cluster-robust t test, G − 1 degrees of freedom.
    ClusterT,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::McNemarExact => "mcnemar_exact",
            Test::PairedT => "paired_t",
            Test::ClusterT => "cluster_t",
        }
    }
}

/// The figures of one paired comparison. `None` where undefined (too few pairs or clusters).
#[derive(Debug, Clone, PartialEq)]
pub struct Paired {
    pub n_pairs: u64,
    pub n_clusters: Option<u64>,
    pub base_mean: Option<f64>,
    pub new_mean: Option<f64>,
    pub diff: Option<f64>,
    pub diff_se: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub p_value: Option<f64>,
    pub test: Test,
    /// Pairs whose score went down (for 0/1 columns: from pass to fail).
    pub pass_to_fail: u64,
    /// Pairs whose score went up.
    pub fail_to_pass: u64,
    pub min_detectable_diff: Option<f64>,
}

/// Compares the pairs `(base[i], new[i])`. `clusters[i]` is pair i's cluster (any ids);
/// `binary` says whether both columns hold only 0 and 1 (it picks McNemar's test when there
/// are no clusters). `confidence` is strictly between 0 and 1. The same figures as [`Sums`]
/// and [`Spread`] gathered pair by pair, then [`finish`].
pub fn paired(
    base: &[f64],
    new: &[f64],
    clusters: Option<&[u32]>,
    confidence: f64,
    binary: bool,
) -> Paired {
    let n = base.len().min(new.len());
    let (base, new) = (&base[..n], &new[..n]);
    let mut sums = Sums::new();
    for (b, x) in base.iter().zip(new) {
        sums.add(*b, *x);
    }
    let spread = sums.mean_diff().map(|dbar| {
        let mut s = Spread::new(dbar, clusters.is_some());
        for (i, (b, x)) in base.iter().zip(new).enumerate() {
            s.add(*b, *x, clusters.map_or(0, |c| c[i]));
        }
        s
    });
    finish(
        &sums,
        spread.as_ref(),
        confidence,
        Test::pick(clusters.is_some(), binary),
    )
}

impl Test {
    /// The cluster-robust t test with clusters, else McNemar's test for 0/1 columns, else
    /// the paired t test.
    pub fn pick(clustered: bool, binary: bool) -> Test {
        if clustered {
            Test::ClusterT
        } else if binary {
            Test::McNemarExact
        } else {
            Test::PairedT
        }
    }
}

/// What a sum of floats starts from: the value `Iterator::sum` starts from, so that a sum
/// gathered pair by pair is the one `sum()` gives over the same values in the same order.
fn zero() -> f64 {
    std::iter::empty::<f64>().sum()
}

/// The first pass over a comparison's pairs, in pair order: the sums of the base values,
/// the new values and the differences `new − base`, and how many went down and up.
#[derive(Debug, Clone, PartialEq)]
pub struct Sums {
    pub n: u64,
    base: f64,
    new: f64,
    diff: f64,
    pub pass_to_fail: u64,
    pub fail_to_pass: u64,
}

impl Default for Sums {
    fn default() -> Self {
        Sums::new()
    }
}

impl Sums {
    pub fn new() -> Sums {
        Sums {
            n: 0,
            base: zero(),
            new: zero(),
            diff: zero(),
            pass_to_fail: 0,
            fail_to_pass: 0,
        }
    }

    #[inline]
    pub fn add(&mut self, base: f64, new: f64) {
        let d = new - base;
        self.n += 1;
        self.base += base;
        self.new += new;
        self.diff += d;
        // Counted without a branch: which way a pair went is unpredictable.
        self.pass_to_fail += u64::from(d < 0.0);
        self.fail_to_pass += u64::from(d > 0.0);
    }

    /// d̄, the mean difference; `None` without pairs.
    pub fn mean_diff(&self) -> Option<f64> {
        (self.n > 0).then(|| self.diff / self.n as f64)
    }

    /// Whether every sum is a finite number (finite values near ±1.8e308 overflow).
    pub fn is_finite(&self) -> bool {
        self.base.is_finite() && self.new.is_finite() && self.diff.is_finite()
    }
}

/// The second pass, once d̄ is known: the sum of squared residuals `d − d̄`, or with
/// clusters each cluster's sum of residuals (in the order clusters first appear).
#[derive(Debug, Clone)]
pub struct Spread {
    dbar: f64,
    squares: f64,
    clusters: Option<(crate::typed_rows::FastMap<u32, usize>, Vec<f64>)>,
}

impl Spread {
    pub fn new(dbar: f64, clustered: bool) -> Spread {
        Spread {
            dbar,
            squares: zero(),
            clusters: clustered.then(Default::default),
        }
    }

    /// Pair `(base, new)` of cluster `cluster` (ignored without clusters).
    pub fn add(&mut self, base: f64, new: f64, cluster: u32) {
        self.add_diff(new - base, cluster);
    }

    /// Pairs without clusters whose differences `new − base` are `d` (NaN ones skipped), in
    /// order: the sum [`Spread::add_diff`] makes, kept in a register.
    #[inline]
    pub fn add_unclustered(&mut self, d: impl Iterator<Item = f64>) {
        if self.clusters.is_some() {
            for x in d.filter(|x| !x.is_nan()) {
                self.add_diff(x, 0);
            }
            return;
        }
        let mut squares = self.squares;
        for x in d.filter(|x| !x.is_nan()) {
            let e = x - self.dbar;
            squares += e * e;
        }
        self.squares = squares;
    }

    /// A pair of cluster `cluster` whose difference `new − base` is `d`.
    #[inline]
    pub fn add_diff(&mut self, d: f64, cluster: u32) {
        let e = d - self.dbar;
        match &mut self.clusters {
            None => self.squares += e * e,
            Some((index, sums)) => {
                let i = *index.entry(cluster).or_insert_with(|| {
                    sums.push(0.0);
                    sums.len() - 1
                });
                sums[i] += e;
            }
        }
    }

    /// The sum of squares the standard error is made of: Σ e² without clusters, Σ_g (Σ e)²
    /// with.
    fn meat(&self) -> f64 {
        match &self.clusters {
            None => self.squares,
            Some((_, sums)) => sums.iter().map(|s| s * s).fold(zero(), |a, b| a + b),
        }
    }

    /// Whether the sums of squares are finite numbers.
    pub fn is_finite(&self) -> bool {
        self.meat().is_finite()
    }
}

/// The figures of a comparison from its two passes (`spread` is `None` without pairs).
pub fn finish(sums: &Sums, spread: Option<&Spread>, confidence: f64, test: Test) -> Paired {
    let n = sums.n;
    let mean = |s: f64| (n > 0).then(|| s / n as f64);
    let mut out = Paired {
        n_pairs: n,
        n_clusters: None,
        base_mean: mean(sums.base),
        new_mean: mean(sums.new),
        diff: sums.mean_diff(),
        diff_se: None,
        ci_low: None,
        ci_high: None,
        p_value: None,
        test,
        pass_to_fail: sums.pass_to_fail,
        fail_to_pass: sums.fail_to_pass,
        min_detectable_diff: None,
    };
    let (Some(dbar), Some(spread)) = (out.diff, spread) else {
        return out;
    };
    let meat = spread.meat();
    // (standard error, degrees of freedom of its t distribution)
    let se_df = match &spread.clusters {
        Some((_, sums)) => {
            let g = sums.len();
            out.n_clusters = Some(g as u64);
            // statsmodels' cluster covariance of the mean: G/(G−1) · (N−1)/(N−K) ·
            // Σ_g (Σ_{i∈g} e_i)² / N², with K = 1 regressor (the constant).
            (n >= 2 && g >= 2).then(|| {
                let gf = g as f64;
                let var = gf / (gf - 1.0) * meat / (n as f64 * n as f64);
                (var.sqrt(), gf - 1.0)
            })
        }
        None => (n >= 2).then(|| ((meat / (n as f64 - 1.0) / n as f64).sqrt(), n as f64 - 1.0)),
    };
    if let Some((se, df)) = se_df {
        out.diff_se = Some(se);
        let q = t_quantile((1.0 + confidence) / 2.0, df);
        out.ci_low = Some(dbar - q * se);
        out.ci_high = Some(dbar + q * se);
        out.min_detectable_diff = Some(if se > 0.0 {
            (q + t_quantile(POWER, df)) * se
        } else {
            0.0
        });
        if out.test != Test::McNemarExact {
            out.p_value = t_test_p(dbar, se, df);
        }
    }
    if out.test == Test::McNemarExact {
        out.p_value = Some(mcnemar_exact(sums.pass_to_fail, sums.fail_to_pass));
    }
    out
}

/// The two-sided p-value of `t = diff / se` with `df` degrees of freedom. With `se` = 0
/// (every difference equal) it is 0 for a non-zero difference and undefined for zero, as
/// `scipy.stats.ttest_rel` gives.
fn t_test_p(diff: f64, se: f64, df: f64) -> Option<f64> {
    if se == 0.0 {
        return (diff != 0.0).then_some(0.0);
    }
    let t = diff / se;
    if t.is_nan() {
        // statrs' CDF panics on NaN; callers refuse non-finite sums before this.
        return None;
    }
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    // The lower tail of −|t|, doubled: no cancellation for small p-values.
    Some((2.0 * dist.cdf(-t.abs())).min(1.0))
}

/// The `p` quantile of Student's t with `df` degrees of freedom: statrs' inverse, polished
/// by Newton steps on its (more accurate) CDF.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let Ok(t) = StudentsT::new(0.0, 1.0, df) else {
        return f64::NAN;
    };
    let mut x = t.inverse_cdf(p);
    for _ in 0..3 {
        let density = t.pdf(x);
        if density.is_nan() || density <= 0.0 || !x.is_finite() {
            break;
        }
        let step = (t.cdf(x) - p) / density;
        x -= step;
        if step.abs() <= 1e-16 * x.abs() {
            break;
        }
    }
    x
}

/// McNemar's exact two-sided p-value for `b` and `c` discordant pairs:
/// `min(1, 2 · P(X ≤ min(b, c)))` with X ~ Binomial(b + c, 1/2), as statsmodels'
/// `mcnemar(table, exact=True)` gives.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    let m = b.min(c);
    if n == 0 || 2 * m >= n {
        return 1.0;
    }
    // C(n, m) as a product of m ratios, in a float with a separate binary exponent (2^n
    // underflows for n > 1074), then the lower terms downwards: t(k−1) = t(k) · k / (n−k+1).
    let mut top = 1.0f64;
    let mut exp: i64 = 0;
    for i in 1..=m {
        top *= (n - m + i) as f64 / i as f64;
        if top > 1e280 {
            top *= 2f64.powi(-900);
            exp += 900;
        }
    }
    let mut sum = top;
    let mut term = top;
    let mut k = m;
    while k > 0 {
        term *= k as f64 / (n - k + 1) as f64;
        sum += term;
        if term < sum * 1e-18 {
            break;
        }
        k -= 1;
    }
    // sum · 2^(exp − n), applied in steps so no intermediate underflows needlessly.
    let mut shift = exp - n as i64 + 1; // + 1: the two sides
    let mut p = sum;
    while shift < -1000 {
        p *= 2f64.powi(-1000);
        shift += 1000;
    }
    while shift > 1000 {
        p *= 2f64.powi(1000);
        shift -= 1000;
    }
    (p * 2f64.powi(shift as i32)).min(1.0)
}

/// Holm's step-down adjustment (statsmodels' `multipletests(method="holm")`): the i-th
/// smallest of m p-values becomes max over j ≤ i of (m − j + 1) · p(j), capped at 1.
/// Undefined p-values are left out of the family and stay undefined.
pub fn holm(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<usize> = (0..p.len()).filter(|i| p[*i].is_some()).collect();
    order.sort_by(|a, b| {
        p[*a]
            .partial_cmp(&p[*b])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let m = order.len();
    let mut out = vec![None; p.len()];
    let mut running = 0.0f64;
    for (rank, i) in order.into_iter().enumerate() {
        let raw = p[i].unwrap_or(1.0) * (m - rank) as f64;
        running = running.max(raw);
        out[i] = Some(running.min(1.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_small_tables_match_the_binomial_sum() {
        // b = 3, c = 0: 2 · (1/2)³ = 0.25.
        assert_eq!(mcnemar_exact(3, 0), 0.25);
        assert_eq!(mcnemar_exact(0, 3), 0.25);
        // b = 1, c = 5: 2 · (1 + 6) / 64.
        assert_eq!(mcnemar_exact(1, 5), 14.0 / 64.0);
        assert_eq!(mcnemar_exact(4, 4), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // 2 · 2^-2000 underflows to 0 only at the very end.
        assert_eq!(mcnemar_exact(2000, 0), 0.0);
        let p = mcnemar_exact(1000, 0);
        assert_eq!(p, 2f64.powi(-999));
    }

    #[test]
    fn holm_matches_the_step_down_rule() {
        let adj = holm(&[Some(0.125), None, Some(0.5), Some(0.25), Some(0.75)]);
        assert_eq!(adj, vec![Some(0.5), None, Some(1.0), Some(0.75), Some(1.0)]);
    }
}
