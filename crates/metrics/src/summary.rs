//! The whole-session summary: the contract keys of a log
//! (docs/metrics.md#the-json-keys, [`Summary`]), computed by [`summarize`]
//! and, over a sliding window, by [`super::Rolling`] (both through one
//! assembly).

use super::options::Options;
use super::sorted::SortedDurations;
use super::steady::StkPoint;
use super::stutter::{self, WindowShapes};
use super::time_metrics::TimeMetrics;
use serde::{Deserialize, Serialize};

/// The contract keys (docs/metrics.md#the-json-keys) of `steadyhud analyze
/// --json`: the order-free [`TimeMetrics`] (read through `Deref`, serialized
/// flat) and the per-frame ones only an ordered log has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    #[serde(flatten)]
    pub time: TimeMetrics,
    pub stutter_count: usize,
    pub stutter_frames: Vec<usize>,
    /// The share of the session's time spent in stutter frames, %:
    /// 100 · Σ d_i over the stutter frames / T (docs/metrics.md).
    pub stutter_time_pct: f64,
    pub osc: bool,
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
    assemble_parts(&sorted, stutter_frames, osc, |i| durations_ns[i])
}

/// slow(f) and excess(f) for f = 1..=max_fps (empty for no frames).
pub fn stk_curve(durations_ns: &[u64], max_fps: u32) -> Vec<StkPoint> {
    SortedDurations::new(durations_ns).stk_curve(max_fps)
}

/// Builds the [`Summary`] from the sorted durations, the per-frame shapes
/// and frame i's duration `d(i)`; shared by [`summarize`] and
/// [`super::Rolling`] so both give the same bits.
pub(crate) fn assemble(
    sorted: &SortedDurations,
    mut shapes: WindowShapes,
    d: impl Fn(usize) -> u64,
) -> Option<Summary> {
    let osc = shapes.osc();
    assemble_parts(sorted, shapes.stutter_frames, osc, d)
}

/// The [`Summary`] from the sorted durations, the stutter frames, OSC and
/// frame i's duration `d(i)`; `None` for no frame.
fn assemble_parts(
    sorted: &SortedDurations,
    stutter_frames: Vec<usize>,
    osc: bool,
    d: impl Fn(usize) -> u64,
) -> Option<Summary> {
    let time = TimeMetrics::of(sorted)?;
    let stutter_ns: u128 = stutter_frames.iter().map(|&i| u128::from(d(i))).sum();
    Some(Summary {
        time,
        stutter_count: stutter_frames.len(),
        stutter_frames,
        stutter_time_pct: 100.0 * stutter_ns as f64 / sorted.total_ns() as f64,
        osc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
