//! ULEB128 varints and zigzag integers, as Thrift's compact protocol, the RLE/bit-packed
//! hybrid's run headers and DELTA_BINARY_PACKED all write them.

/// Appends `v` as a ULEB128 varint: seven bits a byte, least significant first.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a ULEB128 varint a byte at a time from `next`: `Ok(None)` when it runs on past ten
/// bytes (more than a u64 holds), an error when `next` fails (the bytes end).
pub(crate) fn read_varint<E>(mut next: impl FnMut() -> Result<u8, E>) -> Result<Option<u64>, E> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = next()?;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// `v` zigzag-encoded: small magnitudes, negative or not, become small unsigned numbers.
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub(crate) fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Option<u64>, &'static str> {
        let mut it = bytes.iter().copied();
        read_varint(|| it.next().ok_or("end"))
    }

    #[test]
    fn varints_and_zigzag_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(read(&out), Ok(Some(v)), "{v}");
        }
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        for v in [0i64, -1, 1, -64, 63, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!((zigzag(0), zigzag(-1), zigzag(1), zigzag(-2)), (0, 1, 2, 3));
    }

    #[test]
    fn a_varint_cut_short_or_too_long_is_refused() {
        assert_eq!(read(&[0x80, 0x80]), Err("end"));
        assert_eq!(read(&[0xff; 11]), Ok(None));
    }
}
