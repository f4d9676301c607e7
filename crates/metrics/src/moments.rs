use arrow::array::{Array, BooleanArray, Float64Array};

/// Count, sum and sum of squares, each kept as a double-double (about 106 bits), so that
/// the figures do not depend on how the input was split into batches, row groups or files:
/// merging adds the sums, and 0/1 scores are summed exactly.
///
/// The mean is `sum / n`; the sample standard deviation `sqrt((Σx² − (Σx)²/n) / (n − 1))`,
/// evaluated in double-double arithmetic so the subtraction does not cancel; null when
/// `n < 2`. Null and NaN inputs are skipped.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Moments {
    n: u64,
    sum: Dd,
    sum_sq: Dd,
    /// Values other than 0 and 1 seen; the mean's interval is Wilson only when none was.
    non_binary: u64,
    /// Values left out: null and NaN ([`Moments::dropped`]).
    nulls: u64,
    nan: u64,
}

impl Moments {
    pub fn update(&mut self, values: &Float64Array) {
        self.nulls += values.null_count() as u64;
        // Scores are mostly 0/1: count those exactly, 64 rows at a time with masks and
        // popcounts (the loops vectorize), and keep double-double work for the rest.
        let v = values.values();
        let mut ones = 0u64;
        let mut zeros = 0u64;
        let mut fold = |chunk: &[f64], valid: u64, this: &mut Moments| {
            let (mut one, mut zero) = (0u64, 0u64);
            for (j, &x) in chunk.iter().enumerate() {
                one |= u64::from(x == 1.0) << j;
                zero |= u64::from(x == 0.0) << j;
            }
            ones += u64::from((one & valid).count_ones());
            zeros += u64::from((zero & valid).count_ones());
            let mut rest = valid & !(one | zero);
            while rest != 0 {
                let x = chunk[rest.trailing_zeros() as usize];
                match x.is_nan() {
                    false => this.add_general(x),
                    true => this.nan += 1,
                }
                rest &= rest - 1;
            }
        };
        match values.nulls().filter(|n| n.null_count() > 0) {
            None => {
                let mut chunks = v.chunks_exact(64);
                for c in &mut chunks {
                    fold(c, u64::MAX, self);
                }
                let rest = chunks.remainder();
                if !rest.is_empty() {
                    fold(rest, u64::MAX >> (64 - rest.len()), self);
                }
            }
            Some(nulls) => {
                let bits = nulls.inner().bit_chunks();
                let mut chunks = v.chunks_exact(64);
                for (c, valid) in (&mut chunks).zip(bits.iter()) {
                    fold(c, valid, self);
                }
                let rest = chunks.remainder();
                if !rest.is_empty() {
                    fold(rest, bits.remainder_bits(), self);
                }
            }
        }
        self.n += ones + zeros;
        self.sum = self.sum.add_f64(ones as f64);
        self.sum_sq = self.sum_sq.add_f64(ones as f64);
    }

    /// Folds 0/1 scores given as a pass mask (true = 1.0): counted with popcounts, the same
    /// figures as [`Moments::update`] over the Float64 scores. Null rows are skipped.
    pub fn update_mask(&mut self, mask: &BooleanArray) {
        self.nulls += mask.null_count() as u64;
        let (n, ones) = match mask.nulls().filter(|n| n.null_count() > 0) {
            None => (mask.len(), mask.values().count_set_bits()),
            Some(nulls) => (
                nulls.len() - nulls.null_count(),
                (mask.values() & nulls.inner()).count_set_bits(),
            ),
        };
        self.n += n as u64;
        self.sum = self.sum.add_f64(ones as f64);
        self.sum_sq = self.sum_sq.add_f64(ones as f64);
    }

    /// Folds a batch of a numeric metric's field: a Boolean input is a pass mask of 0/1
    /// scores (true = 1.0), counted with popcounts ([`Moments::update_mask`]); other numbers
    /// are read as Float64.
    pub fn update_values(
        &mut self,
        values: &dyn arrow::array::Array,
    ) -> Result<(), crate::MetricError> {
        use arrow::array::AsArray;
        match values.as_boolean_opt() {
            Some(mask) => self.update_mask(mask),
            None => self.update(&crate::numbers(values)?),
        }
        Ok(())
    }

    fn add_general(&mut self, v: f64) {
        self.n += 1;
        self.non_binary += 1;
        self.sum = self.sum.add_f64(v);
        self.sum_sq = self.sum_sq.add(Dd::product(v, v));
    }

    /// The moments of `count` copies of each `value` (counts of a few distinct scores, such
    /// as a win rate's 1, 0.5 and 0), exact while the sums fit a double-double.
    pub fn of_counts(values: &[(f64, u64)]) -> Moments {
        let mut m = Moments::default();
        for &(v, count) in values {
            if count == 0 {
                continue;
            }
            let c = count as f64;
            m.n += count;
            if v != 0.0 && v != 1.0 {
                m.non_binary += count;
            }
            m.sum = m.sum.add(Dd::product(v, c));
            m.sum_sq = m.sum_sq.add(Dd::product(v * v, c));
        }
        m
    }

