//! The mergeable time histogram: time spent in frames per log-spaced
//! frame-duration bucket, so that sessions can be combined by summing
//! buckets (in `steadyhud merge`, or `SUM … GROUP BY bucket` in any SQL
//! engine) and fleet-wide time-weighted metrics read off the sum.
//!
//! Time-weighted metrics do not average across sessions (the mean of two
//! sessions' P99 is not the P99 of both), but they are functions of the
//! duration *distribution*, and a histogram of it sums exactly.
//!
//! **Buckets** (integer ns, the same on every machine): bucket 0 starts at
//! 0 ns, and bucket b + 1 starts at lo_b + max(1, ⌊lo_b / 100⌋). So below
//! 100 ns every bucket holds one value, and above it a bucket is at most 1 %
//! of its lower edge wide: its largest value u_b = hi_b − 1 < 1.01 · lo_b.
//! 4,153 buckets cover every `u64` (1,389 span 10 µs to 10 s).
//!
//! **Metrics from a histogram** are the exact metrics of a stand-in session
//! in which every frame lasts its bucket's mean (time_ns / frames): the same
//! N and T, and each stand-in within 1 % of the frame it replaces.
//! Error bounds against the exact metrics of the frames themselves (proven in
//! `docs/metrics.md#fleet-histogram`, tested in `tests/histogram_props.rs`):
//!
//! - frames, duration, average FPS: exact;
//! - time-weighted percentiles: the exact percentile's bucket is found
//!   exactly, so the error is below the bucket width: < 1 % (0 below 100 ns,
//!   and 0 when the frames of that bucket all last the same);
//! - 1 % / 0.1 % lows: < 1 %;
//! - Steady / Mostly Steady / Typical FPS: |est − exact| < 1 % of exact + 1.01.

use super::options::NS_PER_S;
use super::sorted::PPM;
use super::steady::{largest_meeting, StkBound};
use super::time_metrics::{TimeDistribution, TimeMetrics};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Name of the bucket scheme, carried in the JSON so that histograms of a
/// different scheme are refused instead of summed.
pub const SCHEME: &str = "steadyhud-log-1pct-v1";
/// Relative bucket width: u_b < (1 + RESOLUTION) · lo_b.
pub const RESOLUTION: f64 = 0.01;

/// Lower edges of all buckets, ascending; computed once (4,153 × 8 B).
fn edges() -> &'static [u64] {
    static EDGES: OnceLock<Vec<u64>> = OnceLock::new();
    EDGES.get_or_init(|| {
        let mut v = vec![0u64];
        let mut lo = 0u64;
        loop {
            let step = (lo / 100).max(1);
            match lo.checked_add(step) {
                Some(next) => {
                    v.push(next);
                    lo = next;
                }
                None => break v,
            }
        }
    })
}

/// Number of buckets of the scheme.
pub fn bucket_count() -> usize {
    edges().len()
}

/// The bucket holding a duration of `d_ns`.
pub fn bucket_of(d_ns: u64) -> u32 {
    if d_ns < 100 {
        return d_ns as u32;
    }
    // Last edge ≤ d.
    (edges().partition_point(|&lo| lo <= d_ns) - 1) as u32
}

/// Bucket `b`'s range [lo, hi) in ns (`None` past the last bucket). The
/// last bucket's `hi` is `u64::MAX` and includes it.
pub fn bucket_range(b: u32) -> Option<(u64, u64)> {
    let e = edges();
    let lo = *e.get(b as usize)?;
    let hi = e.get(b as usize + 1).copied().unwrap_or(u64::MAX);
    Some((lo, hi))
}

/// Frames and their total time in one bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bin {
    pub frames: u64,
    pub time_ns: u128,
}

/// One bucket as written out: `bucket`, its range, frames and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketRow {
    pub bucket: u32,
    pub lo_ns: u64,
    pub hi_ns: u64,
    pub frames: u64,
    pub time_ns: u128,
}

/// A time histogram: non-empty buckets, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeHistogram {
    bins: Vec<(u32, Bin)>,
}

/// Why bucket rows from outside cannot be taken.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HistogramError {
    #[error("histogram scheme {found:?}: expected {SCHEME:?} (a different bucket layout cannot be summed)")]
    Scheme { found: String },
    #[error("bucket {bucket}: expected lo_ns {lo} and hi_ns {hi} ({SCHEME}), found {found_lo} and {found_hi}")]
    Range {
        bucket: u32,
        lo: u64,
        hi: u64,
        found_lo: u64,
        found_hi: u64,
    },
    #[error("bucket {bucket} does not exist (the scheme has {count} buckets)")]
    NoBucket { bucket: u32, count: usize },
    #[error(
        "bucket {bucket}: {frames} frames cannot take {time_ns} ns (each lasts {lo}..{hi} ns)"
    )]
    Inconsistent {
        bucket: u32,
        frames: u64,
        time_ns: u128,
        lo: u64,
        hi: u64,
    },
    #[error("sums overflow")]
    Overflow,
}

