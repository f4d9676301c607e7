//! Centred co-moments of (x, y) pairs, the state of `pearson`: the count, both means, the sums
//! of squared deviations and the sum of cross products, each a double-double (about 106
//! bits), so no running sum cancels: a batch is centred on its own mean, and states merge by
//! Chan's update (`Δ = mean_b − mean_a`; the sums gain `Δx Δy n_a n_b / n`), which needs no
//! second pass and gives the same figures, to the last bits, however the rows were split.
//!
//! Each side is held divided by a power of two, the largest magnitude seen's, so values near
//! 1e300 neither overflow when squared nor lose their small neighbours to it; merging
//! rescales the state with the smaller power (exactly, powers of two). The smallest and
//! largest value of each side are kept too: a side is constant exactly when they are equal,
//! which rounding in its mean could hide. Rows with an infinite value are left out and
//! counted.

use crate::moments::Dd;
use arrow::array::{Array, Float64Array};

/// The co-moments of the pairs seen; see the module's overview.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CoMoments {
    n: u64,
    /// Per side, the power of two its values are held divided by.
    scale: [i32; 2],
    mean: [Dd; 2],
    /// Per side, the sum of squared deviations from its mean.
    squares: [Dd; 2],
    /// The sum of the products of the two sides' deviations.
    cross: Dd,
    /// Per side, the smallest and the largest value.
    low: [f64; 2],
    high: [f64; 2],
    /// Rows left out: for a null, a NaN, an infinite value on either side.
    left: [u64; 3],
}

/// The power of two above `|v|` (its exponent as `frexp` gives it), 0 for 0.
fn exponent(v: f64) -> i32 {
    if v == 0.0 {
        return 0;
    }
    // Subnormals count as the smallest normal's exponent; their ratio to it is what is lost.
    let biased = ((v.to_bits() >> 52) & 0x7ff) as i32;
    biased.max(1) - 1022
}

/// 2^k for `-1022 <= k <= 1023`.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `v` times 2^k for `k <= 0`, in steps that keep the factor a normal number.
fn times_pow2(mut v: Dd, mut k: i32) -> Dd {
    while k < -1000 {
        v = v.scaled(pow2(-1000));
        k += 1000;
    }
    v.scaled(pow2(k))
}

impl CoMoments {
    /// Folds the pairs of `x` and `y` where neither is null or NaN; a pair with an infinite
    /// value is counted as left out.
    pub fn update(&mut self, x: &Float64Array, y: &Float64Array) {
        let mut pairs = Vec::with_capacity(x.len().min(y.len()));
        for i in 0..x.len().min(y.len()) {
            if x.is_null(i) || y.is_null(i) {
                self.left[0] += 1;
                continue;
            }
            let (a, b) = (x.value(i), y.value(i));
            if a.is_nan() || b.is_nan() {
                self.left[1] += 1;
                continue;
            }
            if a.is_infinite() || b.is_infinite() {
                self.left[2] += 1;
                continue;
            }
            pairs.push([a, b]);
        }
        if !pairs.is_empty() {
            self.merge(&CoMoments::of(&pairs));
        }
    }

    /// The co-moments of finite pairs, centred on their own means.
    fn of(pairs: &[[f64; 2]]) -> CoMoments {
        let mut low = pairs[0];
        let mut high = pairs[0];
        let mut largest = [0.0f64; 2];
        for p in pairs {
            for s in 0..2 {
                low[s] = low[s].min(p[s]);
                high[s] = high[s].max(p[s]);
                largest[s] = largest[s].max(p[s].abs());
            }
        }
        // Held below 4 in magnitude (2 for all but the largest doubles).
        let scale = largest.map(|v| exponent(v).clamp(-1022, 1022));
        let factor = scale.map(|e| pow2(-e));
        let n = pairs.len() as f64;
        let held = |p: &[f64; 2], s: usize| p[s] * factor[s];
        let mut mean = [Dd::default(); 2];
        for p in pairs {
            for (s, m) in mean.iter_mut().enumerate() {
                *m = m.add_f64(held(p, s));
            }
        }
        let mean = mean.map(|m| m.div_f64(n));
        let (mut squares, mut cross) = ([Dd::default(); 2], Dd::default());
        for p in pairs {
            let d: [Dd; 2] =
                std::array::from_fn(|s| Dd::default().add_f64(held(p, s)).sub(mean[s]));
            squares[0] = squares[0].add(d[0].mul(d[0]));
            squares[1] = squares[1].add(d[1].mul(d[1]));
            cross = cross.add(d[0].mul(d[1]));
        }
        CoMoments {
            n: pairs.len() as u64,
            scale,
            mean,
            squares,
            cross,
            low,
            high,
            left: [0; 3],
        }
    }

