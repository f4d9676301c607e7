//! Reading objects: a HEAD for an object's size and version (its ETag), then ranged GETs,
//! concurrent, one per run of adjacent ranges; never merged across a gap, so only the bytes
//! asked for are fetched. Every ranged GET is pinned to the version the HEAD saw
//! (`If-Match: ETAG`), so an object replaced between two reads (a Parquet file's footer and
//! its column chunks) is an error, never bytes of another file read under the old footer.

use crate::runtime::block_on;
use crate::{StorageError, StorePath};
use bytes::Bytes;
use object_store::{GetOptions, ObjectStore, ObjectStoreExt};
use std::io::Write;
use std::ops::Range;
use std::sync::Arc;

/// Bytes of one ranged GET: a longer range is fetched in parts of this size, concurrently.
const PART: u64 = 8 << 20;

impl StorePath {
    /// The object here: its size and version, from a HEAD request.
    pub fn object(&self) -> Result<Object, StorageError> {
        let meta =
            block_on(self.store.head(&self.path)).map_err(|e| self.store_error("read input", e))?;
        Ok(Object::new(self.clone(), &meta))
    }

    /// Whether an object is here (a HEAD that finds nothing is `false`; other failures are
    /// errors).
    pub fn exists(&self) -> Result<bool, StorageError> {
        match block_on(self.store.head(&self.path)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.store_error("check the output", e)),
        }
    }
}

/// One object, with its size and the version its reads are pinned to.
#[derive(Debug, Clone)]
pub struct Object {
    pub(crate) loc: StorePath,
    pub(crate) size: u64,
    /// The ETag the object had when it was found (HEAD or listing); `None` when the store
    /// gives none, or a weak one (a plain web server may), and then reads are not pinned.
    pub(crate) e_tag: Option<String>,
}

impl Object {
    pub(crate) fn new(loc: StorePath, meta: &object_store::ObjectMeta) -> Object {
        // A listing may give the ETag unquoted (Azure's does), a HEAD quoted: `If-Match`
        // takes the quoted form. A weak ETag (`W/"..."`) never matches `If-Match` (a strong
        // comparison), so it pins nothing.
        let e_tag = match meta.e_tag.as_deref() {
            None => None,
            // `object_store`'s local file system makes and compares its own, unquoted.
            Some(t) if loc.local => Some(t.to_owned()),
            Some(t) if t.starts_with("W/") => None,
            Some(t) if t.starts_with('"') => Some(t.to_owned()),
            Some(t) => Some(format!("\"{t}\"")),
        };
        Object {
            loc,
            size: meta.size,
            e_tag,
        }
    }

