//! System readings beside the frames: time-weighted sensor means and
//! maxima, and the energy of a session (docs/metrics.md, "System readings
//! and energy").
//!
//! Input per frame: its duration d_i (ns) and, per sensor, the latest
//! reading when the frame was logged, or none ([`SensorColumns`], NaN for
//! none). The readings come from steadyhud's own columns
//! ([`Sensor::column`]) or the matching columns of MangoHud and PresentMon
//! logs, converted to these units by the readers.
//!
//! - mean = Σ v_i·d_i / Σ d_i over the frames with a reading: each reading
//!   counts for as long as its frame lasted, like every steadyhud metric.
//! - coverage = Σ d_i of those frames / Σ d_i of all frames, in percent.
//! - energy E = Σ P_i·d_i (W·s = J) over the frames with a power reading;
//!   frames per joule = those frames / E, joules per frame = E / frames.
//!   `total` adds GPU and CPU package power over the frames having both.

pub use super::runs::Runs;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// One sensor's per-frame readings (NaN: no reading), as runs.
pub type Readings = Runs<f64>;
/// Per-frame throttle reasons (`power|thermal`; empty: none), as runs.
pub type Reasons = Runs<String>;

/// A sensor steadyhud logs, one column each (`*_pct` percent, `*_mhz` MHz,
/// `*_c` °C, `*_w` W, `*_mb` MiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sensor {
    /// Busy share of all CPUs, % (`/proc/stat`).
    CpuLoadPct,
    /// Busy share of the busiest core, %.
    CpuBusiestPct,
    /// Mean current clock of the cores, MHz (cpufreq `scaling_cur_freq`).
    CpuMhz,
    /// CPU temperature, °C (hwmon `k10temp`, `coretemp`, `zenpower`).
    CpuTempC,
    /// CPU package power, W (RAPL powercap `energy_uj` deltas).
    CpuPowerW,
    /// The process's CPU time over the interval, % of one core (all threads).
    ProcCpuPct,
    /// System RAM in use (MemTotal − MemAvailable), MB.
    RamUsedMb,
    /// Swap in use, MB.
    SwapUsedMb,
    /// The process's resident set, MB.
    RssMb,
    /// GPU load, %.
    GpuLoadPct,
    /// GPU core clock, MHz.
    GpuMhz,
    /// GPU temperature, °C.
    GpuTempC,
    /// GPU power, W.
    GpuPowerW,
    /// Video memory in use (whole device), MB.
    VramUsedMb,
    /// Video memory size, MB.
    VramTotalMb,
    /// The process's busiest GPU engine over the interval, % (DRM fdinfo).
    ProcGpuPct,
    /// The process's video memory, MB (DRM fdinfo).
    ProcVramMb,
}

impl Sensor {
    /// Every sensor, in log and table order.
    pub const ALL: [Sensor; 17] = [
        Sensor::CpuLoadPct,
        Sensor::CpuBusiestPct,
        Sensor::CpuMhz,
        Sensor::CpuTempC,
        Sensor::CpuPowerW,
        Sensor::ProcCpuPct,
        Sensor::RamUsedMb,
        Sensor::SwapUsedMb,
        Sensor::RssMb,
        Sensor::GpuLoadPct,
        Sensor::GpuMhz,
        Sensor::GpuTempC,
        Sensor::GpuPowerW,
        Sensor::VramUsedMb,
        Sensor::VramTotalMb,
        Sensor::ProcGpuPct,
        Sensor::ProcVramMb,
    ];

