use arrow::array::{Array, Float64Array};

/// Count, sum and sum of squares, each kept as a double-double (about 106 bits), so that
/// the figures do not depend on how the input was split into batches, row groups or files:
/// merging adds the sums, and 0/1 scores are summed exactly.
///
/// The mean is `sum / n`; the sample standard deviation `sqrt((Σx² − (Σx)²/n) / (n − 1))`,
/// evaluated in double-double arithmetic so the subtraction does not cancel; null when
/// `n < 2`. Null and NaN inputs are skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Moments {
    n: u64,
    sum: Dd,
    sum_sq: Dd,
    /// Values other than 0 and 1 seen; the mean's interval is Wilson only when none was.
    non_binary: u64,
}

impl Moments {
    pub fn update(&mut self, values: &Float64Array) {
        // Scores are mostly 0/1: count those exactly and keep double-double work for the rest.
        let mut ones = 0u64;
        let mut zeros = 0u64;
        let mut add = |v: f64, this: &mut Moments| {
            if v == 1.0 {
                ones += 1;
            } else if v == 0.0 {
                zeros += 1;
            } else if !v.is_nan() {
                this.add_general(v);
            }
        };
        match values.nulls() {
            None => values.values().iter().for_each(|&v| add(v, self)),
            Some(_) => values.iter().flatten().for_each(|v| add(v, self)),
        }
        self.n += ones + zeros;
        self.sum = self.sum.add_f64(ones as f64);
        self.sum_sq = self.sum_sq.add_f64(ones as f64);
    }

    fn add_general(&mut self, v: f64) {
        self.n += 1;
        self.non_binary += 1;
        self.sum = self.sum.add_f64(v);
        self.sum_sq = self.sum_sq.add(Dd::product(v, v));
    }

    pub fn merge(&mut self, other: &Moments) {
        self.n += other.n;
        self.non_binary += other.non_binary;
        self.sum = self.sum.add(other.sum);
        self.sum_sq = self.sum_sq.add(other.sum_sq);
    }

    pub fn n(&self) -> u64 {
        self.n
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
}

/// A double-double number `hi + lo` (Dekker / Knuth error-free transformations).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Dd {
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

    fn product(a: f64, b: f64) -> Dd {
        let p = a * b;
        Dd {
            hi: p,
            lo: a.mul_add(b, -p),
        }
    }

    fn add_f64(self, b: f64) -> Dd {
        let s = Dd::two_sum(self.hi, b);
        Dd::quick(s.hi, s.lo + self.lo)
    }

    fn add(self, b: Dd) -> Dd {
        let s = Dd::two_sum(self.hi, b.hi);
        let t = Dd::two_sum(self.lo, b.lo);
        let s = Dd::quick(s.hi, s.lo + t.hi);
        Dd::quick(s.hi, s.lo + t.lo)
    }

    fn sub(self, b: Dd) -> Dd {
        self.add(Dd {
            hi: -b.hi,
            lo: -b.lo,
        })
    }

    fn mul(self, b: Dd) -> Dd {
        let p = Dd::product(self.hi, b.hi);
        Dd::quick(p.hi, p.lo + (self.hi * b.lo + self.lo * b.hi))
    }

    fn div_f64(self, b: f64) -> Dd {
        let q1 = self.hi / b;
        let p = Dd::product(q1, b);
        let r = (self.hi - p.hi - p.lo + self.lo) / b;
        Dd::quick(q1, r)
    }

    fn value(self) -> f64 {
        self.hi + self.lo
    }
}

/// The smallest or largest value seen. Null and NaN inputs are skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct Extremum {
    largest: bool,
    n: u64,
    value: Option<f64>,
}

impl Extremum {
    pub fn min() -> Self {
        Extremum {
            largest: false,
            n: 0,
            value: None,
        }
    }

    pub fn max() -> Self {
        Extremum {
            largest: true,
            ..Extremum::min()
        }
    }

    pub fn update(&mut self, values: &Float64Array) {
        for v in values.iter().flatten().filter(|v| !v.is_nan()) {
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
        if let Some(v) = other.value {
            self.fold(v);
        }
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    pub fn value(&self) -> Option<f64> {
        self.value
    }
}
