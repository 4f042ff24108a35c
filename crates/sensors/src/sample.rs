//! One sample of every reading: a value per [`Sensor`] (absent when its
//! source gave nothing this time) and the GPU's throttle reasons.

/// A reading, named as its session-log column: the metrics core's
/// [`Sensor`](steadyhud_metrics::sensors::Sensor), one vocabulary for the
/// layer that logs and the tools that read.
pub use steadyhud_metrics::sensors::Sensor;
/// The log name of the throttle column.
pub use steadyhud_metrics::sensors::THROTTLE_COLUMN;

/// Every numeric column, in log order (`gpu_throttle` follows them).
pub const COLUMNS: [Sensor; 17] = Sensor::ALL;

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
    pub fn get(&self, c: Sensor) -> Option<f32> {
        self.values[c.index()]
    }

    pub fn set(&mut self, c: Sensor, v: Option<f64>) {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.values[c.index()] = Some(v as f32);
        }
    }
}
