//! CPU or GPU? The GPU-bound verdict over per-frame GPU busy time.
//!
//! Input per frame: its duration (present to present, the frames of
//! `frametime_ms`) and its GPU busy time, both in integer ns, where GPU busy
//! is the time at least one of the app's submissions was executing on the
//! GPU (PresentMon's `MsGPUBusy`, steadyhud's `gpu_busy_ms`). A frame may
//! have no GPU data ([`NO_DATA`]): PresentMon's `NA`, a frame whose
//! timestamps were not available, a log without the column.
//!
//! - A frame is **GPU-bound** iff `busy ≥ 0.85 × duration`
//!   ([`GPU_BOUND_FRACTION`], [`is_gpu_bound`]), decided exactly in integers.
//! - `gpu_bound_pct` = Σ durations of GPU-bound frames / Σ durations of the
//!   frames with GPU data × 100: a share of *time*, like every steadyhud
//!   metric, so one long GPU-bound frame weighs as much as the short frames
//!   filling the same time.
//! - `gpu_busy_ms_avg` = Σ busy / number of frames with GPU data, in ms: the
//!   mean GPU busy time per frame (a per-frame mean, not per second).
//!
//! Frames without data count in neither sum. With no frame carrying data
//! there is no verdict (`None`, JSON `null`), never a 0 that would read as
//! "not GPU-bound".
//!
//! [`GpuStats::from_frames`] is the whole-session form; [`GpuTotals`] the
//! same sums pushed one frame at a time, and [`GpuWindow`] over the HUD's
//! sliding time window (the frames [`super::Rolling`] keeps). All three give
//! bit-identical results for the same frames, because they share the
//! integer sums and one conversion ([`GpuTotals::stats`]).

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Share of its frame time a frame's GPU busy time must reach for the frame
/// to be GPU-bound (0.85). A GPU that is busy at least 85 % of
/// the frame is what limits it; below that the CPU, a frame cap or waits do.
pub const GPU_BOUND_FRACTION: f64 = 0.85;

/// [`GPU_BOUND_FRACTION`] as an exact fraction, so the per-frame decision is
/// an integer comparison (`busy · 100 ≥ duration · 85`) with no rounding at
/// the boundary.
const BOUND_NUM: u128 = 85;
const BOUND_DEN: u128 = 100;

/// Busy value of a frame without GPU data (`u64::MAX` ns is 584 years: no
/// real frame has it).
pub const NO_DATA: u64 = u64::MAX;

/// Session-log column of the per-frame GPU busy time, ms.
pub const BUSY_COLUMN: &str = "gpu_busy_ms";
/// Session-log column of the per-frame GPU wait time, ms (span from the
/// frame's first GPU start to its last GPU end, minus busy).
pub const WAIT_COLUMN: &str = "gpu_wait_ms";
/// Label of the GPU busy time in stutter causes (`GPU work 12.0 ms`).
pub const GPU_WORK_LABEL: &str = "GPU work";
/// The label of [`WAIT_COLUMN`] where counters are listed (the HUD).
pub const GPU_WAIT_LABEL: &str = "GPU wait";

/// Whether a frame of `duration_ns` whose GPU was busy `busy_ns` is
/// GPU-bound: `busy ≥ 0.85 × duration`, exactly. A frame without data
/// ([`NO_DATA`]) is not.
pub fn is_gpu_bound(duration_ns: u64, busy_ns: u64) -> bool {
    busy_ns != NO_DATA && u128::from(busy_ns) * BOUND_DEN >= u128::from(duration_ns) * BOUND_NUM
}

/// The session verdict: what `analyze --json` and the summary JSON report.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuStats {
    /// Frames with GPU data (the frames the two values cover).
    pub frames: u64,
    /// Share of the time of the frames with GPU data spent in GPU-bound
    /// frames, percent (0–100).
    pub gpu_bound_pct: f64,
    /// Mean GPU busy time per frame with GPU data, ms.
    pub gpu_busy_ms_avg: f64,
}

impl GpuStats {
    /// The verdict over a whole session: `durations_ns[i]` and `busy_ns[i]`
    /// are frame i's duration and GPU busy time ([`NO_DATA`] if unknown).
    /// Frames past the shorter slice have no GPU data. `None` when no frame
    /// has GPU data (or all of those last 0 ns, which leaves no time to
    /// share).
    pub fn from_frames(durations_ns: &[u64], busy_ns: &[u64]) -> Option<GpuStats> {
        let mut t = GpuTotals::new();
        for (&d, &b) in durations_ns.iter().zip(busy_ns) {
            t.push(d, b);
        }
        t.stats()
    }

