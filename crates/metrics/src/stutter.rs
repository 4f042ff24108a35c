//! Nsight's stutter rule and OSC flag (seed nsight-stutter-analysis): each
//! frame against the median and quartiles of its 19-frame window.
//!
//! [`frame_shape`] turns one frame and its sorted window into the stutter
//! flag and the quartile spread/ratio; [`p90`] is numpy's default linear
//! percentile. Whole-session code here and the rolling engine call exactly
//! these functions, so both give bit-identical floats.

use super::options::Options;
use std::cmp::Ordering;

/// Frames each side of a frame in its window (19 = 2·9 + 1).
pub const HALF_WINDOW: usize = 9;
/// Frames in an unclipped window.
pub const WINDOW: usize = 2 * HALF_WINDOW + 1;
/// Excess over the median below which nothing is a stutter, ns.
pub const STUTTER_MIN_NS: f64 = 4e6;
/// OSC needs P90 of q3 − q1 above this, ns.
pub const OSC_MIN_SPREAD_NS: f64 = 4e6;
/// OSC needs P90 of q3 / q1 above this.
pub const OSC_MIN_RATIO: f64 = 1.2;

/// What the window says about one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameShape {
    /// d − m > 4 ms and (d − m)/m > θ.
    pub stutter: bool,
    /// q3 − q1 of the window, ns.
    pub spread: f64,
    /// q3 / q1 of the window.
    pub ratio: f64,
}

/// numpy's `_lerp`: a + (b−a)·t, computed from b's side when t ≥ 0.5.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// numpy's default ("linear") percentile position: the two ranks to blend
/// and the weight of the upper one, for `len ≥ 1` values at fraction `q`.
fn position(len: usize, q: f64) -> (usize, usize, f64) {
    let virt = (len - 1) as f64 * q;
    let lo = virt.floor();
    let lo_i = lo as usize;
    (lo_i, (lo_i + 1).min(len - 1), virt - lo)
}

/// Linear-interpolation quantile of an ascending slice of durations.
pub fn quantile_sorted(sorted: &[u64], q: f64) -> f64 {
    let (lo, hi, t) = position(sorted.len(), q);
    lerp(sorted[lo] as f64, sorted[hi] as f64, t)
}

/// Median of an ascending slice (mean of the two middle values when even).
pub fn median_sorted(sorted: &[u64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0
    }
}

/// The stutter flag and quartile spread/ratio of a frame of duration `d`
/// whose (clipped) window, `d` included, is `sorted_window`, ascending.
pub fn frame_shape(sorted_window: &[u64], d: u64, theta: f64) -> FrameShape {
    let m = median_sorted(sorted_window);
    let q1 = quantile_sorted(sorted_window, 0.25);
    let q3 = quantile_sorted(sorted_window, 0.75);
    FrameShape {
        stutter: stutter_excess(d, m, theta).is_some(),
        spread: q3 - q1,
        ratio: q3 / q1,
    }
}

/// The stutter rule (docs/metrics.md#stutters) for a frame of `d` ns whose
/// window median is `m`: its excess over the median, in ns, if it stutters
/// (more than [`STUTTER_MIN_NS`] and more than θ·m). Every stutter judgement
/// uses it.
pub fn stutter_excess(d: u64, m: f64, theta: f64) -> Option<f64> {
    let excess = d as f64 - m;
    (excess > STUTTER_MIN_NS && excess / m > theta).then_some(excess)
}

/// The clipped window of frame `i` among `n` frames, as an index range.
pub fn window_of(i: usize, n: usize) -> std::ops::Range<usize> {
    i.saturating_sub(HALF_WINDOW)..(i + HALF_WINDOW + 1).min(n)
}

/// [`frame_shape`] of frame `i` of `frames`, sorting its window on the stack.
pub fn shape_at(frames: impl Fn(usize) -> u64, i: usize, n: usize, theta: f64) -> FrameShape {
    let mut buf = [0u64; WINDOW];
    let range = window_of(i, n);
    let len = range.len();
    for (slot, k) in buf.iter_mut().zip(range) {
        *slot = frames(k);
    }
    let win = &mut buf[..len];
    win.sort_unstable();
    frame_shape(win, frames(i), theta)
}

/// numpy's linear P90 of `values` (reordered in place, O(n)); NaN if empty.
/// Ordering is `f64::total_cmp`.
pub fn p90(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let (lo, hi, t) = position(values.len(), 0.9);
    let (_, a, rest) = values.select_nth_unstable_by(lo, f64::total_cmp);
    let a = *a;
    let b = if hi > lo {
        rest.iter().copied().min_by(f64::total_cmp).unwrap_or(a)
    } else {
        a
    };
    lerp(a, b, t)
}

/// The per-frame shapes of a sequence, kept as the stutter indices and the
/// spread and ratio columns (what the summary needs, 16 bytes a frame).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowShapes {
    /// Positions of the stutter frames, ascending.
    pub stutter_frames: Vec<usize>,
    /// q3 − q1 of each frame's window, ns.
    pub spread: Vec<f64>,
    /// q3 / q1 of each frame's window.
    pub ratio: Vec<f64>,
}

