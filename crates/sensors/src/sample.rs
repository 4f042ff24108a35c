//! One sample of every reading: a value per [`Column`] (absent when its
//! source gave nothing this time) and the GPU's throttle reasons.

/// A reading, named as its session-log column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Column {
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

/// Every numeric column, in log order (`gpu_throttle` follows them).
pub const COLUMNS: [Column; 17] = [
    Column::CpuLoadPct,
    Column::CpuBusiestPct,
    Column::CpuMhz,
    Column::CpuTempC,
    Column::CpuPowerW,
    Column::ProcCpuPct,
    Column::RamUsedMb,
    Column::SwapUsedMb,
    Column::RssMb,
    Column::GpuLoadPct,
    Column::GpuMhz,
    Column::GpuTempC,
    Column::GpuPowerW,
    Column::VramUsedMb,
    Column::VramTotalMb,
    Column::ProcGpuPct,
    Column::ProcVramMb,
];

impl Column {
    /// The session-log column name.
    pub fn name(self) -> &'static str {
        match self {
            Column::CpuLoadPct => "cpu_load_pct",
            Column::CpuBusiestPct => "cpu_busiest_pct",
            Column::CpuMhz => "cpu_mhz",
            Column::CpuTempC => "cpu_temp_c",
            Column::CpuPowerW => "cpu_power_w",
            Column::ProcCpuPct => "proc_cpu_pct",
            Column::RamUsedMb => "ram_used_mb",
            Column::SwapUsedMb => "swap_used_mb",
            Column::RssMb => "rss_mb",
            Column::GpuLoadPct => "gpu_load_pct",
            Column::GpuMhz => "gpu_mhz",
            Column::GpuTempC => "gpu_temp_c",
            Column::GpuPowerW => "gpu_power_w",
            Column::VramUsedMb => "vram_used_mb",
            Column::VramTotalMb => "vram_total_mb",
            Column::ProcGpuPct => "proc_gpu_pct",
            Column::ProcVramMb => "proc_vram_mb",
        }
    }

    /// Position in [`COLUMNS`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Decimals the log writes.
    pub fn decimals(self) -> usize {
        match self {
            Column::CpuMhz | Column::GpuMhz => 0,
            _ => 1,
        }
    }
}

/// Log name of the throttle column.
pub const THROTTLE_COLUMN: &str = "gpu_throttle";

/// Why the GPU holds its clock down, as reported by its driver (a set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Throttle(pub u8);

impl Throttle {
    /// Power limit (NVML SW power cap / HW power brake; Intel PL1/PL2/PL4).
    pub const POWER: Throttle = Throttle(1);
    /// Temperature (NVML SW/HW thermal slowdown; Intel thermal/PROCHOT).
    pub const THERMAL: Throttle = Throttle(2);
    /// Hardware slowdown of another kind (NVML HW slowdown; Intel VR current).
    pub const HARDWARE: Throttle = Throttle(4);
    /// Clocks held by a setting (NVML applications/display clock, sync boost).
    pub const SETTING: Throttle = Throttle(8);
    const NAMES: [(Throttle, &'static str); 4] = [
        (Throttle::POWER, "power"),
        (Throttle::THERMAL, "thermal"),
        (Throttle::HARDWARE, "hardware"),
        (Throttle::SETTING, "setting"),
    ];

    pub fn add(&mut self, t: Throttle) {
        self.0 |= t.0;
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `power|thermal`-style text (empty for none).
    pub fn text(self, out: &mut String) {
        let mut first = true;
        for (t, name) in Self::NAMES {
            if self.0 & t.0 != 0 {
                if !first {
                    out.push('|');
                }
                first = false;
                out.push_str(name);
            }
        }
    }
}

/// One sample: when (CLOCK_MONOTONIC ns, the clock of present timestamps)
/// and each reading.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    pub t_ns: u64,
    pub values: [Option<f32>; COLUMNS.len()],
    /// `None`: the GPU's driver gives no throttle reasons.
    pub throttle: Option<Throttle>,
}

impl Sample {
    pub fn get(&self, c: Column) -> Option<f32> {
        self.values[c.index()]
    }

    pub fn set(&mut self, c: Column, v: Option<f64>) {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.values[c.index()] = Some(v as f32);
        }
    }
}
