//! Durations sorted ascending with prefix sums: the one structure behind the
//! average, the classic lows and the time-weighted percentiles (this file)
//! and the STK metrics (`steady.rs`). Every decision is exact integer
//! arithmetic on nanoseconds (`u128` sums); only reported values are `f64`.

use super::NS_PER_S;

/// Parts per million: percentiles and lows take their `p` in this unit so
/// that 0.999 is exactly 999_000 / 1_000_000.
pub const PPM: u64 = 1_000_000;

/// Frame durations (ns) sorted ascending, with prefix sums.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SortedDurations {
    sorted: Vec<u64>,
    /// `prefix[j]` = Σ sorted[..j]; `prefix.len() == sorted.len() + 1`.
    prefix: Vec<u128>,
}

impl SortedDurations {
    /// Copies and sorts `durations`.
    pub fn new(durations: &[u64]) -> Self {
        let mut sorted = durations.to_vec();
        sorted.sort_unstable();
        Self::from_sorted(sorted)
    }

    /// Takes durations that are already ascending (the rolling engine walks
    /// its multiset in order). Not checked in release builds.
    pub fn from_sorted(sorted: Vec<u64>) -> Self {
        debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        let mut prefix = Vec::with_capacity(sorted.len() + 1);
        let mut acc: u128 = 0;
        prefix.push(0);
        for &d in &sorted {
            acc += u128::from(d);
            prefix.push(acc);
        }
        SortedDurations { sorted, prefix }
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
        self.prefix[self.sorted.len()]
    }

    /// Σ of the `j` shortest durations, ns (`j ≤ len`).
    pub fn prefix_sum(&self, j: usize) -> u128 {
        self.prefix[j]
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
        let n = self.len();
        if n == 0 {
            return None;
        }
        let k = ((n as u128 * u128::from(p_ppm)) / u128::from(PPM)).max(1) as usize;
        let k = k.min(n);
        let sum = self.total_ns() - self.prefix[n - k];
        Some(k as f64 * NS_PER_S as f64 / sum as f64)
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
        // Smallest j with PPM·prefix[j+1] ≥ p·T; prefix[n] = T makes j ≤ n−1.
        let j = self.prefix[1..].partition_point(|&c| c * u128::from(PPM) < target);
        Some(self.sorted[j.min(n - 1)])
    }

    /// Count C and sum S (ns) of the frames slower than `f` fps, i.e. with
    /// d·f > 1e9 (d > τ = 1/f s, strictly).
    pub fn slow_frames(&self, f: u64) -> (u64, u128) {
        let f = u128::from(f);
        let j = self
            .sorted
            .partition_point(|&d| u128::from(d).saturating_mul(f) <= u128::from(NS_PER_S));
        ((self.len() - j) as u64, self.total_ns() - self.prefix[j])
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

/// Time-weighted percentile (METRICS.md) of `durations_ns` at fraction `p`
/// (taken to the nearest part per million); `None` for no frames.
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