    pub fn merge(&mut self, other: &Moments) {
        self.n += other.n;
        self.non_binary += other.non_binary;
        self.nulls += other.nulls;
        self.nan += other.nan;
        self.sum = self.sum.add(other.sum);
        self.sum_sq = self.sum_sq.add(other.sum_sq);
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    /// The values left out (null, NaN), and the warning they give with `n`.
    pub fn dropped(&self) -> Option<String> {
        dropped_warning(self.n, self.nulls, self.nan)
    }

    /// `sum / n`, null for no values.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum.div_f64(self.n as f64).value())
    }

    /// Sample standard deviation (n − 1), null when n < 2.
    pub fn std_dev(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let n = self.n as f64;
        let centered = self.sum_sq.sub(self.sum.mul(self.sum).div_f64(n));
        Some((centered.value().max(0.0) / (n - 1.0)).sqrt())
    }

    /// Whether every value seen was 0 or 1.
    pub fn all_binary(&self) -> bool {
        self.non_binary == 0
    }

    /// The sum of the values.
    pub fn sum(&self) -> f64 {
        self.sum.value()
    }

    /// The mean's figures: `value`, `stderr`, and an interval at `confidence` (Wilson's when
    /// every value is 0 or 1, Student's t otherwise) as `ci_low`, `ci_high`.
    pub fn mean_figures(&self, confidence: f64) -> Vec<crate::Figure> {
        use crate::{intervals, Figure};
        let n = self.n();
        let mean = self.mean();
        let stderr = self.std_dev().map(|s| s / (n as f64).sqrt());
        let ci = match (mean, self.all_binary()) {
            (Some(_), true) => intervals::wilson(self.sum(), n as f64, confidence),
            (Some(mu), false) => stderr.and_then(|se| intervals::student_t(mu, se, n, confidence)),
            (None, _) => None,
        };
        vec![
            Figure::new("value", None, mean, n),
            Figure::new("stderr", None, stderr, n),
            Figure::new("ci_low", None, ci.map(|c| c.0), n),
            Figure::new("ci_high", None, ci.map(|c| c.1), n),
        ]
    }
}

/// A double-double number `hi + lo` (Dekker / Knuth error-free transformations).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Dd {
    hi: f64,
    lo: f64,
}

impl Dd {
    fn two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        let bb = s - a;
        Dd {
            hi: s,
            lo: (a - (s - bb)) + (b - bb),
        }
    }

    fn quick(hi: f64, lo: f64) -> Dd {
        let s = hi + lo;
        Dd {
            hi: s,
            lo: lo - (s - hi),
        }
    }

    pub(crate) fn product(a: f64, b: f64) -> Dd {
        let p = a * b;
        Dd {
            hi: p,
            lo: a.mul_add(b, -p),
        }
    }

    pub(crate) fn add_f64(self, b: f64) -> Dd {
        let s = Dd::two_sum(self.hi, b);
        Dd::quick(s.hi, s.lo + self.lo)
    }

    pub(crate) fn add(self, b: Dd) -> Dd {
        let s = Dd::two_sum(self.hi, b.hi);
        let t = Dd::two_sum(self.lo, b.lo);
        let s = Dd::quick(s.hi, s.lo + t.hi);
        Dd::quick(s.hi, s.lo + t.lo)
    }

    pub(crate) fn sub(self, b: Dd) -> Dd {
        self.add(Dd {
            hi: -b.hi,
            lo: -b.lo,
        })
    }

    pub(crate) fn mul(self, b: Dd) -> Dd {
        let p = Dd::product(self.hi, b.hi);
        Dd::quick(p.hi, p.lo + (self.hi * b.lo + self.lo * b.hi))
    }

    pub(crate) fn div_f64(self, b: f64) -> Dd {
        let q1 = self.hi / b;
        let p = Dd::product(q1, b);
        let r = (self.hi - p.hi - p.lo + self.lo) / b;
        Dd::quick(q1, r)
    }

    /// `self` times `factor`, exact for a power of two (short of underflow).
    pub(crate) fn scaled(self, factor: f64) -> Dd {
        Dd {
            hi: self.hi * factor,
            lo: self.lo * factor,
        }
    }

    pub(crate) fn value(self) -> f64 {
        self.hi + self.lo
    }
}

/// The smallest or largest value seen. Null and NaN inputs are skipped.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Extremum {
    largest: bool,
    n: u64,
    value: Option<f64>,
    nulls: u64,
    nan: u64,
}

impl Extremum {
    pub fn min() -> Self {
        Extremum {
            largest: false,
            n: 0,
            value: None,
            nulls: 0,
            nan: 0,
        }
    }

    pub fn max() -> Self {
        Extremum {
            largest: true,
            ..Extremum::min()
        }
    }

