//! Sensor columns of frame logs → [`SensorColumns`] in steadyhud's units
//! (percent, MHz, °C, W, MiB). One [`SensorMap`] per format says which
//! column is which sensor and how to convert it; the readers push each
//! kept frame's fields through it.
//!
//! | steadyhud | MangoHud (`logging.cpp`) | PresentMon 2 capture |
//! |---|---|---|
//! | `cpu_load_pct` | `cpu_load` (%) | `CPUUtilization` (%) |
//! | `cpu_mhz` | `cpu_mhz` (MHz) | `CPUFrequency` (MHz) |
//! | `cpu_temp_c` | `cpu_temp` (°C) | `CPUTemperature` (°C) |
//! | `cpu_power_w` | `cpu_power` (W) | `CPUPower` (W) |
//! | `ram_used_mb` | `ram_used` (GiB) | — |
//! | `swap_used_mb` | `swap_used` (GiB) | — |
//! | `rss_mb` | `process_rss` (GiB) | — |
//! | `gpu_load_pct` | `gpu_load` (%) | `GPUUtilization` (%) |
//! | `gpu_mhz` | `gpu_core_clock` (MHz) | `GPUFrequency` (MHz) |
//! | `gpu_temp_c` | `gpu_temp` (°C) | `GPUTemperature` (°C) |
//! | `gpu_power_w` | `gpu_power` (W) | `GPUPower` (W) |
//! | `vram_used_mb` | `gpu_vram_used` (GiB) | `GPUMemorySizeUsed` (bytes or GiB) |
//! | `vram_total_mb` | — | `GPUMemorySize` (bytes or GiB) |
//! | `gpu_throttle` | — | `GPUPowerLimited`, `GPUTemperatureLimited`, `GPUCurrentLimited`, `GPUVoltageLimited` |
//!
//! The other steadyhud columns (`cpu_busiest_pct`, `proc_cpu_pct`,
//! `proc_gpu_pct`, `proc_vram_mb`) have no counterpart in those logs.
//!
//! A field that is empty, `NA`, or not a finite number is no reading for
//! that frame (counted in a note when it is not empty or `NA`); it never
//! drops the frame. MangoHud writes 0 for sensors it could not read, so a
//! MangoHud column that is 0 (or empty) in every row is left out, with a
//! note. PresentMon gives GPU memory in bytes (its unit) or in GiB (the
//! capture application's preferred unit): a value of at least 1 MiB is
//! read as bytes, a smaller one as GiB.

use steadyhud_metrics::sensors::{
    Readings, Reasons, Sensor, SensorColumn, SensorColumns, THROTTLE_COLUMN,
};

const MIB: f64 = 1024.0 * 1024.0;

/// How a log column becomes a steadyhud reading.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Convert {
    /// Multiply by this factor.
    Scale(f64),
    /// PresentMon GPU memory: bytes (≥ 1 MiB) or GiB.
    BytesOrGib,
}

impl Convert {
    fn apply(self, v: f64) -> f64 {
        match self {
            Convert::Scale(k) => v * k,
            Convert::BytesOrGib if v >= MIB => v / MIB,
            Convert::BytesOrGib => v * 1024.0,
        }
    }
}

/// MangoHud columns: (name, sensor, conversion to steadyhud's unit).
const MANGOHUD: [(&str, Sensor, Convert); 12] = [
    ("cpu_load", Sensor::CpuLoadPct, Convert::Scale(1.0)),
    ("cpu_mhz", Sensor::CpuMhz, Convert::Scale(1.0)),
    ("cpu_temp", Sensor::CpuTempC, Convert::Scale(1.0)),
    ("cpu_power", Sensor::CpuPowerW, Convert::Scale(1.0)),
    ("ram_used", Sensor::RamUsedMb, Convert::Scale(1024.0)),
    ("swap_used", Sensor::SwapUsedMb, Convert::Scale(1024.0)),
    ("process_rss", Sensor::RssMb, Convert::Scale(1024.0)),
    ("gpu_load", Sensor::GpuLoadPct, Convert::Scale(1.0)),
    ("gpu_core_clock", Sensor::GpuMhz, Convert::Scale(1.0)),
    ("gpu_temp", Sensor::GpuTempC, Convert::Scale(1.0)),
    ("gpu_power", Sensor::GpuPowerW, Convert::Scale(1.0)),
    ("gpu_vram_used", Sensor::VramUsedMb, Convert::Scale(1024.0)),
];

