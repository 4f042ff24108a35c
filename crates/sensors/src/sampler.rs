//! One session's sources and one sample of them all. Which sources exist is
//! decided once, at [`Sampler::open`]; a source that is not readable then
//! has no column for the session and is named in one line.

use crate::cpu::{CpuFreq, CpuLoad, ProcCpu};
use crate::fdinfo::DrmClients;
use crate::gpu_sysfs::{GpuDriver, GpuSysfs, PciBusId};
use crate::hwmon::{self, read_temp};
use crate::memory::Memory;
use crate::rapl::EnergyMeter;
use crate::root::{Kept, Root};
use crate::sample::{Sample, Sensor, COLUMNS};

/// A GPU source outside this crate (NVML), read at each sample.
pub trait GpuReader: Send {
    /// The columns it fills.
    fn columns(&self) -> Vec<Sensor>;
    /// Whether it reports throttle reasons.
    fn has_throttle(&self) -> bool;
    /// Fills its columns (and `throttle`) of `s`.
    fn read(&mut self, s: &mut Sample);
}

/// Every source of the session.
pub struct Sampler {
    cpu: Option<CpuLoad>,
    proc_cpu: Option<ProcCpu>,
    freq: Option<CpuFreq>,
    temp: Option<Kept>,
    rapl: Option<EnergyMeter>,
    memory: Memory,
    gpu: Option<GpuSysfs>,
    clients: Option<DrmClients>,
    external: Option<Box<dyn GpuReader>>,
    columns: Vec<Sensor>,
    throttle: bool,
}

impl Sampler {
    /// The sources readable under `root` for the GPU at `pci` (`None`: the
    /// device has no PCI bus info; then only process and CPU sources),
    /// with `external` (NVML) for an NVIDIA GPU. Takes a first sample
    /// (rates need two). Returns the sampler and, when some source is
    /// missing, one line saying which.
    pub fn open(
        root: &Root,
        pci: Option<PciBusId>,
        external: Option<Box<dyn GpuReader>>,
        t_ns: u64,
    ) -> (Sampler, Option<String>) {
        let mut missing: Vec<&str> = Vec::new();
        let note = |missing: &mut Vec<&str>, has: bool, what| {
            if !has {
                missing.push(what)
            }
        };
        let cpu = CpuLoad::open(root);
        note(&mut missing, cpu.is_some(), "CPU load (/proc/stat)");
        let proc_cpu = ProcCpu::open(root);
        note(
            &mut missing,
            proc_cpu.is_some(),
            "process CPU (/proc/self/stat)",
        );
        let freq = CpuFreq::open(root);
        note(&mut missing, freq.is_some(), "CPU clock (cpufreq)");
        let temp = hwmon::cpu_temp_file(root);
        note(
            &mut missing,
            temp.is_some(),
            "CPU temperature (hwmon k10temp/coretemp/zenpower)",
        );
        let rapl = EnergyMeter::rapl(root);
        note(&mut missing, rapl.is_some(), "CPU power (RAPL energy_uj)");
        let gpu = pci.and_then(|p| GpuSysfs::open(root, p));
        let driver = pci.and_then(|p| GpuDriver::of(root, p));
        if gpu.is_none() && external.is_none() {
            missing.push(match (pci, &driver) {
                (None, _) => "GPU (device without VK_EXT_pci_bus_info)",
                (Some(_), None) => "GPU (not in sysfs)",
                (Some(_), Some(GpuDriver::Nvidia)) => "GPU (NVML not loaded)",
                (Some(_), Some(_)) => "GPU (driver without readable sysfs files)",
            });
        }
        let clients = DrmClients::open(root, pci.map(|p| p.to_string()));
        note(
            &mut missing,
            clients.is_some(),
            "process GPU (no DRM fdinfo)",
        );
        let mut s = Sampler {
            cpu,
            proc_cpu,
            freq,
            temp: temp.map(Kept::new),
            rapl,
            memory: Memory::open(root),
            gpu,
            clients,
            external,
            columns: Vec::new(),
            throttle: false,
        };
        let first = s.sample(t_ns);
        let mut has: Vec<Sensor> = Vec::new();
        let mut add = |c: Sensor| {
            if !has.contains(&c) {
                has.push(c)
            }
        };
        if s.cpu.is_some() {
            add(Sensor::CpuLoadPct);
            add(Sensor::CpuBusiestPct);
        }
        for (src, c) in [
            (s.proc_cpu.is_some(), Sensor::ProcCpuPct),
            (s.freq.is_some(), Sensor::CpuMhz),
            (s.temp.is_some(), Sensor::CpuTempC),
            (s.rapl.is_some(), Sensor::CpuPowerW),
        ] {
            if src {
                add(c);
            }
        }
        for c in [Sensor::RamUsedMb, Sensor::SwapUsedMb, Sensor::RssMb] {
            if first.get(c).is_some() {
                add(c);
            } else {
                missing.push(c.column());
            }
        }
        for c in s.gpu.iter().flat_map(GpuSysfs::columns) {
            add(c);
        }
        for c in s.external.iter().flat_map(|e| e.columns()) {
            add(c);
        }
        if s.clients.is_some() {
            add(Sensor::ProcGpuPct);
            if first.get(Sensor::ProcVramMb).is_some() {
                add(Sensor::ProcVramMb);
            }
        }
        has.sort_by_key(|c| c.index());
        s.columns = has;
        s.throttle = s.gpu.as_ref().is_some_and(GpuSysfs::has_throttle)
            || s.external.as_ref().is_some_and(|e| e.has_throttle());
        let line =
            (!missing.is_empty()).then(|| format!("not readable here: {}", missing.join(", ")));
        (s, line)
    }

