//! The analysis thread's side of GPU timing for one stream ([`GpuFrames`]):
//! the GPU time of each frame, `gpu_busy_ms` / `gpu_wait_ms`, and the
//! session's GPU verdict.
//!
//! Attribution by time: frame i lasts from present i to present i+1 (CPU
//! clock), and its **busy** time is how long, within that span, at least
//! one of the app's batches (any queue of the device, whenever submitted)
//! was running on the GPU: the union of the batches' GPU intervals
//! (the client's [`GpuTimes`], mapped to the CPU clock) clipped to the span.
//! Its **wait** time is the rest of the span from the first such GPU start
//! to the last such end. So a frame's busy time never exceeds its duration
//! and the session's busy time is exactly the GPU's busy time while frames
//! were measured. Why by time rather than by the frame that submitted the
//! work: GPUs run a frame behind the CPU (lavapipe's present waits for it,
//! real GPUs pipeline), so a frame's own submissions run in the next span;
//! comparing them with their own span makes every change in GPU load from
//! one frame to the next look like a swing of the verdict, while "was the
//! GPU busy during this frame's time" is what GPU-bound means.
//!
//! A frame's row waits until every batch submitted before its end has been
//! read (usually one or two frames later; a batch cannot run before it is
//! submitted), or at most [`LATE_NS`]; a frame decided without all of its
//! results is counted in `late_frames`.

use crate::gpu_times::GpuTimes;
use std::collections::VecDeque;
use std::sync::Arc;
use steadyhud_counters::FrameValues;
use steadyhud_metrics::gpu::{GpuKeys, GpuTotals, GpuWindow};

/// How long a frame's row may wait for its GPU results (CPU time after the
/// frame's end, judged by the newest present).
pub const LATE_NS: u64 = 1_000_000_000;

/// A frame waiting for its GPU results.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub index: u64,
    pub present_ns: u64,
    pub duration_ns: u64,
    /// CPU time span of the frame: [from, to).
    pub from: u64,
    pub to: u64,
    pub values: FrameValues,
}

/// Batches submitted this long before a frame's start are still looked at
/// for work running into it.
const LOOKBACK_NS: u64 = 1_000_000_000;

/// Busy and wait time within `[from, to)` of GPU intervals (any order,
/// any overlap); `scratch` is reused.
pub fn busy_in_span(
    intervals: impl Iterator<Item = (u64, u64)>,
    from: u64,
    to: u64,
    scratch: &mut Vec<(u64, u64)>,
) -> (u64, u64) {
    scratch.clear();
    scratch.extend(
        intervals
            .map(|(a, b)| (a.max(from), b.min(to)))
            .filter(|&(a, b)| b > a),
    );
    scratch.sort_unstable();
    let Some(&(first, _)) = scratch.first() else {
        return (0, 0);
    };
    let (mut busy, mut cur_start, mut cur_end, mut last_end) = (0u64, first, first, first);
    for &(a, b) in scratch.iter() {
        if a <= cur_end {
            cur_end = cur_end.max(b);
        } else {
            busy += cur_end - cur_start;
            (cur_start, cur_end) = (a, b);
        }
        last_end = last_end.max(b);
    }
    busy += cur_end - cur_start;
    (busy, last_end - first - busy)
}

/// GPU timing of one stream on the analysis thread.
pub struct GpuFrames {
    timer: Arc<dyn GpuTimes>,
    busy_col: usize,
    wait_col: usize,
    pending: VecDeque<Pending>,
    spans: Vec<(u64, u64)>,
    /// The session's verdict sums (summary) and the HUD's window.
    totals: GpuTotals,
    window: GpuWindow,
    late_frames: u64,
}

impl GpuFrames {
    /// `busy_col`/`wait_col`: indices of the `gpu_busy_ms`/`gpu_wait_ms`
    /// counters in the frame values.
    /// `window_ns`, `max_frames`: the HUD's rolling window.
    pub fn new(
        timer: Arc<dyn GpuTimes>,
        busy_col: usize,
        wait_col: usize,
        window_ns: u64,
        max_frames: usize,
    ) -> GpuFrames {
        GpuFrames {
            timer,
            busy_col,
            wait_col,
            pending: VecDeque::new(),
            spans: Vec::new(),
            totals: GpuTotals::new(),
            window: GpuWindow::new(window_ns, max_frames),
            late_frames: 0,
        }
    }

    /// Queues a frame until its GPU results are in.
    pub fn push(&mut self, p: Pending) {
        self.pending.push_back(p);
    }

    /// Frames held back for their GPU results.
    pub fn held(&self) -> usize {
        self.pending.len()
    }

