//! Metrics core: every number of `../shared/METRICS.md`, exactly, over frame
//! durations in integer nanoseconds. Pure Rust, no Vulkan: the layer, HUD,
//! session log and CLI all use it.
//!
//! Whole-session functions take a slice of durations; [`Rolling`] keeps the
//! same numbers over a sliding time window, for the live HUD.
//!
//! - `sorted`: sorted durations + prefix sums: average, classic lows,
//!   time-weighted percentiles ([`SortedDurations`]).
//! - `steady`: STK slow/excess curves and Steady / Mostly Steady / Typical FPS.
//! - `stutter`: the 19-frame median stutter rule and the OSC flag.
//! - `rolling`: the incremental window engine.
//! - [`gpu`]: the GPU-bound verdict over per-frame GPU busy time.
//! - `histogram`: the mergeable time histogram (log-spaced buckets, 1 %) and
//!   the fleet-wide metrics read off it.
//! - `time_metrics`: the order-free metrics, assembled once for both
//!   ([`TimeMetrics`]).
//!
//! Decisions are exact integer arithmetic on ns (u128 sums, percentiles as
//! parts per million); reported values are `f64`.

#![forbid(unsafe_code)]

pub mod gpu;
pub mod histogram;
mod rolling;
mod sorted;
mod steady;
mod stutter;
mod time_metrics;

pub use histogram::TimeHistogram;
pub use rolling::Rolling;
pub use sorted::{ppm_of, time_weighted_percentile, SortedDurations, PPM};
pub use steady::{StkBound, MOSTLY_STEADY, STEADY, TYPICAL};
pub use stutter::{
    for_each_shape, frame_shape, median_sorted, oscillation, p90, quantile_sorted, shapes,
    stutter_excess, stutters, stutters_and_osc, window_of, window_shapes, FrameShape, P90Above,
    WindowShapes, HALF_WINDOW, OSC_MIN_RATIO, OSC_MIN_SPREAD_NS, STUTTER_MIN_NS, WINDOW,
};
pub use time_metrics::{TimeDistribution, TimeMetrics};

use serde::{Deserialize, Serialize};

/// Nanoseconds in a second.
pub const NS_PER_S: u64 = 1_000_000_000;

/// θ of the stutter rule unless set otherwise (METRICS.md).
pub const DEFAULT_STUTTER_THRESHOLD: f64 = 0.20;

/// Knobs of the analysis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// θ of the stutter rule: relative excess over the 19-frame median (0.20).
    pub stutter_threshold: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            stutter_threshold: DEFAULT_STUTTER_THRESHOLD,
        }
    }
}

/// The keys of [`Summary`] in order: the METRICS.md contract keys
/// (docs/metrics.md, "The JSON keys"), for outputs that list them.
pub const SUMMARY_KEYS: [&str; 16] = [
    "frames",
    "duration_s",
    "average_fps",
    "low_1pct_fps",
    "low_0_1pct_fps",
    "p50_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "p99_9_ms",
    "steady_fps",
    "mostly_steady_fps",
    "typical_fps",
    "stutter_count",
    "stutter_frames",
    "osc",
];

/// The METRICS.md contract keys of `steadyhud analyze --json`: the
/// order-free [`TimeMetrics`] (read through `Deref`, serialized flat) and
/// the per-frame ones only an ordered log has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    #[serde(flatten)]
    pub time: TimeMetrics,
    pub stutter_count: usize,
    pub stutter_frames: Vec<usize>,
    pub osc: bool,
}

impl std::ops::Deref for Summary {
    type Target = TimeMetrics;
    fn deref(&self) -> &TimeMetrics {
        &self.time
    }
}

/// One point of the STK curves: slow(f) and excess(f) as shares of total time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StkPoint {
    pub fps: u32,
    pub slow: f64,
    pub excess: f64,
}

/// All whole-session metrics; `None` for an empty slice.
///
/// Durations should be > 0 (METRICS.md makes ≤ 0 an input error, caught by
/// the parsers); zeros are tolerated without panicking.
pub fn summarize(durations_ns: &[u64], opts: &Options) -> Option<Summary> {
    if durations_ns.is_empty() {
        return None;
    }
    // Peak memory besides the caller's durations: one sorted copy (8 B a
    // frame) and its block sums; the window pass keeps only stutter indices.
    let sorted = SortedDurations::new(durations_ns);
    let (stutter_frames, osc) = stutter::stutters_and_osc(durations_ns, opts.stutter_threshold);
    assemble_parts(&sorted, stutter_frames, osc)
}

/// slow(f) and excess(f) for f = 1..=max_fps (empty for no frames).
pub fn stk_curve(durations_ns: &[u64], max_fps: u32) -> Vec<StkPoint> {
    SortedDurations::new(durations_ns).stk_curve(max_fps)
}

/// Builds the [`Summary`] from the sorted durations and the per-frame
/// shapes; shared by [`summarize`] and [`Rolling`] so both give the same bits.
fn assemble(sorted: &SortedDurations, mut shapes: WindowShapes) -> Option<Summary> {
    let osc = shapes.osc();
    assemble_parts(sorted, shapes.stutter_frames, osc)
}

/// The [`Summary`] from the sorted durations, the stutter frames and OSC;
/// `None` for no frame.
fn assemble_parts(
    sorted: &SortedDurations,
    stutter_frames: Vec<usize>,
    osc: bool,
) -> Option<Summary> {
    Some(Summary {
        time: TimeMetrics::of(sorted)?,
        stutter_count: stutter_frames.len(),
        stutter_frames,
        osc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`SUMMARY_KEYS`] are the fields of [`Summary`] as serialized, in order.
    #[test]
    fn summary_keys_are_the_serialized_fields() {
        let s = summarize(&[10_000_000, 20_000_000], &Options::default()).unwrap();
        let text = serde_json::to_string(&s).unwrap();
        let positions: Vec<usize> = SUMMARY_KEYS
            .iter()
            .map(|k| {
                text.find(&format!("\"{k}\":"))
                    .unwrap_or_else(|| panic!("{k}: {text}"))
            })
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
        let serde_json::Value::Object(map) = serde_json::to_value(&s).unwrap() else {
            panic!("not an object")
        };
        assert_eq!(map.len(), SUMMARY_KEYS.len());
    }
}
