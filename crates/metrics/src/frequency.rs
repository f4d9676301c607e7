use crate::{Figure, MetricError};
use arrow::array::{downcast_dictionary_array, Array, AsArray, PrimitiveArray};
use arrow::datatypes::{ArrowDictionaryKeyType, ArrowNativeType, DataType, Int8Type};
use std::collections::HashMap;

/// Count of each distinct value of a field.
///
/// Values arrive as their labels ([`crate::values`]: one text per value, `0` and `1` for
/// 0/1 scores). Null is counted as a
/// value of its own, reported with a null label after the others; `n` is every row seen, and
/// `proportion` is count / n. Labels are reported in byte order.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Frequency {
    n: u64,
    nulls: u64,
    #[serde(with = "crate::bytes::sorted_map")]
    counts: HashMap<String, u64>,
}

impl Frequency {
    pub fn update(&mut self, values: &dyn Array) -> Result<(), MetricError> {
        if let DataType::Dictionary(_, _) = values.data_type() {
            return self.update_dictionary(values);
        }
        let a = values;
        let text = evalscore_text::TextColumn::new(a, "labels")?;
        self.n += a.len() as u64;
        // Count borrowed strings first: one owned key per distinct value per batch. Fields
        // usually have a handful of values, so a short list scanned from the last hit beats
        // hashing every row; past 16 values it moves to a hash map.
        let mut few: Vec<(&str, u64)> = Vec::new();
        let mut local: HashMap<&str, u64> = HashMap::new();
        let mut last = 0usize;
        for r in 0..a.len() {
            let Some(s) = text.get(r) else {
                self.nulls += 1;
                continue;
            };
            if !local.is_empty() {
                *local.entry(s).or_default() += 1;
            } else if few.get(last).is_some_and(|e| e.0 == s) {
                few[last].1 += 1;
            } else if let Some(i) = few.iter().position(|e| e.0 == s) {
                few[i].1 += 1;
                last = i;
            } else if few.len() < 16 {
                few.push((s, 1));
                last = few.len() - 1;
            } else {
                local.extend(few.drain(..));
                *local.entry(s).or_default() += 1;
            }
        }
        local.extend(few);
        for (k, c) in local {
            match self.counts.get_mut(k) {
                Some(x) => *x += c,
                None => {
                    self.counts.insert(k.to_owned(), c);
                }
            }
        }
        Ok(())
    }

    /// Counts the keys of a dictionary array, then adds each used value once.
    fn update_dictionary(&mut self, values: &dyn Array) -> Result<(), MetricError> {
        let dict = values.as_any_dictionary();
        let words = dict.values();
        let words_col = crate::values::column(words)?;
        let mut counts = vec![0u64; words.len()];
        self.nulls += downcast_dictionary_array! {
            values => count_keys(values.keys(), &mut counts)?,
            t => return Err(MetricError::Invalid(format!("cannot count a {t} column"))),
        };
        self.n += values.len() as u64;
        for (k, c) in counts.into_iter().enumerate().filter(|(_, c)| *c > 0) {
            match words_col.get(k) {
                Some(w) => *self.counts.entry(w.to_owned()).or_default() += c,
                None => self.nulls += c,
            }
        }
        Ok(())
    }

    /// Distinct values counted (null aside).
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    pub fn merge(&mut self, other: &Frequency) {
        self.n += other.n;
        self.nulls += other.nulls;
        for (k, c) in &other.counts {
            *self.counts.entry(k.clone()).or_default() += c;
        }
    }

    pub fn figures(&self) -> Vec<Figure> {
        let mut labels: Vec<(&String, &u64)> = self.counts.iter().collect();
        labels.sort_unstable();
        let mut out = Vec::with_capacity(2 * labels.len() + 2);
        let total = self.n as f64;
        let mut push = |label: Option<String>, count: u64| {
            out.push(Figure::new(
                "count",
                label.clone(),
                Some(count as f64),
                self.n,
            ));
            out.push(Figure::new(
                "proportion",
                label,
                Some(count as f64 / total),
                self.n,
            ));
        };
        for (k, c) in labels {
            push(Some(k.clone()), *c);
        }
        if self.nulls > 0 {
            push(None, self.nulls);
        }
        out
    }
}

