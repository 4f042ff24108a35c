//! Every metric family `steadyhud export` writes, declared once: its name,
//! type and help (the rolling-window gauges derived from the metric
//! catalog, one per summary metric: [`metric_gauges`]). The renderer writes them from here, docs/fleet.md lists
//! them (`crates/cli/tests/export_docs.rs` compares), and the bucket bounds
//! of the time-weighted frame-time histogram are [`le_bounds`].

use std::sync::OnceLock;
use steadyhud_metrics::catalog::{Group, Metric, METRICS};
use steadyhud_metrics::display::ValueKey;
use steadyhud_metrics::histogram::{bucket_count, bucket_range};
use steadyhud_metrics::latency::SUMMARY_KEYS;
use steadyhud_metrics::sensors::Sensor;

/// A metric family's Prometheus type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// One metric family.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
}

const fn family(name: &'static str, kind: Kind, help: &'static str) -> Family {
    Family { name, kind, help }
}

/// The time-weighted frame-time histogram.
pub const FRAME_TIME: Family = family(
    "steadyhud_frame_time_seconds",
    Kind::Histogram,
    "Frame time weighted by time, one observation per microsecond of play: _bucket{le} counts the microseconds of play spent in frames shorter than le seconds, _count all microseconds of play, _sum each microsecond's frame time in seconds (so _sum/_count is the time-weighted mean frame time)",
);
pub const FRAMES: Family = family(
    "steadyhud_frames_total",
    Kind::Counter,
    "Frames presented (presents - 1)",
);
pub const PLAY_SECONDS: Family = family(
    "steadyhud_play_seconds_total",
    Kind::Counter,
    "Seconds of play: the sum of the frame times",
);
pub const STUTTERS: Family = family(
    "steadyhud_stutters_total",
    Kind::Counter,
    "Stutter frames judged so far (docs/metrics.md#stutters; a frame is judged once the 9 after it exist)",
);
pub const STUTTER_SECONDS: Family = family(
    "steadyhud_stutter_seconds_total",
    Kind::Counter,
    "Seconds spent in stutter frames",
);
pub const RING_OVERFLOWS: Family = family(
    "steadyhud_ring_overflows_total",
    Kind::Counter,
    "Timestamps lost because the layer's ring was full (frames missing from the log)",
);
pub const GPU_BOUND: Family = family(
    "steadyhud_gpu_bound_ratio",
    Kind::Gauge,
    "Share of the rolling window's time in GPU-bound frames, 0 to 1 (with GPU timing)",
);
pub const FRAME_CAP: Family = family(
    "steadyhud_frame_cap_fps",
    Kind::Gauge,
    "The frame cap in force, fps (0: none)",
);
pub const DISPLAYED_FPS: Family = family(
    "steadyhud_displayed_fps",
    Kind::Gauge,
    "Frames shown per second of the rolling window's display time (displayed-frame timing), by source of the display times",
);
pub const WINDOW_DROPPED: Family = family(
    "steadyhud_window_dropped_frames",
    Kind::Gauge,
    "Frames in the rolling window the source said were never shown, by source",
);
pub const WINDOW_UNKNOWN: Family = family(
    "steadyhud_window_unknown_frames",
    Kind::Gauge,
    "Frames in the rolling window the source gave no answer for (neither shown nor dropped), by source",
);
pub const DISPLAY_LATENCY: Family = family(
    "steadyhud_display_latency_seconds",
    Kind::Gauge,
    "Mean time from the present call to the frame on screen over the rolling window's shown frames, seconds, by source",
);
pub const DISPLAY_REFRESH: Family = family(
    "steadyhud_display_refresh_seconds",
    Kind::Gauge,
    "The display's refresh period as the source last gave it, seconds, by source",
);
/// Displayed-frame timing's families, in the order they are written: the
/// rolling window's numbers (`status`'s `display`), for windows with a
/// source of display times. Gauges of the window, not counters: the game
/// sends its window's numbers, not totals since its first frame.
pub const DISPLAY: [Family; 5] = [
    DISPLAYED_FPS,
    WINDOW_DROPPED,
    WINDOW_UNKNOWN,
    DISPLAY_LATENCY,
    DISPLAY_REFRESH,
];

/// The gauge of one PC latency term over a window's rolling window, as
/// `status` gives it (`latency`).
#[derive(Clone, Copy)]
pub struct LatencyGauge {
    pub key: ValueKey,
    pub family: Family,
}

