//! Parquet's RLE / bit-packed hybrid encoding, which holds a page's repetition and definition
//! levels and its dictionary indices: runs of one repeated value, or groups of eight values
//! packed at a fixed bit width, each run behind a ULEB128 header.

use crate::varint::{put_varint, read_varint};
use arrow::buffer::BooleanBuffer;
use bytes::Bytes;

/// What values are decoded into: `u32` for dictionary indices, `u8` for levels (a list
/// column's levels are at most 3, so two bits wide).
pub(crate) trait Value: Copy {
    fn of(v: u32) -> Self;
}

impl Value for u32 {
    fn of(v: u32) -> Self {
        v
    }
}

impl Value for u8 {
    fn of(v: u32) -> Self {
        v as u8
    }
}

/// A decoder of one hybrid-encoded stream of `width`-bit values.
pub(crate) struct Hybrid {
    data: Bytes,
    /// The next run header's byte.
    pos: usize,
    width: u32,
    mask: u32,
    run: Run,
}

enum Run {
    /// `left` more copies of `value`.
    Repeated { value: u32, left: usize },
    /// `left` more packed values, the next at bit `bit` of `data`.
    Packed { bit: usize, left: usize },
}

impl Hybrid {
    /// A decoder of `width`-bit values (at most 32) from `data`.
    pub(crate) fn new(data: Bytes, width: u32) -> Result<Self, String> {
        if width > 32 {
            return Err(format!(
                "a bit width of {width}, where at most 32 is allowed"
            ));
        }
        let mask = u32::MAX.checked_shr(32 - width).unwrap_or(0);
        let mask = if width == 0 { 0 } else { mask };
        Ok(Self {
            data,
            pos: 0,
            width,
            mask,
            run: Run::Repeated { value: 0, left: 0 },
        })
    }

    /// Fills `out` with the next values; an error when the stream ends first.
    pub(crate) fn fill<T: Value>(&mut self, out: &mut [T]) -> Result<(), String> {
        let mut i = 0;
        while i < out.len() {
            match &mut self.run {
                Run::Repeated { value, left } if *left > 0 => {
                    let n = (*left).min(out.len() - i);
                    out[i..i + n].fill(T::of(*value));
                    *left -= n;
                    i += n;
                }
                Run::Packed { bit, left } if *left > 0 => {
                    let n = (*left).min(out.len() - i);
                    let (width, mask) = (self.width as usize, self.mask);
                    let mut at = *bit;
                    let mut j = i;
                    if width <= 7 {
                        // Eight values from one 64-bit load: after a shift of up to 7 bits,
                        // 57 are left, and eight values take at most 56.
                        while j + 8 <= i + n {
                            let Some(b) = self.data.get(at / 8..at / 8 + 8) else {
                                break;
                            };
                            let word = u64::from_le_bytes(b.try_into().unwrap_or_default());
                            let word = word >> (at % 8);
                            for (v, o) in out[j..j + 8].iter_mut().enumerate() {
                                *o = T::of((word >> (v * width)) as u32 & mask);
                            }
                            at += 8 * width;
                            j += 8;
                        }
                    }
                    for o in &mut out[j..i + n] {
                        *o = T::of(unpack(&self.data, at) & mask);
                        at += width;
                    }
                    *bit = at;
                    *left -= n;
                    i += n;
                }
                _ => self.next_run()?,
            }
        }
        Ok(())
    }

    /// Whether every byte of the stream has been read: the runs started so far reach its end.
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn next_run(&mut self) -> Result<(), String> {
        let header = self.varint()?;
        let count = usize::try_from(header >> 1).map_err(|_| "a run too long".to_owned())?;
        if header & 1 == 1 {
            // `count` groups of eight values, `width` bytes per group; a stream may end inside
            // its last group, whose missing values are padding.
            let bytes = count.saturating_mul(self.width as usize);
            let have = (self.data.len() - self.pos).min(bytes);
            let left = match self.width {
                0 => count.saturating_mul(8),
                w => count.saturating_mul(8).min(have * 8 / w as usize),
            };
            self.run = Run::Packed {
                bit: self.pos * 8,
                left,
            };
            self.pos += have;
        } else {
            let bytes = self.width.div_ceil(8) as usize;
            let v = self
                .data
                .get(self.pos..self.pos + bytes)
                .ok_or_else(|| "a run's value past the end of its data".to_owned())?;
            let mut le = [0u8; 4];
            le[..bytes].copy_from_slice(v);
            self.pos += bytes;
            let value = u32::from_le_bytes(le);
            // Masking it would read damage as another value (a level of 10 as 2).
            if value > self.mask {
                return Err(format!(
                    "a run of the value {value}, wider than its {} bits",
                    self.width
                ));
            }
            self.run = Run::Repeated { value, left: count };
        }
        Ok(())
    }

