//! A column of `f64` kept in one byte per value when every value is a whole number from
//! -127 to 127 (bit for bit: not -0.0) or missing (NaN), as 0/1 scores and their
//! differences are; else in eight. What the bytes stand for are those very values, so
//! nothing computed from them changes.

/// The byte of a missing value.
const MISSING: i8 = i8::MIN;

/// A column of numbers.
#[derive(Debug)]
pub(crate) enum Packed {
    /// Each a whole number from -127 to 127, or [`MISSING`].
    Units(Vec<i8>),
    /// Each as it is (NaN for a missing value).
    Floats(Vec<f64>),
}

impl Packed {
    /// `d` in one byte per value when every value allows it.
    pub fn pack(d: Vec<f64>) -> Packed {
        let mut p = Packed::Units(Vec::with_capacity(d.len()));
        if p.extend(&d) {
            p
        } else {
            Packed::Floats(d)
        }
    }

    /// Appends `values`; bytes become floats at the first value a byte cannot hold. Whether
    /// the column is still in bytes.
    pub fn extend(&mut self, values: &[f64]) -> bool {
        if let Packed::Units(units) = self {
            let start = units.len();
            let mut fits = true;
            // Without branches: 0/1 scores and their differences come in no order.
            for x in values {
                let u = if x.is_nan() { MISSING } else { *x as i8 };
                fits &= x.is_nan() | ((u != MISSING) & (f64::from(u).to_bits() == x.to_bits()));
                units.push(u);
            }
            if fits {
                return true;
            }
            units.truncate(start);
            *self = Packed::Floats(units.iter().map(|u| Packed::unit(*u)).collect());
        }
        if let Packed::Floats(v) = self {
            v.extend_from_slice(values);
        }
        false
    }

    /// Appends `other`'s values.
    pub fn append(&mut self, other: &Packed) {
        match (&mut *self, other) {
            (Packed::Units(a), Packed::Units(b)) => a.extend_from_slice(b),
            (Packed::Floats(a), Packed::Units(b)) => a.extend(b.iter().map(|x| Packed::unit(*x))),
            (_, Packed::Floats(b)) => {
                self.extend(b);
            }
        }
    }

    /// The value a byte of [`Packed::Units`] stands for.
    #[inline]
    pub fn unit(x: i8) -> f64 {
        if x == MISSING {
            f64::NAN
        } else {
            f64::from(x)
        }
    }

    /// Calls `f` with each value's index and value, in order.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(usize, f64)) {
        match self {
            Packed::Units(v) => {
                for (i, x) in v.iter().enumerate() {
                    f(i, Packed::unit(*x));
                }
            }
            Packed::Floats(v) => {
                for (i, x) in v.iter().enumerate() {
                    f(i, *x);
                }
            }
        }
    }

    pub fn bytes(&self) -> usize {
        match self {
            Packed::Units(v) => v.len(),
            Packed::Floats(v) => v.len() * 8,
        }
    }
}