/// The histogram as JSON: scheme, resolution and the non-empty buckets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistogramJson {
    pub scheme: String,
    pub resolution: f64,
    pub buckets: Vec<BucketRow>,
}

impl TimeHistogram {
    /// The histogram of a session's frame durations (ns, any order).
    pub fn from_durations(durations_ns: &[u64]) -> Self {
        // Dense counting array first (4,153 × 32 B), then the non-empty
        // buckets: no sorting, one bucket lookup per frame.
        let mut dense = vec![Bin::default(); bucket_count()];
        for &d in durations_ns {
            let bin = &mut dense[bucket_of(d) as usize];
            bin.frames += 1;
            bin.time_ns += u128::from(d);
        }
        TimeHistogram {
            bins: dense
                .into_iter()
                .enumerate()
                .filter(|(_, b)| b.frames > 0)
                .map(|(i, b)| (i as u32, b))
                .collect(),
        }
    }

    /// A histogram of non-empty bins in ascending bucket order, built by
    /// this crate (no scheme checks: the bins come from [`bucket_of`]).
    pub(crate) fn from_sorted_bins(bins: Vec<(u32, Bin)>) -> Self {
        TimeHistogram { bins }
    }

    /// Builds a histogram from bucket rows (any order, buckets may repeat:
    /// they are summed), checking each against the scheme.
    pub fn from_rows(
        rows: impl IntoIterator<Item = BucketRow>,
    ) -> Result<TimeHistogram, HistogramError> {
        let mut h = TimeHistogram::default();
        for r in rows {
            h.add_row(&r)?;
        }
        Ok(h)
    }

    /// Adds one bucket row (checked against the scheme) to this histogram.
    pub fn add_row(&mut self, r: &BucketRow) -> Result<(), HistogramError> {
        let Some((lo, hi)) = bucket_range(r.bucket) else {
            return Err(HistogramError::NoBucket {
                bucket: r.bucket,
                count: bucket_count(),
            });
        };
        if (r.lo_ns, r.hi_ns) != (lo, hi) {
            return Err(HistogramError::Range {
                bucket: r.bucket,
                lo,
                hi,
                found_lo: r.lo_ns,
                found_hi: r.hi_ns,
            });
        }
        // Every frame of the bucket lasts lo..=hi−1 ns (the last bucket
        // includes u64::MAX): a row outside that was not made by this scheme.
        let max_each = if hi == u64::MAX { hi } else { hi - 1 };
        let n = u128::from(r.frames);
        if r.time_ns < n * u128::from(lo) || r.time_ns > n * u128::from(max_each) {
            return Err(HistogramError::Inconsistent {
                bucket: r.bucket,
                frames: r.frames,
                time_ns: r.time_ns,
                lo,
                hi,
            });
        }
        if r.frames == 0 {
            return Ok(());
        }
        self.add_bin(
            r.bucket,
            Bin {
                frames: r.frames,
                time_ns: r.time_ns,
            },
        )
    }

    fn add_bin(&mut self, bucket: u32, bin: Bin) -> Result<(), HistogramError> {
        match self.bins.binary_search_by_key(&bucket, |(b, _)| *b) {
            Ok(i) => {
                let have = &mut self.bins[i].1;
                have.frames = have
                    .frames
                    .checked_add(bin.frames)
                    .ok_or(HistogramError::Overflow)?;
                have.time_ns = have
                    .time_ns
                    .checked_add(bin.time_ns)
                    .ok_or(HistogramError::Overflow)?;
            }
            Err(i) => self.bins.insert(i, (bucket, bin)),
        }
        Ok(())
    }

    /// Adds another histogram's buckets to this one (the fleet merge).
    pub fn merge(&mut self, other: &TimeHistogram) -> Result<(), HistogramError> {
        for &(b, bin) in &other.bins {
            self.add_bin(b, bin)?;
        }
        Ok(())
    }

    /// The non-empty buckets, ascending.
    pub fn bins(&self) -> &[(u32, Bin)] {
        &self.bins
    }

