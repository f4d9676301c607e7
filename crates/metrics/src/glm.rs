//! The L1-penalized logistic regression with soft labels that AlpacaEval 2 fits for its
//! length-controlled win rate, and the cross-validation that picks its penalty, as
//! `alpaca_eval.metrics.glm_winrate.fit_LogisticRegressionCV` runs them through
//! scikit-learn's `LogisticRegressionCV` (liblinear, L1, no intercept).
//!
//! A row with features `x` and soft label `p` (the probability that A wins) stands for two
//! rows, label 1 weighted `p` and label 0 weighted `1 - p`, so at a given `C` the fit
//! minimizes liblinear's objective `||w||_1 + C Σ weight (softplus(w·x) - p w·x)`. It is
//! solved here by proximal Newton steps (the quadratic model's L1 subproblem solved by
//! coordinate descent to machine precision, then a backtracking line search) until a step
//! moves no coefficient by more than 1e-10: the exact optimum, where liblinear stops at its
//! tolerance of 1e-4.
//!
//! `C` is chosen from `np.logspace(-4, 4, 10)` by 5-fold cross-validation with groups (each
//! row is one group, both of its duplicates in one fold): scikit-learn's `GroupKFold`
//! without shuffling deals the groups, from the last to the first, to the folds in turn, so
//! row `i` of `n` tests in fold `(n - 1 - i) % 5`. Each fold scores the package's
//! `logloss_continuous` (the mean over the test rows of the soft labels' log loss, the
//! predictions clipped to [1e-15, 1 - 1e-15]); the `C` with the least summed loss wins, the
//! smallest on a tie, and the model is fitted again on every row at that `C`.

/// The number of features a fit has (unused ones are zero columns, whose coefficient stays 0).
pub(crate) const FEATURES: usize = 3;

/// Rows with identical features and label, with their weight in each fold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub x: [f64; FEATURES],
    /// The soft label: the probability that the positive side wins.
    pub p: f64,
    /// How many of the rows test in each fold.
    pub folds: [f64; FOLDS],
}

impl Row {
    /// How many rows it stands for.
    pub(crate) fn total(&self) -> f64 {
        self.folds.iter().sum()
    }
}

/// The folds of the cross-validation.
pub(crate) const FOLDS: usize = 5;

/// The fold that row `i` of `n` tests in, as scikit-learn's `GroupKFold` deals equal groups.
pub(crate) fn fold_of(i: usize, n: usize) -> usize {
    (n - 1 - i) % FOLDS
}

/// The grid of `C`, `np.logspace(-4, 4, 10)`.
pub(crate) fn c_grid() -> [f64; 10] {
    // numpy computes 10 ** linspace(-4, 4, 10), the exponents as start + i * step.
    let step = 8.0 / 9.0;
    std::array::from_fn(|i| {
        let e = if i == 9 { 4.0 } else { -4.0 + i as f64 * step };
        10f64.powf(e)
    })
}

pub(crate) fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

fn dot(w: &[f64; FEATURES], x: &[f64; FEATURES]) -> f64 {
    w.iter().zip(x).map(|(a, b)| a * b).sum()
}

fn l1(w: &[f64; FEATURES]) -> f64 {
    w.iter().map(|v| v.abs()).sum()
}

/// The objective at `w` over rows weighted by `weight`, its loss term's gradient and
/// Hessian: one pass over the rows.
struct Point {
    f: f64,
    g: [f64; FEATURES],
    h: [[f64; FEATURES]; FEATURES],
}

fn evaluate(rows: &[Row], weight: &dyn Fn(&Row) -> f64, c: f64, w: &[f64; FEATURES]) -> Point {
    let mut loss = 0.0;
    let mut g = [0.0; FEATURES];
    let mut h = [[0.0; FEATURES]; FEATURES];
    for r in rows {
        let wt = weight(r);
        if wt == 0.0 {
            continue;
        }
        let z = dot(w, &r.x);
        // One exponential for the loss and the probability.
        let e = (-z.abs()).exp();
        loss += wt * (z.max(0.0) + e.ln_1p() - r.p * z);
        let s = if z >= 0.0 {
            1.0 / (1.0 + e)
        } else {
            e / (1.0 + e)
        };
        let (gr, hr) = (wt * (s - r.p), wt * s * (1.0 - s));
        for ((gj, hj), xj) in g.iter_mut().zip(h.iter_mut()).zip(r.x) {
            *gj += gr * xj;
            for (hjk, xk) in hj.iter_mut().zip(r.x) {
                *hjk += hr * xj * xk;
            }
        }
    }
    g.iter_mut().for_each(|v| *v *= c);
    h.iter_mut().flatten().for_each(|v| *v *= c);
    Point {
        f: l1(w) + c * loss,
        g,
        h,
    }
}

