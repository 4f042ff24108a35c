//! The units and knobs every metric shares.

/// Nanoseconds in a second.
pub const NS_PER_S: u64 = 1_000_000_000;

/// θ of the stutter rule unless set otherwise (docs/metrics.md#stutters).
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
