//! The whole-session numbers every summary write computes (the final one
//! and the periodic rewrites of [`super::upkeep`]).

use steadyhud_metrics::histogram::TimeHistogram;
use steadyhud_metrics::sensor_causes::sensor_causes;
use steadyhud_metrics::sensors::SensorColumns;
use steadyhud_metrics::{self as metrics, Options, StkPoint, Summary};

/// The whole-session numbers of `durations`, as every summary write (final
/// or periodic) computes them: the summary (`None` for no frame) and the
/// STK curve; with `sensors` (the rows' readings) the `sensors` and
/// `sensor_causes` keys. O(n log n): the cost [`super::upkeep`] budgets.
pub(super) fn whole_session(
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
        if let Some(Ok(s)) = metrics::sensors::summarize(durations, cols).map(serde_json::to_value)
        {
            map.insert("sensors".into(), s);
        }
        let stutters = summary.as_ref().map_or(&[][..], |s| &s.stutter_frames[..]);
        let causes: Vec<serde_json::Value> = sensor_causes(stutters, cols)
            .iter()
            .filter_map(|c| {
                let mut v = serde_json::to_value(c).ok()?;
                v.as_object_mut()?.insert("text".into(), c.text().into());
                Some(v)
            })
            .collect();
        map.insert("sensor_causes".into(), causes.into());
    }
    let stk = metrics::stk_curve(durations, stk_max_fps(durations));
    // The mergeable time histogram: summed over sessions it gives fleet-wide
    // metrics (`steadyhud merge` reads a summary's `histogram` key).
    if let (Some(map), Ok(h)) = (
        extra.as_object_mut(),
        serde_json::to_value(TimeHistogram::from_durations(durations)),
    ) {
        map.insert("histogram".into(), h);
    }
    (summary, stk)
}

/// Upper end of the STK curves: just past the fastest frame's rate (beyond
/// it slow(f) = 1), capped at 2000 fps.
fn stk_max_fps(durations: &[u64]) -> u32 {
    let min = durations.iter().copied().min().unwrap_or(metrics::NS_PER_S);
    (metrics::NS_PER_S.div_ceil(min.max(1)) + 1).clamp(1, 2000) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stk_range_covers_fastest_frame() {
        assert_eq!(stk_max_fps(&[16_666_667, 33_333_333]), 61);
        assert_eq!(stk_max_fps(&[]), 2);
        assert_eq!(stk_max_fps(&[1]), 2000);
    }
}