/// PresentMon 2 columns (capture application names; `GPUMemUsed` as an
/// alias of `GPUMemorySizeUsed`).
const PRESENTMON: [(&str, Sensor, Convert); 11] = [
    ("CPUUtilization", Sensor::CpuLoadPct, Convert::Scale(1.0)),
    ("CPUFrequency", Sensor::CpuMhz, Convert::Scale(1.0)),
    ("CPUTemperature", Sensor::CpuTempC, Convert::Scale(1.0)),
    ("CPUPower", Sensor::CpuPowerW, Convert::Scale(1.0)),
    ("GPUUtilization", Sensor::GpuLoadPct, Convert::Scale(1.0)),
    ("GPUFrequency", Sensor::GpuMhz, Convert::Scale(1.0)),
    ("GPUTemperature", Sensor::GpuTempC, Convert::Scale(1.0)),
    ("GPUPower", Sensor::GpuPowerW, Convert::Scale(1.0)),
    ("GPUMemorySizeUsed", Sensor::VramUsedMb, Convert::BytesOrGib),
    ("GPUMemUsed", Sensor::VramUsedMb, Convert::BytesOrGib),
    ("GPUMemorySize", Sensor::VramTotalMb, Convert::BytesOrGib),
];

/// PresentMon's GPU limit flags and the throttle reason each one names.
const PRESENTMON_FLAGS: [(&str, &str); 4] = [
    ("GPUPowerLimited", "power"),
    ("GPUTemperatureLimited", "thermal"),
    ("GPUCurrentLimited", "current"),
    ("GPUVoltageLimited", "voltage"),
];

/// Which fields of a row are which sensor.
#[derive(Clone, Debug, PartialEq)]
pub struct SensorMap {
    /// (field index, sensor, log column name, conversion), one per sensor.
    cols: Vec<(usize, Sensor, String, Convert)>,
    /// Field of a `|`-joined throttle text column (steadyhud).
    throttle_text: Option<usize>,
    /// Fields of boolean limit flags and their reasons (PresentMon).
    flags: Vec<(usize, &'static str)>,
    /// MangoHud: a column of zeros is a sensor that was not read.
    zero_is_unread: bool,
}

/// The readings of the frames pushed so far (one group of a PresentMon
/// log, or the whole log).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SensorRows {
    values: Vec<Readings>,
    throttle: Reasons,
    /// Fields per column that were not numbers (besides empty and `NA`).
    bad: Vec<u64>,
}

/// A field as a reading: `None` for no reading, `Err` for text that is not
/// a number.
fn reading(field: Option<&[u8]>) -> Result<Option<f64>, ()> {
    let Some(f) = field else { return Ok(None) };
    let t = std::str::from_utf8(f).map_err(|_| ())?.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("NA") {
        return Ok(None);
    }
    let v: f64 = t.parse().map_err(|_| ())?;
    Ok(v.is_finite().then_some(v))
}

/// A limit flag is set: `1`, `true` (any case), or a number other than 0.
fn flag_set(field: Option<&[u8]>) -> bool {
    let Some(t) = field.and_then(|f| std::str::from_utf8(f).ok()) else {
        return false;
    };
    let t = t.trim();
    t.eq_ignore_ascii_case("true") || t.parse::<f64>().is_ok_and(|v| v != 0.0)
}

