//! The maximum-likelihood Bradley-Terry fit of `bradley_terry`: Newton's method on the pairs
//! of models that met, so a step costs in proportion to those pairs, not to the square of the
//! models.
//!
//! With `θ` the natural-log strengths, a pair (i, j) where i won `wi` and j won `wj` (ties as
//! halves, `n = wi + wj`) adds `wi x − n softplus(x)`, `x = θi − θj`, to the log-likelihood.
//! Its Hessian is a weighted graph Laplacian over the met pairs; the Newton step solves it with
//! the first model's strength held (the rest is positive definite when the models are
//! connected) by conjugate gradients preconditioned by its diagonal, each product one pass over
//! the pairs. A backtracking line search keeps every step an ascent. The fit has converged when
//! a step moves no strength by more than [`STEP_TOLERANCE`]; it gives up after
//! [`MAX_STEPS`] steps, or at once when a stop was requested
//! ([`crate::interrupt::requested`]), and says it did not converge.
//!
//! The fit exists when the "beat" graph (i → j when i won or tied against j) is strongly
//! connected: otherwise some strengths run off to infinity.

/// Newton steps a fit may take before it gives up.
pub(crate) const MAX_STEPS: usize = 100;

/// The largest move of a log-strength (about 4e-8 Elo points) at which the fit has converged.
const STEP_TOLERANCE: f64 = 1e-10;

/// The conjugate gradients' residual, relative to the step's first one, at which they stop.
const CG_TOLERANCE: f64 = 1e-10;

/// The battles of one pair of models `i < j`: i's wins over j and j's over i, ties as halves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pair {
    pub i: usize,
    pub j: usize,
    pub wi: f64,
    pub wj: f64,
}

/// A fit: the log-strengths (mean 0) and whether they are the maximum-likelihood ones.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fit {
    pub theta: Vec<f64>,
    pub converged: bool,
}

impl Fit {
    /// The ratings on the Elo scale (400 points per factor of 10 in odds), mean 1000.
    pub(crate) fn elo(&self) -> Vec<f64> {
        let scale = 400.0 / std::f64::consts::LN_10;
        let logs: Vec<f64> = self.theta.iter().map(|t| scale * t).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        logs.iter().map(|r| r - mean + 1000.0).collect()
    }
}

/// The pairs of outcome cells `((a, b), [a's wins, b's wins, ties])`, a cell and its mirror
/// `(b, a)` joined, in the order of `(i, j)`; and for each cell, its pair's index.
pub(crate) fn pairs(cells: &[((usize, usize), [f64; 3])]) -> (Vec<Pair>, Vec<usize>) {
    let key = |&((a, b), _): &((usize, usize), [f64; 3])| (a.min(b), a.max(b));
    let mut keys: Vec<(usize, usize)> = cells.iter().map(key).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut out: Vec<Pair> = keys
        .iter()
        .map(|&(i, j)| Pair {
            i,
            j,
            wi: 0.0,
            wj: 0.0,
        })
        .collect();
    let mut of_cell = Vec::with_capacity(cells.len());
    for cell in cells {
        let k = keys.binary_search(&key(cell)).unwrap_or(0);
        let ((a, _), [aw, bw, t]) = *cell;
        let (first, second) = (aw + t / 2.0, bw + t / 2.0);
        if a == out[k].i {
            out[k].wi += first;
            out[k].wj += second;
        } else {
            out[k].wi += second;
            out[k].wj += first;
        }
        of_cell.push(k);
    }
    (out, of_cell)
}