    /// The steadyhud session-log column (and JSON key).
    pub fn column(self) -> &'static str {
        match self {
            Sensor::CpuLoadPct => "cpu_load_pct",
            Sensor::CpuBusiestPct => "cpu_busiest_pct",
            Sensor::CpuMhz => "cpu_mhz",
            Sensor::CpuTempC => "cpu_temp_c",
            Sensor::CpuPowerW => "cpu_power_w",
            Sensor::ProcCpuPct => "proc_cpu_pct",
            Sensor::RamUsedMb => "ram_used_mb",
            Sensor::SwapUsedMb => "swap_used_mb",
            Sensor::RssMb => "rss_mb",
            Sensor::GpuLoadPct => "gpu_load_pct",
            Sensor::GpuMhz => "gpu_mhz",
            Sensor::GpuTempC => "gpu_temp_c",
            Sensor::GpuPowerW => "gpu_power_w",
            Sensor::VramUsedMb => "vram_used_mb",
            Sensor::VramTotalMb => "vram_total_mb",
            Sensor::ProcGpuPct => "proc_gpu_pct",
            Sensor::ProcVramMb => "proc_vram_mb",
        }
    }

    /// Position in [`Sensor::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Decimals steadyhud's session log writes (clocks in whole MHz).
    pub fn log_decimals(self) -> usize {
        match self {
            Sensor::CpuMhz | Sensor::GpuMhz => 0,
            _ => 1,
        }
    }

    /// The sensor logged in `column`, if it is one.
    pub fn of_column(column: &str) -> Option<Sensor> {
        Sensor::ALL.into_iter().find(|s| s.column() == column)
    }

    /// Unit as shown: `%`, `MHz`, `°C`, `W`, `MiB`.
    pub fn unit(self) -> &'static str {
        let c = self.column();
        if c.ends_with("_pct") {
            "%"
        } else if c.ends_with("_mhz") {
            "MHz"
        } else if c.ends_with("_c") {
            "°C"
        } else if c.ends_with("_w") {
            "W"
        } else {
            "MiB"
        }
    }

    /// Human name for tables: `GPU power`, `process RSS`.
    pub fn label(self) -> &'static str {
        match self {
            Sensor::CpuLoadPct => "CPU load",
            Sensor::CpuBusiestPct => "CPU busiest core",
            Sensor::CpuMhz => "CPU clock",
            Sensor::CpuTempC => "CPU temperature",
            Sensor::CpuPowerW => "CPU package power",
            Sensor::ProcCpuPct => "process CPU",
            Sensor::RamUsedMb => "RAM used",
            Sensor::SwapUsedMb => "swap used",
            Sensor::RssMb => "process RSS",
            Sensor::GpuLoadPct => "GPU load",
            Sensor::GpuMhz => "GPU clock",
            Sensor::GpuTempC => "GPU temperature",
            Sensor::GpuPowerW => "GPU power",
            Sensor::VramUsedMb => "VRAM used",
            Sensor::VramTotalMb => "VRAM total",
            Sensor::ProcGpuPct => "process GPU",
            Sensor::ProcVramMb => "process VRAM",
        }
    }
}

/// Session-log column of the GPU's throttle reasons: empty, or reasons
/// joined with `|` (`power|thermal`).
pub const THROTTLE_COLUMN: &str = "gpu_throttle";

/// Whether `column` is one of steadyhud's sensor columns (a reading or
/// [`THROTTLE_COLUMN`]): such columns are never statistics counters.
pub fn is_sensor_column(column: &str) -> bool {
    column == THROTTLE_COLUMN || Sensor::of_column(column).is_some()
}

/// One sensor's per-frame readings.
#[derive(Clone, Debug, PartialEq)]
pub struct SensorColumn {
    pub sensor: Sensor,
    /// Column the readings came from (`gpu_power_w`, `gpu_power`,
    /// `GPUPower`).
    pub source: String,
    /// `values.get(i)` belongs to frame i, in the sensor's unit; NaN = no
    /// reading. Stored as runs of repeated readings.
    pub values: Readings,
}

/// Per-frame sensor columns of a frame log (like
/// [`super::gpu::GpuColumns`]): only the sensors the log has.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SensorColumns {
    pub columns: Vec<SensorColumn>,
    /// Throttle reasons per frame (`power|thermal`; empty: none reported),
    /// when the log has them; the column they came from.
    pub throttle: Option<Reasons>,
    pub throttle_source: Option<String>,
}

impl SensorColumns {
    /// The readings of `sensor`, if the log has them.
    pub fn get(&self, sensor: Sensor) -> Option<&Readings> {
        self.columns
            .iter()
            .find(|c| c.sensor == sensor)
            .map(|c| &c.values)
    }

    /// No sensor column and no throttle column.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty() && self.throttle.is_none()
    }
}

/// Time-weighted mean and maximum of one sensor.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SensorStat {
    #[serde(skip)]
    pub sensor: Sensor,
    /// Column of the log the readings came from.
    pub source: String,
    pub unit: &'static str,
    /// Frames with a reading.
    pub frames: u64,
    /// Share of the session's time in frames with a reading, percent.
    pub coverage_pct: f64,
    /// Σ v·d / Σ d over the frames with a reading.
    pub mean: f64,
    pub max: f64,
}

