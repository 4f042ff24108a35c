//! What the system readings leave for the streams ([`Feed`]): the
//! session's sensor columns and a short history of samples, each row of a
//! log taking the latest sample at its frame's present, the HUD rows the
//! newest; and what a stream keeps of its rows' readings for the summary
//! ([`Recorder`]). Filled by the sampler of [`super::sensors`].

use std::collections::VecDeque;
use std::fmt::Write;
use std::sync::{Arc, Mutex};
use steadyhud_sensors::{hud_row, HudRow, Sample, Sensor, THROTTLE_COLUMN};

/// Samples kept: rows are written at most a few frames after their
/// present (GPU timing holds them back), far less than this many samples.
const HISTORY: usize = 64;

/// Comment line the session log gets above its header when it has sensor
/// columns.
pub const ABOUT: &str = "sensors: the latest sample (every 1/sensor_hz s) at the frame's present; empty cell = not in that sample; \
     units % MHz degC W MiB; proc_cpu_pct = % of one core (all threads); proc_gpu_pct = the process's busiest GPU engine (DRM fdinfo); \
     gpu_throttle = reasons joined by |";

/// What the streams read: the session's sensor columns and recent samples.
#[derive(Default)]
pub struct Feed {
    /// Numeric columns, log order.
    pub columns: Vec<Sensor>,
    pub throttle: bool,
    /// Recent samples, oldest first, each with its log cells (formatted
    /// once, copied into every row that takes it).
    samples: VecDeque<(Sample, String)>,
}

/// The readings of a stream's current row, as its log has them (the cells
/// read back: the summary equals `analyze` of the log), for the stream's
/// whole-session statistics (`steadyhud_metrics::WholeSession`, which keeps
/// their running sums, not the rows).
pub struct Recorder {
    /// The numeric columns, in row order.
    sensors: Vec<(Sensor, &'static str)>,
    throttle_column: bool,
    /// The cells the current values were read from (a sample repeats for
    /// many frames: read once).
    last_cells: String,
    values: Vec<f64>,
    throttle: String,
}

impl Recorder {
    /// Reads the readings of one row whose cells are `cells` (as
    /// [`Feed::cells`] wrote them: each after a comma, numeric columns
    /// then the throttle column).
    pub fn push(&mut self, cells: &str) {
        if cells != self.last_cells {
            self.last_cells.clear();
            self.last_cells.push_str(cells);
            let mut fields = cells.split(',').skip(1);
            for v in self.values.iter_mut() {
                *v = fields
                    .next()
                    .and_then(|f| f.parse().ok())
                    .unwrap_or(f64::NAN);
            }
            self.throttle.clear();
            self.throttle.push_str(fields.next().unwrap_or(""));
        }
    }

    /// The numeric columns (sensor, column name), in row order.
    pub fn sensors(&self) -> &[(Sensor, &'static str)] {
        &self.sensors
    }

    /// Whether the rows have a throttle column.
    pub fn has_throttle(&self) -> bool {
        self.throttle_column
    }

    /// The last row's readings (NaN: none), in column order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The last row's throttle reasons.
    pub fn throttle(&self) -> &str {
        &self.throttle
    }
}

/// A feed shared by the sampler and the streams.
pub type SharedFeed = Arc<Mutex<Feed>>;

impl Feed {
    /// Log column names (numeric, then `gpu_throttle` if any).
    pub fn names(&self) -> Vec<&'static str> {
        let mut n: Vec<&'static str> = self.columns.iter().map(|c| c.column()).collect();
        if self.throttle {
            n.push(THROTTLE_COLUMN);
        }
        n
    }

    /// A [`Recorder`] for a log with this feed's columns.
    pub fn recorder(&self) -> Recorder {
        Recorder {
            sensors: self.columns.iter().map(|&s| (s, s.column())).collect(),
            throttle_column: self.throttle,
            last_cells: String::from("\u{0}"),
            values: vec![f64::NAN; self.columns.len()],
            throttle: String::new(),
        }
    }

    /// The latest sample taken at or before `t_ns`, with its cells.
    fn at(&self, t_ns: u64) -> Option<&(Sample, String)> {
        self.samples.iter().rev().find(|s| s.0.t_ns <= t_ns)
    }

