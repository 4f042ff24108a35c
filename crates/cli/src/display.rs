//! `analyze --display`: the displayed-frame section of the table
//! ([`table`]), after the present-based one it never replaces.
//! Definitions: docs/metrics.md, "Displayed frames".

use steadyhud_metrics::display::{DisplayStats, ValueKey, ValueStats};

/// The "Displayed frames" section as aligned text, starting with a blank
/// line.
pub fn table(d: &DisplayStats) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut row = |k: &str, v: String| rows.push((k.to_string(), v));
    row(
        "Display intervals from",
        format!(
            "{} (dropped frames: {})",
            d.interval_column, d.dropped_column
        ),
    );
    if let Some(sources) = &d.sources {
        let by: Vec<String> = sources.iter().map(|(s, n)| format!("{s} ({n})")).collect();
        let by = if by.is_empty() {
            "none".into()
        } else {
            by.join(", ")
        };
        row("Display times from", by);
    }
    row("Presented frames", d.presented_frames.to_string());
    row("Displayed frames", d.displayed_frames.to_string());
    row(
        "Dropped frames",
        format!(
            "{} ({:.2} % of the present time)",
            d.dropped_frames, d.dropped_time_pct
        ),
    );
    if let Some(n) = d.unknown_frames {
        row(
            "Frames without an answer",
            format!("{n} (neither displayed nor dropped)"),
        );
    }
    match &d.intervals {
        None => row("Intervals", "none: no two displayed frames in a row".into()),
        Some(s) => {
            row(
                "Intervals",
                format!("{} over {:.3} s", s.frames, s.duration_s),
            );
            row("Average FPS (displayed)", format!("{:.2}", s.average_fps));
            for (k, v) in s.percentiles_ms() {
                row(&format!("  {k} display interval"), format!("{v:>9.3} ms"));
            }
            row("Steady FPS (displayed)", s.steady_fps.to_string());
            row(
                "Mostly Steady FPS (displayed)",
                s.mostly_steady_fps.to_string(),
            );
            row("Typical FPS (displayed)", s.typical_fps.to_string());
            row("Stutters (displayed)", s.stutter_count.to_string());
        }
    }
    if let Some(a) = &d.animation_error {
        row(
            "Animation error |e|",
            value_text(a.as_ref(), "time-weighted mean"),
        );
    }
    // The PC-latency terms in pipeline order, then anything else.
    let mut keys: Vec<&String> = d.latency.keys().collect();
    keys.sort_by_key(|k| ORDER.iter().position(|o| o.name() == k.as_str()));
    for k in keys {
        row(
            &label(k),
            value_text(d.latency[k].as_ref(), "time-weighted mean"),
        );
    }
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from("\nDisplayed frames (what reached the screen)\n");
    for (k, v) in rows {
        let line = format!("  {k:<width$}  {v}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `mean 1.234 ms, P99 5.678 ms (812 frames, MsPCLatency)`, or `n/a`.
pub fn value_text(v: Option<&ValueStats>, mean: &str) -> String {
    v.map_or_else(
        || "n/a: the column has no value on a displayed frame".into(),
        |v| {
            format!(
                "{mean} {:.3} ms, P99 {:.3} ms ({} frames, {})",
                v.mean_ms, v.p99_ms, v.frames, v.column
            )
        },
    )
}

/// The value keys in table order.
const ORDER: [ValueKey; 8] = [
    ValueKey::AnimationError,
    ValueKey::PcLatency,
    ValueKey::ClickToPhoton,
    ValueKey::AllInputToPhoton,
    ValueKey::InputToPresent,
    ValueKey::InputToFrameStart,
    ValueKey::FrameStartToPresent,
    ValueKey::PresentToDisplay,
];

/// The table label of a latency key.
pub fn label(key: &str) -> String {
    ORDER
        .into_iter()
        .find(|k| k.name() == key)
        .map_or_else(|| key.to_string(), |k| k.label().to_string())
}