    pub fn update(&mut self, values: &Float64Array) {
        self.nulls += values.null_count() as u64;
        for v in values.iter().flatten() {
            if v.is_nan() {
                self.nan += 1;
                continue;
            }
            self.n += 1;
            self.fold(v);
        }
    }

    fn fold(&mut self, v: f64) {
        self.value = Some(match self.value {
            None => v,
            Some(cur) if self.largest => cur.max(v),
            Some(cur) => cur.min(v),
        });
    }

    pub fn merge(&mut self, other: &Extremum) {
        self.n += other.n;
        self.nulls += other.nulls;
        self.nan += other.nan;
        if let Some(v) = other.value {
            self.fold(v);
        }
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    /// The warning of the values left out (null, NaN).
    pub fn dropped(&self) -> Option<String> {
        dropped_warning(self.n, self.nulls, self.nan)
    }

    /// Whether it keeps the largest value (`max`) rather than the smallest (`min`).
    pub fn largest(&self) -> bool {
        self.largest
    }

    pub fn value(&self) -> Option<f64> {
        self.value
    }
}

/// The warning of a numeric state that kept `n` values and left out `nulls` and `nan`.
fn dropped_warning(n: u64, nulls: u64, nan: u64) -> Option<String> {
    let mut d = crate::dropped::Dropped::default();
    d.add(crate::dropped::NULL, nulls);
    d.add(crate::dropped::NAN, nan);
    d.warning(n + nulls + nan, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 64-row masked count gives the per-value rule: 0/1 counted exactly, other values
    /// (−0.0 counts as 0) summed, NaN and null skipped; across chunk edges, with and without
    /// nulls, and on sliced arrays whose null bitmap does not start at bit 0.
    #[test]
    fn masked_counts_follow_the_per_value_rule() {
        let values: Vec<Option<f64>> = (0..200)
            .map(|i| match i % 11 {
                0 => None,
                1 | 4 | 7 => Some(1.0),
                2 | 5 => Some(0.0),
                3 => Some(0.25),
                6 => Some(f64::NAN),
                8 => Some(-0.0),
                9 => Some(2.0),
                _ => Some(0.0),
            })
            .collect();
        for (from, to) in [(0, 200), (3, 200), (0, 64), (5, 70), (7, 7), (1, 130)] {
            for with_nulls in [true, false] {
                let part: Vec<Option<f64>> = values[from..to]
                    .iter()
                    .map(|v| {
                        if with_nulls {
                            *v
                        } else {
                            Some(v.unwrap_or(1.0))
                        }
                    })
                    .collect();
                let whole = Float64Array::from(values.clone());
                let array = if with_nulls {
                    whole.slice(from, to - from)
                } else {
                    Float64Array::from(part.clone())
                };
                let mut m = Moments::default();
                m.update(&array);
                let kept: Vec<f64> = part
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|v| !v.is_nan())
                    .collect();
                let odd = kept.iter().filter(|v| **v != 0.0 && **v != 1.0).count() as u64;
                assert_eq!(m.n(), kept.len() as u64, "{from}..{to} {with_nulls}");
                assert_eq!(m.sum(), kept.iter().sum::<f64>(), "{from}..{to}");
                assert_eq!(m.non_binary, odd, "{from}..{to}");
                assert_eq!(m.all_binary(), odd == 0);
            }
        }
    }

    /// A pass mask folds to the same state as its 0.0/1.0 scores, with nulls skipped, on
    /// sliced arrays too.
    #[test]
    fn masks_fold_like_their_scores() {
        let bits: Vec<Option<bool>> = (0..150)
            .map(|i| match i % 7 {
                0 => None,
                1 | 3 | 4 => Some(true),
                _ => Some(false),
            })
            .collect();
        let whole = BooleanArray::from(bits.clone());
        for (from, to) in [(0, 150), (3, 150), (0, 64), (5, 70), (9, 9)] {
            let mask = whole.slice(from, to - from);
            let scores: Float64Array = bits[from..to]
                .iter()
                .map(|b| b.map(|b| f64::from(u8::from(b))))
                .collect();
            let (mut a, mut b) = (Moments::default(), Moments::default());
            a.update_mask(&mask);
            b.update(&scores);
            assert_eq!(a, b, "{from}..{to}");
            let ones = bits[from..to].iter().filter(|b| **b == Some(true)).count();
            assert_eq!(a.sum(), ones as f64, "{from}..{to}");
            let valid = bits[from..to].iter().filter(|b| b.is_some()).count();
            assert_eq!(a.n(), valid as u64);
            let no_nulls = BooleanArray::from(
                bits[from..to]
                    .iter()
                    .map(|b| b.unwrap_or(true))
                    .collect::<Vec<_>>(),
            );
            let mut c = Moments::default();
            c.update_mask(&no_nulls);
            assert_eq!(c.n(), (to - from) as u64);
            assert_eq!(c.sum(), (ones + (to - from - valid)) as f64);
        }
    }
}