impl SensorMap {
    fn build(
        header: &[impl AsRef<str>],
        table: &[(&str, Sensor, Convert)],
        exact: bool,
    ) -> SensorMap {
        let find = |name: &str| {
            header.iter().position(|h| {
                let h = h.as_ref().trim();
                if exact {
                    h == name
                } else {
                    h.eq_ignore_ascii_case(name)
                }
            })
        };
        let mut cols: Vec<(usize, Sensor, String, Convert)> = Vec::new();
        for &(name, sensor, convert) in table {
            if cols.iter().any(|c| c.1 == sensor) {
                continue;
            }
            if let Some(i) = find(name) {
                cols.push((i, sensor, header[i].as_ref().trim().to_string(), convert));
            }
        }
        SensorMap {
            cols,
            throttle_text: None,
            flags: Vec::new(),
            zero_is_unread: false,
        }
    }

    fn nonempty(self) -> Option<SensorMap> {
        (!self.cols.is_empty() || self.throttle_text.is_some() || !self.flags.is_empty())
            .then_some(self)
    }

    /// steadyhud's own columns ([`Sensor::column`], `gpu_throttle`), exact
    /// names; `None` when the header has none.
    pub fn steadyhud(header: &[impl AsRef<str>]) -> Option<SensorMap> {
        let table: Vec<(&str, Sensor, Convert)> = Sensor::ALL
            .iter()
            .map(|&s| (s.column(), s, Convert::Scale(1.0)))
            .collect();
        let mut m = SensorMap::build(header, &table, true);
        m.throttle_text = header
            .iter()
            .position(|h| h.as_ref().trim() == THROTTLE_COLUMN);
        m.nonempty()
    }

    /// MangoHud's columns (case-insensitive).
    pub fn mangohud(header: &[impl AsRef<str>]) -> Option<SensorMap> {
        let mut m = SensorMap::build(header, &MANGOHUD, false);
        m.zero_is_unread = true;
        m.nonempty()
    }

    /// PresentMon 2's columns (case-insensitive), with the GPU limit flags
    /// as throttle reasons.
    pub fn presentmon(header: &[impl AsRef<str>]) -> Option<SensorMap> {
        let mut m = SensorMap::build(header, &PRESENTMON, false);
        m.flags = PRESENTMON_FLAGS
            .iter()
            .filter_map(|&(name, reason)| {
                header
                    .iter()
                    .position(|h| h.as_ref().trim().eq_ignore_ascii_case(name))
                    .map(|i| (i, reason))
            })
            .collect();
        m.nonempty()
    }

    /// Empty per-frame storage for this map.
    pub fn rows(&self) -> SensorRows {
        SensorRows {
            values: vec![Readings::new(); self.cols.len()],
            throttle: Reasons::new(),
            bad: vec![0; self.cols.len()],
        }
    }