/// Counts each key of a dictionary into `counts` (indexed by key), over the keys' native
/// type: no per-row conversion to a `usize` array. Returns the number of null keys.
fn count_keys<K: ArrowDictionaryKeyType>(
    keys: &PrimitiveArray<K>,
    counts: &mut [u64],
) -> Result<u64, MetricError> {
    // A valid dictionary's keys index its values.
    let bump = |counts: &mut [u64], k: K::Native| match counts.get_mut(k.as_usize()) {
        Some(c) => {
            *c += 1;
            Ok(())
        }
        None => Err(MetricError::Invalid(
            "a dictionary key is out of range".to_owned(),
        )),
    };
    match keys.nulls().filter(|n| n.null_count() > 0) {
        None => {
            // Two-valued labels (`completion_validity`): keys 0 and 1, eight to a word.
            let int8 = (keys as &dyn std::any::Any).downcast_ref::<PrimitiveArray<Int8Type>>();
            if let (Some(k), true) = (int8, counts.len() >= 2) {
                if let Some(ones) = zero_one_count(k.values()) {
                    counts[1] += ones;
                    counts[0] += k.len() as u64 - ones;
                    return Ok(0);
                }
            }
            // Four counters per key, one per lane of four consecutive rows: a run of equal
            // keys (most rows `VALID`) would otherwise wait on each increment in turn.
            let mut lanes = [(); 4].map(|_| vec![0u64; counts.len()]);
            let mut quads = keys.values().chunks_exact(4);
            for quad in &mut quads {
                for (lane, &k) in lanes.iter_mut().zip(quad) {
                    bump(lane, k)?;
                }
            }
            for &k in quads.remainder() {
                bump(counts, k)?;
            }
            for lane in &lanes {
                for (c, l) in counts.iter_mut().zip(lane) {
                    *c += l;
                }
            }
            Ok(0)
        }
        Some(nulls) => {
            let mut null_keys = 0;
            for (&k, valid) in keys.values().iter().zip(nulls.iter()) {
                if valid {
                    bump(counts, k)?;
                } else {
                    null_keys += 1;
                }
            }
            Ok(null_keys)
        }
    }
}

/// The number of keys that are 1 when every key is 0 or 1 (`None` otherwise), eight keys to
/// a 64-bit word: a word of 0/1 bytes has no bit set above each byte's lowest, and one
/// multiplication sums its bytes into the top byte.
fn zero_one_count(keys: &[i8]) -> Option<u64> {
    const HIGH: u64 = 0xFEFE_FEFE_FEFE_FEFE;
    const SUM: u64 = 0x0101_0101_0101_0101;
    let (mut high, mut ones) = (0u64, 0u64);
    let mut eights = keys.chunks_exact(8);
    for e in &mut eights {
        let w = u64::from_le_bytes(std::array::from_fn(|i| e[i] as u8));
        high |= w & HIGH;
        ones += w.wrapping_mul(SUM) >> 56;
    }
    for &k in eights.remainder() {
        high |= u64::from(k as u8 & 0xFE);
        ones += u64::from(k as u8 & 1);
    }
    (high == 0).then_some(ones)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time count of 0/1 keys equals counting key by key, for keys of every
    /// length up to 100, and any other key (-1, 2, 127, -128) at any position sends the
    /// keys back to the key-by-key count.
    #[test]
    fn zero_one_keys_count_as_one_by_one() {
        for len in 0..100usize {
            let keys: Vec<i8> = (0..len).map(|i| ((i * 7 + len) % 3 == 0) as i8).collect();
            let ones = keys.iter().filter(|&&k| k == 1).count() as u64;
            assert_eq!(zero_one_count(&keys), Some(ones));
            let array = PrimitiveArray::<Int8Type>::from(keys.clone());
            let mut counts = vec![0u64; 2];
            assert_eq!(count_keys(&array, &mut counts).unwrap(), 0);
            assert_eq!(counts, [len as u64 - ones, ones]);
            for at in 0..len {
                for odd in [-1i8, 2, 127, -128] {
                    let mut bad = keys.clone();
                    bad[at] = odd;
                    assert_eq!(zero_one_count(&bad), None, "{bad:?}");
                }
            }
        }
        // Keys 0 and 1 over three labels: the third's count stays 0.
        let array = PrimitiveArray::<Int8Type>::from(vec![1i8, 0, 1, 1, 0, 1, 1, 1, 1]);
        let mut counts = vec![0u64; 3];
        count_keys(&array, &mut counts).unwrap();
        assert_eq!(counts, [2, 7, 0]);
        // A key past the labels is still an error.
        let mut counts = vec![0u64; 2];
        let array = PrimitiveArray::<Int8Type>::from(vec![0i8, 2]);
        assert!(count_keys(&array, &mut counts).is_err());
    }
}
