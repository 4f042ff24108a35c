//! Every metric family `steadyhud export` writes, declared once: its name,
//! type and help. The renderer writes them from here, docs/fleet.md lists
//! them (`crates/cli/tests/export_docs.rs` compares), and the bucket bounds
//! of the time-weighted frame-time histogram are [`le_bounds`].

use steadyhud_metrics::histogram::{bucket_count, bucket_range};
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
pub const STEADY: Family = family(
    "steadyhud_steady_fps",
    Kind::Gauge,
    "Steady FPS over the rolling window (docs/metrics.md)",
);
pub const MOSTLY_STEADY: Family = family(
    "steadyhud_mostly_steady_fps",
    Kind::Gauge,
    "Mostly Steady FPS over the rolling window",
);
pub const TYPICAL: Family = family(
    "steadyhud_typical_fps",
    Kind::Gauge,
    "Typical FPS over the rolling window",
);
pub const FPS: Family = family(
    "steadyhud_fps",
    Kind::Gauge,
    "Average FPS over the rolling window",
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

/// Every family, in the order they are written.
pub const ALL: [Family; 21] = [
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
    STEADY,
    MOSTLY_STEADY,
    TYPICAL,
    FPS,
    GPU_BOUND,
    FRAME_CAP,
    READINGS[0],
    READINGS[1],
    READINGS[2],
    READINGS[3],
    READINGS[4],
];

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
    static BOUNDS: std::sync::OnceLock<Vec<(u32, u64)>> = std::sync::OnceLock::new();
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

    #[test]
    fn names_are_unique_and_counters_end_in_total() {
        let mut names: Vec<&str> = ALL.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for f in ALL {
            assert_eq!(
                f.kind == Kind::Counter,
                f.name.ends_with("_total"),
                "{}",
                f.name
            );
        }
    }
}
