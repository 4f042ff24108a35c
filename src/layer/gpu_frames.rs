//! The analysis thread's side of GPU timing for one stream ([`GpuFrames`]):
//! which GPU intervals ([`super::gpu_timing`]) belong to which frame, the
//! frame's `gpu_busy_ms` / `gpu_wait_ms`, and the session's GPU verdict.
//!
//! Attribution: frame i lasts from present i to present i+1; its GPU work is
//! every timed batch submitted (CPU time of the `vkQueueSubmit` call) in
//! that span, on any queue of the device. Its **busy** time is the length
//! of the union of those batches' GPU intervals, its **wait** time the rest
//! of the span from their first start to their last end. A frame's work
//! often runs on into the next frame's span (the GPU finishes frame i while
//! the CPU prepares i+1), so busy may exceed the frame's own duration; but
//! every GPU nanosecond is counted once, for the oldest frame whose work was
//! running then (an interval is clipped to start after the GPU time already
//! counted), so the session's busy time never exceeds the GPU time elapsed.
//!
//! A frame's row waits until every batch submitted before its end has been
//! read (usually one or two frames later), or at most [`LATE_NS`]; a frame
//! decided without all of its results is counted in `late_frames`.

use super::gpu_timing::GpuTimer;
use crate::counters::FrameValues;
use crate::metrics::gpu::{GpuKeys, GpuTotals, GpuWindow};
use std::collections::VecDeque;
use std::sync::Arc;

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

/// Busy and wait time of one frame from its intervals (GPU ns, any order);
/// `covered_until`: GPU time already counted for earlier frames (updated).
/// Sorts `spans` in place.
pub fn busy_and_wait(spans: &mut [(u64, u64)], covered_until: &mut u64) -> (u64, u64) {
    for s in spans.iter_mut() {
        s.0 = s.0.max(*covered_until);
        s.1 = s.1.max(s.0);
    }
    spans.sort_unstable();
    let (mut busy, mut cur_start, mut cur_end) = (0u64, 0u64, 0u64);
    let mut first = None;
    let mut last_end = 0u64;
    for &(a, b) in spans.iter() {
        if b == a {
            continue;
        }
        first.get_or_insert(a);
        last_end = last_end.max(b);
        if cur_end > cur_start && a <= cur_end {
            cur_end = cur_end.max(b);
        } else {
            busy += cur_end - cur_start;
            (cur_start, cur_end) = (a, b);
        }
    }
    busy += cur_end - cur_start;
    let Some(first) = first else {
        return (0, 0);
    };
    *covered_until = (*covered_until).max(last_end);
    (busy, last_end - first - busy)
}

/// GPU timing of one stream on the analysis thread.
pub struct GpuFrames {
    timer: Arc<GpuTimer>,
    busy_col: usize,
    wait_col: usize,
    pending: VecDeque<Pending>,
    covered_until: u64,
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
        timer: Arc<GpuTimer>,
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
            covered_until: 0,
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

    /// Reads new GPU results and hands every frame that is decided, in
    /// order, to `write` with its GPU columns filled. `newest`: CPU time of
    /// the newest present; `all`: decide every frame (the stream ends).
    pub fn flush(&mut self, newest: u64, all: bool, mut write: impl FnMut(&Pending)) {
        if self.pending.is_empty() {
            return;
        }
        self.timer.poll();
        let collected = self.timer.collected();
        while let Some(p) = self.pending.front() {
            let complete = collected.complete_before_ns > p.to;
            if !(complete || all || newest.saturating_sub(p.to) > LATE_NS) {
                break;
            }
            let mut p = *p;
            self.pending.pop_front();
            let from = collected
                .intervals
                .partition_point(|i| i.submit_ns < p.from);
            let to = collected.intervals.partition_point(|i| i.submit_ns < p.to);
            self.spans.clear();
            self.spans.extend(
                collected
                    .intervals
                    .range(from..to)
                    .map(|i| (i.start_ns, i.end_ns)),
            );
            let (busy, wait) = busy_and_wait(&mut self.spans, &mut self.covered_until);
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
        let mut keys =
            serde_json::to_value(GpuKeys::of(self.totals.stats().as_ref())).unwrap_or_default();
        if let Some(map) = keys.as_object_mut() {
            map.insert(
                "gpu_timing".into(),
                serde_json::json!({
                    "frames": self.totals.frames(),
                    "late_frames": self.late_frames,
                    "ring_full_batches": self.timer.ring_full.load(std::sync::atomic::Ordering::Relaxed),
                    "given_up_batches": self.timer.given_up.load(std::sync::atomic::Ordering::Relaxed),
                }),
            );
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_and_gaps() {
        let mut c = 0;
        // [0,10) ∪ [5,15) ∪ [20,30): busy 25, span 30, wait 5.
        let mut s = vec![(20, 30), (0, 10), (5, 15)];
        assert_eq!(busy_and_wait(&mut s, &mut c), (25, 5));
        assert_eq!(c, 30);
    }

    #[test]
    fn work_running_into_the_next_frame_is_counted_once() {
        let mut c = 0;
        let mut f1 = vec![(0, 40)];
        assert_eq!(busy_and_wait(&mut f1, &mut c), (40, 0));
        // The next frame's batch overlaps the first's tail: only 40..50.
        let mut f2 = vec![(30, 50)];
        assert_eq!(busy_and_wait(&mut f2, &mut c), (10, 0));
        // Entirely inside already counted time: nothing.
        let mut f3 = vec![(35, 45)];
        assert_eq!(busy_and_wait(&mut f3, &mut c), (0, 0));
        assert_eq!(c, 50);
    }

    #[test]
    fn no_work_is_zero() {
        let mut c = 7;
        assert_eq!(busy_and_wait(&mut [], &mut c), (0, 0));
        assert_eq!(c, 7);
    }

    proptest::proptest! {
        /// However the intervals of consecutive frames overlap, the busy
        /// times add up to the union of all of them (never more than the
        /// GPU time elapsed).
        #[test]
        fn frame_busy_sums_to_the_union(frames in proptest::collection::vec(
            proptest::collection::vec((0u64..1000, 0u64..200), 0..6), 1..20)) {
            let mut c = 0;
            let mut total = 0;
            let mut all = Vec::new();
            for f in &frames {
                let mut s: Vec<(u64, u64)> = f.iter().map(|&(a, l)| (a, a + l)).collect();
                all.extend(s.iter().copied());
                total += busy_and_wait(&mut s, &mut c).0;
            }
            // The union of everything, computed the plain way.
            let mut covered = vec![false; 1200];
            for (a, b) in all {
                for t in a..b { covered[t as usize] = true; }
            }
            let union = covered.iter().filter(|&&x| x).count() as u64;
            proptest::prop_assert!(total <= union, "total {} union {}", total, union);
        }
    }
}