/// Energy over the frames with a power reading.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Energy {
    /// Frames with a power reading.
    pub frames: u64,
    /// Their time, s.
    pub time_s: f64,
    /// Their share of the session's time, percent.
    pub coverage_pct: f64,
    /// Σ P·d, J.
    pub joules: f64,
    /// joules / time_s, W.
    pub mean_w: f64,
    /// frames / joules; `null` when no energy was used (0 J).
    pub frames_per_joule: Option<f64>,
    /// joules / frames.
    pub joules_per_frame: f64,
}

/// GPU, CPU package and their sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct EnergySummary {
    pub gpu: Option<Energy>,
    pub cpu: Option<Energy>,
    /// GPU + CPU package over the frames having both readings.
    pub total: Option<Energy>,
}

impl EnergySummary {
    /// The energy performance per watt is judged by: the total where both
    /// are known, else GPU, else CPU package; with its name.
    pub fn headline(&self) -> Option<(&'static str, &Energy)> {
        self.total
            .as_ref()
            .map(|e| ("GPU + CPU package", e))
            .or_else(|| self.gpu.as_ref().map(|e| ("GPU", e)))
            .or_else(|| self.cpu.as_ref().map(|e| ("CPU package", e)))
    }
}

/// Throttling over the session.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThrottleStat {
    /// Frames with any reason.
    pub frames: u64,
    /// Share of the session's time in such frames, percent.
    pub time_pct: f64,
    /// Each reason and the share of the time it was reported, percent,
    /// most time first.
    pub reasons: Vec<(String, f64)>,
}

/// The sensor block of `analyze --json` and the session summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SensorSummary {
    /// One entry per sensor with at least one reading, keyed by its
    /// steadyhud column, in [`Sensor::ALL`] order.
    #[serde(serialize_with = "as_map")]
    pub readings: Vec<SensorStat>,
    pub energy: EnergySummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_throttle: Option<ThrottleStat>,
}

fn as_map<S: Serializer>(v: &[SensorStat], s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(v.len()))?;
    for st in v {
        m.serialize_entry(st.sensor.column(), st)?;
    }
    m.end()
}

impl SensorSummary {
    /// The statistics of `sensor`, if the log had readings of it.
    pub fn get(&self, sensor: Sensor) -> Option<&SensorStat> {
        self.readings.iter().find(|s| s.sensor == sensor)
    }
}

/// A reading is a finite number; NaN (and ±∞) is none.
fn known(v: f64) -> bool {
    v.is_finite()
}

fn pct(part_ns: u128, all_ns: u128) -> f64 {
    if all_ns == 0 {
        0.0
    } else {
        part_ns as f64 / all_ns as f64 * 100.0
    }
}

/// Running mean and maximum of one sensor.
#[derive(Clone, Debug)]
struct StatSums {
    sensor: Sensor,
    source: String,
    frames: u64,
    time_ns: u128,
    weighted: f64,
    max: f64,
}

impl StatSums {
    fn push(&mut self, d: u64, v: f64) {
        if !known(v) {
            return;
        }
        self.frames += 1;
        self.time_ns += u128::from(d);
        self.weighted += v * d as f64;
        self.max = self.max.max(v);
    }

    /// `None` without a reading (or when the frames with one last 0 ns in
    /// all).
    fn stat(&self, all_ns: u128) -> Option<SensorStat> {
        if self.frames == 0 || self.time_ns == 0 {
            return None;
        }
        Some(SensorStat {
            sensor: self.sensor,
            source: self.source.clone(),
            unit: self.sensor.unit(),
            frames: self.frames,
            coverage_pct: pct(self.time_ns, all_ns),
            mean: self.weighted / self.time_ns as f64,
            max: self.max,
        })
    }
}

/// Running energy of a per-frame power (W, NaN: none).
#[derive(Clone, Copy, Debug, Default)]
struct EnergySums {
    frames: u64,
    time_ns: u128,
    joules_ns: f64,
}

impl EnergySums {
    fn push(&mut self, d: u64, p: f64) {
        if !known(p) {
            return;
        }
        self.frames += 1;
        self.time_ns += u128::from(d);
        self.joules_ns += p * d as f64;
    }

    fn energy(&self, all_ns: u128) -> Option<Energy> {
        if self.frames == 0 || self.time_ns == 0 {
            return None;
        }
        let joules = self.joules_ns / 1e9;
        let time_s = self.time_ns as f64 / 1e9;
        Some(Energy {
            frames: self.frames,
            time_s,
            coverage_pct: pct(self.time_ns, all_ns),
            joules,
            mean_w: joules / time_s,
            frames_per_joule: (joules > 0.0).then(|| self.frames as f64 / joules),
            joules_per_frame: joules / self.frames as f64,
        })
    }
}

