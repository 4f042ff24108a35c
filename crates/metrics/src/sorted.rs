//! Durations sorted ascending with prefix sums: the one structure behind the
//! average, the classic lows and the time-weighted percentiles (this file)
//! and the STK metrics (`steady.rs`). Every decision is exact integer
//! arithmetic on nanoseconds (`u128` sums); only reported values are `f64`.
//!
//! Memory: the durations (8 B a frame) plus one `u128` prefix sum per block
//! of [`BLOCK`] frames (0.25 B a frame), not one per frame (16 B): a sum up
//! to any position is a block's prefix plus at most `BLOCK - 1` durations.
//! This is what keeps `analyze` of 10 M frames under 24 B a frame.

use super::options::NS_PER_S;

/// Parts per million: percentiles and lows take their `p` in this unit so
/// that 0.999 is exactly 999_000 / 1_000_000.
pub const PPM: u64 = 1_000_000;

/// Frames per stored prefix sum. 64 keeps a prefix query to at most 63
/// additions (a cache line or eight) while the block sums cost 0.25 B a frame.
pub const BLOCK: usize = 64;

/// Frame durations (ns) sorted ascending, with block prefix sums.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SortedDurations {
    sorted: Vec<u64>,
    /// `block_prefix[k]` = Σ sorted[..k·BLOCK], for every k with
    /// k·BLOCK ≤ len, then T (so the last entry is always the total).
    block_prefix: Vec<u128>,
}

impl SortedDurations {
    /// Copies and sorts `durations`.
    pub fn new(durations: &[u64]) -> Self {
        Self::from_vec(durations.to_vec())
    }

    /// Sorts `durations` in place and takes them: no copy, for callers
    /// that no longer need the frame order.
    pub fn from_vec(mut durations: Vec<u64>) -> Self {
        durations.sort_unstable();
        Self::from_sorted(durations)
    }

    /// Takes durations that are already ascending (the rolling engine walks
    /// its multiset in order). Not checked in release builds.
    pub fn from_sorted(sorted: Vec<u64>) -> Self {
        let block_prefix = Vec::with_capacity(sorted.len() / BLOCK + 2);
        Self::from_sorted_in(sorted, block_prefix)
    }

    /// [`SortedDurations::from_sorted`] with the block sums written into
    /// `block_prefix` (cleared first): a caller that queries often hands
    /// back the buffers of its last one ([`SortedDurations::into_parts`])
    /// instead of allocating them anew.
    pub fn from_sorted_in(sorted: Vec<u64>, mut block_prefix: Vec<u128>) -> Self {
        debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        block_prefix.clear();
        let mut acc: u128 = 0;
        block_prefix.push(0);
        for block in sorted.chunks(BLOCK) {
            acc += block.iter().map(|&d| u128::from(d)).sum::<u128>();
            block_prefix.push(acc);
        }
        SortedDurations {
            sorted,
            block_prefix,
        }
    }

    /// The buffers: the durations and the block sums.
    pub fn into_parts(self) -> (Vec<u64>, Vec<u128>) {
        (self.sorted, self.block_prefix)
    }

    /// N, the number of frames.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The durations, ascending.
    pub fn as_slice(&self) -> &[u64] {
        &self.sorted
    }

    /// T = Σ d, ns.
    pub fn total_ns(&self) -> u128 {
        self.block_prefix.last().copied().unwrap_or(0)
    }

    /// Σ of the `j` shortest durations, ns (`j ≤ len`): the block's stored
    /// prefix plus the rest of the block, at most `BLOCK - 1` additions.
    pub fn prefix_sum(&self, j: usize) -> u128 {
        let k = j / BLOCK;
        let start = k * BLOCK;
        self.block_prefix[k]
            + self.sorted[start..j]
                .iter()
                .map(|&d| u128::from(d))
                .sum::<u128>()
    }

    /// T in seconds.
    pub fn duration_s(&self) -> f64 {
        self.total_ns() as f64 / NS_PER_S as f64
    }

    /// N / T.
    pub fn average_fps(&self) -> f64 {
        self.len() as f64 * NS_PER_S as f64 / self.total_ns() as f64
    }

    /// Classic (frame-count) low: k = max(1, floor(N·p)) longest frames,
    /// k / (sum of their durations in s). `p = p_ppm / 1e6`. `None` if empty.
    pub fn classic_low_fps(&self, p_ppm: u64) -> Option<f64> {
        if self.is_empty() {
            return None;
        }
        let (k, sum) = self.longest(p_ppm);
        Some(k as f64 * NS_PER_S as f64 / sum as f64)
    }

    /// The frames a classic low takes: k = max(1, floor(N·p)) (at most N)
    /// and the sum of the k longest durations in ns, `p = p_ppm / 1e6`;
    /// (0, 0) if empty.
    pub fn longest(&self, p_ppm: u64) -> (usize, u128) {
        let n = self.len();
        let k = ((n as u128 * u128::from(p_ppm)) / u128::from(PPM)).max(1) as usize;
        let k = k.min(n);
        (k, self.total_ns() - self.prefix_sum(n - k))
    }

