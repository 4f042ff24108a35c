//! The game's GPU in sysfs, found by PCI bus id
//! (`sys/bus/pci/devices/<domain:bus:dev.fn>`), read by driver:
//!
//! - amdgpu (Documentation/gpu/amdgpu/driver-misc.rst,
//!   thermal.rst): `gpu_busy_percent`, `mem_info_vram_used`,
//!   `mem_info_vram_total` (bytes), `pp_dpm_sclk` (the current level marked
//!   `*`), and its hwmon: `freq1_input` (sclk, Hz), `temp1_input` (`edge`),
//!   `power1_average` or `power1_input` (µW);
//! - i915 (Documentation/gpu/i915.rst, the `gt_cur_freq_mhz` and
//!   `gt/gt0/throttle_reason_*` attributes of
//!   Documentation/ABI/testing/sysfs-driver-intel-i915-hwmon and the i915
//!   sysfs) and xe (Documentation/ABI/testing/sysfs-driver-intel-xe-hwmon,
//!   `tile0/gt0/freq0/cur_freq` and `freq0/throttle/reason_*`): clock,
//!   throttle reasons, hwmon `energy1_input` (µJ) → W, `temp*_input`.
//!   Intel engine load comes from the process's DRM fdinfo (`fdinfo`):
//!   system-wide busy needs the i915/xe PMU (perf), which is not read.
//! - nvidia: nothing in sysfs; NVML (outside this crate) reads it.

use crate::hwmon::{self, first_readable};
use crate::rapl::EnergyMeter;
use crate::root::{KeptFiles, Root};
use crate::sample::{Sample, Sensor, Throttle};
use std::fmt;
use std::path::PathBuf;

/// A PCI address, as `VK_EXT_pci_bus_info` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciBusId {
    pub domain: u32,
    pub bus: u32,
    pub device: u32,
    pub function: u32,
}

impl fmt::Display for PciBusId {
    /// sysfs spelling, `0000:03:00.0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl PciBusId {
    /// Parses the sysfs spelling (`0000:03:00.0`; NVML's 8-digit domain too).
    pub fn parse(text: &str) -> Option<PciBusId> {
        let (domain, rest) = text.trim().split_once(':')?;
        let (bus, rest) = rest.split_once(':')?;
        let (device, function) = rest.split_once('.')?;
        let hex = |s: &str| u32::from_str_radix(s, 16).ok();
        Some(PciBusId {
            domain: hex(domain)?,
            bus: hex(bus)?,
            device: hex(device)?,
            function: hex(function)?,
        })
    }
}

/// The kernel driver bound to a GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuDriver {
    Amdgpu,
    I915,
    Xe,
    Nvidia,
    Other(String),
}

impl GpuDriver {
    /// The driver bound to `pci` (the name of its `driver` link), if the
    /// device is in sysfs.
    pub fn of(root: &Root, pci: PciBusId) -> Option<GpuDriver> {
        let link = std::fs::read_link(pci_dir(root, pci).join("driver")).ok()?;
        let name = link.file_name()?.to_string_lossy().into_owned();
        Some(match name.as_str() {
            "amdgpu" => GpuDriver::Amdgpu,
            "i915" => GpuDriver::I915,
            "xe" => GpuDriver::Xe,
            "nvidia" => GpuDriver::Nvidia,
            _ => GpuDriver::Other(name),
        })
    }
}

fn pci_dir(root: &Root, pci: PciBusId) -> PathBuf {
    root.path(&format!("sys/bus/pci/devices/{pci}"))
}

/// Throttle-reason files of Intel GPUs and what they mean.
const INTEL_THROTTLE: [(&str, Throttle); 8] = [
    ("pl1", Throttle::POWER),
    ("pl2", Throttle::POWER),
    ("pl4", Throttle::POWER),
    ("thermal", Throttle::THERMAL),
    ("prochot", Throttle::THERMAL),
    ("vr_thermalert", Throttle::THERMAL),
    ("ratl", Throttle::THERMAL),
    ("vr_tdc", Throttle::HARDWARE),
];

