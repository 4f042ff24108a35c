//! The sources against fixture trees laid out as the kernel documents them
//! (each fixture folder's README cites the pages), read through `Root`,
//! the same code path as `/`. Counters advance between two samples one
//! second apart, as they would on the machine.

use std::fs;
use std::path::Path;
use steadyhud_sensors::{PciBusId, Root, Sampler, Sensor, Throttle};

const S: u64 = 1_000_000_000;

/// Copies fixture folders `names` (in order, later ones on top) into a
/// fresh tree, symlinks kept.
fn tree(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in names {
        copy(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures")
                .join(n),
            dir.path(),
        );
    }
    dir
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        let ty = e.file_type().unwrap();
        if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &dst).unwrap();
        } else if ty.is_dir() {
            copy(&e.path(), &dst);
        } else if e.file_name() != "README.md" {
            fs::copy(e.path(), &dst).unwrap();
        }
    }
}

fn put(root: &Path, rel: &str, text: &str) {
    fs::write(root.join(rel), text).unwrap();
}

fn pci(bus: u32, device: u32) -> Option<PciBusId> {
    Some(PciBusId {
        domain: 0,
        bus,
        device,
        function: 0,
    })
}

fn near(got: Option<f32>, want: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: no value"));
    assert!(
        (got as f64 - want).abs() < 0.01 * want.abs().max(1.0),
        "{what}: {got} != {want}"
    );
}

fn names(s: &Sampler) -> Vec<&'static str> {
    s.columns().iter().map(|c| c.column()).collect()
}

/// An AMD desktop: /proc, cpufreq, k10temp, RAPL and an amdgpu card with
/// its hwmon and the process's fdinfo.
#[test]
fn amd_desktop() {
    let dir = tree(&["cpu", "amdgpu"]);
    let r = dir.path();
    let (mut s, missing) = Sampler::open(&Root::new(r), pci(3, 0), None, 10 * S);
    assert_eq!(missing, None, "every source of the fixture is readable");
    assert_eq!(
        names(&s),
        [
            "cpu_load_pct",
            "cpu_busiest_pct",
            "cpu_mhz",
            "cpu_temp_c",
            "cpu_power_w",
            "proc_cpu_pct",
            "ram_used_mb",
            "swap_used_mb",
            "rss_mb",
            "gpu_load_pct",
            "gpu_mhz",
            "gpu_temp_c",
            "gpu_power_w",
            "vram_used_mb",
            "vram_total_mb",
            "proc_gpu_pct",
            "proc_vram_mb"
        ]
    );
    assert!(
        !s.has_throttle(),
        "amdgpu gives no throttle reasons in sysfs"
    );
    // One second later: cpu0 busy 80 of 100 ticks, cpu1 20 of 100; the game
    // used 150 ticks (1.5 cores); the package used 35 J; the gfx engine of
    // client 12 was busy 0.6 s; client 13 (two fds) is counted once.
    put(r, "proc/stat", "cpu  1100 0 1000 8100 0 0 0 0 0 0\ncpu0 580 0 500 4020 0 0 0 0 0 0\ncpu1 520 0 500 4080 0 0 0 0 0 0\n");
    put(r, "proc/self/stat", "4242 (Game Main.exe) R 1 4242 4242 0 -1 4194560 5000 0 0 0 1100 250 0 0 20 0 24 0 100 4000000000 100000\n");
    put(r, "sys/class/powercap/intel-rapl:0/energy_uj", "36000000\n");
    let fd5 = fs::read_to_string(r.join("proc/self/fdinfo/5")).unwrap();
    put(
        r,
        "proc/self/fdinfo/5",
        &fd5.replace(
            "drm-engine-gfx:\t1000000000 ns",
            "drm-engine-gfx:\t1600000000 ns",
        ),
    );
    let x = s.sample(11 * S);
    near(x.get(Sensor::CpuLoadPct), 50.0, "cpu load");
    near(x.get(Sensor::CpuBusiestPct), 80.0, "busiest core");
    near(x.get(Sensor::CpuMhz), 4000.0, "mean of 4.2 and 3.8 GHz");
    near(x.get(Sensor::CpuTempC), 71.25, "Tctl");
    near(x.get(Sensor::CpuPowerW), 35.0, "package power");
    near(x.get(Sensor::ProcCpuPct), 150.0, "game CPU");
    near(
        x.get(Sensor::RamUsedMb),
        (16384000.0 - 4915200.0) / 1024.0,
        "RAM",
    );
    near(x.get(Sensor::SwapUsedMb), 1024.0, "swap");
    near(x.get(Sensor::RssMb), 1024.0, "RSS");
    near(x.get(Sensor::GpuLoadPct), 97.0, "gpu_busy_percent");
    near(x.get(Sensor::GpuMhz), 2400.0, "freq1_input");
    near(x.get(Sensor::GpuTempC), 78.0, "edge");
    near(x.get(Sensor::GpuPowerW), 212.0, "power1_average");
    near(x.get(Sensor::VramUsedMb), 6.1 * 1024.0, "VRAM used");
    near(x.get(Sensor::VramTotalMb), 8192.0, "VRAM total");
    near(x.get(Sensor::ProcGpuPct), 60.0, "gfx engine");
    near(x.get(Sensor::ProcVramMb), 1280.0, "clients 12 and 13");
    assert_eq!(x.throttle, None);
}