    /// The non-empty buckets as rows, ascending.
    pub fn rows(&self) -> impl Iterator<Item = BucketRow> + '_ {
        self.bins.iter().map(|&(bucket, bin)| {
            let (lo_ns, hi_ns) = bucket_range(bucket).unwrap_or((0, 0));
            BucketRow {
                bucket,
                lo_ns,
                hi_ns,
                frames: bin.frames,
                time_ns: bin.time_ns,
            }
        })
    }

    /// The JSON form (`scheme`, `resolution`, `buckets`).
    pub fn to_json(&self) -> HistogramJson {
        HistogramJson {
            scheme: SCHEME.to_string(),
            resolution: RESOLUTION,
            buckets: self.rows().collect(),
        }
    }

    /// Reads the JSON form back, checking scheme and bucket ranges.
    pub fn from_json(j: &HistogramJson) -> Result<TimeHistogram, HistogramError> {
        if j.scheme != SCHEME {
            return Err(HistogramError::Scheme {
                found: j.scheme.clone(),
            });
        }
        Self::from_rows(j.buckets.iter().copied())
    }

    /// N.
    pub fn frames(&self) -> u64 {
        self.bins.iter().map(|(_, b)| b.frames).sum()
    }

    /// T, ns.
    pub fn total_ns(&self) -> u128 {
        self.bins.iter().map(|(_, b)| b.time_ns).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.bins.is_empty()
    }

    /// Time-weighted percentile at `p_ppm` parts per million, ns: the mean
    /// of the first bucket whose running time reaches p·T (the bucket that
    /// holds the exact percentile). `None` if empty.
    pub fn percentile_ppm(&self, p_ppm: u64) -> Option<f64> {
        let target = u128::from(p_ppm.min(PPM)) * self.total_ns();
        let mut cum: u128 = 0;
        for (_, b) in &self.bins {
            cum += b.time_ns;
            if cum * u128::from(PPM) >= target {
                return Some(mean(b));
            }
        }
        self.bins.last().map(|(_, b)| mean(b))
    }

    /// Classic low: k = max(1, ⌊N·p⌋) longest frames, k / their time; the
    /// bucket that holds the k-th longest frame counts its mean for each
    /// of its frames taken. `None` if empty.
    pub fn classic_low_fps(&self, p_ppm: u64) -> Option<f64> {
        let n = self.frames();
        if n == 0 {
            return None;
        }
        let k = ((u128::from(n) * u128::from(p_ppm)) / u128::from(PPM)).max(1) as u64;
        let k = k.min(n);
        let mut left = k;
        let mut sum = 0f64;
        for (_, b) in self.bins.iter().rev() {
            let take = left.min(b.frames);
            sum += if take == b.frames {
                b.time_ns as f64
            } else {
                take as f64 * mean(b)
            };
            left -= take;
            if left == 0 {
                break;
            }
        }
        Some(k as f64 * NS_PER_S as f64 / sum)
    }

    /// Whether target `f` fps meets `bound` for the stand-in session (every
    /// frame at its bucket's mean): a bucket is slow iff its mean·f > 1e9,
    /// decided exactly as `time·f > 1e9·frames`, then the same integer
    /// inequalities as [`super::SortedDurations::meets`].
    pub fn meets(&self, f: u64, bound: StkBound) -> bool {
        let t = self.total_ns();
        if t == 0 || f == 0 {
            return false;
        }
        let ff = u128::from(f);
        let (mut c, mut s) = (0u128, 0u128);
        for (_, b) in self.bins.iter().rev() {
            if b.time_ns.saturating_mul(ff) <= u128::from(NS_PER_S) * u128::from(b.frames) {
                break; // buckets ascend by mean: the rest are faster.
            }
            c += u128::from(b.frames);
            s += b.time_ns;
        }
        bound.met_by(ff, c, s, t)
    }

    /// The largest f ≥ 1 meeting `bound` (0 if f = 1 fails): binary search,
    /// both shares only grow with f.
    pub fn stk_fps(&self, bound: StkBound) -> u32 {
        if !self.meets(1, bound) {
            return 0;
        }
        // Past 1e9 / (smallest positive mean, rounded down) every bucket
        // with time is slow, slow(f) = 1 and f fails.
        let Some(min_mean) = self
            .bins
            .iter()
            .filter(|(_, b)| b.time_ns > 0)
            .map(|(_, b)| (b.time_ns / u128::from(b.frames)).max(1))
            .min()
        else {
            return 0;
        };
        let fails_from = (u128::from(NS_PER_S) / min_mean) as u64 + 1;
        largest_meeting(fails_from, |f| self.meets(f, bound))
    }

    /// Every metric a histogram gives; `None` if empty.
    pub fn summary(&self) -> Option<TimeMetrics> {
        TimeMetrics::of(self)
    }
}

impl TimeDistribution for TimeHistogram {
    fn frames(&self) -> u64 {
        TimeHistogram::frames(self)
    }
    fn total_ns(&self) -> u128 {
        TimeHistogram::total_ns(self)
    }
    fn percentile_ms(&self, p_ppm: u64) -> Option<f64> {
        self.percentile_ppm(p_ppm).map(|ns| ns / 1e6)
    }
    fn classic_low_fps(&self, p_ppm: u64) -> Option<f64> {
        TimeHistogram::classic_low_fps(self, p_ppm)
    }
    fn stk_fps(&self, bound: StkBound) -> u32 {
        TimeHistogram::stk_fps(self, bound)
    }
}

