use arrow::array::Float64Array;

/// Count, sum, mean and sum of squared deviations (M2), merged with Chan et al.'s parallel
/// update so that any split of the input gives the same figures up to rounding.
///
/// The mean is reported as `sum / n` (exact for 0/1 scores); the sample standard deviation as
/// `sqrt(M2 / (n - 1))`, null when `n < 2`. Null and NaN inputs are skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Moments {
    n: u64,
    sum: f64,
    mean: f64,
    m2: f64,
}

impl Moments {
    pub fn update(&mut self, values: &Float64Array) {
        let mut batch = Moments::default();
        let (mut n, mut sum) = (0u64, 0.0f64);
        for v in values.iter().flatten().filter(|v| !v.is_nan()) {
            n += 1;
            sum += v;
        }
        if n == 0 {
            return;
        }
        let mean = sum / n as f64;
        let m2: f64 = values
            .iter()
            .flatten()
            .filter(|v| !v.is_nan())
            .map(|v| (v - mean) * (v - mean))
            .sum();
        batch.n = n;
        batch.sum = sum;
        batch.mean = mean;
        batch.m2 = m2;
        self.merge(&batch);
    }

    pub fn merge(&mut self, other: &Moments) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = other.clone();
            return;
        }
        let n = self.n + other.n;
        let delta = other.mean - self.mean;
        let (na, nb) = (self.n as f64, other.n as f64);
        self.mean += delta * nb / n as f64;
        self.m2 += other.m2 + delta * delta * na * nb / n as f64;
        self.sum += other.sum;
        self.n = n;
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    /// `sum / n`, null for no values.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    /// Sample standard deviation (n − 1), null when n < 2.
    pub fn std_dev(&self) -> Option<f64> {
        (self.n > 1).then(|| (self.m2.max(0.0) / (self.n - 1) as f64).sqrt())
    }

    /// The sum of the values.
    pub fn sum(&self) -> f64 {
        self.sum
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
