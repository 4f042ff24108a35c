//! Every per-frame column a steadyhud session log can have, declared once
//! ([`all`]): its name, unit, kind and meaning. The layer's writer takes
//! its header from here ([`FRAME`], then what its device counts, then the
//! readings), the `formats` reader tells counters from the other columns
//! by [`kind_of`], and a test holds docs/metrics.md's column table to it,
//! both ways.
//!
//! The columns' own declarations stay where their values are made and
//! are only gathered here: the counters' names, labels and units are
//! `steadyhud_counters::BUILTIN`, `REFLEX` and `ANTI_LAG`, the readings.
//! `steadyhud_metrics::sensors::Sensor`, the GPU columns'
//! `steadyhud_metrics::gpu`.

use steadyhud_counters::{Unit, ANTI_LAG, BUILTIN, REFLEX};
use steadyhud_metrics::sensors::{Sensor, THROTTLE_COLUMN};

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The frame itself: index, present time, duration.
    Frame,
    /// A statistics counter's value over the frame.
    Counter,
    /// Worked out from the counters (`cpu_busy_ms`).
    Derived,
    /// GPU busy and wait time within the frame (GPU timing).
    Gpu,
    /// When the frame reached the screen (displayed-frame timing:
    /// [`crate::display`]).
    Display,
    /// PC latency: the inputs a frame took and NVIDIA's terms
    /// (docs/metrics.md, "PC latency").
    Latency,
    /// A system reading (the latest sample at the frame's present).
    Sensor,
}

/// One per-frame column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    /// `ns`, `ms` (six decimals: exact ns), `count`, `bytes`, a reading's
    /// unit (`%`, `MHz`, …) or `text`.
    pub unit: &'static str,
    pub kind: Kind,
    /// What it is, in words.
    pub meaning: &'static str,
}

/// The columns every session log starts with, in order.
pub const FRAME: [Column; 3] = [
    Column {
        name: "frame",
        unit: "count",
        kind: Kind::Frame,
        meaning: "0-based index of the frame",
    },
    Column {
        name: "present_ns",
        unit: "ns",
        kind: Kind::Frame,
        meaning: "from the session's first present to the present that ends the frame",
    },
    Column {
        name: "frametime_ms",
        unit: "ms",
        kind: Kind::Frame,
        meaning: "duration of the frame",
    },
];

/// The column after the counters (GPU timing's included): the frame's own
/// CPU time.
pub const CPU_BUSY: Column = Column {
    name: "cpu_busy_ms",
    unit: "ms",
    kind: Kind::Derived,
    meaning: "frametime_ms − in_present_ms − limiter_wait_ms: from the return of the previous present to this present call",
};

/// GPU timing's columns.
pub const GPU: [Column; 2] = [
    Column {
        name: steadyhud_metrics::gpu::BUSY_COLUMN,
        unit: "ms",
        kind: Kind::Gpu,
        meaning: "time within the frame the GPU ran at least one of the app's batches",
    },
    Column {
        name: steadyhud_metrics::gpu::WAIT_COLUMN,
        unit: "ms",
        kind: Kind::Gpu,
        meaning: "the rest of the frame: the GPU waited",
    },
];

/// Displayed-frame timing's columns ([`crate::display`]), after
/// `cpu_busy_ms` and before the readings, in a log whose window had a
/// source of display times. Row k's cells are the answer for the present
/// that ends frame k.
pub const DISPLAY: [Column; 4] = [
    Column {
        name: "displayed_ns",
        unit: "ns",
        kind: Kind::Display,
        meaning: "when the frame reached the screen, from the session's first present (as present_ns); empty when it was never shown or no answer came",
    },
    Column {
        name: "display_latency_ms",
        unit: "ms",
        kind: Kind::Display,
        meaning: "from the present call that ends the frame to the frame on screen",
    },
    Column {
        name: "refresh_ms",
        unit: "ms",
        kind: Kind::Display,
        meaning: "the display's refresh period as the source gave it; empty when it gave none",
    },
    Column {
        name: "display_source",
        unit: "text",
        kind: Kind::Display,
        meaning: "who answered (wayland, x11-present, present-timing, google-display-timing); empty when no answer came: the frame is neither shown nor dropped",
    },
];

