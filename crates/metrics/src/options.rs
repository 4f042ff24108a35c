//! The units and knobs every metric shares.

/// Nanoseconds in a second.
pub const NS_PER_S: u64 = 1_000_000_000;

/// θ of the stutter rule unless set otherwise (docs/metrics.md#stutters).
pub const DEFAULT_STUTTER_THRESHOLD: f64 = 0.20;

/// The frame rate whose budget (1/f s) `time_over_budget_pct` measures
/// against unless told otherwise (docs/metrics.md#time-over-budget-time_over_budget_pct).
pub const DEFAULT_TARGET_FPS: u32 = 60;

/// Knobs of the analysis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// θ of the stutter rule: relative excess over the 19-frame median (0.20).
    pub stutter_threshold: f64,
    /// The target frame rate f (≥ 1; 0 is taken as 1): a frame is over
    /// budget when it lasts longer than 1/f s (60).
    pub target_fps: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            stutter_threshold: DEFAULT_STUTTER_THRESHOLD,
            target_fps: DEFAULT_TARGET_FPS,
        }
    }
}