    fn varint(&mut self) -> Result<u64, String> {
        let (data, pos) = (&self.data, &mut self.pos);
        let next = || {
            let b = data.get(*pos).copied();
            *pos += 1;
            b.ok_or_else(|| "fewer values than the page holds".to_owned())
        };
        read_varint(next)?.ok_or_else(|| "a run header longer than ten bytes".to_owned())
    }
}

/// The 32 bits of `data` from bit `bit` on (zeros past its end).
fn unpack(data: &[u8], bit: usize) -> u32 {
    let byte = bit / 8;
    let word = match data.get(byte..byte + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().unwrap_or_default()),
        None => {
            let mut w = [0u8; 8];
            let tail = data.get(byte..).unwrap_or_default();
            w[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(w)
        }
    };
    (word >> (bit % 8)) as u32
}

/// Bits needed for values up to `max`.
pub(crate) fn width_of(max: u32) -> u32 {
    32 - max.leading_zeros()
}

/// Parquet's own writers cut bit-packed runs at 63 groups of 8 values, so the run header is
/// one byte; readers are written against that, so this writer does the same.
const MAX_GROUPS_PER_RUN: usize = 63;

/// Writes `bits` in Parquet's RLE/bit-packed hybrid encoding at bit width 1: one RLE run of
/// `value` when `constant`, else bit-packed runs that are slices of the bitmap.
pub(crate) fn put_bits(out: &mut Vec<u8>, bits: &BooleanBuffer, constant: bool, value: bool) {
    let n = bits.len();
    if n == 0 {
        return;
    }
    if constant {
        put_varint(out, (n as u64) << 1);
        out.push(u8::from(value));
        return;
    }
    // A fresh buffer has offset 0; a sliced one is repacked first.
    let packed;
    let bytes = if bits.offset() == 0 {
        &bits.values()[..n.div_ceil(8)]
    } else {
        packed = bits.sliced();
        &packed.as_slice()[..n.div_ceil(8)]
    };
    for run in bytes.chunks(MAX_GROUPS_PER_RUN) {
        out.push(((run.len() as u8) << 1) | 1);
        out.extend_from_slice(run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(data: &[u8], width: u32, n: usize) -> Result<Vec<u32>, String> {
        let mut h = Hybrid::new(Bytes::copy_from_slice(data), width)?;
        let mut out = vec![0u32; n];
        h.fill(&mut out)?;
        Ok(out)
    }

    #[test]
    fn repeated_and_packed_runs() {
        // The Parquet spec's example: a bit-packed run of 0..=7 at width 3 (one group), then
        // a run of five 4s.
        let data = [0b0000_0011, 0b1000_1000, 0b1100_0110, 0b1111_1010, 10, 4];
        assert_eq!(
            decode(&data, 3, 13).unwrap(),
            [0, 1, 2, 3, 4, 5, 6, 7, 4, 4, 4, 4, 4]
        );
        // Asking for fewer than a run holds, then for the rest, in two calls.
        let mut h = Hybrid::new(Bytes::copy_from_slice(&data), 3).unwrap();
        let (mut a, mut b) = ([0u32; 5], [0u32; 8]);
        h.fill(&mut a).unwrap();
        h.fill(&mut b).unwrap();
        assert_eq!((a, b), ([0, 1, 2, 3, 4], [5, 6, 7, 4, 4, 4, 4, 4]));
    }

    #[test]
    fn wide_values_and_width_zero() {
        // A repeated run of 300 at width 9 (two value bytes), and of zeros at width 0.
        assert_eq!(decode(&[6, 0x2C, 0x01], 9, 3).unwrap(), [300, 300, 300]);
        assert_eq!(decode(&[8], 0, 4).unwrap(), [0, 0, 0, 0]);
        // Width 32: one packed group of eight values.
        let mut data = vec![3];
        for v in [1u32, u32::MAX, 7, 0, 9, 10, 11, 12] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(
            decode(&data, 32, 8).unwrap(),
            [1, u32::MAX, 7, 0, 9, 10, 11, 12]
        );
    }

    /// Packs `values` at `width` bits as one bit-packed run (the reference for the decoder).
    fn packed(values: &[u32], width: u32) -> Vec<u8> {
        let groups = values.len().div_ceil(8);
        let mut out = vec![((groups as u8) << 1) | 1];
        let mut bits = vec![0u8; groups * width as usize];
        for (i, &v) in values.iter().enumerate() {
            for b in 0..width as usize {
                if v >> b & 1 == 1 {
                    let at = i * width as usize + b;
                    bits[at / 8] |= 1 << (at % 8);
                }
            }
        }
        out.extend_from_slice(&bits);
        out
    }

    /// Every width, read in pieces of every length from 1 to 11 (so that reads start at every
    /// bit offset, eight at a time and one at a time), gives back the packed values.
    #[test]
    fn packed_runs_at_every_width_and_offset() {
        for width in 0..=32u32 {
            let mask = if width == 0 {
                0
            } else {
                u32::MAX >> (32 - width)
            };
            let values: Vec<u32> = (0..48u32)
                .map(|i| i.wrapping_mul(2_654_435_761) & mask)
                .collect();
            let data = Bytes::from(packed(&values, width));
            for piece in 1..=11 {
                let mut h = Hybrid::new(data.clone(), width).unwrap();
                let mut got = Vec::new();
                while got.len() < values.len() {
                    let mut out = vec![0u32; piece.min(values.len() - got.len())];
                    h.fill(&mut out).unwrap();
                    got.extend(out);
                }
                assert_eq!(got, values, "width {width}, pieces of {piece}");
            }
        }
    }

    #[test]
    fn a_stream_that_ends_early_is_an_error() {
        assert_eq!(
            decode(&[10, 4], 3, 6).unwrap_err(),
            "fewer values than the page holds"
        );
        assert_eq!(
            decode(&[6], 9, 1).unwrap_err(),
            "a run's value past the end of its data"
        );
        // A packed run cut short gives only the values its bytes hold.
        assert_eq!(
            decode(&[0b0000_0011, 0xFF], 3, 3).unwrap_err(),
            "fewer values than the page holds"
        );
        assert!(Hybrid::new(Bytes::new(), 33).is_err());
        // A repeated value wider than the bit width is damage, not the value masked.
        assert_eq!(
            decode(&[8, 10], 2, 4).unwrap_err(),
            "a run of the value 10, wider than its 2 bits"
        );
        assert_eq!(decode(&[8, 3], 2, 4).unwrap(), [3, 3, 3, 3]);
        assert_eq!(width_of(0), 0);
        assert_eq!(width_of(1), 1);
        assert_eq!(width_of(3), 2);
        assert_eq!(width_of(4), 3);
    }

    /// What [`put_bits`] writes, this decoder reads back: constant runs and bit-packed runs
    /// (more than 63 groups, so several runs), from a bitmap sliced off a byte boundary.
    #[test]
    fn put_bits_reads_back() {
        let bits: Vec<bool> = (0..1_203).map(|i| i % 3 == 0 || i % 7 == 0).collect();
        let whole = BooleanBuffer::from(bits.clone());
        let sliced = whole.slice(5, 1_100);
        for (buffer, want) in [(&whole, &bits[..]), (&sliced, &bits[5..1_105])] {
            let mut out = Vec::new();
            put_bits(&mut out, buffer, false, false);
            let want: Vec<u32> = want.iter().map(|&b| u32::from(b)).collect();
            assert_eq!(decode(&out, 1, want.len()).unwrap(), want);
        }
        let mut out = Vec::new();
        put_bits(&mut out, &BooleanBuffer::new_set(300), true, true);
        assert_eq!(out, [0xd8, 0x04, 1]);
        assert_eq!(decode(&out, 1, 300).unwrap(), vec![1; 300]);
    }
}