    /// The text line of `analyze`: `84.2 % of the time (GPU busy 7.9
    /// ms/frame on average)`.
    pub fn text(&self) -> String {
        format!(
            "{:.1} % of the time (GPU busy {:.1} ms/frame on average)",
            self.gpu_bound_pct, self.gpu_busy_ms_avg
        )
    }
}

/// The two verdict keys as JSON fields, `null` when the log has no GPU
/// data: flatten it into an output struct (`analyze --json`) or pass it as
/// extra keys to the summary JSON, so both carry the same keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuKeys {
    pub gpu_bound_pct: Option<f64>,
    pub gpu_busy_ms_avg: Option<f64>,
}

impl GpuKeys {
    pub fn of(stats: Option<&GpuStats>) -> GpuKeys {
        GpuKeys {
            gpu_bound_pct: stats.map(|s| s.gpu_bound_pct),
            gpu_busy_ms_avg: stats.map(|s| s.gpu_busy_ms_avg),
        }
    }
}

/// Integer sums of the verdict, one frame at a time (O(1) per frame, no
/// allocation: usable on the layer's analysis thread for the session).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuTotals {
    /// Frames with GPU data.
    frames: u64,
    /// Σ durations of the frames with GPU data, ns.
    time_ns: u128,
    /// Σ durations of the GPU-bound frames, ns.
    bound_ns: u128,
    /// Σ GPU busy of the frames with GPU data, ns.
    busy_ns: u128,
}

impl GpuTotals {
    pub fn new() -> GpuTotals {
        GpuTotals::default()
    }

    /// Adds a frame; a frame with `busy_ns == NO_DATA` changes nothing.
    pub fn push(&mut self, duration_ns: u64, busy_ns: u64) {
        if busy_ns == NO_DATA {
            return;
        }
        self.frames += 1;
        self.time_ns += u128::from(duration_ns);
        self.busy_ns += u128::from(busy_ns);
        if is_gpu_bound(duration_ns, busy_ns) {
            self.bound_ns += u128::from(duration_ns);
        }
    }

    /// Takes back a frame [`push`](Self::push)ed earlier (the window's
    /// oldest): exact, since the sums are integers.
    fn remove(&mut self, duration_ns: u64, busy_ns: u64) {
        if busy_ns == NO_DATA {
            return;
        }
        self.frames -= 1;
        self.time_ns -= u128::from(duration_ns);
        self.busy_ns -= u128::from(busy_ns);
        if is_gpu_bound(duration_ns, busy_ns) {
            self.bound_ns -= u128::from(duration_ns);
        }
    }

    /// Frames with GPU data so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The verdict over the frames pushed; `None` without GPU data.
    pub fn stats(&self) -> Option<GpuStats> {
        if self.frames == 0 || self.time_ns == 0 {
            return None;
        }
        Some(GpuStats {
            frames: self.frames,
            gpu_bound_pct: self.bound_ns as f64 / self.time_ns as f64 * 100.0,
            gpu_busy_ms_avg: self.busy_ns as f64 / self.frames as f64 / 1e6,
        })
    }
}

/// The verdict over a sliding time window, for the HUD: keeps exactly the
/// frames a [`super::Rolling`] with the same `window_ns` and `max_frames`
/// keeps (frame i, ending at present t_{i+1}, stays while
/// t_newest − t_{i+1} < `window_ns`), 16 bytes per frame in the window.
#[derive(Clone, Debug)]
pub struct GpuWindow {
    window_ns: u64,
    max_frames: usize,
    /// (duration, busy) of the frames in the window, oldest first.
    frames: VecDeque<(u64, u64)>,
    /// Σ durations of every frame in the window, with or without GPU data:
    /// the eviction rule is about time, not about GPU data.
    window_sum: u128,
    totals: GpuTotals,
}

impl GpuWindow {
    pub fn new(window_ns: u64, max_frames: usize) -> GpuWindow {
        GpuWindow {
            window_ns,
            max_frames,
            // See `rolling::room_for_one_more`: not reserved for `max_frames`.
            frames: VecDeque::new(),
            window_sum: 0,
            totals: GpuTotals::new(),
        }
    }

    /// Adds the newest frame ([`NO_DATA`] for unknown GPU busy) and drops
    /// the frames that left the window.
    pub fn push(&mut self, duration_ns: u64, busy_ns: u64) {
        super::rolling::room_for_one_more(&mut self.frames, self.max_frames, || (0, 0));
        self.frames.push_back((duration_ns, busy_ns));
        self.window_sum += u128::from(duration_ns);
        self.totals.push(duration_ns, busy_ns);
        while let Some(&(d, b)) = self.frames.front() {
            // The time of every frame after the oldest (same rule as Rolling).
            let age = self.window_sum - u128::from(d);
            if self.frames.len() <= self.max_frames && age < u128::from(self.window_ns) {
                break;
            }
            self.frames.pop_front();
            self.window_sum -= u128::from(d);
            self.totals.remove(d, b);
        }
    }

