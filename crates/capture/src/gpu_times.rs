//! GPU busy time as the analysis thread reads it, whatever API measured
//! it: intervals (a submit's GPU start and end, mapped to the CPU clock)
//! gathered by an API's timer ([`GpuTimes`]; the Vulkan layer's is its
//! timestamp queries, `src/layer/gpu_timing/`), and the mapping from the
//! GPU's clock to `CLOCK_MONOTONIC` ([`Collected::offset`]).

use std::collections::VecDeque;
use std::sync::MutexGuard;

/// One timed interval (a submit call's timed batches): CPU time of the
/// call, GPU start and end mapped to CLOCK_MONOTONIC (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub submit_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// Intervals read so far, in submit order per queue (merged by submit time),
/// and how far they are complete.
#[derive(Default)]
pub struct Collected {
    pub intervals: VecDeque<Interval>,
    /// Every batch submitted before this CPU time has its interval in
    /// `intervals` (or was given up).
    pub complete_before_ns: u64,
    /// CPU ns − GPU ns from the last calibration, and when it was made.
    calibrated: Option<(i128, u64)>,
    /// Without calibration: the largest (submit − GPU start) seen, ns.
    estimate: Option<i128>,
}

impl Collected {
    /// The offset that maps GPU ns to CPU ns for a batch submitted at
    /// `submit` that started at `gpu_start` (updating the estimate).
    pub fn offset(&mut self, submit: u64, gpu_start: u64) -> i128 {
        if let Some((o, _)) = self.calibrated {
            return o;
        }
        let bound = submit as i128 - gpu_start as i128;
        let e = self.estimate.map_or(bound, |e| e.max(bound));
        self.estimate = Some(e);
        e
    }

    /// When the last calibration was made (CPU ns), if ever.
    pub fn calibrated_at(&self) -> Option<u64> {
        self.calibrated.map(|(_, at)| at)
    }

    /// A calibration made at CPU time `at`: CPU ns − GPU ns is `offset`.
    pub fn calibrate(&mut self, offset: i128, at: u64) {
        self.calibrated = Some((offset, at));
    }
}

/// An API's GPU timer, as the analysis thread reads it.
pub trait GpuTimes: Send + Sync {
    /// Reads the results that are ready (never waits for the GPU).
    fn poll(&self);
    /// The intervals read so far.
    fn collected(&self) -> MutexGuard<'_, Collected>;
    /// Runs of batches not timed because the timer's ring was full.
    fn ring_full(&self) -> u64;
    /// Intervals whose results never came.
    fn given_up(&self) -> u64;
}