    /// Log cells of the sample at `t_ns` into `out`, each after a comma
    /// (all empty before the first sample).
    pub fn cells(&self, t_ns: u64, out: &mut String) {
        match self.at(t_ns) {
            Some((_, cells)) => {
                out.clear();
                out.push_str(cells);
            }
            None => self.format(None, out),
        }
    }

    /// The cells of `s` (`None`: all empty).
    fn format(&self, s: Option<&Sample>, out: &mut String) {
        out.clear();
        for &c in &self.columns {
            out.push(',');
            if let Some(v) = s.and_then(|s| s.get(c)) {
                let _ = write!(out, "{v:.*}", c.log_decimals());
            }
        }
        if self.throttle {
            out.push(',');
            if let Some(t) = s.and_then(|s| s.throttle) {
                t.text(out);
            }
        }
    }

    /// Every reading of the newest sample, by log column (`cpu_load_pct`, …).
    pub fn latest(&self) -> std::collections::BTreeMap<String, f64> {
        let Some((s, _)) = self.samples.back() else {
            return Default::default();
        };
        steadyhud_metrics::sensors::Sensor::ALL
            .into_iter()
            .filter_map(|c| Some((c.column().to_string(), f64::from(s.get(c)?))))
            .collect()
    }

    /// The HUD rows `names` of the newest sample (`°` as the HUD font has it).
    pub fn hud_rows(&self, names: &[&str]) -> Vec<HudRow> {
        let Some((s, _)) = self.samples.back() else {
            return Vec::new();
        };
        names.iter().filter_map(|n| hud_row(n, s, "°C")).collect()
    }

    /// Appends a new sample (the sampler's).
    pub fn push(&mut self, s: Sample) {
        let mut cells = match self.samples.len() {
            HISTORY => self.samples.pop_front().map(|(_, c)| c).unwrap_or_default(),
            _ => String::new(),
        };
        self.format(Some(&s), &mut cells);
        self.samples.push_back((s, cells));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row takes the latest sample at or before its present; cells
    /// of values a sample lacks are empty.
    #[test]
    fn rows_take_the_latest_sample_at_their_present() {
        let mut f = Feed {
            columns: vec![Sensor::CpuLoadPct, Sensor::GpuMhz],
            throttle: true,
            ..Feed::default()
        };
        let mut a = Sample {
            t_ns: 100,
            ..Sample::default()
        };
        a.set(Sensor::CpuLoadPct, Some(12.34));
        a.set(Sensor::GpuMhz, Some(1800.4));
        let mut b = Sample {
            t_ns: 200,
            ..Sample::default()
        };
        b.set(Sensor::CpuLoadPct, Some(50.0));
        b.throttle = Some(steadyhud_sensors::Throttle::POWER);
        f.push(a);
        f.push(b);
        let mut out = String::new();
        f.cells(50, &mut out);
        assert_eq!(out, ",,,");
        f.cells(150, &mut out);
        assert_eq!(out, ",12.3,1800,");
        f.cells(200, &mut out);
        assert_eq!(out, ",50.0,,power");
        assert_eq!(f.names(), ["cpu_load_pct", "gpu_mhz", "gpu_throttle"]);
    }

    /// The recorder keeps what the rows say: the cells read back (rounded
    /// as written), empty cells as no reading, the throttle text.
    #[test]
    fn the_recorder_reads_the_rows_cells() {
        let f = Feed {
            columns: vec![Sensor::CpuLoadPct, Sensor::GpuMhz],
            throttle: true,
            ..Feed::default()
        };
        let mut r = f.recorder();
        assert_eq!(
            r.sensors(),
            [
                (Sensor::CpuLoadPct, "cpu_load_pct"),
                (Sensor::GpuMhz, "gpu_mhz")
            ]
        );
        assert!(r.has_throttle());
        let (mut cpu, mut gpu, mut t) = (Vec::new(), Vec::new(), Vec::new());
        for cells in [",,,", ",12.3,1800,", ",12.3,1800,", ",50.0,,power"] {
            r.push(cells);
            cpu.push(r.values()[0]);
            gpu.push(r.values()[1]);
            t.push(r.throttle().to_string());
        }
        assert!(cpu[0].is_nan());
        assert_eq!(cpu[1..], [12.3, 12.3, 50.0]);
        assert!(gpu[0].is_nan() && gpu[3].is_nan());
        assert_eq!(gpu[1..3], [1800.0, 1800.0]);
        assert_eq!(t, ["", "", "", "power"]);
    }
}
