//! The metrics that depend only on how a session's time is spread over
//! frame durations, not on the frames' order: frames, duration, average
//! and classic-low FPS, time-weighted percentiles and Steady / Mostly
//! Steady / Typical FPS ([`TimeMetrics`]).
//!
//! Both an exact log ([`super::SortedDurations`]) and a mergeable time
//! histogram ([`super::TimeHistogram`], fleets) are such a distribution
//! ([`TimeDistribution`]), so the numbers are assembled in one place; the
//! order-dependent ones (stutters, OSC) only a log has, in
//! [`super::Summary`].

use super::options::NS_PER_S;
use super::sorted::SortedDurations;
use super::steady::StkBound;
use super::steady::{MOSTLY_STEADY, STEADY, TYPICAL};
use serde::{Deserialize, Serialize};

/// The share of frames (ppm) whose k longest make `low_1pct_fps` and
/// `low_0_1pct_fps` (docs/metrics.md, "Average FPS and the classic lows").
pub(crate) const LOW_1PCT_PPM: u64 = 10_000;
pub(crate) const LOW_0_1PCT_PPM: u64 = 1_000;

/// The order-free keys of docs/metrics.md#the-json-keys, in the contract's
/// order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeMetrics {
    pub frames: usize,
    pub duration_s: f64,
    pub average_fps: f64,
    pub low_1pct_fps: f64,
    pub low_0_1pct_fps: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p99_9_ms: f64,
    pub steady_fps: u32,
    pub mostly_steady_fps: u32,
    pub typical_fps: u32,
}

/// A distribution of time over frame durations.
pub trait TimeDistribution {
    /// N.
    fn frames(&self) -> u64;
    /// T, ns.
    fn total_ns(&self) -> u128;
    /// Time-weighted percentile at `p_ppm` parts per million, ms.
    fn percentile_ms(&self, p_ppm: u64) -> Option<f64>;
    /// Classic (frame-count) low FPS of the `p_ppm` longest frames.
    fn classic_low_fps(&self, p_ppm: u64) -> Option<f64>;
    /// The largest integer fps meeting `bound` (0 if 1 fps fails).
    fn stk_fps(&self, bound: StkBound) -> u32;
}

impl TimeMetrics {
    /// The time-weighted frame-time percentiles with their short names,
    /// P50 to P99.9, ms (for tables).
    pub fn percentiles_ms(&self) -> [(&'static str, f64); 5] {
        [
            ("P50", self.p50_ms),
            ("P90", self.p90_ms),
            ("P95", self.p95_ms),
            ("P99", self.p99_ms),
            ("P99.9", self.p99_9_ms),
        ]
    }

    /// The metrics of `d`; `None` if it has no frame.
    pub fn of(d: &impl TimeDistribution) -> Option<TimeMetrics> {
        let (n, t) = (d.frames(), d.total_ns());
        if n == 0 {
            return None;
        }
        let ms = |p_ppm| d.percentile_ms(p_ppm).unwrap_or(f64::NAN);
        Some(TimeMetrics {
            frames: n as usize,
            duration_s: t as f64 / NS_PER_S as f64,
            average_fps: n as f64 * NS_PER_S as f64 / t as f64,
            low_1pct_fps: d.classic_low_fps(LOW_1PCT_PPM).unwrap_or(f64::NAN),
            low_0_1pct_fps: d.classic_low_fps(LOW_0_1PCT_PPM).unwrap_or(f64::NAN),
            p50_ms: ms(500_000),
            p90_ms: ms(900_000),
            p95_ms: ms(950_000),
            p99_ms: ms(990_000),
            p99_9_ms: ms(999_000),
            steady_fps: d.stk_fps(STEADY),
            mostly_steady_fps: d.stk_fps(MOSTLY_STEADY),
            typical_fps: d.stk_fps(TYPICAL),
        })
    }
}

/// A log's exact sorted durations as a distribution.
impl TimeDistribution for SortedDurations {
    fn frames(&self) -> u64 {
        self.len() as u64
    }
    fn total_ns(&self) -> u128 {
        SortedDurations::total_ns(self)
    }
    fn percentile_ms(&self, p_ppm: u64) -> Option<f64> {
        self.percentile_ppm(p_ppm).map(|d| d as f64 / 1e6)
    }
    fn classic_low_fps(&self, p_ppm: u64) -> Option<f64> {
        SortedDurations::classic_low_fps(self, p_ppm)
    }
    fn stk_fps(&self, bound: StkBound) -> u32 {
        super::steady::SlowFrames::stk_fps(self, bound)
    }
}
