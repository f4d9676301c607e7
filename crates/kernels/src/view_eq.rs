//! Byte-exact equality of two Utf8View columns, row by row, decided from the 16-byte views
//! alone for almost every row.
//!
//! arrow's `eq` makes the same tests (length, prefix, inlined bytes), but as a chain of
//! branches on each row; on export-shaped data (a third of rows equal, short answers beside
//! long outputs) those branches are unpredictable and cost more than the comparison. Here the
//! verdict from the views is computed without branches, and only a row whose views cannot
//! decide (the same length over 12 bytes and the same 4-byte prefix) reads its bytes.

use arrow::array::{Array, StringViewArray};
use arrow::buffer::{BooleanBuffer, Buffer};
use evalscore_text::pack_bytes;

/// Whether each row of `l` equals the same row of `r`, byte for byte; a null on either side
/// is false. The arrays have the same length.
pub(crate) fn views_eq(l: &StringViewArray, r: &StringViewArray) -> BooleanBuffer {
    let (lv, rv) = (l.views(), r.views());
    let (lb, rb) = (l.data_buffers(), r.data_buffers());
    let n = lv.len().min(rv.len());
    // Per 64 rows, one pass over the views: `same`, the rows they prove equal (strings up to
    // 12 bytes, whose views hold every byte, zero-padded), and `undecided`, the longer ones
    // of one length and first four bytes. A longer string's view points into its own
    // array's buffers, so equal views of two arrays say nothing of its bytes. Whether a row
    // is undecided is unpredictable on export-shaped data (a branch on it mispredicts), so
    // it is marked here and the bytes are compared after the pass.
    let words = n.div_ceil(64);
    let (mut same, mut undecided) = (Vec::with_capacity(words), Vec::with_capacity(words));
    for (lc, rc) in lv[..n].chunks(64).zip(rv[..n].chunks(64)) {
        let (mut s, mut u) = ([0u8; 64], [0u8; 64]);
        for (j, (&a, &b)) in lc.iter().zip(rc).enumerate() {
            let short = a as u32 <= 12;
            s[j] = u8::from((a == b) & short);
            u[j] = u8::from((a as u64 == b as u64) & !short);
        }
        same.push(pack_bytes(&s));
        undecided.push(pack_bytes(&u));
    }
    for (w, mut u) in undecided.into_iter().enumerate() {
        while u != 0 {
            let i = w * 64 + u.trailing_zeros() as usize;
            same[w] |= u64::from(long_eq(lb, rb, lv[i], rv[i])) << (i % 64);
            u &= u - 1;
        }
    }
    let values = BooleanBuffer::new(Buffer::from_vec(same), 0, n);
    match (l.nulls(), r.nulls()) {
        (None, None) => values,
        (Some(n), None) | (None, Some(n)) => &values & n.inner(),
        (Some(x), Some(y)) => &(&values & x.inner()) & y.inner(),
    }
}

/// Two strings longer than 12 bytes, of one length: their bytes compared.
fn long_eq(lb: &[Buffer], rb: &[Buffer], a: u128, b: u128) -> bool {
    bytes_of(lb, a) == bytes_of(rb, b)
}

fn bytes_of(buffers: &[Buffer], view: u128) -> &[u8] {
    let len = view as u32 as usize;
    let index = (view >> 64) as u32 as usize;
    let offset = (view >> 96) as u32 as usize;
    buffers
        .get(index)
        .and_then(|b| b.as_slice().get(offset..offset + len))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::BooleanArray;

    fn both_ways(l: &StringViewArray, r: &StringViewArray) {
        let ours = views_eq(l, r);
        let arrow = arrow::compute::kernels::cmp::eq(l, r).unwrap();
        let want = crate::pass_bits(&arrow);
        assert_eq!(ours, want, "{l:?} {r:?}");
        let back = views_eq(r, l);
        assert_eq!(back, want);
        assert_eq!(BooleanArray::new(ours, None).len(), l.len());
    }

    #[test]
    fn agrees_with_arrow_on_every_kind_of_pair() {
        let texts: Vec<Option<&str>> = vec![
            None,
            Some(""),
            Some("B"),
            Some("b"),
            Some("yes"),
            Some("twelve bytes"),
            Some("twelve bytez"),
            Some("thirteen byte"),
            Some("thirteen bytf"),
            Some("The answer is B"),
            Some("The answer is C"),
            Some("The answer is B, because the options say so."),
            Some("São Paulo"),
            Some("x = 4"),
        ];
        let mut l = Vec::new();
        let mut r = Vec::new();
        for a in &texts {
            for b in &texts {
                l.push(*a);
                r.push(*b);
            }
        }
        // The same texts in another order: long strings at other offsets on each side.
        let left = StringViewArray::from(l);
        let right = StringViewArray::from(r);
        both_ways(&left, &right);
        // Slices: views whose rows start mid-array.
        let (ls, rs) = (left.slice(7, 100), right.slice(7, 100));
        both_ways(&ls, &rs);
        // One long string on each side, each at offset 0 of its array's first buffer: the
        // views are equal bit for bit, the bytes are not.
        let (l, r) = (
            StringViewArray::from(vec!["thirteen byte"]),
            StringViewArray::from(vec!["thirteen bytf"]),
        );
        assert_eq!(l.views(), r.views());
        both_ways(&l, &r);
    }
}