    /// Time-weighted percentile: s_j for the smallest j with
    /// Σ_{k≤j} s_k ≥ p·T, `p = p_ppm / 1e6` (clamped to 1). `None` if empty.
    pub fn percentile_ppm(&self, p_ppm: u64) -> Option<u64> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let p = u128::from(p_ppm.min(PPM));
        let target = p * self.total_ns();
        let reached = |c: u128| c * u128::from(PPM) >= target;
        // Smallest j with PPM·prefix(j+1) ≥ p·T (prefix(n) = T makes
        // j ≤ n−1): first the last block start whose prefix is still short,
        // then frame by frame inside that block.
        let k = self.block_prefix.partition_point(|&c| !reached(c));
        // block_prefix[0] = 0: k = 0 only when p·T = 0, then j = 0.
        let mut j = k.saturating_sub(1) * BLOCK;
        let mut acc = self.block_prefix[k.saturating_sub(1)];
        while j < n - 1 {
            acc += u128::from(self.sorted[j]);
            if reached(acc) {
                break;
            }
            j += 1;
        }
        Some(self.sorted[j])
    }

    /// Count C and sum S (ns) of the frames slower than `f` fps, i.e. with
    /// d·f > 1e9 (d > τ = 1/f s, strictly).
    pub fn slow_frames(&self, f: u64) -> (u64, u128) {
        let f = u128::from(f);
        let j = self
            .sorted
            .partition_point(|&d| u128::from(d).saturating_mul(f) <= u128::from(NS_PER_S));
        (
            (self.len() - j) as u64,
            self.total_ns() - self.prefix_sum(j),
        )
    }
}

/// `p` (a fraction) in parts per million, rounded; 0.999 → 999_000.
pub fn ppm_of(p: f64) -> u64 {
    if p.is_nan() || p <= 0.0 {
        0
    } else if p >= 1.0 {
        PPM
    } else {
        (p * PPM as f64).round() as u64
    }
}

/// Time-weighted percentile (docs/metrics.md#time-weighted-percentiles) of
/// `durations_ns` at fraction `p` (taken to the nearest part per million);
/// `None` for no frames.
pub fn time_weighted_percentile(durations_ns: &[u64], p: f64) -> Option<u64> {
    SortedDurations::new(durations_ns).percentile_ppm(ppm_of(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn percentile_hits_exact_boundary_of_cumulative_time() {
        // T = 100 ms; cumulative 10, 30, 60, 100. p = 0.3 lands exactly on 30:
        // the 20 ms frame (f64 0.3·100 = 30.000000000000004 would miss it).
        let s = SortedDurations::new(&[40 * MS, 10 * MS, 30 * MS, 20 * MS]);
        assert_eq!(s.percentile_ppm(300_000), Some(20 * MS));
        assert_eq!(s.percentile_ppm(300_001), Some(30 * MS));
        assert_eq!(s.percentile_ppm(500_000), Some(30 * MS));
        assert_eq!(s.percentile_ppm(900_000), Some(40 * MS));
        assert_eq!(s.percentile_ppm(0), Some(10 * MS));
        assert_eq!(s.percentile_ppm(PPM), Some(40 * MS));
    }

    #[test]
    fn percentile_999_is_exact() {
        // 1000 frames of 999 ns then one of 1000 ns: T = 1e6, 0.999·T = 999000
        // is reached exactly by the last 999 ns frame.
        let mut d = vec![999u64; 1000];
        d.push(1000);
        let s = SortedDurations::new(&d);
        assert_eq!(s.percentile_ppm(ppm_of(0.999)), Some(999));
        assert_eq!(s.percentile_ppm(999_001), Some(1000));
    }

    #[test]
    fn classic_lows_take_k_longest_frames() {
        // 990 × 10 ms, 5 × 40 ms, 5 × 50 ms: 1 % → k = 10: 10 / 0.45 s;
        // 0.1 % → k = 1: 1 / 0.05 s.
        let mut d = vec![10 * MS; 990];
        d.extend([40 * MS; 5]);
        d.extend([50 * MS; 5]);
        let s = SortedDurations::new(&d);
        assert_eq!(s.classic_low_fps(10_000), Some(10.0 * 1e9 / 450e6));
        assert_eq!(s.classic_low_fps(1_000), Some(20.0));
        // Fewer than 100 frames: k = 1.
        let s = SortedDurations::new(&[10 * MS, 25 * MS, 20 * MS]);
        assert_eq!(s.classic_low_fps(10_000), Some(40.0));
        assert_eq!(SortedDurations::new(&[]).classic_low_fps(10_000), None);
    }

    #[test]
    fn average_and_duration() {
        let s = SortedDurations::new(&[10 * MS, 30 * MS]);
        assert_eq!(s.total_ns(), 40 * MS as u128);
        assert_eq!(s.duration_s(), 0.04);
        assert_eq!(s.average_fps(), 50.0);
    }

    #[test]
    fn slow_frames_is_strict() {
        let s = SortedDurations::new(&[20 * MS, 10 * MS, 30 * MS]);
        // f = 50: τ = 20 ms, only 30 ms is slower.
        assert_eq!(s.slow_frames(50), (1, 30 * MS as u128));
        assert_eq!(s.slow_frames(51), (2, 50 * MS as u128));
        assert_eq!(s.slow_frames(1), (0, 0));
    }
}