/// Whether every one of the `p` models reaches every other along "beat" edges.
fn strongly_connected(p: usize, pairs: &[Pair]) -> bool {
    // Edges i -> j where i won or tied against j, and the same reversed, as adjacency lists.
    let (mut forward, mut backward) = (vec![Vec::new(); p], vec![Vec::new(); p]);
    for e in pairs {
        if e.wi > 0.0 {
            forward[e.i].push(e.j);
            backward[e.j].push(e.i);
        }
        if e.wj > 0.0 {
            forward[e.j].push(e.i);
            backward[e.i].push(e.j);
        }
    }
    let reaches_all = |edges: &[Vec<usize>]| {
        let mut seen = vec![false; p];
        let mut stack = vec![0usize];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for &j in &edges[i] {
                if !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen.iter().all(|s| *s)
    };
    p > 0 && reaches_all(&forward) && reaches_all(&backward)
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// The log-likelihood of `theta`.
fn log_likelihood(pairs: &[Pair], theta: &[f64]) -> f64 {
    pairs
        .iter()
        .map(|e| {
            let x = theta[e.i] - theta[e.j];
            let softplus = x.max(0.0) + (-x.abs()).exp().ln_1p();
            e.wi * x - (e.wi + e.wj) * softplus
        })
        .sum()
}

/// The log-likelihood's gradient at `theta` into `g`; each pair's Hessian weight into `h` and
/// the Hessian's diagonal into `diag`.
fn derivatives(pairs: &[Pair], theta: &[f64], g: &mut [f64], h: &mut [f64], diag: &mut [f64]) {
    g.fill(0.0);
    diag.fill(0.0);
    for (e, he) in pairs.iter().zip(h.iter_mut()) {
        let x = theta[e.i] - theta[e.j];
        let n = e.wi + e.wj;
        let s = sigmoid(x);
        let r = e.wi - n * s;
        g[e.i] += r;
        g[e.j] -= r;
        *he = n * s * sigmoid(-x);
        diag[e.i] += *he;
        diag[e.j] += *he;
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solves `H d = g` for the Newton step (the first model's entry held at 0) by conjugate
/// gradients preconditioned by `H`'s diagonal; `H v` is one pass over the pairs.
fn newton_step(pairs: &[Pair], h: &[f64], diag: &[f64], g: &[f64]) -> Vec<f64> {
    let p = g.len();
    let mut d = vec![0.0; p];
    let mut r = g.to_vec();
    r[0] = 0.0;
    let precondition = |r: &[f64]| -> Vec<f64> {
        r.iter()
            .zip(diag)
            .enumerate()
            .map(|(k, (v, m))| if k == 0 || *m <= 0.0 { 0.0 } else { v / m })
            .collect()
    };
    let mut z = precondition(&r);
    let mut dir = z.clone();
    let mut rz = dot(&r, &z);
    let stop = rz * CG_TOLERANCE * CG_TOLERANCE;
    let mut q = vec![0.0; p];
    // In exact arithmetic conjugate gradients end within p - 1 products; rounding may ask for
    // more on long chains of models.
    for _ in 0..2 * p + 50 {
        if rz <= stop || rz <= 0.0 {
            break;
        }
        q.fill(0.0);
        for (e, he) in pairs.iter().zip(h) {
            let t = he * (dir[e.i] - dir[e.j]);
            q[e.i] += t;
            q[e.j] -= t;
        }
        q[0] = 0.0;
        let curvature = dot(&dir, &q);
        if curvature <= 0.0 || !curvature.is_finite() {
            break;
        }
        let alpha = rz / curvature;
        for k in 0..p {
            d[k] += alpha * dir[k];
            r[k] -= alpha * q[k];
        }
        z = precondition(&r);
        let next = dot(&r, &z);
        let beta = next / rz;
        for k in 0..p {
            dir[k] = z[k] + beta * dir[k];
        }
        rz = next;
    }
    d
}

/// The maximum-likelihood fit of `p` models' `pairs`, from the log-strengths `start` (or 0),
/// within `max_steps` Newton steps; `None` when it does not exist.
pub(crate) fn fit(
    p: usize,
    pairs: &[Pair],
    start: Option<&[f64]>,
    max_steps: usize,
) -> Option<Fit> {
    if p < 2 || !strongly_connected(p, pairs) {
        return None;
    }
    let mut theta = start.map_or_else(|| vec![0.0; p], <[f64]>::to_vec);
    let (mut g, mut h, mut diag) = (vec![0.0; p], vec![0.0; pairs.len()], vec![0.0; p]);
    let mut ll = log_likelihood(pairs, &theta);
    let mut converged = false;
    for _ in 0..max_steps {
        if crate::interrupt::requested() {
            break;
        }
        derivatives(pairs, &theta, &mut g, &mut h, &mut diag);
        let d = newton_step(pairs, &h, &diag, &g);
        let slope = dot(&g, &d);
        let size = d.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if !size.is_finite() {
            break;
        }
        // Backtrack while the step gains less than a share of what its slope promises; near
        // the optimum the gain is below the rounding of the log-likelihood, which is allowed.
        let slack = 1e-12 * ll.abs();
        let mut t = 1.0;
        let mut next: Vec<f64>;
        loop {
            next = theta.iter().zip(&d).map(|(a, b)| a + t * b).collect();
            let next_ll = log_likelihood(pairs, &next);
            if next_ll >= ll + 1e-4 * t * slope - slack {
                ll = next_ll;
                break;
            }
            t *= 0.5;
            if t < 1e-12 {
                break;
            }
        }
        if t < 1e-12 {
            break;
        }
        theta = next;
        if t * size <= STEP_TOLERANCE {
            converged = true;
            break;
        }
    }
    let mean = theta.iter().sum::<f64>() / p as f64;
    theta.iter_mut().for_each(|t| *t -= mean);
    Some(Fit { theta, converged })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(i: usize, j: usize, wi: f64, wj: f64) -> Pair {
        Pair { i, j, wi, wj }
    }

    /// On a tree the likelihood splits by edge: each difference is the log of its odds.
    #[test]
    fn a_chain_fits_each_edge_to_its_odds() {
        let p = 50;
        let chain: Vec<Pair> = (0..p - 1).map(|k| pair(k, k + 1, 3.0, 1.0)).collect();
        let f = fit(p, &chain, None, MAX_STEPS).unwrap();
        assert!(f.converged);
        for k in 0..p - 1 {
            let diff = f.theta[k] - f.theta[k + 1];
            assert!((diff - 3f64.ln()).abs() < 1e-12, "edge {k}: {diff}");
        }
    }

    /// A fit stopped by its step limit says it did not converge.
    #[test]
    fn a_fit_cut_short_says_so() {
        let pairs = [
            pair(0, 1, 400.0, 1.0),
            pair(1, 2, 2.0, 3.0),
            pair(0, 2, 5.0, 1.0),
        ];
        assert!(!fit(3, &pairs, None, 1).unwrap().converged);
        assert!(fit(3, &pairs, None, MAX_STEPS).unwrap().converged);
    }

    #[test]
    fn no_fit_without_strong_connection() {
        // Model 0 never lost.
        assert_eq!(fit(2, &[pair(0, 1, 3.0, 0.0)], None, MAX_STEPS), None);
        // Two groups never compared.
        let apart = [pair(0, 1, 1.0, 1.0), pair(2, 3, 1.0, 1.0)];
        assert_eq!(fit(4, &apart, None, MAX_STEPS), None);
    }

    #[test]
    fn mirrored_cells_join_into_one_pair() {
        let cells = [((2, 0), [1.0, 2.0, 2.0]), ((0, 2), [4.0, 0.0, 0.0])];
        let (p, of_cell) = pairs(&cells);
        assert_eq!(p, vec![pair(0, 2, 7.0, 2.0)]);
        assert_eq!(of_cell, vec![0, 0]);
    }
}
