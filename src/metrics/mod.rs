//! Metrics core: every number of `../shared/METRICS.md`, exactly, over frame
//! durations in integer nanoseconds. Pure Rust, no Vulkan: the layer, HUD,
//! session log and CLI all use it.
//!
//! Whole-session functions take a slice of durations; [`Rolling`] keeps the
//! same numbers over a sliding time window, for the live HUD.

use serde::{Deserialize, Serialize};

/// Nanoseconds in a second.
pub const NS_PER_S: u64 = 1_000_000_000;

/// Knobs of the analysis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// θ of the stutter rule: relative excess over the 19-frame median (0.20).
    pub stutter_threshold: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options { stutter_threshold: 0.20 }
    }
}

/// The METRICS.md contract keys of `steadyhud analyze --json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
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
    pub stutter_count: usize,
    pub stutter_frames: Vec<usize>,
    pub osc: bool,
}

/// One point of the STK curves: slow(f) and excess(f) as shares of total time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StkPoint {
    pub fps: u32,
    pub slow: f64,
    pub excess: f64,
}

/// All whole-session metrics; `None` for an empty slice.
pub fn summarize(_durations_ns: &[u64], _opts: &Options) -> Option<Summary> {
    todo!("metrics core")
}

/// slow(f) and excess(f) for f = 1..=max_fps.
pub fn stk_curve(_durations_ns: &[u64], _max_fps: u32) -> Vec<StkPoint> {
    todo!("metrics core")
}

/// Sliding-window engine for the live HUD: `summary()` equals
/// `summarize(frames)` over the frames currently in the window.
pub struct Rolling {}

impl Rolling {
    /// `window_ns`: frames whose present is older than this (relative to the
    /// newest present) leave; `max_frames` bounds memory regardless.
    pub fn new(_window_ns: u64, _max_frames: usize, _opts: Options) -> Self {
        todo!("metrics core")
    }
    /// Adds the newest frame.
    pub fn push(&mut self, _duration_ns: u64) {
        todo!("metrics core")
    }
    /// Frames in the window, oldest first.
    pub fn frames(&self) -> Vec<u64> {
        todo!("metrics core")
    }
    /// Session-wide index of the oldest frame in the window.
    pub fn first_index(&self) -> u64 {
        todo!("metrics core")
    }
    pub fn summary(&self) -> Option<Summary> {
        todo!("metrics core")
    }
}