    /// Bytes held by the window's frames' buffer.
    pub fn heap_bytes(&self) -> usize {
        self.frames.capacity() * std::mem::size_of::<(u64, u64)>()
    }

    /// Frames in the window (with or without GPU data).
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The verdict over the window; `None` without GPU data in it.
    pub fn stats(&self) -> Option<GpuStats> {
        self.totals.stats()
    }
}

/// Per-frame GPU columns of a frame log: `busy_ns[i]` (and `wait_ns[i]`)
/// belong to frame i of the log's durations, [`NO_DATA`] where the row had
/// no value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuColumns {
    /// Column the busy times came from (`MsGPUBusy`, `GPUBusy`,
    /// `msGPUActive`, `gpu_busy_ms`).
    pub busy_column: String,
    pub busy_ns: Vec<u64>,
    /// Column the wait times came from, when the log has one.
    pub wait_column: Option<String>,
    pub wait_ns: Option<Vec<u64>>,
}

impl GpuColumns {
    /// The verdict over the log's frames.
    pub fn stats(&self, durations_ns: &[u64]) -> Option<GpuStats> {
        GpuStats::from_frames(durations_ns, &self.busy_ns)
    }

    /// The busy column as frame health reads it: a frame without data
    /// counts 0, as lost counters do (it never spikes itself; only a long
    /// run of such frames lowers its neighbours' median). Borrowed when
    /// every frame has data.
    pub fn busy_for_health(&self) -> std::borrow::Cow<'_, [u64]> {
        if self.busy_ns.contains(&NO_DATA) {
            self.busy_ns
                .iter()
                .map(|&b| if b == NO_DATA { 0 } else { b })
                .collect::<Vec<u64>>()
                .into()
        } else {
            self.busy_ns.as_slice().into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    /// As `Rolling`'s: the buffer follows the window, not its bound.
    #[test]
    fn the_buffer_follows_the_window_not_its_bound() {
        let mut w = GpuWindow::new(10_000 * MS, 200_000);
        for _ in 0..100_000 {
            w.push(6_944_444, 3 * MS);
        }
        assert!(w.len() > 1_400 && w.len() < 1_450, "{}", w.len());
        assert!(w.heap_bytes() <= 64 * 1024, "{} bytes", w.heap_bytes());
    }

    #[test]
    fn boundary_is_exactly_85_percent() {
        // 10 ms frame: 8.5 ms busy is bound, 1 ns less is not.
        assert!(is_gpu_bound(10 * MS, 8_500_000));
        assert!(!is_gpu_bound(10 * MS, 8_499_999));
        // A duration whose 85 % is not a whole ns: 85 % of 7 ns = 5.95 ns.
        assert!(is_gpu_bound(7, 6));
        assert!(!is_gpu_bound(7, 5));
        // GPU work running into the next frame may exceed the frame: bound.
        assert!(is_gpu_bound(10 * MS, 12 * MS));
        assert!(!is_gpu_bound(10 * MS, NO_DATA));
        // Huge values do not overflow the integer comparison.
        assert!(is_gpu_bound(u64::MAX - 1, u64::MAX - 1));
    }

    #[test]
    fn verdict_weighs_time_not_frames() {
        // 9 CPU-bound frames of 10 ms (busy 2 ms) and one GPU-bound frame of
        // 90 ms (busy 80 ms): 10 % of the frames, but half of the time.
        let mut d = vec![10 * MS; 9];
        let mut b = vec![2 * MS; 9];
        d.push(90 * MS);
        b.push(80 * MS);
        let s = GpuStats::from_frames(&d, &b).unwrap();
        assert_eq!(s.frames, 10);
        assert_eq!(s.gpu_bound_pct, 50.0);
        assert_eq!(s.gpu_busy_ms_avg, (9.0 * 2.0 + 80.0) / 10.0);
    }

    #[test]
    fn frames_without_data_are_left_out_of_both_sums() {
        // The 100 ms frame has no data: the verdict covers the two others.
        let d = [10 * MS, 100 * MS, 30 * MS];
        let b = [9 * MS, NO_DATA, 3 * MS];
        let s = GpuStats::from_frames(&d, &b).unwrap();
        assert_eq!(s.frames, 2);
        assert_eq!(s.gpu_bound_pct, 25.0);
        assert_eq!(s.gpu_busy_ms_avg, 6.0);
        // A shorter busy slice: the frames past it have no data.
        assert_eq!(GpuStats::from_frames(&d, &b[..1]).unwrap().frames, 1);
        assert_eq!(GpuStats::from_frames(&d, &[NO_DATA; 3]), None);
        assert_eq!(GpuStats::from_frames(&d, &[]), None);
        assert_eq!(GpuStats::from_frames(&[], &[]), None);
        // Zero-length frames leave no time to share, and do not panic.
        assert_eq!(GpuStats::from_frames(&[0, 0], &[0, 5]), None);
    }

    #[test]
    fn keys_are_null_without_data() {
        let v = serde_json::to_value(GpuKeys::of(None)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"gpu_bound_pct": null, "gpu_busy_ms_avg": null})
        );
        let s = GpuStats::from_frames(&[10 * MS], &[9 * MS]).unwrap();
        let v = serde_json::to_value(GpuKeys::of(Some(&s))).unwrap();
        assert_eq!(v["gpu_bound_pct"], 100.0);
        assert_eq!(v["gpu_busy_ms_avg"], 9.0);
        assert_eq!(
            s.text(),
            "100.0 % of the time (GPU busy 9.0 ms/frame on average)"
        );
    }

    #[test]
    fn health_column_reads_missing_frames_as_zero() {
        let g = GpuColumns {
            busy_column: BUSY_COLUMN.into(),
            busy_ns: vec![5, NO_DATA, 7],
            ..GpuColumns::default()
        };
        assert_eq!(&*g.busy_for_health(), &[5, 0, 7]);
        let g = GpuColumns {
            busy_ns: vec![5, 7],
            ..g
        };
        assert!(matches!(g.busy_for_health(), std::borrow::Cow::Borrowed(_)));
    }

    /// Per-frame busy: missing one time in five, else 0..=frame time × 1.2
    /// (around the 0.85 boundary and past the frame).
    fn frames() -> impl Strategy<Value = Vec<(u64, u64)>> {
        proptest::collection::vec(
            (1u64..50_000_000, 0u32..5, 0u64..=1200)
                .prop_map(|(d, miss, k)| (d, if miss == 0 { NO_DATA } else { d * k / 1000 })),
            0..200,
        )
    }

    /// The definition written out directly: the boundary in integers (as
    /// the issue states it, 85 % of the frame time), the sums in floating
    /// point.
    fn reference(f: &[(u64, u64)]) -> Option<(f64, f64)> {
        let known: Vec<&(u64, u64)> = f.iter().filter(|x| x.1 != NO_DATA).collect();
        let time: f64 = known.iter().map(|x| x.0 as f64).sum();
        if known.is_empty() {
            return None;
        }
        let bound: f64 = known
            .iter()
            .filter(|x| u128::from(x.1) * 100 >= u128::from(x.0) * 85)
            .fold(0.0, |sum, x| sum + x.0 as f64);
        let busy: f64 = known.iter().map(|x| x.1 as f64).sum();
        Some((bound / time * 100.0, busy / known.len() as f64 / 1e6))
    }

    proptest! {
        #[test]
        fn matches_the_definition(f in frames()) {
            let d: Vec<u64> = f.iter().map(|x| x.0).collect();
            let b: Vec<u64> = f.iter().map(|x| x.1).collect();
            let got = GpuStats::from_frames(&d, &b);
            match (got, reference(&f)) {
                (None, None) => {}
                (Some(s), Some((pct, avg))) => {
                    prop_assert!((s.gpu_bound_pct - pct).abs() <= 1e-9 * pct.max(1.0), "{} vs {}", s.gpu_bound_pct, pct);
                    prop_assert!((s.gpu_busy_ms_avg - avg).abs() <= 1e-9 * avg.max(1.0));
                    prop_assert!((0.0..=100.0).contains(&s.gpu_bound_pct));
                }
                (g, r) => prop_assert!(false, "{g:?} vs {r:?}"),
            }
        }

        /// The window gives bit-identically the session verdict of the
        /// frames `Rolling` keeps.
        #[test]
        fn window_equals_session_of_rollings_frames(f in frames(), window_ms in 0u64..400, max in 1usize..60) {
            let mut w = GpuWindow::new(window_ms * MS, max);
            let mut r = crate::rolling::Rolling::new(window_ms * MS, max, crate::options::Options::default());
            for (k, &(d, b)) in f.iter().enumerate() {
                w.push(d, b);
                r.push(d);
                let kept = r.frames();
                prop_assert_eq!(w.len(), kept.len());
                let from = k + 1 - kept.len();
                let d: Vec<u64> = f[from..=k].iter().map(|x| x.0).collect();
                prop_assert_eq!(&d, &kept);
                let b: Vec<u64> = f[from..=k].iter().map(|x| x.1).collect();
                prop_assert_eq!(w.stats(), GpuStats::from_frames(&d, &b));
            }
        }
    }
}