/// Running throttle shares (one entry per reason ever reported).
#[derive(Clone, Debug, Default)]
struct ThrottleSums {
    frames: u64,
    time_ns: u128,
    per: Vec<(String, u128)>,
}

impl ThrottleSums {
    fn push(&mut self, d: u64, r: &str) {
        let mut any = false;
        for reason in r.split('|').map(str::trim).filter(|s| !s.is_empty()) {
            any = true;
            match self.per.iter_mut().find(|(n, _)| n == reason) {
                Some((_, t)) => *t += u128::from(d),
                None => self.per.push((reason.to_string(), u128::from(d))),
            }
        }
        if any {
            self.frames += 1;
            self.time_ns += u128::from(d);
        }
    }

    fn stat(&self, all_ns: u128) -> ThrottleStat {
        let mut per = self.per.clone();
        per.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        ThrottleStat {
            frames: self.frames,
            time_pct: pct(self.time_ns, all_ns),
            reasons: per.into_iter().map(|(n, t)| (n, pct(t, all_ns))).collect(),
        }
    }
}

/// The sensor summary kept as frames arrive, in fixed size: running sums
/// per sensor, energy and throttle (what [`summarize`] computes over a
/// whole log, by the same sums in the same order, so the same bits). Each
/// frame's readings come in the order of the columns it was made with.
#[derive(Clone, Debug)]
pub struct SensorSums {
    stats: Vec<StatSums>,
    gpu_power: Option<usize>,
    cpu_power: Option<usize>,
    /// GPU, CPU package, both.
    energy: [EnergySums; 3],
    throttle: Option<ThrottleSums>,
    all_ns: u128,
}

impl SensorSums {
    /// For readings of `sensors` (with their source columns), and a
    /// throttle column when `throttle`.
    pub fn new<'a>(sensors: impl IntoIterator<Item = (Sensor, &'a str)>, throttle: bool) -> Self {
        let stats: Vec<StatSums> = sensors
            .into_iter()
            .map(|(sensor, source)| StatSums {
                sensor,
                source: source.to_string(),
                frames: 0,
                time_ns: 0,
                weighted: 0.0,
                max: f64::NEG_INFINITY,
            })
            .collect();
        let find = |s: Sensor| stats.iter().position(|c| c.sensor == s);
        SensorSums {
            gpu_power: find(Sensor::GpuPowerW),
            cpu_power: find(Sensor::CpuPowerW),
            stats,
            energy: Default::default(),
            throttle: throttle.then(ThrottleSums::default),
            all_ns: 0,
        }
    }

    /// Adds a frame of `d` ns whose readings are `values` (NaN: none; a
    /// missing one is none) and throttle reasons `throttle`.
    pub fn push(&mut self, d: u64, values: &[f64], throttle: &str) {
        self.all_ns += u128::from(d);
        let value = |i: Option<usize>| i.and_then(|i| values.get(i).copied());
        for (i, s) in self.stats.iter_mut().enumerate() {
            s.push(d, values.get(i).copied().unwrap_or(f64::NAN));
        }
        let (g, c) = (value(self.gpu_power), value(self.cpu_power));
        if let Some(g) = g {
            self.energy[0].push(d, g);
        }
        if let Some(c) = c {
            self.energy[1].push(d, c);
        }
        if let (Some(g), Some(c)) = (g, c) {
            self.energy[2].push(d, g + c);
        }
        if let Some(t) = self.throttle.as_mut() {
            t.push(d, throttle);
        }
    }

    /// The summary of the frames so far: `None` when no column has a single
    /// reading and there is no throttle column.
    pub fn summary(&self) -> Option<SensorSummary> {
        let all_ns = self.all_ns;
        let mut readings: Vec<SensorStat> =
            self.stats.iter().filter_map(|s| s.stat(all_ns)).collect();
        readings.sort_by_key(|s| s.sensor);
        let energy = EnergySummary {
            gpu: self.gpu_power.and_then(|_| self.energy[0].energy(all_ns)),
            cpu: self.cpu_power.and_then(|_| self.energy[1].energy(all_ns)),
            total: self
                .gpu_power
                .and(self.cpu_power)
                .and_then(|_| self.energy[2].energy(all_ns)),
        };
        let gpu_throttle = self.throttle.as_ref().map(|t| t.stat(all_ns));
        if readings.is_empty() && gpu_throttle.is_none() {
            return None;
        }
        Some(SensorSummary {
            readings,
            energy,
            gpu_throttle,
        })
    }
}