/// One gauge per term of the summary's latency block ([`SUMMARY_KEYS`]),
/// in its order: `steadyhud_` and the summary's key, in seconds, its help
/// the term's label. A term unknown on a window (no display times, no
/// input in the window) has no sample, as a display number the source did
/// not give.
pub fn latency_gauges() -> &'static [LatencyGauge] {
    static GAUGES: OnceLock<Vec<LatencyGauge>> = OnceLock::new();
    GAUGES.get_or_init(|| {
        SUMMARY_KEYS
            .iter()
            .map(|&key| {
                let name = format!("steadyhud_{}_seconds", key.name());
                let help = format!(
                    "{} over the rolling window, seconds; no sample while unknown (docs/metrics.md, \"PC latency\", key latency.{})",
                    key.label(),
                    key.name()
                );
                // Made once per process, so leaking is bounded.
                LatencyGauge {
                    key,
                    family: family(name.leak(), Kind::Gauge, help.leak()),
                }
            })
            .collect()
    })
}

pub const READING_RATIO: Family = family(
    "steadyhud_reading_ratio",
    Kind::Gauge,
    "The newest system reading that is a share, as a ratio (1 = 100 %; a process's CPU is of one core, so it can pass 1), by sensor",
);
pub const READING_HERTZ: Family = family(
    "steadyhud_reading_hertz",
    Kind::Gauge,
    "The newest clock reading, hertz, by sensor",
);
pub const READING_CELSIUS: Family = family(
    "steadyhud_reading_celsius",
    Kind::Gauge,
    "The newest temperature reading, degrees Celsius, by sensor",
);
pub const READING_WATTS: Family = family(
    "steadyhud_reading_watts",
    Kind::Gauge,
    "The newest power reading, watts, by sensor",
);
pub const READING_BYTES: Family = family(
    "steadyhud_reading_bytes",
    Kind::Gauge,
    "The newest memory reading, bytes, by sensor",
);
/// The reading families, one per unit, in the order they are written.
pub const READINGS: [Family; 5] = [
    READING_RATIO,
    READING_HERTZ,
    READING_CELSIUS,
    READING_WATTS,
    READING_BYTES,
];

/// Where the reading of session-log column `column` goes: its family (by
/// unit), its `sensor` label (the column without its unit: `gpu_power_w`
/// → `gpu_power`) and the factor to that family's base unit.
pub fn reading(column: &str) -> Option<(&'static Family, &'static str, f64)> {
    let sensor = Sensor::of_column(column)?;
    let c = sensor.column();
    let (family, suffix, factor) = match sensor.unit() {
        "%" => (&READINGS[0], "_pct", 0.01),
        "MHz" => (&READINGS[1], "_mhz", 1e6),
        "°C" => (&READINGS[2], "_c", 1.0),
        "W" => (&READINGS[3], "_w", 1.0),
        "MiB" => (&READINGS[4], "_mb", 1024.0 * 1024.0),
        _ => return None,
    };
    Some((family, c.strip_suffix(suffix).unwrap_or(c), factor))
}

pub const UP: Family = family(
    "steadyhud_up",
    Kind::Gauge,
    "1 for each game that answered this scrape",
);
pub const BUILD_INFO: Family = family(
    "steadyhud_build_info",
    Kind::Gauge,
    "The exporter's version, as a label; always 1",
);
pub const EXPORT_ERRORS: Family = family(
    "steadyhud_export_errors_total",
    Kind::Counter,
    "Times a game started failing to be read (gone mid-scrape, hanging, refused, another user's); a game that keeps failing counts once",
);

pub const ACCEPT_ERRORS: Family = family(
    "steadyhud_export_accept_errors_total",
    Kind::Counter,
    "Connections the exporter could not accept (out of file descriptors); each closes idle connections and pauses accepting",
);

/// The gauge of one summary metric of the catalog over a window's
/// rolling window, as `status` gives it: its family and the factor from
/// the catalog's unit to the family's base unit.
#[derive(Clone, Copy)]
pub struct MetricGauge {
    pub metric: &'static Metric,
    pub family: Family,
    pub factor: f64,
}

/// Catalog keys whose gauge has a name of its own: `average_fps` was
/// `steadyhud_fps` before the gauges came from the catalog (dashboards
/// query it); `frames` would be `steadyhud_frames`, the family name
/// OpenMetrics gives the counter `steadyhud_frames_total`;
/// `stutter_count` would end in `_count`, which Prometheus keeps for
/// histograms and summaries.
const NAMED: [(&str, &str); 3] = [
    ("average_fps", "steadyhud_fps"),
    ("frames", "steadyhud_window_frames"),
    ("stutter_count", "steadyhud_window_stutters"),
];

