//! A small seeded random number generator (SplitMix64), so that a case is
//! reproduced exactly from the seed printed when it fails, on any machine
//! and with any version of any crate.

/// The generator's state.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`; nearby seeds give unrelated sequences.
    pub fn new(seed: u64) -> Rng {
        let mut r = Rng(seed);
        r.next();
        r
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = hi.wrapping_sub(lo) as u64;
        if span == u64::MAX {
            return self.next() as i64;
        }
        lo.wrapping_add((self.next() % (span + 1)) as i64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) < p * (1u64 << 53) as f64
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A length: mostly small, sometimes up to `max` (roughly log-uniform,
    /// so long chains are rare but reached).
    pub fn size(&mut self, max: usize) -> usize {
        let bits = usize::BITS - max.max(1).leading_zeros();
        let cap = 1usize << self.below(bits as usize + 1);
        1 + self.below(cap.min(max.max(1)))
    }
}
