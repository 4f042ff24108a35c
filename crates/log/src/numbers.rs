//! The whole-session numbers every summary write computes: the final one,
//! the periodic rewrites while the session runs, and a killed session's
//! recovery ([`crate::recover`]).

use steadyhud_metrics::histogram::TimeHistogram;
use steadyhud_metrics::sensor_causes::{sensor_causes, SensorCause};
use steadyhud_metrics::sensors::SensorColumns;
use steadyhud_metrics::whole::{SensorCauses, StutterFrames};
use steadyhud_metrics::{self as metrics, Options, StkPoint, Summary, WholeSession};

/// The whole-session numbers of `durations`, as every summary write (final
/// or periodic) computes them: the summary (`None` for no frame) and the
/// STK curve; with `sensors` (the rows' readings) the `sensors` and
/// `sensor_causes` keys. O(n log n): the cost the capture core's summary
/// upkeep budgets.
pub fn whole_session(
    durations: &[u64],
    sensors: Option<&SensorColumns>,
    opts: &Options,
    extra: &mut serde_json::Value,
) -> (Option<Summary>, Vec<StkPoint>) {
    let summary = metrics::summarize(durations, opts);
    if let (Some(map), Some(cols)) = (extra.as_object_mut(), sensors) {
        // The readings, time-weighted, and the energy per frame; the
        // stutters the readings explain: the `sensors` and `sensor_causes`
        // keys `analyze --json` gives for the same log.
        if let Some(s) = metrics::sensors::summarize(durations, cols) {
            insert(map, "sensors", serde_json::to_value(s));
        }
        let stutters = summary.as_ref().map_or(&[][..], |s| &s.stutter_frames[..]);
        let causes = sensor_causes(stutters, cols);
        let causes: Vec<_> = causes.iter().map(SensorCause::json).collect();
        insert(map, "sensor_causes", serde_json::to_value(causes));
    }
    let stk = metrics::stk_curve(durations, stk_max_fps(durations.iter().copied().min()));
    // The mergeable time histogram: summed over sessions it gives fleet-wide
    // metrics (`steadyhud merge` reads a summary's `histogram` key).
    if let Some(map) = extra.as_object_mut() {
        let h = serde_json::to_value(TimeHistogram::from_durations(durations));
        insert(map, "histogram", h);
    }
    (summary, stk)
}

/// Puts `key` in the summary; a value that could not be encoded leaves
/// `<key>_error` saying why instead, so the file tells what it lacks.
fn insert(
    map: &mut serde_json::Map<String, serde_json::Value>,
    key: &str,
    value: Result<serde_json::Value, serde_json::Error>,
) {
    match value {
        Ok(v) => map.insert(key.into(), v),
        Err(e) => map.insert(format!("{key}_error"), e.to_string().into()),
    };
}

/// The same numbers for a running session from its fixed-size state
/// ([`WholeSession`]; docs/metrics.md, "The summary of a running
/// session"): what the game's summary writes compute, periodic and final,
/// allocating nothing that grows with the session. The per-stutter lists
/// (the summary's `stutter_frames`, left empty in it, and the readings'
/// `sensor_causes`) come apart, shared, for the write to stream
/// ([`crate::Streamed`]).
pub fn running_session(
    state: &WholeSession,
    opts: &Options,
    extra: &mut serde_json::Value,
) -> RunningSession {
    let (summary, frames) = state.summary_shared(opts).unzip();
    let frames = frames.unwrap_or_default();
    let mut sensor_causes = None;
    if let (Some(map), true) = (extra.as_object_mut(), state.has_sensors()) {
        if let Some(s) = state.sensor_summary() {
            insert(map, "sensors", serde_json::to_value(s));
        }
        sensor_causes = Some(state.sensor_causes(frames.last()));
    }
    let stk = state.stk_curve(stk_max_fps(state.distribution().shortest_ns()));
    if let Some(map) = extra.as_object_mut() {
        insert(map, "histogram", serde_json::to_value(state.histogram()));
    }
    RunningSession {
        summary,
        frames,
        sensor_causes,
        stk,
    }
}

/// A running session's summary write ([`running_session`]).
pub struct RunningSession {
    /// `None` for no frame; its `stutter_frames` are `frames`.
    pub summary: Option<Summary>,
    pub frames: StutterFrames,
    /// The `sensor_causes` key, with readings.
    pub sensor_causes: Option<SensorCauses>,
    pub stk: Vec<StkPoint>,
}

/// Upper end of the STK curves: just past the fastest frame's (`min`, ns)
/// rate (beyond it slow(f) = 1), capped at 2000 fps.
fn stk_max_fps(min: Option<u64>) -> u32 {
    let min = min.unwrap_or(metrics::NS_PER_S);
    (metrics::NS_PER_S.div_ceil(min.max(1)) + 1).clamp(1, 2000) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stk_range_covers_fastest_frame() {
        let of = |d: &[u64]| stk_max_fps(d.iter().copied().min());
        assert_eq!(of(&[16_666_667, 33_333_333]), 61);
        assert_eq!(of(&[]), 2);
        assert_eq!(of(&[1]), 2000);
    }
}