    /// The numeric columns of the session, in log order.
    pub fn columns(&self) -> &[Sensor] {
        &self.columns
    }

    /// Whether the session has a `gpu_throttle` column.
    pub fn has_throttle(&self) -> bool {
        self.throttle
    }

    /// One sample at `t_ns` (CLOCK_MONOTONIC): bounded work, a few dozen
    /// small file reads (one per core for cpufreq).
    pub fn sample(&mut self, t_ns: u64) -> Sample {
        let mut s = Sample {
            t_ns,
            ..Sample::default()
        };
        if let Some((total, busiest)) = self.cpu.as_mut().and_then(CpuLoad::read) {
            s.set(Sensor::CpuLoadPct, total);
            s.set(Sensor::CpuBusiestPct, busiest);
        }
        if let Some(p) = self.proc_cpu.as_mut() {
            s.set(Sensor::ProcCpuPct, p.read(t_ns));
        }
        s.set(Sensor::CpuMhz, self.freq.as_mut().and_then(CpuFreq::read));
        s.set(Sensor::CpuTempC, self.temp.as_mut().and_then(read_temp));
        if let Some(r) = self.rapl.as_mut() {
            s.set(Sensor::CpuPowerW, r.read(t_ns));
        }
        let m = self.memory.read();
        s.set(Sensor::RamUsedMb, m.ram);
        s.set(Sensor::SwapUsedMb, m.swap);
        s.set(Sensor::RssMb, m.rss);
        if let Some(g) = self.gpu.as_mut() {
            g.read(t_ns, &mut s);
        }
        if let Some(e) = self.external.as_mut() {
            e.read(&mut s);
        }
        if let Some(c) = self.clients.as_mut() {
            let r = c.read(t_ns);
            s.set(Sensor::ProcGpuPct, r.busy_pct);
            s.set(Sensor::ProcVramMb, r.vram_mb);
        }
        // Only the session's columns: a value that appeared later has none.
        if !self.columns.is_empty() {
            for c in COLUMNS {
                if !self.columns.contains(&c) {
                    s.values[c.index()] = None;
                }
            }
            if !self.throttle {
                s.throttle = None;
            }
        }
        s
    }
}
