//! The n-grams two texts share, counted without building one: the tokens of a hypothesis and
//! its references get dense integer ids (equal tokens, equal ids), and the n-grams of each
//! order are numbered from those of the order below (the id of an n-gram is that of the pair
//! (its first n − 1 tokens' id, its last token's id)). An n-gram whose prefix is missing on
//! one side cannot be shared, so its position is dropped before the next order is numbered.
//! Counts are integers, so every score computed from them is exactly the reference's.
//!
//! The buffers live in one [`Scratch`] per thread, reused from one pair to the next.

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use std::cell::RefCell;

/// A position whose n-gram is not shared (its prefix is not): skipped from then on.
const DEAD: u32 = u32::MAX;

/// Buffers above this many elements are freed after use, so that one huge text does not
/// keep its memory for the rest of the run.
const KEEP_AT_MOST: usize = 1 << 20;

/// The per-thread buffers of the lexical measures.
#[derive(Default)]
pub(super) struct Scratch {
    /// Order-n ids by (order n − 1 id, token id); also the interned characters of chrF.
    pairs: HashTable<(u64, u32)>,
    /// Interned strings by hash; the strings are in `words`.
    strings: HashTable<(u64, u32)>,
    /// The interned strings by id (empty between uses; see [`recycle`]).
    words: Vec<&'static str>,
    /// Token ids of every text of a call, concatenated, and where each text starts.
    pub(super) ids: Vec<u32>,
    pub(super) starts: Vec<usize>,
    /// The current order's ids per position.
    cur: Vec<u32>,
    hyp_count: Vec<u32>,
    ref_max: Vec<u32>,
    ref_count: Vec<u32>,
    /// Text buffers (lower-cased or tokenized texts), and where texts end in one.
    pub(super) text: [String; 3],
    pub(super) ends: Vec<usize>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's buffers (fresh ones if they are in use, which cannot happen
/// unless a measure calls another).
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            let r = f(&mut s);
            s.trim();
            r
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

/// An empty vector of any lifetime on the same allocation (collecting a vector's own
/// iterator into elements of the same layout reuses its buffer).
pub(super) fn recycle<'b>(mut v: Vec<&'_ str>) -> Vec<&'b str> {
    v.clear();
    v.into_iter().map(|_| "").collect()
}

/// A 64-bit mix of a key: the folded 128-bit product with an odd constant.
#[inline]
fn mix(k: u64) -> u64 {
    let p = u128::from(k ^ 0x2d35_8dcc_aa6c_78a5).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (p as u64) ^ ((p >> 64) as u64)
}

fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        h = mix(h ^ u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
    }
    let mut last = [0u8; 8];
    let rest = chunks.remainder();
    last[..rest.len()].copy_from_slice(rest);
    mix(h ^ u64::from_le_bytes(last))
}

/// The id of `key` in `table`, numbering new keys from `count`.
#[inline]
fn intern(table: &mut HashTable<(u64, u32)>, key: u64, count: &mut u32) -> u32 {
    match table.entry(mix(key), |e| e.0 == key, |e| mix(e.0)) {
        Entry::Occupied(o) => o.get().1,
        Entry::Vacant(v) => {
            let id = *count;
            *count += 1;
            v.insert((key, id));
            id
        }
    }
}

/// Interns strings into dense ids (equal strings, equal ids).
pub(super) struct Strings<'s, 'a> {
    table: &'s mut HashTable<(u64, u32)>,
    words: Vec<&'a str>,
    slot: &'s mut Vec<&'static str>,
}

impl<'a> Strings<'_, 'a> {
    #[inline]
    pub(super) fn id(&mut self, w: &'a str) -> u32 {
        let h = hash_bytes(w.as_bytes());
        let words = &self.words;
        match self
            .table
            .entry(h, |e| e.0 == h && words[e.1 as usize] == w, |e| e.0)
        {
            Entry::Occupied(o) => o.get().1,
            Entry::Vacant(v) => {
                let id = self.words.len() as u32;
                v.insert((h, id));
                self.words.push(w);
                id
            }
        }
    }

    /// How many distinct strings have ids.
    pub(super) fn len(&self) -> usize {
        self.words.len()
    }
}