/// The sysfs readings of one amdgpu or Intel GPU.
pub struct GpuSysfs {
    busy: Option<PathBuf>,
    /// Clock in Hz (hwmon `freq1_input`).
    freq_hz: Option<PathBuf>,
    /// Clock in MHz (Intel `gt_cur_freq_mhz`, xe `cur_freq`).
    freq_mhz: Option<PathBuf>,
    /// amdgpu `pp_dpm_sclk`.
    sclk_table: Option<PathBuf>,
    temp: Option<PathBuf>,
    /// Power in µW.
    power: Option<PathBuf>,
    energy: Option<EnergyMeter>,
    vram_used: Option<PathBuf>,
    vram_total: Option<PathBuf>,
    throttle: Vec<(PathBuf, Throttle)>,
    /// The handles the samples read through.
    files: KeptFiles,
    buf: String,
}

impl GpuSysfs {
    /// The sysfs readings of the GPU at `pci` when its driver is amdgpu,
    /// i915 or xe (`None` otherwise or when nothing is readable).
    pub fn open(root: &Root, pci: PciBusId) -> Option<GpuSysfs> {
        let driver = GpuDriver::of(root, pci)?;
        let dev = pci_dir(root, pci);
        let hwmons = hwmon::device_hwmons(&dev);
        let in_hwmon = |names: &[&str]| hwmons.iter().find_map(|h| first_readable(h, names));
        let temp_labels: &[&str] = match driver {
            GpuDriver::Amdgpu => &["edge"],
            _ => &["pkg", "card"],
        };
        let temp = hwmons
            .iter()
            .find_map(|h| hwmon::temp_input(h, temp_labels));
        let readable = |p: PathBuf| Root::read_u64(&p).is_some().then_some(p);
        let mut g = GpuSysfs {
            busy: None,
            freq_hz: None,
            freq_mhz: None,
            sclk_table: None,
            temp,
            power: None,
            energy: None,
            vram_used: None,
            vram_total: None,
            throttle: Vec::new(),
            files: KeptFiles::default(),
            buf: String::new(),
        };
        match driver {
            GpuDriver::Amdgpu => {
                g.busy = readable(dev.join("gpu_busy_percent"));
                g.vram_used = readable(dev.join("mem_info_vram_used"));
                g.vram_total = readable(dev.join("mem_info_vram_total"));
                g.freq_hz = in_hwmon(&["freq1_input"]);
                if g.freq_hz.is_none() {
                    let t = dev.join("pp_dpm_sclk");
                    g.sclk_table = Root::read(&t)
                        .is_some_and(|s| current_sclk(&s).is_some())
                        .then_some(t);
                }
                g.power = in_hwmon(&["power1_average", "power1_input"]);
            }
            GpuDriver::I915 | GpuDriver::Xe => {
                let cards = Root::list(&dev.join("drm"), "card");
                g.freq_mhz = cards
                    .iter()
                    .find_map(|c| {
                        first_readable(c, &["gt_cur_freq_mhz", "gt/gt0/rps_cur_freq_mhz"])
                    })
                    .or_else(|| first_readable(&dev, &["tile0/gt0/freq0/cur_freq"]));
                let throttle_dirs: Vec<(PathBuf, &str)> = cards
                    .iter()
                    .map(|c| (c.join("gt/gt0"), "throttle_reason_"))
                    .chain([(dev.join("tile0/gt0/freq0/throttle"), "reason_")])
                    .collect();
                for (dir, prefix) in throttle_dirs {
                    for (name, t) in INTEL_THROTTLE {
                        let p = dir.join(format!("{prefix}{name}"));
                        if Root::read_u64(&p).is_some() {
                            g.throttle.push((p, t));
                        }
                    }
                }
                g.energy = hwmons
                    .iter()
                    .find_map(|h| EnergyMeter::of(vec![(h.join("energy1_input"), None)]));
                if g.energy.is_none() {
                    g.power = in_hwmon(&["power1_average", "power1_input"]);
                }
            }
            GpuDriver::Nvidia | GpuDriver::Other(_) => return None,
        }
        (!g.columns().is_empty() || !g.throttle.is_empty()).then_some(g)
    }