/// Minimizes `g·d + ½ dᵀHd + ||w + d||_1` over `d` by coordinate descent; returns `w + d`.
fn l1_quadratic(
    g: &[f64; FEATURES],
    h: &[[f64; FEATURES]; FEATURES],
    w: &[f64; FEATURES],
) -> [f64; FEATURES] {
    let mut u = *w;
    for _ in 0..10_000 {
        let mut change = 0.0f64;
        for j in 0..FEATURES {
            if h[j][j] <= 0.0 {
                // A zero column: no loss gradient, so the penalty keeps it at 0.
                change = change.max(u[j].abs());
                u[j] = 0.0;
                continue;
            }
            let cross: f64 = (0..FEATURES)
                .filter(|&k| k != j)
                .map(|k| h[j][k] * (u[k] - w[k]))
                .sum();
            let b = g[j] + cross - h[j][j] * w[j];
            let next = -b.signum() * (b.abs() - 1.0).max(0.0) / h[j][j];
            change = change.max((next - u[j]).abs());
            u[j] = next;
        }
        if change <= 1e-15 * (1.0 + l1(&u)) {
            break;
        }
    }
    u
}

/// The coefficients minimizing `||w||_1 + C Σ weight (softplus(w·x) - p w·x)`, from `start`.
pub(crate) fn fit(
    rows: &[Row],
    weight: &dyn Fn(&Row) -> f64,
    c: f64,
    start: [f64; FEATURES],
) -> [f64; FEATURES] {
    let mut w = start;
    let mut at = evaluate(rows, weight, c, &w);
    for _ in 0..200 {
        let u = l1_quadratic(&at.g, &at.h, &w);
        let d: [f64; FEATURES] = std::array::from_fn(|j| u[j] - w[j]);
        let decrease = dot(&at.g, &d) + l1(&u) - l1(&w);
        if decrease >= 0.0 || d.iter().all(|v| *v == 0.0) {
            break;
        }
        // Backtrack until the objective falls by a share of the model's decrease.
        let mut t = 1.0;
        let mut next = u;
        let mut next_at = evaluate(rows, weight, c, &next);
        for _ in 0..60 {
            if next_at.f <= at.f + 0.01 * t * decrease {
                break;
            }
            t *= 0.5;
            next = std::array::from_fn(|j| w[j] + t * d[j]);
            next_at = evaluate(rows, weight, c, &next);
        }
        if next_at.f > at.f {
            break;
        }
        let moved = d.iter().map(|v| (t * v).abs()).fold(0.0, f64::max);
        w = next;
        at = next_at;
        if moved <= 1e-10 * (1.0 + w.iter().map(|v| v.abs()).fold(0.0, f64::max)) {
            break;
        }
    }
    w
}

/// The package's `logloss_continuous` of `w` on fold `k`'s rows: the mean log loss of the
/// soft labels, the predictions clipped to [1e-15, 1 - 1e-15].
fn fold_loss(rows: &[Row], k: usize, w: &[f64; FEATURES]) -> f64 {
    let (mut loss, mut n) = (0.0, 0.0);
    for r in rows {
        let m = r.folds[k];
        if m == 0.0 {
            continue;
        }
        let q = sigmoid(dot(w, &r.x)).clamp(1e-15, 1.0 - 1e-15);
        loss -= m * (r.p * q.ln() + (1.0 - r.p) * (1.0 - q).ln());
        n += m;
    }
    loss / n
}

/// The chosen `C` and the coefficients fitted at it on every row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CvFit {
    pub c: f64,
    pub w: [f64; FEATURES],
}

/// Chooses `C` by the grouped 5-fold cross-validation and fits every row at it.
pub(crate) fn fit_cv(rows: &[Row]) -> CvFit {
    let grid = c_grid();
    let mut losses = [0.0; 10];
    for k in 0..FOLDS {
        let train = move |r: &Row| r.total() - r.folds[k];
        // Each C starts from the last one's optimum: the optimum is the same, reached sooner.
        let mut w = [0.0; FEATURES];
        for (i, &c) in grid.iter().enumerate() {
            w = fit(rows, &train, c, w);
            losses[i] += fold_loss(rows, k, &w);
        }
    }
    let mut best = 0;
    for i in 1..grid.len() {
        if losses[i] < losses[best] {
            best = i;
        }
    }
    let c = grid[best];
    CvFit {
        c,
        w: fit(rows, &|r: &Row| r.total(), c, [0.0; FEATURES]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_numpys_logspace() {
        let g = c_grid();
        assert_eq!(g[0], 1e-4);
        assert_eq!(g[9], 1e4);
        assert!((g[4] - 10f64.powf(-4.0 + 4.0 * 8.0 / 9.0)).abs() < 1e-15);
    }

    #[test]
    fn folds_are_dealt_from_the_last_row() {
        let folds: Vec<usize> = (0..7).map(|i| fold_of(i, 7)).collect();
        assert_eq!(folds, vec![1, 0, 4, 3, 2, 1, 0]);
    }
}