impl Drop for Strings<'_, '_> {
    fn drop(&mut self) {
        *self.slot = recycle(std::mem::take(&mut self.words));
    }
}

impl Scratch {
    /// A string interner, and the id buffers of this call (emptied).
    pub(super) fn strings<'s, 'a>(
        &'s mut self,
    ) -> (Strings<'s, 'a>, &'s mut Vec<u32>, &'s mut Vec<usize>) {
        self.strings.clear();
        self.ids.clear();
        self.starts.clear();
        let words = recycle(std::mem::take(&mut self.words));
        (
            Strings {
                table: &mut self.strings,
                words,
                slot: &mut self.words,
            },
            &mut self.ids,
            &mut self.starts,
        )
    }

    /// Ids of characters: ASCII characters are their code, others are numbered from 128.
    /// Returns the number of ids used (at least 128).
    pub(super) fn char_ids<'t>(&mut self, texts: impl Iterator<Item = &'t str>) -> usize {
        self.pairs.clear();
        self.ids.clear();
        self.starts.clear();
        let mut count = 128u32;
        for t in texts {
            self.starts.push(self.ids.len());
            if t.is_ascii() {
                self.ids.extend(
                    t.bytes()
                        .filter(|&b| !super::py_space(b as char))
                        .map(u32::from),
                );
            } else {
                for c in t.chars().filter(|&c| !super::py_space(c)) {
                    let id = if c.is_ascii() {
                        c as u32
                    } else {
                        intern(&mut self.pairs, u64::from(c), &mut count)
                    };
                    self.ids.push(id);
                }
            }
        }
        self.starts.push(self.ids.len());
        count as usize
    }

    /// For orders 1 to `matched.len()`, the n-grams of the first text (the hypothesis) that
    /// the others (the references) have: `Σ min(hypothesis count, largest reference count)`
    /// over the n-grams of that order. The texts are `self.ids[self.starts[k]..self.starts[k +
    /// 1]]`, their token ids below `vocab`.
    pub(super) fn shared(&mut self, vocab: usize, matched: &mut [u64]) {
        matched.fill(0);
        let Scratch {
            pairs,
            ids,
            starts,
            cur,
            hyp_count,
            ref_max,
            ref_count,
            ..
        } = self;
        let texts = starts.len().saturating_sub(1);
        if texts < 2 {
            return;
        }
        cur.clear();
        cur.extend_from_slice(ids);
        // The positions of order n's n-grams in text k.
        let range =
            |k: usize, n: usize| starts[k]..(starts[k + 1] + 1).saturating_sub(n).max(starts[k]);
        let mut distinct = vocab;
        for n in 1..=matched.len() {
            if n > 1 {
                pairs.clear();
                let mut count = 0u32;
                for k in 0..texts {
                    for i in range(k, n) {
                        let p = cur[i];
                        if p != DEAD {
                            let key = (u64::from(p) << 32) | u64::from(ids[i + n - 1]);
                            cur[i] = intern(pairs, key, &mut count);
                        }
                    }
                }
                distinct = count as usize;
            }
            hyp_count.clear();
            hyp_count.resize(distinct, 0);
            ref_max.clear();
            ref_max.resize(distinct, 0);
            for i in range(0, n) {
                if cur[i] != DEAD {
                    hyp_count[cur[i] as usize] += 1;
                }
            }
            if texts == 2 {
                for i in range(1, n) {
                    if cur[i] != DEAD {
                        ref_max[cur[i] as usize] += 1;
                    }
                }
            } else {
                ref_count.clear();
                ref_count.resize(distinct, 0);
                for k in 1..texts {
                    for i in range(k, n) {
                        if cur[i] != DEAD {
                            ref_count[cur[i] as usize] += 1;
                        }
                    }
                    for i in range(k, n) {
                        if cur[i] != DEAD {
                            let g = cur[i] as usize;
                            ref_max[g] = ref_max[g].max(ref_count[g]);
                            ref_count[g] = 0;
                        }
                    }
                }
            }
            let shared: u64 = hyp_count
                .iter()
                .zip(ref_max.iter())
                .map(|(&h, &r)| u64::from(h.min(r)))
                .sum();
            matched[n - 1] = shared;
            if shared == 0 || n == matched.len() {
                break;
            }
            for k in 0..texts {
                for i in range(k, n) {
                    let g = cur[i];
                    if g != DEAD && (hyp_count[g as usize] == 0 || ref_max[g as usize] == 0) {
                        cur[i] = DEAD;
                    }
                }
            }
        }
    }

    /// Frees what one huge text left behind.
    fn trim(&mut self) {
        let big = [
            self.ids.capacity(),
            self.cur.capacity(),
            self.hyp_count.capacity(),
            self.pairs.capacity(),
            self.strings.capacity(),
            self.text[0].capacity(),
            self.text[1].capacity(),
            self.text[2].capacity(),
        ]
        .into_iter()
        .any(|c| c > KEEP_AT_MOST);
        if big {
            *self = Scratch::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The plain count: n-grams as token slices in hash maps.
    fn naive(texts: &[Vec<u32>], orders: usize) -> Vec<u64> {
        let counts = |t: &[u32], n: usize| {
            let mut m: HashMap<Vec<u32>, u64> = HashMap::new();
            for w in t.windows(n) {
                *m.entry(w.to_vec()).or_default() += 1;
            }
            m
        };
        (1..=orders)
            .map(|n| {
                let h = counts(&texts[0], n);
                let refs: Vec<_> = texts[1..].iter().map(|t| counts(t, n)).collect();
                h.iter()
                    .map(|(g, &c)| {
                        let r = refs.iter().map(|m| m.get(g).copied().unwrap_or(0)).max();
                        c.min(r.unwrap_or(0))
                    })
                    .sum()
            })
            .collect()
    }

    fn fast(texts: &[Vec<u32>], orders: usize) -> Vec<u64> {
        let mut s = Scratch::default();
        for t in texts {
            s.starts.push(s.ids.len());
            s.ids.extend_from_slice(t);
        }
        s.starts.push(s.ids.len());
        let mut out = vec![0; orders];
        s.shared(8, &mut out);
        out
    }

    #[test]
    fn shared_ngrams_equal_the_plain_count() {
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..2000 {
            let texts: Vec<Vec<u32>> = (0..1 + next(4))
                .map(|_| (0..next(12)).map(|_| next(4) as u32).collect())
                .collect();
            let orders = 1 + next(6) as usize;
            let want = if texts.len() < 2 {
                vec![0; orders]
            } else {
                naive(&texts, orders)
            };
            assert_eq!(fast(&texts, orders), want, "{texts:?} orders {orders}");
        }
        assert_eq!(
            fast(&[vec![1, 2, 1, 2], vec![2, 1, 2, 1, 2]], 4),
            [4, 3, 2, 1]
        );
    }

    #[test]
    fn strings_get_dense_ids() {
        let mut s = Scratch::default();
        let text = String::from("a b a c b");
        {
            let (mut st, _, _) = s.strings();
            let ids: Vec<u32> = text.split(' ').map(|w| st.id(w)).collect();
            assert_eq!(ids, [0, 1, 0, 2, 1]);
            assert_eq!(st.len(), 3);
        }
        assert!(s.words.is_empty());
        assert_eq!(hash_bytes(b"abcdefgh1"), hash_bytes(b"abcdefgh1"));
        assert_ne!(hash_bytes(b"abcdefgh1"), hash_bytes(b"abcdefgh2"));
    }
}