/// One gauge per metric of the catalog ([`METRICS`]), in its order: named
/// `steadyhud_` and the key, the unit in Prometheus's base unit (`_ms` →
/// `_seconds`, `_s` → `_seconds`, `_pct` → `_ratio`, 1 = 100 %) unless
/// [`NAMED`] names it; its help is the catalog's label. A new summary
/// metric is exported without code here.
pub fn metric_gauges() -> &'static [MetricGauge] {
    static GAUGES: OnceLock<Vec<MetricGauge>> = OnceLock::new();
    GAUGES.get_or_init(|| METRICS.iter().map(gauge_of).collect())
}

fn gauge_of(m: &'static Metric) -> MetricGauge {
    let key = m.key;
    let (base, suffix, factor, words) = match m.unit {
        "ms" => (key.strip_suffix("_ms"), "_seconds", 1e-3, ", seconds"),
        "s" => (key.strip_suffix("_s"), "_seconds", 1.0, ", seconds"),
        "%" => (
            key.strip_suffix("_pct"),
            "_ratio",
            0.01,
            ", as a ratio (1 = 100 %)",
        ),
        "fps" => (Some(key), "", 1.0, ", fps"),
        _ => (Some(key), "", 1.0, ""),
    };
    let name = match NAMED.iter().find(|n| n.0 == key) {
        Some(n) => n.1.to_string(),
        None => format!("steadyhud_{}{suffix}", base.unwrap_or(key)),
    };
    let words = if m.group == Group::Flags {
        " (1: yes, 0: no)"
    } else {
        words
    };
    let help = format!(
        "{} over the rolling window{words} (docs/metrics.md, key {key})",
        m.label
    );
    // Made once per process (`metric_gauges`), so leaking is bounded.
    MetricGauge {
        metric: m,
        family: family(name.leak(), Kind::Gauge, help.leak()),
        factor,
    }
}

/// Every family, in the order they are written: the exporter's own, the
/// counters, the histogram, the catalog's gauges ([`metric_gauges`]), the
/// GPU-bound ratio and frame cap, displayed-frame timing's, PC latency's
/// ([`latency_gauges`]), the readings.
pub fn all() -> &'static [Family] {
    static ALL: OnceLock<Vec<Family>> = OnceLock::new();
    ALL.get_or_init(|| {
        [
            BUILD_INFO,
            EXPORT_ERRORS,
            ACCEPT_ERRORS,
            UP,
            FRAMES,
            PLAY_SECONDS,
            STUTTERS,
            STUTTER_SECONDS,
            RING_OVERFLOWS,
            FRAME_TIME,
        ]
        .into_iter()
        .chain(metric_gauges().iter().map(|g| g.family))
        .chain([GPU_BOUND, FRAME_CAP])
        .chain(DISPLAY)
        .chain(latency_gauges().iter().map(|g| g.family))
        .chain(READINGS)
        .collect()
    })
}

/// Shortest and longest `le` bound, ns.
const LE_MIN_NS: u64 = 250_000;
const LE_MAX_NS: u64 = 4_000_000_000;
/// Every how many fleet buckets a bound is taken.
pub const LE_STEP: usize = 5;

