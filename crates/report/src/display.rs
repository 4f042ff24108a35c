//! What reached the screen, for runs whose logs have display columns
//! (docs/metrics.md, "Displayed frames"): the displayed-frame rows shown
//! by `compare` and the report's metrics table ([`DISPLAY_ROWS`]), and the
//! displayed-vs-presented frame-time chart ([`chart`]).

use super::charts::{bucket_min_max, end_times_s, WIDTH};
use super::run::{Run, RunDisplay};
use super::svg::{truncate_middle, Chart};
use super::table::{fmt_change, fmt_value, verdict_word};
use steadyhud_metrics::display::{DisplayStats, Shown};

/// One displayed-frame metric; `get` is `None` where the run has no such
/// value (no intervals, no column).
pub struct DisplayRow {
    pub label: &'static str,
    pub unit: &'static str,
    pub higher_is_better: Option<bool>,
    pub decimals: usize,
    pub get: fn(&DisplayStats) -> Option<f64>,
}

fn latency(d: &DisplayStats, key: &str, p99: bool) -> Option<f64> {
    let v = d.latency.get(key)?.as_ref()?;
    Some(if p99 { v.p99_ms } else { v.mean_ms })
}

/// The displayed-frame rows, in order.
pub const DISPLAY_ROWS: &[DisplayRow] = &[
    DisplayRow {
        label: "Displayed: Steady FPS",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 0,
        get: |d| d.intervals.as_ref().map(|s| s.steady_fps as f64),
    },
    DisplayRow {
        label: "Displayed: Mostly Steady FPS",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 0,
        get: |d| d.intervals.as_ref().map(|s| s.mostly_steady_fps as f64),
    },
    DisplayRow {
        label: "Displayed: Typical FPS",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 0,
        get: |d| d.intervals.as_ref().map(|s| s.typical_fps as f64),
    },
    DisplayRow {
        label: "Displayed: Average FPS",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 2,
        get: |d| d.intervals.as_ref().map(|s| s.average_fps),
    },
    DisplayRow {
        label: "Displayed: P99 interval (time-weighted)",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| d.intervals.as_ref().map(|s| s.p99_ms),
    },
    DisplayRow {
        label: "Displayed: stutters",
        unit: "",
        higher_is_better: Some(false),
        decimals: 0,
        get: |d| d.intervals.as_ref().map(|s| s.stutter_count as f64),
    },
    DisplayRow {
        label: "Dropped frames",
        unit: "",
        higher_is_better: Some(false),
        decimals: 0,
        get: |d| Some(d.dropped_frames as f64),
    },
    DisplayRow {
        label: "Dropped (share of present time)",
        unit: "%",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| Some(d.dropped_time_pct),
    },
    DisplayRow {
        label: "Animation error |e|, mean",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 3,
        get: |d| Some(d.animation_error.as_ref()?.as_ref()?.mean_ms),
    },
    DisplayRow {
        label: "Animation error |e|, P99",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 3,
        get: |d| Some(d.animation_error.as_ref()?.as_ref()?.p99_ms),
    },
    DisplayRow {
        label: "PC latency, mean",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| latency(d, "pc_latency", false),
    },
    DisplayRow {
        label: "PC latency, P99",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| latency(d, "pc_latency", true),
    },
    DisplayRow {
        label: "Input to frame start (I2FS), mean",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| latency(d, "input_to_frame_start", false),
    },
    DisplayRow {
        label: "Input to frame start (I2FS), P99",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| latency(d, "input_to_frame_start", true),
    },
    DisplayRow {
        label: "Frame start to present (FS2P), mean",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| latency(d, "frame_start_to_present", false),
    },
    DisplayRow {
        label: "Frame start to present (FS2P), P99",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| latency(d, "frame_start_to_present", true),
    },
    DisplayRow {
        label: "Present to display, mean",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| latency(d, "present_to_display", false),
    },
    DisplayRow {
        label: "Present to display, P99",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |d| latency(d, "present_to_display", true),
    },
];

/// A run's value of `row`, `None` without display data or value.
pub fn value(row: &DisplayRow, d: Option<&RunDisplay>) -> Option<f64> {
    (row.get)(&d?.stats)
}

/// The cell text: the value, or `n/a`.
pub fn fmt(row: &DisplayRow, d: Option<&RunDisplay>) -> String {
    value(row, d).map_or_else(|| "n/a".into(), |v| fmt_value(row.decimals, v))
}

/// The change from `a` to `b` and whether it is better / worse (empty
/// strings when either has no value).
pub fn change(
    row: &DisplayRow,
    a: Option<&RunDisplay>,
    b: Option<&RunDisplay>,
) -> (String, &'static str) {
    match (value(row, a), value(row, b)) {
        (Some(x), Some(y)) => (fmt_change(x, y), verdict_word(row.higher_is_better, x, y)),
        _ => (String::new(), ""),
    }
}

/// Whether any row of `runs` has display data (the rows are shown only then).
pub fn any(runs: &[Run]) -> bool {
    runs.iter().any(|r| r.display.is_some())
}

/// The displayed-vs-presented frame-time chart of one run: present-to-
/// present frame times and the display intervals, each drawn where it
/// ends. Empty for a run without display data.
pub fn chart(run: &Run, id: &str) -> String {
    let Some(d) = &run.display else {
        return String::new();
    };
    let ends = end_times_s(&run.durations_ns);
    let duration = ends.last().copied().unwrap_or(0.0).max(1e-9);
    // Intervals ending after the last present are left out.
    let shown: Vec<&Shown> = d
        .shown
        .iter()
        .filter(|s| s.frame < ends.len() && ends[s.frame] + s.ns as f64 / 1e9 <= duration)
        .collect();
    let shown_ns: Vec<u64> = shown.iter().map(|s| s.ns).collect();
    // An interval is drawn where it ends, like a frame time: at its
    // frame's present plus its time on screen (the display latency left
    // out), so a long interval lines up with the late present causing it.
    let shown_ends: Vec<f64> = shown
        .iter()
        .map(|s| ends[s.frame] + s.ns as f64 / 1e9)
        .collect();
    let tail = |ms: f64, p99_9: f64, p50: f64| ms.min((p99_9 * 2.0).max(p50 * 4.0));
    let present_max = run.durations_ns.iter().copied().max().unwrap_or(0) as f64 / 1e6;
    let mut y_max = tail(present_max, run.summary.p99_9_ms, run.summary.p50_ms);
    if let Some(s) = &d.stats.intervals {
        let m = shown_ns.iter().copied().max().unwrap_or(0) as f64 / 1e6;
        y_max = y_max.max(tail(m, s.p99_9_ms, s.p50_ms));
    }
    let mut c = Chart::new(WIDTH, 220.0, (0.0, duration), (0.0, y_max.max(1.0) * 1.1));
    c.axes(
        &format!(
            "{}: presented (grey) vs displayed (blue) frame time, {} dropped",
            truncate_middle(&run.name, 60),
            d.stats.dropped_frames
        ),
        "time (s)",
        "ms",
    );
    c.line(
        &bucket_min_max(&run.durations_ns, &ends, duration, 600),
        "#999999",
        "series presented",
    );
    c.line(
        &bucket_min_max(&shown_ns, &shown_ends, duration, 600),
        "#1f5fbf",
        "series displayed",
    );
    c.finish(id)
}