    /// Appends one frame's readings; `field(k)` is field k of its row
    /// (`None` past the row's end).
    pub fn push<'a>(&self, rows: &mut SensorRows, field: impl Fn(usize) -> Option<&'a [u8]>) {
        for (c, &(i, _, _, convert)) in self.cols.iter().enumerate() {
            let v = match reading(field(i)) {
                Ok(v) => v.map_or(f64::NAN, |v| convert.apply(v)),
                Err(()) => {
                    rows.bad[c] += 1;
                    f64::NAN
                }
            };
            rows.values[c].push(v);
        }
        if let Some(i) = self.throttle_text {
            let t = field(i).map_or("", |f| std::str::from_utf8(f).unwrap_or(""));
            rows.throttle.push(t.trim().to_string());
        } else if !self.flags.is_empty() {
            let set: Vec<&str> = self
                .flags
                .iter()
                .filter(|(i, _)| flag_set(field(*i)))
                .map(|&(_, r)| r)
                .collect();
            rows.throttle.push(set.join("|"));
        }
    }

    /// The columns read, with notes on values that were not numbers and
    /// (MangoHud) columns never read; `None` when nothing is left.
    pub fn finish(&self, rows: SensorRows, notes: &mut Vec<String>) -> Option<SensorColumns> {
        let mut out = SensorColumns::default();
        let mut unread: Vec<&str> = Vec::new();
        for ((&(_, sensor, ref name, _), values), bad) in
            self.cols.iter().zip(rows.values).zip(rows.bad)
        {
            if bad > 0 {
                notes.push(format!(
                    "{bad} value(s) in {name} not numbers: read as no reading"
                ));
            }
            let read = values.iter().any(|v| v.is_finite());
            if !read || (self.zero_is_unread && values.iter().all(|&v| v == 0.0 || v.is_nan())) {
                unread.push(name);
                continue;
            }
            out.columns.push(SensorColumn {
                sensor,
                source: name.clone(),
                values,
            });
        }
        if !unread.is_empty() && self.zero_is_unread {
            notes.push(format!(
                "sensor column(s) {} are 0 or empty in every row: MangoHud could not read them, left out",
                unread.join(", ")
            ));
        }
        if self.throttle_text.is_some() || !self.flags.is_empty() {
            out.throttle_source = Some(match self.throttle_text {
                Some(_) => THROTTLE_COLUMN.to_string(),
                None => {
                    self.flags
                        .iter()
                        .map(|&(_, r)| r)
                        .collect::<Vec<_>>()
                        .join("/")
                        + " limit flags"
                }
            });
            out.throttle = Some(rows.throttle);
        }
        (!out.is_empty()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push_all(m: &SensorMap, rows: &[&str]) -> Option<SensorColumns> {
        let mut r = m.rows();
        for row in rows {
            let f: Vec<&str> = row.split(',').collect();
            m.push(&mut r, |k| f.get(k).map(|s| s.as_bytes()));
        }
        m.finish(r, &mut Vec::new())
    }

    #[test]
    fn steadyhud_columns_are_exact_and_empty_is_no_reading() {
        let h = [
            "frame",
            "frametime_ms",
            "gpu_power_w",
            "gpu_throttle",
            "GPU_MHZ",
        ];
        let m = SensorMap::steadyhud(&h).unwrap();
        let c = push_all(&m, &["0,10,200.5,power|thermal,1", "1,10,,,2"]).unwrap();
        assert_eq!(c.columns.len(), 1, "GPU_MHZ is not gpu_mhz");
        assert_eq!(c.columns[0].sensor, Sensor::GpuPowerW);
        assert_eq!(c.columns[0].values.get(0), Some(&200.5));
        assert!(c.columns[0].values.get(1).unwrap().is_nan());
        let t: Vec<&String> = c.throttle.as_ref().unwrap().iter().collect();
        assert_eq!(t, ["power|thermal", ""]);
        assert!(SensorMap::steadyhud(&["frame", "frametime_ms"]).is_none());
    }

    #[test]
    fn mangohud_gib_become_mib_and_zero_columns_are_unread() {
        let h = "fps,frametime,cpu_load,gpu_load,gpu_vram_used,ram_used,elapsed";
        let h: Vec<&str> = h.split(',').collect();
        let m = SensorMap::mangohud(&h).unwrap();
        let mut r = m.rows();
        for row in ["60,16,50,0,1.5,0.25,1", "60,16,x,0,2,0.5,2"] {
            let f: Vec<&str> = row.split(',').collect();
            m.push(&mut r, |k| f.get(k).map(|s| s.as_bytes()));
        }
        let mut notes = Vec::new();
        let c = m.finish(r, &mut notes).unwrap();
        let names: Vec<&str> = c.columns.iter().map(|c| c.source.as_str()).collect();
        assert_eq!(names, ["cpu_load", "ram_used", "gpu_vram_used"]);
        assert_eq!(
            c.get(Sensor::VramUsedMb).unwrap().to_vec(),
            [1536.0, 2048.0]
        );
        assert_eq!(c.get(Sensor::RamUsedMb).unwrap().to_vec(), [256.0, 512.0]);
        assert!(c.get(Sensor::CpuLoadPct).unwrap().get(1).unwrap().is_nan());
        assert!(notes.iter().any(|n| n.contains("1 value(s) in cpu_load")));
        assert!(notes
            .iter()
            .any(|n| n.contains("gpu_load") && n.contains("0 or empty")));
    }

    #[test]
    fn presentmon_flags_become_throttle_reasons_and_memory_units() {
        let h = "FrameTime,GPUPower,GPUMemorySizeUsed,GPUPowerLimited,GPUTemperatureLimited";
        let h: Vec<&str> = h.split(',').collect();
        let m = SensorMap::presentmon(&h).unwrap();
        let c = push_all(
            &m,
            &[
                "16,150,4294967296,1,0",
                "16,NA,3.5,true,1",
                "16,151,0,0,false",
            ],
        )
        .unwrap();
        assert_eq!(
            c.get(Sensor::VramUsedMb).unwrap().to_vec(),
            [4096.0, 3584.0, 0.0]
        );
        assert!(c.get(Sensor::GpuPowerW).unwrap().get(1).unwrap().is_nan());
        let t: Vec<&String> = c.throttle.as_ref().unwrap().iter().collect();
        assert_eq!(t, ["power", "power|thermal", ""]);
        assert!(SensorMap::presentmon(&["FrameTime", "MsGPUBusy"]).is_none());
    }

    /// Each reader hands the kept frames' readings over, aligned with the
    /// durations; steadyhud sensor columns are not counters.
    #[test]
    fn readers_fill_meta_sensors() {
        let log = "frame,present_ns,frametime_ms,submit_ms,gpu_power_w,cpu_load_pct,gpu_throttle\n\
                   0,10000000,10.000000,0.500000,200.5,43.25,\n\
                   1,30000000,20.000000,0.500000,,50,power\n";
        let r = super::super::steadyhud::read(log.as_bytes()).unwrap();
        let c = r.meta.counters.as_ref().unwrap();
        assert_eq!(c.infos.len(), 1, "only submit_ms is a counter");
        let s = r.meta.sensors.unwrap();
        assert_eq!(s.get(Sensor::CpuLoadPct).unwrap().to_vec(), [43.25, 50.0]);
        assert_eq!(s.get(Sensor::GpuPowerW).unwrap().get(0), Some(&200.5));
        let t: Vec<&String> = s.throttle.as_ref().unwrap().iter().collect();
        assert_eq!(t, ["", "power"]);

        let pm = "Application,ProcessID,SwapChainAddress,MsBetweenPresents,GPUPower,CPUPower\n\
                  a.exe,1,0x1,10,100,30\nb.exe,2,0x2,20,200,40\nb.exe,2,0x2,NA,5,5\nb.exe,2,0x2,20,210\n";
        let r = super::super::presentmon::read(
            std::io::Cursor::new(pm.as_bytes().to_vec()),
            crate::Format::PresentMon,
            &crate::Filter::default(),
        )
        .unwrap();
        let s = r.meta.sensors.unwrap();
        assert_eq!(s.get(Sensor::GpuPowerW).unwrap().to_vec(), [200.0, 210.0]);
        let cpu = s.get(Sensor::CpuPowerW).unwrap().to_vec();
        assert_eq!(cpu[0], 40.0);
        assert!(cpu[1].is_nan(), "a row too short has no reading");

        let mh = "os,cpu\nLinux,x\nfps,frametime,cpu_load,gpu_power,elapsed\n100,10000,55,0,1\n50,20000,65,0,2\n";
        let r = super::super::mangohud::read(std::io::Cursor::new(mh.as_bytes().to_vec())).unwrap();
        let s = r.meta.sensors.unwrap();
        assert_eq!(s.get(Sensor::CpuLoadPct).unwrap().to_vec(), [55.0, 65.0]);
        assert!(s.get(Sensor::GpuPowerW).is_none());
    }
}