/// The histogram's bucket bounds: every [`LE_STEP`]th upper edge of the
/// fleet scheme's 1 % buckets from 0.25 ms to 4 s (each bucket at most
/// ~5.1 % wide), as (fleet bucket whose upper edge it is, edge in ns).
/// A bound's cumulative time is exact: the seconds in frames of the fleet
/// buckets up to it.
pub fn le_bounds() -> &'static [(u32, u64)] {
    static BOUNDS: OnceLock<Vec<(u32, u64)>> = OnceLock::new();
    BOUNDS.get_or_init(|| {
        (0..bucket_count() as u32)
            .filter_map(|b| bucket_range(b).map(|(_, hi)| (b, hi)))
            .filter(|&(_, hi)| (LE_MIN_NS..=LE_MAX_NS).contains(&hi))
            .step_by(LE_STEP)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_at_most_about_5_percent_apart() {
        let b = le_bounds();
        assert!(b.len() > 150 && b.len() < 250, "{}", b.len());
        assert!(b[0].1 >= LE_MIN_NS && b.last().unwrap().1 <= LE_MAX_NS);
        for w in b.windows(2) {
            let r = w[1].1 as f64 / w[0].1 as f64;
            assert!(r > 1.04 && r < 1.052, "{w:?}: {r}");
        }
    }

    /// Every reading has a family of its unit, in base units.
    #[test]
    fn every_reading_has_a_base_unit_family() {
        for s in Sensor::ALL {
            let (fam, label, factor) =
                reading(s.column()).unwrap_or_else(|| panic!("{}", s.column()));
            assert!(READINGS.iter().any(|r| r.name == fam.name));
            assert!(!label.is_empty() && label != s.column(), "{label}");
            assert!(factor > 0.0);
        }
        assert_eq!(
            reading("gpu_power_w").map(|r| (r.0.name, r.1, r.2)),
            Some(("steadyhud_reading_watts", "gpu_power", 1.0))
        );
        assert_eq!(
            reading("cpu_mhz").map(|r| (r.0.name, r.1)),
            Some(("steadyhud_reading_hertz", "cpu"))
        );
        assert_eq!(reading("ram_used_mb").map(|r| r.2), Some(1_048_576.0));
        assert_eq!(
            reading("cpu_load_pct").map(|r| (r.1, r.2)),
            Some(("cpu_load", 0.01))
        );
        assert!(reading("gpu_throttle").is_none());
    }

    /// The catalog's gauges keep the names dashboards query, and take
    /// base units; no gauge is named as a counter's OpenMetrics family.
    #[test]
    fn catalog_gauges_are_named_from_their_keys() {
        let name = |key: &str| {
            metric_gauges()
                .iter()
                .find(|g| g.metric.key == key)
                .map(|g| (g.family.name, g.factor))
        };
        assert_eq!(name("steady_fps"), Some(("steadyhud_steady_fps", 1.0)));
        assert_eq!(
            name("mostly_steady_fps"),
            Some(("steadyhud_mostly_steady_fps", 1.0))
        );
        assert_eq!(name("typical_fps"), Some(("steadyhud_typical_fps", 1.0)));
        assert_eq!(name("average_fps"), Some(("steadyhud_fps", 1.0)));
        assert_eq!(name("p99_9_ms"), Some(("steadyhud_p99_9_seconds", 1e-3)));
        assert_eq!(
            name("time_over_budget_pct"),
            Some(("steadyhud_time_over_budget_ratio", 0.01))
        );
        assert_eq!(metric_gauges().len(), METRICS.len());
        // Endings Prometheus keeps for counters, histograms and summaries:
        // no gauge's name may end so (`promtool check metrics`).
        let reserved = ["_count", "_sum", "_bucket", "_total", "_created"];
        for g in metric_gauges() {
            assert!(
                !reserved.iter().any(|e| g.family.name.ends_with(e)),
                "a gauge named like a counter, histogram or summary part: {}",
                g.family.name
            );
            assert!(
                g.family.help.starts_with(g.metric.label),
                "{}",
                g.family.help
            );
            let counter = format!("{}_total", g.family.name);
            assert!(all().iter().all(|f| f.name != counter), "{counter}");
        }
    }

    /// Displayed-frame timing's families are gauges of the rolling window:
    /// none is named like a counter, histogram or summary part.
    #[test]
    fn display_families_are_gauges_named_as_such() {
        let reserved = ["_count", "_sum", "_bucket", "_total", "_created"];
        for f in DISPLAY {
            assert_eq!(f.kind, Kind::Gauge, "{}", f.name);
            assert!(!reserved.iter().any(|e| f.name.ends_with(e)), "{}", f.name);
            assert!(all().iter().any(|a| a.name == f.name), "{}", f.name);
        }
    }

    /// PC latency's gauges are the summary's latency keys, in seconds.
    #[test]
    fn latency_gauges_are_the_summarys_keys() {
        let names: Vec<&str> = latency_gauges().iter().map(|g| g.family.name).collect();
        assert_eq!(
            names,
            [
                "steadyhud_pc_latency_seconds",
                "steadyhud_click_to_photon_seconds",
                "steadyhud_input_to_frame_start_seconds",
                "steadyhud_frame_start_to_present_seconds",
                "steadyhud_present_to_display_seconds",
            ]
        );
        for g in latency_gauges() {
            assert_eq!(g.family.kind, Kind::Gauge);
            assert!(
                g.family.help.starts_with(g.key.label()),
                "{}",
                g.family.help
            );
            assert!(all().iter().any(|a| a.name == g.family.name));
        }
    }

    #[test]
    fn names_are_unique_and_counters_end_in_total() {
        let mut names: Vec<&str> = all().iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().len());
        for f in all() {
            assert_eq!(
                f.kind == Kind::Counter,
                f.name.ends_with("_total"),
                "{}",
                f.name
            );
        }
    }
}
