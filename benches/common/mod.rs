//! Frame durations shared by the benchmarks: the same seeded frames in
//! every bench and every run.

/// xorshift64*: a tiny seeded generator, so every run sees the same frames.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `n` frames around `mean_ns` with ±6 % jitter and a 2–8× spike every
/// ~300 frames on average.
pub fn frames(n: usize, mean_ns: u64, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    let jitter = mean_ns / 16;
    (0..n)
        .map(|_| {
            let d = mean_ns - jitter + rng.below(2 * jitter);
            if rng.below(300) == 0 {
                d * (2 + rng.below(7))
            } else {
                d
            }
        })
        .collect()
}
