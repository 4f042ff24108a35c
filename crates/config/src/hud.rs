//! The HUD's rows and presets, declared once: the config keys `hud_rows`
//! and `preset` are checked against them, the HUD (`steadyhud_hudview`)
//! draws them (matching [`Row`] and [`OwnRow`] without a catch-all), and
//! docs/cli.md lists every name (a test compares).

/// Declares the HUD's own rows once: the variant, its name in `hud_rows`
/// and presets, and what it shows. The HUD (`steadyhud_hudview`) matches
/// [`OwnRow`] without a catch-all, so a row declared here and not drawn
/// there does not compile.
macro_rules! own_rows {
    ($($(#[$attr:meta])* $variant:ident = $name:literal, $shows:literal;)*) => {
        /// The rows the HUD can show that are not metrics of the summary
        /// (those are named by their key,
        /// [`steadyhud_metrics::catalog::METRICS`]) nor sensor rows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum OwnRow {
            $($(#[$attr])* $variant,)*
        }

        impl OwnRow {
            /// Every one, in documentation order.
            pub const ALL: &'static [OwnRow] = &[$(OwnRow::$variant,)*];

            /// Its name in `hud_rows` and the presets.
            pub fn name(self) -> &'static str {
                match self {
                    $(OwnRow::$variant => $name,)*
                }
            }

            /// What it shows, for people (docs/cli.md).
            pub fn shows(self) -> &'static str {
                match self {
                    $(OwnRow::$variant => $shows,)*
                }
            }
        }
    };
}

own_rows! {
    OneLine = "one_line", "Steady FPS and the current FPS on one line: `Steady 58 · 60 fps`";
    Fps = "fps", "the current FPS (of the newest frame)";
    FpsOnly = "fps_only", "the current FPS alone, as a number";
    FrameMs = "frame_ms", "the newest frame's time";
    GpuBound = "gpu_bound",
        "GPU busy time per frame and the share of time GPU-bound (with GPU timing)";
    Cap = "cap", "the frame cap in force (when there is one)";
    Display = "display",
        "what reached the screen over the window: displayed FPS, dropped frames and present-to-display latency, `59.9 fps · 3 dropped · 24.1 ms` (with a source of display times)";
    Latency = "latency",
        "PC latency over the window and its terms, `23.4 ms (I2FS 4.1 · FS2P 6.3 · P2D 13.0)` (with input times and display times)";
    Sensors = "sensors", "the rows of `hud_sensor_rows`";
    Graph = "graph", "the frame-time graph";
    Window = "window", "the rolling window's length and its stutter count (and lost frames)";
    Counters = "counters", "the counter section (as `hud_counters=1`)";
}

/// A row of the HUD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// One of the HUD's own.
    Own(OwnRow),
    /// A metric of the rolling window's summary, by its catalog key.
    Metric(&'static str),
    /// A sensor row (`cpu`, `gpu`, `vram`, `ram`), by its name.
    Sensor(&'static str),
}

impl Row {
    /// The row named `name` (case-insensitive, trimmed), if it is one.
    pub fn parse(name: &str) -> Option<Row> {
        let name = name.trim();
        let is = |n: &str| n.eq_ignore_ascii_case(name);
        if let Some(m) = steadyhud_metrics::catalog::METRICS
            .iter()
            .find(|m| is(m.key))
        {
            return Some(Row::Metric(m.key));
        }
        if let Some(&s) = steadyhud_sensors::ROW_NAMES.iter().find(|&&s| is(s)) {
            return Some(Row::Sensor(s));
        }
        OwnRow::ALL
            .iter()
            .find(|r| is(r.name()))
            .map(|&r| Row::Own(r))
    }

    /// Its name in `hud_rows` and the presets.
    pub fn name(self) -> &'static str {
        match self {
            Row::Own(r) => r.name(),
            Row::Metric(key) | Row::Sensor(key) => key,
        }
    }
}

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
            "time_over_budget_pct",
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
            "display",
            "latency",
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
/// `hud_counters` asks for it and the rows lack it. No allocation (the
/// HUD asks at every panel render).
pub fn rows(config: &Config, preset: u8) -> impl Iterator<Item = Row> + '_ {
    let configured = preset == config.preset && !config.hud_rows.is_empty();
    let own = PRESETS[usize::from(preset) % PRESETS.len()].rows;
    // A preset's names are rows (a unit test checks each).
    let preset_rows = own
        .iter()
        .filter_map(|n| Row::parse(n))
        .filter(move |_| !configured);
    let chosen = config.hud_rows.iter().copied().filter(move |_| configured);
    let counters = Row::Own(OwnRow::Counters);
    let has = if configured {
        config.hud_rows.contains(&counters)
    } else {
        own.contains(&counters.name())
    };
    preset_rows
        .chain(chosen)
        .chain((config.hud_counters && !has).then_some(counters))
}

/// Whether preset `preset` shows the counter section under `config`.
pub fn shows_counters(config: &Config, preset: u8) -> bool {
    rows(config, preset).any(|r| r == Row::Own(OwnRow::Counters))
}

/// Every row name, for messages and docs.
pub fn row_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = steadyhud_metrics::catalog::METRICS
        .iter()
        .map(|m| m.key)
        .collect();
    names.extend(steadyhud_sensors::ROW_NAMES);
    names.extend(OwnRow::ALL.iter().map(|r| r.name()));
    names
}

/// Rows as a `hud_rows` value: their names joined by `+`.
pub fn joined(rows: &[Row]) -> String {
    rows.iter().map(|r| r.name()).collect::<Vec<_>>().join("+")
}

/// Reads a `hud_rows` value: names joined by `+`. Returns the known rows in
/// order (repeats dropped) and the unknown names.
pub fn parse_rows(value: &str) -> (Vec<Row>, Vec<String>) {
    let mut rows = Vec::new();
    let mut unknown = Vec::new();
    for item in value.split('+').map(str::trim).filter(|i| !i.is_empty()) {
        match Row::parse(item) {
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
                assert_eq!(Row::parse(r).map(Row::name), Some(*r), "{}: {r}", p.name);
            }
        }
    }

    #[test]
    fn rows_parse_in_order_and_unknown_names_are_returned() {
        let (rows, bad) = parse_rows("Steady_FPS+graph+nonsense+ cpu +graph");
        assert_eq!(
            rows,
            [
                Row::Metric("steady_fps"),
                Row::Own(OwnRow::Graph),
                Row::Sensor("cpu")
            ]
        );
        assert_eq!(bad, ["nonsense"]);
        assert_eq!(parse_rows(""), (vec![], vec![]));
    }

    #[test]
    fn counters_come_last_when_asked_and_missing() {
        let mut config = Config {
            hud_counters: true,
            ..Config::default()
        };
        let names = |c: &Config, p| rows(c, p).map(Row::name).collect::<Vec<_>>();
        assert_eq!(names(&config, 0), ["one_line", "counters"]);
        assert_eq!(
            names(&config, 3)
                .iter()
                .filter(|&&n| n == "counters")
                .count(),
            1
        );
        config.hud_rows = vec![Row::Own(OwnRow::Fps)];
        let p = config.preset;
        assert_eq!(names(&config, p), ["fps", "counters"]);
        assert_eq!(
            names(&config, 0),
            ["one_line", "counters"],
            "another preset"
        );
    }

    #[test]
    fn row_names_are_unique() {
        let names = row_names();
        let set: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(set.len(), names.len(), "{names:?}");
    }
}
