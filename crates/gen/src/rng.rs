//! A tiny deterministic PRNG (splitmix64), so generated data depends only on the seed.

/// splitmix64 finalizer: a bijective 64-bit mixing function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// splitmix64 generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Independent stream for one row: a pure function of `(seed, row)`.
    pub fn for_row(seed: u64, row: u64) -> Self {
        Rng(mix(mix(seed).wrapping_add(row)))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    /// Uniformly chosen element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Small vocabulary for pseudo-random text.
pub const WORDS: [&str; 128] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with", "was", "on", "be",
    "at", "by", "this", "from", "or", "which", "one", "all", "would", "there", "their", "what",
    "about", "when", "make", "like", "time", "just", "know", "take", "people", "into", "year",
    "good", "some", "could", "them", "other", "than", "then", "look", "only", "come", "over",
    "think", "also", "back", "after", "use", "two", "how", "work", "first", "well", "way", "even",
    "new", "want", "because", "any", "these", "give", "day", "most", "energy", "cell", "theorem",
    "river", "empire", "protein", "market", "vector", "history", "reaction", "law", "number",
    "planet", "species", "function", "treaty", "molecule", "graph", "climate", "language",
    "signal", "matrix", "enzyme", "colony", "prime", "orbit", "voltage", "genome", "kingdom",
    "integral", "pressure", "density", "theory", "process", "system", "value", "model", "result",
    "effect", "change", "level", "order", "form", "group", "rate", "point", "field", "force",
    "light", "water", "carbon", "oxygen", "war", "city", "king", "trade", "church", "island",
    "battle", "network",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_per_row() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_row(42, 7).next_u64()).collect();
        assert!(a.iter().all(|&x| x == a[0]));
        assert_ne!(
            Rng::for_row(42, 7).next_u64(),
            Rng::for_row(42, 8).next_u64()
        );
        assert_ne!(
            Rng::for_row(42, 7).next_u64(),
            Rng::for_row(43, 7).next_u64()
        );
    }

    #[test]
    fn below_in_range() {
        let mut r = Rng::for_row(1, 2);
        for n in 1..50 {
            assert!(r.below(n) < n);
        }
    }
}