/// Without `freq1_input` the amdgpu clock is the `*` level of
/// `pp_dpm_sclk`; newer cards have `power1_input` instead of
/// `power1_average`.
#[test]
fn amdgpu_sclk_table_and_power_input() {
    let dir = tree(&["cpu", "amdgpu"]);
    let hw = dir
        .path()
        .join("sys/bus/pci/devices/0000:03:00.0/hwmon/hwmon3");
    fs::remove_file(hw.join("freq1_input")).unwrap();
    fs::rename(hw.join("power1_average"), hw.join("power1_input")).unwrap();
    put(
        dir.path(),
        "sys/bus/pci/devices/0000:03:00.0/pp_dpm_sclk",
        "0: 500Mhz\n1: 1800Mhz *\n2: 2400Mhz\n",
    );
    let (mut s, _) = Sampler::open(&Root::new(dir.path()), pci(3, 0), None, S);
    let x = s.sample(2 * S);
    near(x.get(Sensor::GpuMhz), 1800.0, "pp_dpm_sclk");
    near(x.get(Sensor::GpuPowerW), 212.0, "power1_input");
}

/// RAPL's counter wraps at `max_energy_range_uj`.
#[test]
fn rapl_wraps_around() {
    let dir = tree(&["cpu"]);
    let r = dir.path();
    put(
        r,
        "sys/class/powercap/intel-rapl:0/energy_uj",
        "262133328850\n",
    );
    let (mut s, _) = Sampler::open(&Root::new(r), None, None, S);
    put(r, "sys/class/powercap/intel-rapl:0/energy_uj", "15000000\n");
    // 10 J to the wrap, 15 J after it, in half a second.
    near(s.sample(S + S / 2).get(Sensor::CpuPowerW), 50.0, "wrapped");
}

/// Integrated Intel (i915) with coretemp: clock, PL1 throttling, energy →
/// watts, the render engine from fdinfo; no sysfs load or VRAM.
#[test]
fn intel_i915_laptop() {
    let dir = tree(&["cpu", "i915"]);
    let r = dir.path();
    fs::remove_dir_all(r.join("sys/class/hwmon/hwmon0")).unwrap(); // no k10temp here
    let (mut s, missing) = Sampler::open(&Root::new(r), pci(0, 2), None, S);
    assert_eq!(missing, None);
    let n = names(&s);
    for want in ["gpu_mhz", "gpu_power_w", "proc_gpu_pct", "cpu_temp_c"] {
        assert!(n.contains(&want), "{want} in {n:?}");
    }
    for absent in ["gpu_load_pct", "vram_used_mb", "proc_vram_mb", "gpu_temp_c"] {
        assert!(!n.contains(&absent), "{absent} in {n:?}");
    }
    assert!(s.has_throttle());
    put(
        r,
        "sys/bus/pci/devices/0000:00:02.0/hwmon/hwmon4/energy1_input",
        "17000000\n",
    );
    let fd = fs::read_to_string(r.join("proc/self/fdinfo/9")).unwrap();
    put(
        r,
        "proc/self/fdinfo/9",
        &fd.replace("render:\t2000000000", "render:\t2250000000"),
    );
    put(
        r,
        "sys/bus/pci/devices/0000:00:02.0/drm/card0/gt/gt0/throttle_reason_thermal",
        "1\n",
    );
    let x = s.sample(3 * S);
    near(x.get(Sensor::CpuTempC), 64.0, "Package id 0");
    near(x.get(Sensor::GpuMhz), 1300.0, "gt_cur_freq_mhz");
    near(x.get(Sensor::GpuPowerW), 6.0, "12 J in 2 s");
    near(x.get(Sensor::ProcGpuPct), 12.5, "render 0.25 s in 2 s");
    assert_eq!(
        x.throttle,
        Some(Throttle(Throttle::POWER.0 | Throttle::THERMAL.0))
    );
    let mut text = String::new();
    x.throttle.unwrap().text(&mut text);
    assert_eq!(text, "power|thermal");
}