/// PC latency's columns (docs/metrics.md, "PC latency"), after the
/// display columns and before the readings, in a log whose window had a
/// reader of input times and the present's return (statistics counters).
/// Row k's cells are the frame that present k+1 ends.
pub const LATENCY: [Column; 5] = [
    Column {
        name: "input_ns",
        unit: "ns",
        kind: Kind::Latency,
        meaning: "the earliest input the frame took, from the session's first present (as present_ns); empty when it took none",
    },
    Column {
        name: "input_to_frame_start_ms",
        unit: "ms",
        kind: Kind::Latency,
        meaning: "I2FS: the mean over the inputs the frame took of its start − the input's time; empty when it took none",
    },
    Column {
        name: "click_to_photon_ms",
        unit: "ms",
        kind: Kind::Latency,
        meaning: "the mean over the inputs the frame took of its display time − the input's time; empty unless it took inputs and was shown",
    },
    Column {
        name: "frame_start_to_present_ms",
        unit: "ms",
        kind: Kind::Latency,
        meaning: "FS2P: from the frame's start (the game's marker, else the previous present's return) to its present call",
    },
    Column {
        name: "pc_latency_ms",
        unit: "ms",
        kind: Kind::Latency,
        meaning: "PCL: the window's mean I2FS + FS2P + display_latency_ms; empty unless the frame was shown with an input in the window",
    },
];

/// A unit's name for a counter.
fn counter_unit(u: Unit) -> &'static str {
    match u {
        Unit::Nanos => "ms",
        Unit::Count => "count",
        Unit::Bytes => "bytes",
    }
}

/// Every column a session log can have, in the order a log writes them:
/// the frame's, the counters (built-in, then Reflex, Anti-Lag, then GPU timing's,
/// which the device registers as counters when it starts timing),
/// `cpu_busy_ms`, the display columns, the latency columns, the readings.
pub fn all() -> impl Iterator<Item = Column> {
    let counters = BUILTIN
        .iter()
        .chain(REFLEX)
        .chain(ANTI_LAG)
        .map(|&(name, label, unit)| Column {
            name,
            unit: counter_unit(unit),
            kind: Kind::Counter,
            meaning: label,
        });
    let sensors = Sensor::ALL.into_iter().map(|s| Column {
        name: s.column(),
        unit: s.unit(),
        kind: Kind::Sensor,
        meaning: s.label(),
    });
    let throttle = Column {
        name: THROTTLE_COLUMN,
        unit: "text",
        kind: Kind::Sensor,
        meaning: "throttle reasons of the GPU, joined by |",
    };
    FRAME
        .into_iter()
        .chain(counters)
        .chain(GPU)
        .chain([CPU_BUSY])
        .chain(DISPLAY)
        .chain(LATENCY)
        .chain(sensors)
        .chain([throttle])
}

/// The kind of the declared column `name`; `None` for a name no steadyhud
/// writes today (a reader takes an unknown column of a session log for a
/// counter: counters are the columns that come and go).
pub fn kind_of(name: &str) -> Option<Kind> {
    all().find(|c| c.name == name).map(|c| c.kind)
}

/// The CSV header of a session log's frame columns (`frame,…`).
pub fn frame_header() -> String {
    FRAME.map(|c| c.name).join(",")
}

/// The comment line (without `# `) a session log explains its frame
/// columns with: `frame: 0-based index of the frame; …`.
pub fn frame_about() -> String {
    FRAME
        .map(|c| format!("{}: {}", c.name, c.meaning))
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_kinds_are_found() {
        let names: Vec<&str> = all().map(|c| c.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        assert_eq!(frame_header(), "frame,present_ns,frametime_ms");
        assert_eq!(kind_of("submits"), Some(Kind::Counter));
        assert_eq!(kind_of("cpu_busy_ms"), Some(Kind::Derived));
        assert_eq!(kind_of("gpu_busy_ms"), Some(Kind::Gpu));
        assert_eq!(kind_of("gpu_throttle"), Some(Kind::Sensor));
        assert_eq!(kind_of("displayed_ns"), Some(Kind::Display));
        assert_eq!(kind_of("pc_latency_ms"), Some(Kind::Latency));
        assert_eq!(kind_of("my_engine_counter"), None);
    }
}