impl WindowShapes {
    pub fn with_capacity(n: usize) -> Self {
        WindowShapes {
            stutter_frames: Vec::new(),
            spread: Vec::with_capacity(n),
            ratio: Vec::with_capacity(n),
        }
    }

    /// Appends the next frame's shape.
    pub fn push(&mut self, shape: FrameShape) {
        if shape.stutter {
            self.stutter_frames.push(self.spread.len());
        }
        self.spread.push(shape.spread);
        self.ratio.push(shape.ratio);
    }

    /// The OSC rule: P90(spread) > 4 ms and P90(ratio) > 1.2. Reorders the
    /// columns in place (selection, O(n)).
    pub fn osc(&mut self) -> bool {
        let spread = p90(&mut self.spread);
        if spread.partial_cmp(&OSC_MIN_SPREAD_NS) != Some(Ordering::Greater) {
            return false;
        }
        p90(&mut self.ratio) > OSC_MIN_RATIO
    }
}

/// Whether numpy's linear P90 of a stream of values is above `limit`,
/// decided in one pass without keeping the values (the OSC rule needs only
/// that answer, and keeping two `f64` columns cost 16 B a frame).
///
/// With the values sorted v_0 ≤ … ≤ v_{n−1}, P90 = lerp(v_lo, v_hi, t). For
/// finite values ≥ 0, lerp stays within [v_lo, v_hi] in floating point, so:
/// if at most `lo` values are ≤ limit, v_lo > limit and P90 > limit; if more
/// than `hi` are, v_hi ≤ limit and P90 ≤ limit; otherwise exactly `lo + 1`
/// are, so v_lo is the largest of them and v_hi the smallest value above,
/// both tracked, and P90 is computed from them bit for bit as [`p90`] does.
#[derive(Clone, Copy, Debug)]
pub struct P90Above {
    limit: f64,
    /// Values ≤ limit (`f64::total_cmp`), their largest, the smallest above.
    at_most: usize,
    max_at_most: Option<f64>,
    min_above: Option<f64>,
    /// All values finite and ≥ 0 (else the bracketing above does not hold).
    tame: bool,
}

impl P90Above {
    pub fn new(limit: f64) -> Self {
        P90Above {
            limit,
            at_most: 0,
            max_at_most: None,
            min_above: None,
            tame: true,
        }
    }

    pub fn push(&mut self, v: f64) {
        if !(v.is_finite() && v >= 0.0) {
            self.tame = false;
        }
        if v.total_cmp(&self.limit) == Ordering::Greater {
            if self
                .min_above
                .is_none_or(|m| v.total_cmp(&m) == Ordering::Less)
            {
                self.min_above = Some(v);
            }
        } else {
            self.at_most += 1;
            if self
                .max_at_most
                .is_none_or(|m| v.total_cmp(&m) == Ordering::Greater)
            {
                self.max_at_most = Some(v);
            }
        }
    }

    /// Whether P90 of the `n` values pushed is > limit; `None` when a value
    /// was negative or not finite (then only the values themselves can say).
    pub fn decide(&self, n: usize) -> Option<bool> {
        if !self.tame {
            return None;
        }
        if n == 0 {
            return Some(false);
        }
        let (lo, hi, t) = position(n, 0.9);
        if self.at_most <= lo {
            return Some(true);
        }
        if self.at_most > hi {
            return Some(false);
        }
        let (a, b) = (self.max_at_most?, self.min_above?);
        Some(lerp(a, b, t) > self.limit)
    }
}

/// The stutter frames and the OSC flag of a whole session in one pass,
/// keeping nothing per frame but the stutter indices; the same answers as
/// [`window_shapes`] + [`WindowShapes::osc`], which it falls back to for
/// durations of 0 (a window quartile of 0 makes a ratio infinite or NaN).
pub fn stutters_and_osc(durations_ns: &[u64], theta: f64) -> (Vec<usize>, bool) {
    let mut frames = Vec::new();
    let mut spread = P90Above::new(OSC_MIN_SPREAD_NS);
    let mut ratio = P90Above::new(OSC_MIN_RATIO);
    let mut i = 0;
    for_each_shape(durations_ns, theta, |s| {
        if s.stutter {
            frames.push(i);
        }
        spread.push(s.spread);
        ratio.push(s.ratio);
        i += 1;
    });
    let n = durations_ns.len();
    let osc = match (spread.decide(n), ratio.decide(n)) {
        (Some(s), Some(r)) => s && r,
        _ => window_shapes(durations_ns, theta).osc(),
    };
    (frames, osc)
}

/// Calls `each` with every frame's shape over the whole session, in order,
/// sliding a sorted 19-frame window along (O(19) per frame).
pub fn for_each_shape(durations_ns: &[u64], theta: f64, mut each: impl FnMut(FrameShape)) {
    let n = durations_ns.len();
    let mut win: Vec<u64> = Vec::with_capacity(WINDOW);
    for &d in &durations_ns[..n.min(HALF_WINDOW + 1)] {
        insert_sorted(&mut win, d);
    }
    for (i, &d) in durations_ns.iter().enumerate() {
        each(frame_shape(&win, d, theta));
        if i >= HALF_WINDOW {
            let old = durations_ns[i - HALF_WINDOW];
            if let Ok(k) = win.binary_search(&old) {
                win.remove(k);
            }
        }
        if let Some(&new) = durations_ns.get(i + HALF_WINDOW + 1) {
            insert_sorted(&mut win, new);
        }
    }
}

