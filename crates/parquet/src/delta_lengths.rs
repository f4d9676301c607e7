//! The lengths of a delta-encoded string page (DELTA_BYTE_ARRAY, DELTA_LENGTH_BYTE_ARRAY)
//! decoded to check them before a decoder reads the page: parquet-rs reads a prefix longer
//! than the value before it as some other string (`B` became `zB`), where the C++ reader
//! refuses the page (`prefix length too large in DELTA_BYTE_ARRAY`); and a text column's
//! values checked to be UTF-8, which parquet-rs does not check of delta-encoded strings it
//! reads as views (invalid UTF-8 was scored and written into `scores.parquet`).

use crate::varint::{read_varint, unzigzag};

/// Checks the values of a page's `present` non-null values in `encoding`, from `data` (the
/// page's bytes after its levels), and when `text`, that each is UTF-8 (parquet-rs does not
/// check delta-encoded strings read as views); other encodings pass.
pub(crate) fn check_delta_strings(
    data: &[u8],
    present: usize,
    encoding: parquet::basic::Encoding,
    text: bool,
) -> Result<(), String> {
    use parquet::basic::Encoding;
    match encoding {
        Encoding::DELTA_LENGTH_BYTE_ARRAY => {
            let (lengths, end) = deltas(data, present, "value lengths")?;
            bytes_for(&lengths, data.len() - end)?;
            if text {
                let mut at = end;
                for (i, &n) in lengths.iter().enumerate() {
                    let n = n as usize; // not negative: `bytes_for`
                    utf8(i, &data[at..at + n])?;
                    at += n;
                }
            }
            Ok(())
        }
        Encoding::DELTA_BYTE_ARRAY => {
            let (prefixes, end) = deltas(data, present, "prefix lengths")?;
            let rest = &data[end..];
            let (suffixes, end) = deltas(rest, present, "suffix lengths")?;
            let mut previous = 0i64;
            for (i, (&p, &s)) in prefixes.iter().zip(&suffixes).enumerate() {
                if p < 0 || p > previous {
                    return Err(format!(
                        "value {i} takes a prefix of {p} bytes from a value of {previous}"
                    ));
                }
                if s < 0 {
                    return Err(format!("value {i} has a suffix of {s} bytes"));
                }
                previous = p + s;
            }
            bytes_for(&suffixes, rest.len() - end)?;
            if text {
                // Each value is the previous one's prefix and its own suffix.
                let (mut value, mut at) = (Vec::new(), end);
                for (i, (&p, &s)) in prefixes.iter().zip(&suffixes).enumerate() {
                    value.truncate(p as usize);
                    value.extend_from_slice(&rest[at..at + s as usize]);
                    at += s as usize;
                    utf8(i, &value)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Checks that value `i`, `bytes`, is UTF-8.
fn utf8(i: usize, bytes: &[u8]) -> Result<(), String> {
    std::str::from_utf8(bytes).map(|_| ()).map_err(|e| {
        format!(
            "value {i} is not UTF-8 (invalid byte at {})",
            e.valid_up_to()
        )
    })
}

/// Checks that `lengths` are not negative and fit, together, in `left` bytes.
fn bytes_for(lengths: &[i64], left: usize) -> Result<(), String> {
    let mut total = 0u64;
    for (i, &n) in lengths.iter().enumerate() {
        let n = u64::try_from(n).map_err(|_| format!("value {i} has a length of {n}"))?;
        total = total.saturating_add(n);
    }
    if total > left as u64 {
        return Err(format!(
            "its values take {total} bytes, {left} are left in the page"
        ));
    }
    Ok(())
}

/// A DELTA_BINARY_PACKED stream at the start of `data`: its first `n` values (it must hold
/// at least `n`) and where it ends. The whole stream is walked, its blocks and miniblocks
/// checked against the bytes left, so the work is bounded by `data`'s length.
pub(crate) fn deltas(data: &[u8], n: usize, what: &str) -> Result<(Vec<i64>, usize), String> {
    let mut pos = 0usize;
    let uleb = |pos: &mut usize| -> Result<u64, String> {
        let mut next = || {
            let b = data.get(*pos).copied();
            *pos += 1;
            b.ok_or(())
        };
        match read_varint(&mut next) {
            Ok(Some(v)) => Ok(v),
            _ => Err(format!("the {what} stream ends inside a number")),
        }
    };
    let block = uleb(&mut pos)?;
    let miniblocks = uleb(&mut pos)?;
    let total = uleb(&mut pos)?;
    let first = unzigzag(uleb(&mut pos)?);
    if block == 0 || block % 128 != 0 || miniblocks == 0 || block % miniblocks != 0 {
        return Err(format!(
            "the {what} stream has blocks of {block} values in {miniblocks} miniblocks"
        ));
    }
    let per_mini = block / miniblocks;
    if per_mini % 32 != 0 {
        return Err(format!(
            "the {what} stream has miniblocks of {per_mini} values"
        ));
    }
    let total = usize::try_from(total).unwrap_or(usize::MAX);
    if total < n {
        return Err(format!(
            "the {what} stream holds {total} values for the page's {n}"
        ));
    }
    let mut out = Vec::with_capacity(n.min(total));
    if total > 0 && n > 0 {
        out.push(first);
    }
    let mut last = first;
    let mut seen = usize::from(total > 0);
    let per_mini = usize::try_from(per_mini).unwrap_or(usize::MAX);
    let miniblocks = usize::try_from(miniblocks).unwrap_or(usize::MAX);
    while seen < total {
        let min_delta = unzigzag(uleb(&mut pos)?);
        let widths = data
            .get(pos..pos.saturating_add(miniblocks))
            .ok_or_else(|| format!("the {what} stream ends inside a block header"))?
            .to_vec();
        pos += miniblocks;
        for &width in &widths {
            if seen >= total {
                break;
            }
            if width > 64 {
                return Err(format!(
                    "the {what} stream has a miniblock of {width}-bit deltas"
                ));
            }
            let bytes = per_mini * usize::from(width) / 8;
            let packed = data
                .get(pos..pos.saturating_add(bytes))
                .ok_or_else(|| format!("the {what} stream ends inside a miniblock"))?;
            pos += bytes;
            let take = per_mini.min(total - seen);
            if out.len() < n {
                for i in 0..take.min(n - out.len()) {
                    let delta = unpack64(packed, i * usize::from(width), width);
                    last = last.wrapping_add(min_delta).wrapping_add(delta as i64);
                    out.push(last);
                }
            }
            seen += take;
        }
    }
    Ok((out, pos))
}

/// The `width`-bit value (at most 64) at bit `bit` of `bytes`.
fn unpack64(bytes: &[u8], bit: usize, width: u8) -> u64 {
    let mut v = 0u128;
    for (i, b) in bytes.iter().skip(bit / 8).take(9).enumerate() {
        v |= u128::from(*b) << (8 * i);
    }
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    ((v >> (bit % 8)) as u64) & mask
}