/// Serialises as [`HistogramJson`], so a log summary can hold a
/// `histogram: TimeHistogram` field and `steadyhud merge` reads it back.
impl Serialize for TimeHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

/// Header of the long CSV form written by `steadyhud summarize --csv
/// --histogram` (the `file` column first).
pub const CSV_HEADER: [&str; 6] = ["file", "bucket", "lo_ns", "hi_ns", "frames", "time_ns"];

/// A bucket's mean frame duration, ns.
fn mean(b: &Bin) -> f64 {
    b.time_ns as f64 / b.frames as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sorted::SortedDurations;

    const MS: u64 = 1_000_000;

    #[test]
    fn buckets_are_one_ns_then_one_percent_wide() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(99), 99);
        assert_eq!(bucket_range(99), Some((99, 100)));
        assert_eq!(bucket_range(100), Some((100, 101)));
        for d in [100u64, 101, 199, 200, 12_345, 16_666_667, 1 << 40, u64::MAX] {
            let (lo, hi) = bucket_range(bucket_of(d)).unwrap();
            assert!(lo <= d && (d < hi || hi == u64::MAX), "{d}: {lo}..{hi}");
            // u_b = hi − 1 < 1.01 · lo
            assert!(((hi - 1) as f64) < lo as f64 * 1.01, "{d}: {lo}..{hi}");
        }
        assert_eq!(bucket_count(), edges().len());
        assert_eq!(bucket_range(bucket_count() as u32 - 1).unwrap().1, u64::MAX);
        assert_eq!(bucket_range(bucket_count() as u32), None);
        assert_eq!(bucket_count(), 4153);
    }

    #[test]
    fn constant_frames_are_exact() {
        let d = vec![16_666_667u64; 600];
        let h = TimeHistogram::from_durations(&d);
        let s = h.summary().unwrap();
        assert_eq!(s.frames, 600);
        assert_eq!(s.p99_ms, 16.666667);
        assert_eq!(
            (s.steady_fps, s.mostly_steady_fps, s.typical_fps),
            (59, 59, 59)
        );
    }

    #[test]
    fn example_990_by_10ms_and_10_by_50ms() {
        // docs/metrics.md: Steady 20, Mostly Steady 34, Typical 100; P95
        // 10 ms, P99 50 ms. Two distinct values, so the histogram is exact.
        let mut d = vec![10 * MS; 990];
        d.extend([50 * MS; 10]);
        let s = TimeHistogram::from_durations(&d).summary().unwrap();
        assert_eq!(
            (s.steady_fps, s.mostly_steady_fps, s.typical_fps),
            (20, 34, 100)
        );
        assert_eq!((s.p95_ms, s.p99_ms), (10.0, 50.0));
        assert_eq!((s.low_1pct_fps, s.low_0_1pct_fps), (20.0, 20.0));
        let exact = SortedDurations::new(&d);
        assert_eq!(s.average_fps, exact.average_fps());
    }

    #[test]
    fn merge_equals_histogram_of_the_union() {
        let a: Vec<u64> = (1..500u64).map(|i| i * 37_117 % 40_000_000 + 1).collect();
        let b: Vec<u64> = (1..300u64).map(|i| i * 7_919 % 9_000_000 + 5).collect();
        let mut h = TimeHistogram::from_durations(&a);
        h.merge(&TimeHistogram::from_durations(&b)).unwrap();
        let all: Vec<u64> = a.iter().chain(&b).copied().collect();
        assert_eq!(h, TimeHistogram::from_durations(&all));
        let back = TimeHistogram::from_json(&h.to_json()).unwrap();
        assert_eq!(back, h);
        assert_eq!(
            serde_json::to_value(&h).unwrap(),
            serde_json::to_value(h.to_json()).unwrap()
        );
    }

    #[test]
    fn foreign_rows_are_refused() {
        let bad_range = BucketRow {
            bucket: 200,
            lo_ns: 1,
            hi_ns: 2,
            frames: 1,
            time_ns: 1,
        };
        assert!(matches!(
            TimeHistogram::from_rows([bad_range]),
            Err(HistogramError::Range { .. })
        ));
        let (lo, hi) = bucket_range(200).unwrap();
        let too_much = BucketRow {
            bucket: 200,
            lo_ns: lo,
            hi_ns: hi,
            frames: 2,
            time_ns: u128::from(hi) * 2,
        };
        assert!(matches!(
            TimeHistogram::from_rows([too_much]),
            Err(HistogramError::Inconsistent { .. })
        ));
        let mut j = TimeHistogram::from_durations(&[5]).to_json();
        j.scheme = "other".into();
        assert!(matches!(
            TimeHistogram::from_json(&j),
            Err(HistogramError::Scheme { .. })
        ));
    }
}