/// Every frame's shape over the whole session.
pub fn shapes(durations_ns: &[u64], theta: f64) -> Vec<FrameShape> {
    let mut out = Vec::with_capacity(durations_ns.len());
    for_each_shape(durations_ns, theta, |s| out.push(s));
    out
}

/// The shapes of a whole session, as columns.
pub fn window_shapes(durations_ns: &[u64], theta: f64) -> WindowShapes {
    let mut out = WindowShapes::with_capacity(durations_ns.len());
    for_each_shape(durations_ns, theta, |s| out.push(s));
    out
}

fn insert_sorted(win: &mut Vec<u64>, d: u64) {
    let k = win.partition_point(|&x| x <= d);
    win.insert(k, d);
}

/// Indices of the stutter frames of a whole session.
pub fn stutters(durations_ns: &[u64], opts: &Options) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    for_each_shape(durations_ns, opts.stutter_threshold, |s| {
        if s.stutter {
            out.push(i);
        }
        i += 1;
    });
    out
}

/// The OSC flag of a whole session (θ plays no part in it).
pub fn oscillation(durations_ns: &[u64]) -> bool {
    stutters_and_osc(durations_ns, Options::default().stutter_threshold).1
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn numpy_linear_quantiles() {
        // numpy.percentile([1,2,3,4], [25, 50, 75]) = [1.75, 2.5, 3.25]
        let s = [1u64, 2, 3, 4];
        assert_eq!(quantile_sorted(&s, 0.25), 1.75);
        assert_eq!(quantile_sorted(&s, 0.5), 2.5);
        assert_eq!(quantile_sorted(&s, 0.75), 3.25);
        assert_eq!(median_sorted(&s), 2.5);
        assert_eq!(median_sorted(&[1, 3, 8]), 3.0);
        // numpy.percentile(range(10), 90) = 8.1 (position 8.1)
        let mut fwd: Vec<f64> = (0..10).map(f64::from).collect();
        let mut rev: Vec<f64> = (0..10).rev().map(f64::from).collect();
        let p = p90(&mut fwd);
        assert!((p - 8.1).abs() < 1e-12, "{p}");
        assert_eq!(p.to_bits(), p90(&mut rev).to_bits());
        assert_eq!(p90(&mut [5.0]), 5.0);
        assert!(p90(&mut []).is_nan());
    }

    #[test]
    fn sliding_window_matches_per_frame_sort() {
        let d: Vec<u64> = (0..60u64).map(|i| (i * 7919) % 23 * MS + MS).collect();
        let fast = shapes(&d, 0.2);
        for (i, shape) in fast.iter().enumerate() {
            assert_eq!(*shape, shape_at(|k| d[k], i, d.len(), 0.2), "frame {i}");
        }
    }

    #[test]
    fn streaming_p90_decision_matches_selection() {
        // Values around the limit, every count from 1 to 40, limits on and
        // between values: the one-pass decision equals p90(…) > limit.
        for n in 1..40usize {
            let vals: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 * 0.5).collect();
            for limit in [0.0, 0.25, 1.0, 2.5, 2.75, 4.9, 5.0, 6.0] {
                let mut p = P90Above::new(limit);
                vals.iter().for_each(|&v| p.push(v));
                let mut copy = vals.clone();
                assert_eq!(
                    p.decide(n),
                    Some(p90(&mut copy) > limit),
                    "n {n} limit {limit}"
                );
            }
        }
        let mut p = P90Above::new(1.0);
        p.push(f64::INFINITY);
        assert_eq!(p.decide(1), None);
    }

    #[test]
    fn window_clips_at_both_ends() {
        assert_eq!(window_of(0, 100), 0..10);
        assert_eq!(window_of(9, 100), 0..19);
        assert_eq!(window_of(50, 100), 41..60);
        assert_eq!(window_of(99, 100), 90..100);
        assert_eq!(window_of(2, 5), 0..5);
    }

    #[test]
    fn stutter_needs_both_absolute_and_relative_excess() {
        // median 10 ms, 13 ms: +30 % but only +3 ms.
        let s = [10 * MS, 10 * MS, 13 * MS];
        assert!(!frame_shape(&s, 13 * MS, 0.2).stutter);
        // median 60 ms, 71 ms: +11 ms but only +18 %.
        let s = [60 * MS, 60 * MS, 71 * MS];
        assert!(!frame_shape(&s, 71 * MS, 0.2).stutter);
        // median 60 ms, 80 ms: +20 ms and +33 %.
        let s = [60 * MS, 60 * MS, 80 * MS];
        assert!(frame_shape(&s, 80 * MS, 0.2).stutter);
        // The threshold is θ: at θ = 0.4 the 80 ms frame is not a stutter.
        assert!(!frame_shape(&s, 80 * MS, 0.4).stutter);
    }
}