/// Discrete Intel on xe: `freq0/cur_freq`, thermal throttling, hwmon
/// temperature and energy, engine cycles and VRAM from fdinfo.
#[test]
fn intel_xe_card() {
    let dir = tree(&["cpu", "xe"]);
    let r = dir.path();
    let (mut s, _) = Sampler::open(&Root::new(r), pci(3, 0), None, S);
    put(
        r,
        "sys/bus/pci/devices/0000:03:00.0/hwmon/hwmon5/energy1_input",
        "110000000\n",
    );
    put(
        r,
        "proc/self/fdinfo/11",
        &fs::read_to_string(r.join("proc/self/fdinfo/11"))
            .unwrap()
            .replace("drm-cycles-rcs:\t100000", "drm-cycles-rcs:\t1000000")
            .replace(
                "cycles-rcs:\t1000000\ndrm-cycles-bcs",
                "cycles-rcs:\t2000000\ndrm-cycles-bcs",
            )
            .replace(
                "drm-total-cycles-bcs:\t1000000",
                "drm-total-cycles-bcs:\t2000000",
            ),
    );
    let x = s.sample(2 * S);
    near(x.get(Sensor::GpuMhz), 2050.0, "cur_freq");
    near(x.get(Sensor::GpuTempC), 70.0, "pkg");
    near(x.get(Sensor::GpuPowerW), 100.0, "100 J in 1 s");
    near(x.get(Sensor::ProcGpuPct), 90.0, "rcs 900k of 1M cycles");
    near(x.get(Sensor::ProcVramMb), 2048.0, "drm-resident-vram0");
    assert_eq!(x.throttle, Some(Throttle::THERMAL));
}

/// A device without PCI bus info (lavapipe) and a machine without the
/// CPU's sysfs: process and /proc sources only, and one line naming what
/// is missing.
#[test]
fn no_gpu_and_no_sysfs() {
    let dir = tree(&["cpu"]);
    let r = dir.path();
    fs::remove_dir_all(r.join("sys")).unwrap();
    let (s, missing) = Sampler::open(&Root::new(r), None, None, S);
    assert_eq!(
        names(&s),
        [
            "cpu_load_pct",
            "cpu_busiest_pct",
            "proc_cpu_pct",
            "ram_used_mb",
            "swap_used_mb",
            "rss_mb"
        ]
    );
    let missing = missing.unwrap();
    assert!(!missing.contains('\n'), "one line");
    for what in ["cpufreq", "hwmon", "RAPL", "VK_EXT_pci_bus_info", "fdinfo"] {
        assert!(missing.contains(what), "{what} in {missing}");
    }
}

/// zenpower (out-of-tree AMD driver) names its chip `zenpower` and labels
/// the die temperature `Tdie`; other hwmon chips (nvme here) are not the
/// CPU.
#[test]
fn zenpower_and_foreign_chips() {
    let dir = tree(&["cpu"]);
    let r = dir.path();
    put(r, "sys/class/hwmon/hwmon0/name", "zenpower\n");
    put(r, "sys/class/hwmon/hwmon0/temp1_label", "Tdie\n");
    put(r, "sys/class/hwmon/hwmon0/temp1_input", "58500\n");
    let (mut s, _) = Sampler::open(&Root::new(r), None, None, S);
    near(s.sample(2 * S).get(Sensor::CpuTempC), 58.5, "Tdie");
    put(r, "sys/class/hwmon/hwmon0/name", "acpitz\n");
    let (s, missing) = Sampler::open(&Root::new(r), None, None, S);
    assert!(
        !names(&s).contains(&"cpu_temp_c"),
        "nvme/acpitz are not the CPU"
    );
    assert!(missing.unwrap().contains("CPU temperature"));
}
