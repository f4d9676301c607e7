//! Confidence intervals: Wilson for proportions, Student t for means, and the quantile of
//! sorted replicates that the bootstraps take their percentiles with.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The Wilson score interval for `count` successes in `nobs` trials, as statsmodels'
/// `proportion_confint(count, nobs, alpha=1-confidence, method="wilson")` computes it,
/// clipped to [0, 1]. `None` when `nobs` is 0.
pub fn wilson(count: f64, nobs: f64, confidence: f64) -> Option<(f64, f64)> {
    if nobs <= 0.0 {
        return None;
    }
    let alpha = 1.0 - confidence;
    let crit = normal_isf(alpha / 2.0)?;
    let q = count / nobs;
    let crit2 = crit * crit;
    let denom = 1.0 + crit2 / nobs;
    let center = (q + crit2 / (2.0 * nobs)) / denom;
    let dist = crit * (q * (1.0 - q) / nobs + crit2 / (4.0 * nobs * nobs)).sqrt() / denom;
    Some((
        (center - dist).clamp(0.0, 1.0),
        (center + dist).clamp(0.0, 1.0),
    ))
}

/// The Student t interval `mean ± t((1+c)/2, n−1) · stderr`. `None` when n < 2.
pub fn student_t(mean: f64, stderr: f64, n: u64, confidence: f64) -> Option<(f64, f64)> {
    if n < 2 {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    let q = t.inverse_cdf((1.0 + confidence) / 2.0);
    Some((mean - q * stderr, mean + q * stderr))
}

/// The upper-tail quantile of the standard normal (scipy's `norm.isf`).
fn normal_isf(p: f64) -> Option<f64> {
    let n = Normal::new(0.0, 1.0).ok()?;
    Some(-n.inverse_cdf(p))
}

/// The `q` quantile of sorted `v` (not empty), linearly interpolated (numpy's default).
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let at = q * (v.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
}