    /// The object's URL.
    pub fn url(&self) -> &str {
        &self.loc.url
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The bytes of `range`.
    pub fn get_range(&self, range: Range<u64>) -> Result<Bytes, StorageError> {
        let mut v = self.get_ranges(std::slice::from_ref(&range))?;
        Ok(v.pop().unwrap_or_default())
    }

    /// The bytes of each of `ranges`, fetched concurrently: one ranged GET per run of adjacent
    /// ranges (at most 8 MiB; a range over 8 MiB in 8 MiB parts). Ranges are never merged
    /// across a gap, so only the bytes asked for are fetched.
    pub fn get_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>, StorageError> {
        for r in ranges {
            if r.end > self.size || r.start > r.end {
                return Err(StorageError::new(
                    &self.loc.url,
                    format!(
                        "bytes {} to {} are outside the object's {} bytes",
                        r.start, r.end, self.size
                    ),
                ));
            }
        }
        let fetches = plan_fetches(ranges);
        let fetched: Vec<Result<Bytes, object_store::Error>> = block_on(async {
            let handles: Vec<_> = fetches
                .iter()
                .map(|f| {
                    let (store, path) = (Arc::clone(&self.loc.store), self.loc.path.clone());
                    let options = GetOptions {
                        if_match: self.e_tag.clone(),
                        ..GetOptions::new().with_range(Some(f.span.clone()))
                    };
                    tokio::spawn(async move { store.get_opts(&path, options).await?.bytes().await })
                })
                .collect();
            let mut out = Vec::with_capacity(handles.len());
            for h in handles {
                out.push(
                    h.await
                        .unwrap_or_else(|e| Err(object_store::Error::JoinError { source: e })),
                );
            }
            out
        });
        let mut pieces: Vec<Vec<Bytes>> = vec![Vec::new(); ranges.len()];
        for (f, got) in fetches.into_iter().zip(fetched) {
            let b = got.map_err(|e| match e {
                object_store::Error::Precondition { .. } => self.replaced(),
                e => self.loc.store_error("read", e),
            })?;
            let r = f.span;
            if b.len() as u64 != r.end - r.start {
                return Err(StorageError::new(
                    &self.loc.url,
                    format!(
                        "asked for bytes {} to {} and got {} bytes",
                        r.start,
                        r.end,
                        b.len()
                    ),
                )
                .with_hint("the object may have changed during the run; run again"));
            }
            for (i, within) in f.pieces {
                pieces[i].push(b.slice(within));
            }
        }
        Ok(pieces
            .into_iter()
            .map(|p| match p.len() {
                0 => Bytes::new(),
                1 => p.into_iter().next().unwrap_or_default(),
                _ => {
                    let mut v = Vec::with_capacity(p.iter().map(Bytes::len).sum());
                    for b in p {
                        v.extend_from_slice(&b);
                    }
                    Bytes::from(v)
                }
            })
            .collect())
    }

    /// The error of a read refused because the object is no longer the version that was
    /// opened (its ETag changed).
    fn replaced(&self) -> StorageError {
        StorageError::new(
            &self.loc.url,
            "the object was replaced while it was being read (its ETag changed since it was opened)",
        )
        .with_hint("run again once nothing writes the input; its bytes were not mixed with the new object's")
    }

    /// Copies the whole object into `to`, 32 MiB at a time (four ranged GETs at once), so
    /// memory stays bounded whatever the object's size.
    pub fn download(&self, to: &mut impl Write) -> Result<(), StorageError> {
        let step = 4 * PART;
        let mut at = 0;
        while at < self.size {
            let end = (at + step).min(self.size);
            let chunk = self.get_range(at..end)?;
            to.write_all(&chunk).map_err(|e| {
                StorageError::new(&self.loc.url, format!("cannot stage the download: {e}"))
                    .with_hint("check the free space of the temporary folder (TMPDIR)")
            })?;
            at = end;
        }
        Ok(())
    }
}

/// One ranged GET of [`Object::get_ranges`]: its span of the object, and which part of it
/// (bytes within the span) belongs to which asked range, in order.
struct Fetch {
    span: Range<u64>,
    pieces: Vec<(usize, Range<usize>)>,
}

/// The GETs for `ranges`: in order of offset, a range extends the previous GET when it starts
/// where that one ends and the two fit in `PART` bytes (object stores charge, and a slow
/// server takes its time, per request); a range over `PART` bytes is cut into parts.
fn plan_fetches(ranges: &[Range<u64>]) -> Vec<Fetch> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| ranges[i].start);
    let mut fetches: Vec<Fetch> = Vec::new();
    for i in order {
        let mut at = ranges[i].start;
        while at < ranges[i].end {
            let end = (at + PART).min(ranges[i].end);
            match fetches.last_mut() {
                Some(f) if f.span.end == at && end - f.span.start <= PART => {
                    let from = (at - f.span.start) as usize;
                    f.pieces.push((i, from..from + (end - at) as usize));
                    f.span.end = end;
                }
                _ => fetches.push(Fetch {
                    span: at..end,
                    pieces: vec![(i, 0..(end - at) as usize)],
                }),
            }
            at = end;
        }
    }
    fetches
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adjacent ranges share a GET up to `PART` bytes, a gap or an overlap never does, a large
    /// range is cut into parts, and every range gets back exactly its bytes, in the order asked.
    #[test]
    fn fetches_merge_adjacent_ranges_only() {
        let p = PART;
        let ranges = [
            20..30,
            0..10,
            10..20,
            31..40,
            35..36,
            100..100 + 2 * p + 5,
            100 + 2 * p + 5..100 + 2 * p + 9,
        ];
        type Pieces = Vec<(usize, Range<usize>)>;
        let plan: Vec<(Range<u64>, Pieces)> = plan_fetches(&ranges)
            .into_iter()
            .map(|f| (f.span, f.pieces))
            .collect();
        let p = p as usize;
        assert_eq!(
            plan,
            vec![
                (0..30, vec![(1, 0..10), (2, 10..20), (0, 20..30)]),
                (31..40, vec![(3, 0..9)]),
                (35..36, vec![(4, 0..1)]),
                (100..100 + PART, vec![(5, 0..p)]),
                (100 + PART..100 + 2 * PART, vec![(5, 0..p)]),
                (
                    100 + 2 * PART..100 + 2 * PART + 9,
                    vec![(5, 0..5), (6, 5..9)]
                ),
            ]
        );
        // A run of adjacent ranges stops at `PART` bytes.
        let halves = [0..PART / 2 + 1, PART / 2 + 1..PART, PART..PART + 1];
        let spans: Vec<Range<u64>> = plan_fetches(&halves).into_iter().map(|f| f.span).collect();
        assert_eq!(spans, vec![0..PART, PART..PART + 1]);
        let empty = 5..5;
        assert!(plan_fetches(std::slice::from_ref(&empty)).is_empty());
    }
}