/// The sensor summary of a session: `durations_ns[i]` is frame i's
/// duration and `cols` its readings (frames past a shorter column have no
/// reading). `None` when no column has a single reading and there is no
/// throttle column.
pub fn summarize(durations_ns: &[u64], cols: &SensorColumns) -> Option<SensorSummary> {
    let mut sums = SensorSums::new(
        cols.columns.iter().map(|c| (c.sensor, c.source.as_str())),
        cols.throttle.is_some(),
    );
    let mut values = cols
        .columns
        .iter()
        .map(|c| c.values.iter())
        .collect::<Vec<_>>();
    let mut reasons = cols.throttle.as_ref().map(|r| r.iter());
    let mut row = vec![f64::NAN; values.len()];
    for &d in durations_ns {
        for (v, it) in row.iter_mut().zip(values.iter_mut()) {
            *v = it.next().copied().unwrap_or(f64::NAN);
        }
        let r = reasons
            .as_mut()
            .and_then(Iterator::next)
            .map_or("", String::as_str);
        sums.push(d, &row, r);
    }
    sums.summary()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const NA: f64 = f64::NAN;

    fn col(sensor: Sensor, values: &[f64]) -> SensorColumn {
        SensorColumn {
            sensor,
            source: sensor.column().into(),
            values: values.into(),
        }
    }

    #[test]
    fn columns_round_trip_and_units() {
        for s in Sensor::ALL {
            assert_eq!(Sensor::of_column(s.column()), Some(s));
            assert!(is_sensor_column(s.column()));
        }
        assert!(is_sensor_column("gpu_throttle"));
        assert!(!is_sensor_column("frametime_ms"));
        assert_eq!(Sensor::GpuTempC.unit(), "°C");
        assert_eq!(Sensor::GpuPowerW.unit(), "W");
        assert_eq!(Sensor::RssMb.unit(), "MiB");
        assert_eq!(Sensor::CpuMhz.unit(), "MHz");
        assert_eq!(Sensor::ProcGpuPct.unit(), "%");
    }

    /// A 10 ms frame at 100 W and a 30 ms frame at 200 W: the mean weighs
    /// the second three times (175 W), not 150 W; a frame without a reading
    /// counts in neither sum.
    #[test]
    fn mean_weighs_time_and_skips_missing() {
        let d = [10 * MS, 30 * MS, 60 * MS];
        let cols = SensorColumns {
            columns: vec![col(Sensor::GpuPowerW, &[100.0, 200.0, NA])],
            ..Default::default()
        };
        let s = summarize(&d, &cols).unwrap();
        let g = s.get(Sensor::GpuPowerW).unwrap();
        assert_eq!(g.frames, 2);
        assert_eq!(g.mean, 175.0);
        assert_eq!(g.max, 200.0);
        assert_eq!(g.coverage_pct, 40.0);
        // Energy: 100 W × 0.01 s + 200 W × 0.03 s = 7 J over 2 frames.
        let e = s.energy.gpu.unwrap();
        assert!((e.joules - 7.0).abs() < 1e-12, "{}", e.joules);
        assert_eq!(e.frames, 2);
        assert!((e.joules_per_frame - 3.5).abs() < 1e-12);
        assert!((e.frames_per_joule.unwrap() - 2.0 / 7.0).abs() < 1e-12);
        assert!((e.mean_w - 175.0).abs() < 1e-9);
        assert!(s.energy.cpu.is_none() && s.energy.total.is_none());
        assert_eq!(s.energy.headline().unwrap().0, "GPU");
    }

    #[test]
    fn total_energy_needs_both_readings() {
        let d = [10 * MS, 10 * MS, 20 * MS];
        let cols = SensorColumns {
            columns: vec![
                col(Sensor::CpuPowerW, &[50.0, NA, 40.0]),
                col(Sensor::GpuPowerW, &[100.0, 100.0, 150.0]),
            ],
            ..Default::default()
        };
        let s = summarize(&d, &cols).unwrap();
        let t = s.energy.total.unwrap();
        // (50+100)·0.01 + (40+150)·0.02 = 1.5 + 3.8 = 5.3 J over frames 0, 2.
        assert!((t.joules - 5.3).abs() < 1e-12);
        assert_eq!(t.frames, 2);
        assert_eq!(t.coverage_pct, 75.0);
        assert_eq!(s.energy.headline().unwrap().0, "GPU + CPU package");
        // Readings are listed in Sensor::ALL order whatever the column order.
        assert_eq!(s.readings[0].sensor, Sensor::CpuPowerW);
    }

    #[test]
    fn zero_power_has_no_frames_per_joule_and_empty_logs_no_summary() {
        let d = [10 * MS];
        let cols = SensorColumns {
            columns: vec![col(Sensor::GpuPowerW, &[0.0])],
            ..Default::default()
        };
        let e = summarize(&d, &cols).unwrap().energy.gpu.unwrap();
        assert_eq!(e.frames_per_joule, None);
        assert_eq!(e.joules_per_frame, 0.0);
        let none = SensorColumns {
            columns: vec![col(Sensor::GpuLoadPct, &[NA])],
            ..Default::default()
        };
        assert_eq!(summarize(&d, &none), None);
        assert_eq!(summarize(&d, &SensorColumns::default()), None);
        // A shorter column: the frames past it have no reading.
        let short = SensorColumns {
            columns: vec![col(Sensor::GpuLoadPct, &[50.0])],
            ..Default::default()
        };
        let s = summarize(&[10 * MS, 30 * MS], &short).unwrap();
        assert_eq!(s.readings[0].coverage_pct, 25.0);
    }

    #[test]
    fn throttle_shares_are_time_shares() {
        let d = [10 * MS, 30 * MS, 60 * MS];
        let cols = SensorColumns {
            throttle: Some(vec!["power".into(), "power|thermal".into(), String::new()].into()),
            throttle_source: Some(THROTTLE_COLUMN.into()),
            ..Default::default()
        };
        let t = summarize(&d, &cols).unwrap().gpu_throttle.unwrap();
        assert_eq!(t.frames, 2);
        assert_eq!(t.time_pct, 40.0);
        assert_eq!(
            t.reasons,
            vec![("power".to_string(), 40.0), ("thermal".to_string(), 30.0)]
        );
    }

    #[test]
    fn json_is_keyed_by_column() {
        let cols = SensorColumns {
            columns: vec![col(Sensor::GpuTempC, &[70.0])],
            ..Default::default()
        };
        let v = serde_json::to_value(summarize(&[MS], &cols).unwrap()).unwrap();
        assert_eq!(v["readings"]["gpu_temp_c"]["mean"], 70.0);
        assert_eq!(v["readings"]["gpu_temp_c"]["unit"], "°C");
        assert_eq!(v["energy"]["gpu"], serde_json::Value::Null);
        assert!(v.get("gpu_throttle").is_none());
    }

    use proptest::prelude::*;

    proptest! {
        /// Whatever the frames: the mean lies between the smallest and
        /// largest reading, coverage is a share, and the energy numbers
        /// agree with each other (J = W · s, frames/J · J/frame = 1).
        #[test]
        fn summary_is_consistent(f in proptest::collection::vec(
            (1u64..50_000_000, proptest::option::weighted(0.8, 0.0f64..400.0)),
            1..200,
        )) {
            let d: Vec<u64> = f.iter().map(|x| x.0).collect();
            let p: Vec<f64> = f.iter().map(|x| x.1.unwrap_or(f64::NAN)).collect();
            let cols = SensorColumns {
                columns: vec![col(Sensor::GpuPowerW, &p)],
                ..Default::default()
            };
            let known: Vec<f64> = f.iter().filter_map(|x| x.1).collect();
            match summarize(&d, &cols) {
                None => prop_assert!(known.is_empty()),
                Some(s) => {
                    let g = s.get(Sensor::GpuPowerW).unwrap();
                    let lo = known.iter().copied().fold(f64::MAX, f64::min);
                    let hi = known.iter().copied().fold(f64::MIN, f64::max);
                    prop_assert!(g.mean >= lo * (1.0 - 1e-12) && g.mean <= hi * (1.0 + 1e-12));
                    prop_assert_eq!(g.max, hi);
                    prop_assert_eq!(g.frames as usize, known.len());
                    prop_assert!(g.coverage_pct > 0.0 && g.coverage_pct <= 100.0);
                    let e = s.energy.gpu.unwrap();
                    prop_assert!((e.joules - e.mean_w * e.time_s).abs() <= 1e-9 * e.joules.max(1.0));
                    prop_assert!((e.mean_w - g.mean).abs() <= 1e-9 * g.mean.max(1.0));
                    if let Some(fpj) = e.frames_per_joule {
                        prop_assert!((fpj * e.joules_per_frame - 1.0).abs() < 1e-9);
                    }
                }
            }
        }
    }
}
