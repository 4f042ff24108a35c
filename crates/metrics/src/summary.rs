//! The whole-session summary: the contract keys of a log
//! (docs/metrics.md#the-json-keys, [`Summary`]), computed by [`summarize`]
//! and, over a sliding window, by [`super::Rolling`] (both through one
//! assembly).

use super::options::Options;
use super::sorted::SortedDurations;
use super::steady::{SlowFrames, StkPoint};
use super::stutter;
use super::time_metrics::{TimeDistribution, TimeMetrics};
use serde::{Deserialize, Serialize};

/// The contract keys (docs/metrics.md#the-json-keys) of `steadyhud analyze
/// --json`: the order-free [`TimeMetrics`] (read through `Deref`, serialized
/// flat) and the per-frame ones only an ordered log has.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Summary {
    #[serde(flatten)]
    pub time: TimeMetrics,
    /// The share of the session's time spent in frames longer than the
    /// target's budget 1/f s (f = [`Options::target_fps`]), %: 100 · Σ d_i
    /// over the frames with d_i > 1/f s / T (docs/metrics.md).
    pub time_over_budget_pct: f64,
    pub stutter_count: usize,
    pub stutter_frames: Vec<usize>,
    /// The share of the session's time spent in stutter frames, %:
    /// 100 · Σ d_i over the stutter frames / T (docs/metrics.md).
    pub stutter_time_pct: f64,
    pub osc: bool,
}

/// A [`Summary`]'s keys as they are written, its stutter frames given
/// apart ([`Summary::keys_with`]): the one layout of the summary's keys
/// (a `Summary` is serialized as its keys with its own frames).
#[derive(Serialize)]
pub struct SummaryKeys<'a, F> {
    #[serde(flatten)]
    time: &'a TimeMetrics,
    time_over_budget_pct: f64,
    stutter_count: usize,
    stutter_frames: F,
    stutter_time_pct: f64,
    osc: bool,
}

impl Summary {
    /// The summary's keys with `stutter_frames` written from `frames` (a
    /// running session's shared list, [`crate::whole::StutterFrames`])
    /// instead of the summary's own.
    pub fn keys_with<F: Serialize>(&self, frames: F) -> SummaryKeys<'_, F> {
        SummaryKeys {
            time: &self.time,
            time_over_budget_pct: self.time_over_budget_pct,
            stutter_count: self.stutter_count,
            stutter_frames: frames,
            stutter_time_pct: self.stutter_time_pct,
            osc: self.osc,
        }
    }
}

impl Serialize for Summary {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.keys_with(&self.stutter_frames).serialize(s)
    }
}

impl std::ops::Deref for Summary {
    type Target = TimeMetrics;
    fn deref(&self) -> &TimeMetrics {
        &self.time
    }
}

/// All whole-session metrics; `None` for an empty slice.
///
/// Durations should be > 0 (docs/metrics.md#input-frames-and-their-durations
/// makes ≤ 0 an input error, caught by the parsers); zeros are tolerated
/// without panicking.
pub fn summarize(durations_ns: &[u64], opts: &Options) -> Option<Summary> {
    if durations_ns.is_empty() {
        return None;
    }
    // Peak memory besides the caller's durations: one sorted copy (8 B a
    // frame) and its block sums; the window pass keeps only stutter indices.
    let sorted = SortedDurations::new(durations_ns);
    let (stutter_frames, osc) = stutter::stutters_and_osc(durations_ns, opts.stutter_threshold);
    assemble_parts(&sorted, stutter_frames, osc, opts, |i| durations_ns[i])
}

/// 100 · slow(f): the share of the time in frames longer than 1/f s
/// (d·f > 1e9 ns, decided exactly), % (0 for no time; f = 0 is taken as 1).
pub fn time_over_budget_pct(sorted: &impl SlowFrames, target_fps: u32) -> f64 {
    let t = sorted.slow_total_ns();
    if t == 0 {
        return 0.0;
    }
    let (_, over) = sorted.slow_frames(u64::from(target_fps.max(1)));
    100.0 * over as f64 / t as f64
}

/// slow(f) and excess(f) for f = 1..=max_fps (empty for no frames).
pub fn stk_curve(durations_ns: &[u64], max_fps: u32) -> Vec<StkPoint> {
    SortedDurations::new(durations_ns).stk_curve(max_fps)
}