    /// The same co-moments held at the powers `scale` (each at least this state's).
    fn rescaled(&self, scale: [i32; 2]) -> CoMoments {
        let k = [self.scale[0] - scale[0], self.scale[1] - scale[1]];
        CoMoments {
            scale,
            mean: [
                times_pow2(self.mean[0], k[0]),
                times_pow2(self.mean[1], k[1]),
            ],
            squares: [
                times_pow2(self.squares[0], 2 * k[0]),
                times_pow2(self.squares[1], 2 * k[1]),
            ],
            cross: times_pow2(self.cross, k[0] + k[1]),
            ..self.clone()
        }
    }

    /// Chan's update: the co-moments of both states' pairs.
    pub fn merge(&mut self, other: &CoMoments) {
        let left: [u64; 3] = std::array::from_fn(|k| self.left[k] + other.left[k]);
        if other.n == 0 {
            self.left = left;
            return;
        }
        if self.n == 0 {
            *self = CoMoments {
                left,
                ..other.clone()
            };
            return;
        }
        let scale = [
            self.scale[0].max(other.scale[0]),
            self.scale[1].max(other.scale[1]),
        ];
        let (a, b) = (self.rescaled(scale), other.rescaled(scale));
        let (na, nb) = (a.n as f64, b.n as f64);
        let n = na + nb;
        let delta = [b.mean[0].sub(a.mean[0]), b.mean[1].sub(a.mean[1])];
        let share = Dd::default().add_f64(nb).div_f64(n);
        let weight = Dd::product(na, nb).div_f64(n);
        *self = CoMoments {
            n: a.n + b.n,
            scale,
            mean: [
                a.mean[0].add(delta[0].mul(share)),
                a.mean[1].add(delta[1].mul(share)),
            ],
            squares: [
                a.squares[0]
                    .add(b.squares[0])
                    .add(delta[0].mul(delta[0]).mul(weight)),
                a.squares[1]
                    .add(b.squares[1])
                    .add(delta[1].mul(delta[1]).mul(weight)),
            ],
            cross: a.cross.add(b.cross).add(delta[0].mul(delta[1]).mul(weight)),
            low: [a.low[0].min(b.low[0]), a.low[1].min(b.low[1])],
            high: [a.high[0].max(b.high[0]), a.high[1].max(b.high[1])],
            left,
        };
    }

    /// The pairs folded (rows left out not counted).
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Rows left out for an infinite value.
    pub fn infinite(&self) -> u64 {
        self.left[2]
    }

    /// The rows left out, by reason.
    pub(crate) fn dropped(&self) -> crate::dropped::Dropped {
        let mut d = crate::dropped::Dropped::default();
        d.add(crate::dropped::NULL, self.left[0]);
        d.add(crate::dropped::NAN, self.left[1]);
        d.add("with an infinite value", self.left[2]);
        d
    }

    /// Pearson's correlation; null for fewer than two pairs or a constant side.
    pub fn pearson(&self) -> Option<f64> {
        if self.n < 2 || self.low[0] == self.high[0] || self.low[1] == self.high[1] {
            return None;
        }
        let (sxx, syy) = (self.squares[0].value(), self.squares[1].value());
        if sxx <= 0.0 || syy <= 0.0 {
            return None;
        }
        Some((self.cross.value() / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponents_and_powers_of_two() {
        assert_eq!(exponent(1.0), 1);
        assert_eq!(exponent(0.75), 0);
        assert_eq!(exponent(-4.0), 3);
        assert_eq!(exponent(f64::MAX), 1024);
        assert_eq!(exponent(5e-324), -1021);
        assert_eq!(pow2(-3), 0.125);
        assert_eq!(times_pow2(Dd::default().add_f64(3.0), -2000).value(), 0.0);
        assert_eq!(
            times_pow2(Dd::default().add_f64(f64::MAX), -1100).value(),
            f64::MAX / 2f64.powi(1023) / 2f64.powi(77)
        );
    }
}