    /// Reads new GPU results and hands every frame that is decided, in
    /// order, to `write` with its GPU columns filled. `newest`: CPU time of
    /// the newest present; `all`: decide every frame (the stream ends).
    pub fn flush(&mut self, newest: u64, all: bool, mut write: impl FnMut(&Pending)) {
        // Read results every tick, frames waiting or not: an app that submits
        // for seconds without presenting (a loading screen) would otherwise
        // fill the slot rings and go untimed.
        self.timer.poll();
        if self.pending.is_empty() {
            return;
        }
        let collected = self.timer.collected();
        while let Some(p) = self.pending.front() {
            let complete = collected.complete_before_ns > p.to;
            if !(complete || all || newest.saturating_sub(p.to) > LATE_NS) {
                break;
            }
            let mut p = *p;
            self.pending.pop_front();
            let lo = collected
                .intervals
                .partition_point(|i| i.submit_ns < p.from.saturating_sub(LOOKBACK_NS));
            let hi = collected.intervals.partition_point(|i| i.submit_ns < p.to);
            let (busy, wait) = busy_in_span(
                collected
                    .intervals
                    .range(lo..hi)
                    .map(|i| (i.start_ns, i.end_ns)),
                p.from,
                p.to,
                &mut self.spans,
            );
            p.values[self.busy_col] = busy;
            p.values[self.wait_col] = wait;
            if !complete {
                self.late_frames += 1;
            }
            self.totals.push(p.duration_ns, busy);
            self.window.push(p.duration_ns, busy);
            write(&p);
        }
    }

    /// The window's GPU numbers for the HUD.
    pub fn live(&self) -> Option<crate::live::LiveGpu> {
        self.window.stats().map(|s| crate::live::LiveGpu {
            busy_ms: s.gpu_busy_ms_avg as f32,
            bound_pct: s.gpu_bound_pct as f32,
        })
    }

    /// Summary keys: `gpu_bound_pct`, `gpu_busy_ms_avg` and how the timing
    /// went (`gpu_timing`).
    pub fn summary(&self) -> serde_json::Value {
        // Two optional numbers: encoding cannot fail (json! unwraps it).
        let mut keys = serde_json::json!(GpuKeys::of(self.totals.stats().as_ref()));
        if let Some(map) = keys.as_object_mut() {
            map.insert(
                "gpu_timing".into(),
                serde_json::json!({
                    "frames": self.totals.frames(),
                    "late_frames": self.late_frames,
                    "ring_full_batches": self.timer.ring_full(),
                    "given_up_batches": self.timer.given_up(),
                }),
            );
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(v: &[(u64, u64)], from: u64, to: u64) -> (u64, u64) {
        busy_in_span(v.iter().copied(), from, to, &mut Vec::new())
    }

    #[test]
    fn union_and_gaps() {
        // [0,10) ∪ [5,15) ∪ [20,30): busy 25, span 30, wait 5.
        assert_eq!(span(&[(20, 30), (0, 10), (5, 15)], 0, 100), (25, 5));
    }

    #[test]
    fn work_is_clipped_to_the_frame_it_ran_in() {
        // One batch from 30 to 50 over frames [0,40) and [40,80).
        assert_eq!(span(&[(30, 50)], 0, 40), (10, 0));
        assert_eq!(span(&[(30, 50)], 40, 80), (10, 0));
        assert_eq!(span(&[(30, 50)], 80, 90), (0, 0));
    }

    #[test]
    fn no_work_is_zero() {
        assert_eq!(span(&[], 0, 10), (0, 0));
    }

    proptest::proptest! {
        /// However batches overlap frames, the frames' busy times add up to
        /// the union of the batches within the frames (never more than the
        /// time elapsed), and no frame is busier than it is long.
        #[test]
        fn frame_busy_sums_to_the_union(
            batches in proptest::collection::vec((0u64..1000, 0u64..200), 0..30),
            cuts in proptest::collection::btree_set(1u64..1200, 1..20),
        ) {
            let b: Vec<(u64, u64)> = batches.iter().map(|&(a, l)| (a, a + l)).collect();
            let mut edges = vec![0u64];
            edges.extend(cuts.iter().copied());
            let mut total = 0;
            for w in edges.windows(2) {
                let (busy, wait) = span(&b, w[0], w[1]);
                proptest::prop_assert!(busy + wait <= w[1] - w[0]);
                total += busy;
            }
            let end = *edges.last().unwrap();
            let mut covered = vec![false; end as usize];
            for &(a, z) in &b {
                for t in a..z.min(end) { covered[t as usize] = true; }
            }
            let union = covered.iter().filter(|&&x| x).count() as u64;
            proptest::prop_assert_eq!(total, union);
        }
    }
}