/// The [`Summary`] from the sorted durations, the stutter frames, OSC, the
/// options (the target) and frame i's duration `d(i)`; `None` for no
/// frame. Shared by [`summarize`] and [`super::Rolling`] so both give the
/// same bits.
pub(crate) fn assemble_parts(
    sorted: &SortedDurations,
    stutter_frames: Vec<usize>,
    osc: bool,
    opts: &Options,
    d: impl Fn(usize) -> u64,
) -> Option<Summary> {
    let stutter_ns: u128 = stutter_frames.iter().map(|&i| u128::from(d(i))).sum();
    assemble_from(sorted, stutter_frames, stutter_ns, osc, opts)
}

/// The [`Summary`] of any distribution that gives the order-free metrics
/// and the slow frames (a log's sorted durations, a running session's
/// [`super::WholeSession`]), with the stutters (frames and their time) and
/// OSC found in frame order; `None` for no frame. Every summary is built
/// here.
pub(crate) fn assemble_from(
    dist: &(impl TimeDistribution + SlowFrames),
    stutter_frames: Vec<usize>,
    stutter_ns: u128,
    osc: bool,
    opts: &Options,
) -> Option<Summary> {
    let time = TimeMetrics::of(dist)?;
    Some(Summary {
        time,
        time_over_budget_pct: time_over_budget_pct(dist, opts.target_fps),
        stutter_count: stutter_frames.len(),
        stutter_frames,
        stutter_time_pct: 100.0 * stutter_ns as f64 / dist.slow_total_ns() as f64,
        osc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// docs/metrics.md's worked example of `time_over_budget_pct`: frames
    /// of 10, 15, 20, 10 and 45 ms (T = 100 ms) against 60, 50, 30 and
    /// 100 fps; a frame exactly on budget is not over it.
    #[test]
    fn time_over_budget_worked_example() {
        let d = [10 * MS, 15 * MS, 20 * MS, 10 * MS, 45 * MS];
        let at = |f: u32| {
            let opts = Options {
                target_fps: f,
                ..Options::default()
            };
            summarize(&d, &opts).map(|s| s.time_over_budget_pct)
        };
        // 60 fps, 16.67 ms: 20 + 45 of 100 ms.
        assert_eq!(at(60), Some(65.0));
        // 50 fps, 20 ms: the 20 ms frame is on budget, not over.
        assert_eq!(at(50), Some(45.0));
        // 30 fps, 33.3 ms: the 45 ms frame alone.
        assert_eq!(at(30), Some(45.0));
        // 100 fps, 10 ms: 15 + 20 + 45 ms; the 10 ms frames are on budget.
        assert_eq!(at(100), Some(80.0));
        // The default target is 60 fps.
        assert_eq!(
            summarize(&d, &Options::default()).map(|s| s.time_over_budget_pct),
            Some(65.0)
        );
        // 1 fps: nothing over a second.
        assert_eq!(at(1), Some(0.0));
    }

    /// The rolling window gives the same value as the whole-session
    /// computation over its frames, with its options' target.
    #[test]
    fn rolling_time_over_budget_is_the_window_s() {
        let opts = Options {
            target_fps: 90,
            ..Options::default()
        };
        let mut r = crate::Rolling::new(u64::MAX, 7, opts);
        let d: Vec<u64> = (0..40u64).map(|i| (5 + (i * 7) % 13) * MS).collect();
        for &x in &d {
            r.push(x);
        }
        let want = summarize(&d[d.len() - 7..], &opts).map(|s| s.time_over_budget_pct);
        assert_eq!(r.summary().map(|s| s.time_over_budget_pct), want);
        assert!(want.is_some_and(|v| v > 0.0 && v < 100.0), "{want:?}");
    }

    /// The fields of [`Summary`] as serialized, in order, are the
    /// catalog's metrics, with the per-frame `stutter_frames` list after
    /// `stutter_count`: one declaration, checked against the struct.
    #[test]
    fn the_catalog_lists_the_serialized_fields() {
        let s = summarize(&[10_000_000, 20_000_000], &Options::default()).unwrap();
        let text = serde_json::to_string(&s).unwrap();
        let serde_json::Value::Object(map) = serde_json::to_value(&s).unwrap() else {
            panic!("not an object")
        };
        let mut want: Vec<&str> = Vec::new();
        for m in crate::catalog::METRICS {
            want.push(m.key);
            if m.key == "stutter_count" {
                want.push("stutter_frames");
            }
        }
        let mut got: Vec<&str> = map.keys().map(String::as_str).collect();
        got.sort_by_key(|k| text.find(&format!("\"{k}\":")).unwrap());
        assert_eq!(got, want);
    }
}