    /// The columns this GPU fills.
    pub fn columns(&self) -> Vec<Sensor> {
        let mut c = Vec::new();
        let mut add = |has: bool, col| {
            if has {
                c.push(col)
            }
        };
        add(self.busy.is_some(), Sensor::GpuLoadPct);
        add(
            self.freq_hz.is_some() || self.freq_mhz.is_some() || self.sclk_table.is_some(),
            Sensor::GpuMhz,
        );
        add(self.temp.is_some(), Sensor::GpuTempC);
        add(
            self.power.is_some() || self.energy.is_some(),
            Sensor::GpuPowerW,
        );
        add(self.vram_used.is_some(), Sensor::VramUsedMb);
        add(self.vram_total.is_some(), Sensor::VramTotalMb);
        c
    }

    /// Whether it reports throttle reasons.
    pub fn has_throttle(&self) -> bool {
        !self.throttle.is_empty()
    }

    pub fn read(&mut self, t_ns: u64, s: &mut Sample) {
        let files = &mut self.files;
        let mut num = |p: &Option<PathBuf>| files.read_u64(p.as_deref()?);
        s.set(Sensor::GpuLoadPct, num(&self.busy).map(|v| v as f64));
        let mhz = num(&self.freq_hz)
            .map(|hz| hz as f64 / 1e6)
            .or_else(|| num(&self.freq_mhz).map(|m| m as f64));
        let mhz = mhz.or_else(|| {
            files.read_into(self.sclk_table.as_deref()?, &mut self.buf)?;
            current_sclk(&self.buf)
        });
        s.set(Sensor::GpuMhz, mhz);
        let temp = self.temp.as_deref().and_then(|p| files.read_u64(p));
        s.set(Sensor::GpuTempC, temp.map(|m| m as f64 / 1000.0));
        let mut num = |p: &Option<PathBuf>| files.read_u64(p.as_deref()?);
        let watts = match self.energy.as_mut() {
            Some(e) => e.read(t_ns),
            None => num(&self.power).map(|uw| uw as f64 / 1e6),
        };
        s.set(Sensor::GpuPowerW, watts);
        let mut mb = |p: &Option<PathBuf>| num(p).map(|b| b as f64 / (1024.0 * 1024.0));
        s.set(Sensor::VramUsedMb, mb(&self.vram_used));
        s.set(Sensor::VramTotalMb, mb(&self.vram_total));
        if !self.throttle.is_empty() {
            let mut t = Throttle::default();
            for (p, reason) in &self.throttle {
                if files.read_u64(p).is_some_and(|v| v != 0) {
                    t.add(*reason);
                }
            }
            s.throttle = Some(t);
        }
    }
}

/// The current clock of an amdgpu `pp_dpm_sclk` table (`1: 2400Mhz *`), MHz.
pub fn current_sclk(table: &str) -> Option<f64> {
    let line = table.lines().find(|l| l.trim_end().ends_with('*'))?;
    let v = line.split(':').nth(1)?.trim().trim_end_matches('*').trim();
    let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    digits.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sclk_table_current_level() {
        let t = "0: 500Mhz\n1: 1800Mhz *\n2: 2400Mhz\n";
        assert_eq!(current_sclk(t), Some(1800.0));
        assert_eq!(current_sclk("0: 500Mhz\n"), None);
    }

    #[test]
    fn pci_ids_in_sysfs_spelling() {
        let id = PciBusId {
            domain: 0,
            bus: 3,
            device: 0,
            function: 0,
        };
        assert_eq!(id.to_string(), "0000:03:00.0");
        assert_eq!(PciBusId::parse("0000:03:00.0"), Some(id));
        assert_eq!(PciBusId::parse("00000000:03:00.0"), Some(id));
        assert_eq!(PciBusId::parse("03:00.0"), None);
    }
}
