//! The HUD's rows and presets, declared once: the config keys `hud_rows`
//! and `preset` are checked against them, the HUD (`steadyhud_hudview`)
//! draws them, and docs/cli.md lists every name (a test compares).

/// The rows the HUD can show that are not metrics of the summary (those
/// are named by their key, [`steadyhud_metrics::catalog::METRICS`]), with
/// what each shows.
pub const HUD_ROWS: [(&str, &str); 10] = [
    (
        "one_line",
        "Steady FPS and the current FPS on one line: `Steady 58 · 60 fps`",
    ),
    ("fps", "the current FPS (of the newest frame)"),
    ("fps_only", "the current FPS alone, as a number"),
    ("frame_ms", "the newest frame's time"),
    (
        "gpu_bound",
        "GPU busy time per frame and the share of time GPU-bound (with GPU timing)",
    ),
    ("cap", "the frame cap in force (when there is one)"),
    ("sensors", "the rows of `hud_sensor_rows`"),
    ("graph", "the frame-time graph"),
    (
        "window",
        "the rolling window's length and its stutter count (and lost frames)",
    ),
    ("counters", "the counter section (as `hud_counters=1`)"),
];

use crate::Config;

/// One HUD preset: its name and rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub rows: &'static [&'static str],
}

/// The presets, in the order `preset_key` cycles them.
pub const PRESETS: [Preset; 4] = [
    Preset {
        name: "one line",
        rows: &["one_line"],
    },
    Preset {
        name: "compact",
        rows: &["steady_fps", "typical_fps", "fps", "frame_ms", "graph"],
    },
    Preset {
        name: "standard",
        rows: &[
            "steady_fps",
            "mostly_steady_fps",
            "typical_fps",
            "average_fps",
            "frame_ms",
            "p99_ms",
            "cap",
            "gpu_bound",
            "sensors",
            "graph",
            "window",
        ],
    },
    Preset {
        name: "detailed",
        rows: &[
            "steady_fps",
            "mostly_steady_fps",
            "typical_fps",
            "average_fps",
            "fps",
            "frame_ms",
            "p50_ms",
            "p90_ms",
            "p95_ms",
            "p99_ms",
            "p99_9_ms",
            "stutter_count",
            "stutter_time_pct",
            "gpu_bound",
            "cap",
            "cpu",
            "gpu",
            "vram",
            "ram",
            "graph",
            "window",
            "counters",
        ],
    },
];

/// The preset the HUD starts in unless `preset` says otherwise: today's
/// panel.
pub const DEFAULT_PRESET: u8 = 2;

/// The rows preset `preset` shows under `config`, in order: `hud_rows` in
/// place of the configured preset's own, and `counters` last when
/// `hud_counters` asks for it and the rows lack it.
pub fn rows(config: &Config, preset: u8) -> impl Iterator<Item = &'static str> + '_ {
    let own = PRESETS[usize::from(preset) % PRESETS.len()].rows;
    let base: &[&'static str] = if preset == config.preset && !config.hud_rows.is_empty() {
        &config.hud_rows
    } else {
        own
    };
    let extra = (config.hud_counters && !base.contains(&"counters")).then_some("counters");
    base.iter().copied().chain(extra)
}

/// Whether preset `preset` shows the counter section under `config`.
pub fn shows_counters(config: &Config, preset: u8) -> bool {
    rows(config, preset).any(|r| r == "counters")
}

/// The canonical name of a HUD row, if `name` is one (case-insensitive):
/// a summary metric's key, a sensor row, or one of [`HUD_ROWS`].
pub fn row_name(name: &str) -> Option<&'static str> {
    let name = name.trim().to_ascii_lowercase();
    let metrics = steadyhud_metrics::catalog::METRICS.iter().map(|m| m.key);
    let sensors = steadyhud_sensors::ROW_NAMES.into_iter();
    let ours = HUD_ROWS.iter().map(|r| r.0);
    metrics.chain(sensors).chain(ours).find(|&n| n == name)
}

/// Every row name, for messages and docs.
pub fn row_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = steadyhud_metrics::catalog::METRICS
        .iter()
        .map(|m| m.key)
        .collect();
    names.extend(steadyhud_sensors::ROW_NAMES);
    names.extend(HUD_ROWS.iter().map(|r| r.0));
    names
}

/// Reads a `hud_rows` value: names joined by `+`. Returns the known rows in
/// order (repeats dropped) and the unknown names.
pub fn parse_rows(value: &str) -> (Vec<&'static str>, Vec<String>) {
    let mut rows = Vec::new();
    let mut unknown = Vec::new();
    for item in value.split('+').map(str::trim).filter(|i| !i.is_empty()) {
        match row_name(item) {
            Some(r) if !rows.contains(&r) => rows.push(r),
            Some(_) => {}
            None => unknown.push(item.to_string()),
        }
    }
    (rows, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_row_is_a_row() {
        for p in PRESETS {
            for r in p.rows {
                assert_eq!(row_name(r), Some(*r), "{}: {r}", p.name);
            }
        }
    }

    #[test]
    fn rows_parse_in_order_and_unknown_names_are_returned() {
        let (rows, bad) = parse_rows("Steady_FPS+graph+nonsense+ cpu +graph");
        assert_eq!(rows, ["steady_fps", "graph", "cpu"]);
        assert_eq!(bad, ["nonsense"]);
        assert_eq!(parse_rows(""), (vec![], vec![]));
    }

    #[test]
    fn row_names_are_unique() {
        let names = row_names();
        let set: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(set.len(), names.len(), "{names:?}");
    }
}
