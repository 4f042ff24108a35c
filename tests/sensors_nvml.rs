//! NVIDIA readings through the layer's NVML path (`libloading`, the same
//! code the layer runs for a GPU whose sysfs driver is `nvidia`), against a
//! stand-in library built here with gcc from `tests/data/nvml/fake_nvml.c`
//! (the functions steadyhud calls, with fixed readings): columns, values,
//! throttle reasons, the device picked by PCI bus id, NVML shut down when
//! the sampler goes, and one clear line when NVML is missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use steadyhud_sensors::{PciBusId, Root, Sensor, Throttle};

fn fake_nvml() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fake-nvml");
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join(format!("libfake-nvml-{}.so", std::process::id()));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nvml/fake_nvml.c");
    let out = Command::new("gcc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&so)
        .arg(&src)
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    so
}

/// A sysfs tree where the GPU at `pci` is bound to `driver`.
fn sysfs_with(driver: &str, pci: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("sys/bus/pci/devices").join(pci);
    std::fs::create_dir_all(&dev).unwrap();
    std::fs::create_dir_all(dir.path().join("sys/bus/pci/drivers").join(driver)).unwrap();
    std::os::unix::fs::symlink(
        format!("../../../../bus/pci/drivers/{driver}"),
        dev.join("driver"),
    )
    .unwrap();
    dir
}

const PCI: PciBusId = PciBusId {
    domain: 0,
    bus: 1,
    device: 0,
    function: 0,
};

#[test]
fn nvml_readings_through_the_sampler() {
    let so = fake_nvml();
    // Our own handle on the stand-in, to read its call counters.
    // SAFETY: the library built above; its globals are plain ints.
    let lib = unsafe { libloading::Library::new(&so) }.unwrap();
    let count = |name: &[u8]| -> i32 {
        // SAFETY: `fake_nvml_*` are `int` globals of the stand-in.
        unsafe { **lib.get::<*const i32>(name).unwrap() }
    };
    let tree = sysfs_with("nvidia", "0000:01:00.0");
    let root = Root::new(tree.path());
    let so_text = so.to_str().unwrap();
    {
        let (mut sampler, missing) =
            steadyhud_capture::gpu_source::open(&root, Some(PCI), so_text, 1_000_000_000);
        if let Some(m) = &missing {
            assert!(
                !m.contains("NVML") && !m.split(", ").any(|p| p.starts_with("GPU")),
                "the GPU is read: {m}"
            );
        }
        let names: Vec<&str> = sampler.columns().iter().map(|c| c.column()).collect();
        for want in [
            "gpu_load_pct",
            "gpu_mhz",
            "gpu_temp_c",
            "gpu_power_w",
            "vram_used_mb",
            "vram_total_mb",
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        assert!(sampler.has_throttle());
        let s = sampler.sample(2_000_000_000);
        assert_eq!(s.get(Sensor::GpuLoadPct), Some(97.0));
        assert_eq!(s.get(Sensor::GpuMhz), Some(2415.0), "graphics clock");
        assert_eq!(s.get(Sensor::GpuTempC), Some(78.0));
        assert_eq!(s.get(Sensor::GpuPowerW), Some(212.5), "mW → W");
        assert_eq!(s.get(Sensor::VramUsedMb), Some(6144.0));
        assert_eq!(s.get(Sensor::VramTotalMb), Some(8192.0));
        assert_eq!(
            s.throttle,
            Some(Throttle(Throttle::POWER.0 | Throttle::THERMAL.0)),
            "idle is no throttle"
        );
        let row = steadyhud_sensors::hud_row("gpu", &s, "°C").unwrap();
        assert_eq!(row.text, "97% 2.4 GHz 78°C 212 W (power|thermal)");
        assert_eq!(
            (count(b"fake_nvml_inits\0"), count(b"fake_nvml_shutdowns\0")),
            (1, 0)
        );
    }
    assert_eq!(
        count(b"fake_nvml_shutdowns\0"),
        1,
        "NVML shut down with the sampler"
    );

    // Another bus id: NVML has no such device; it is shut down again and
    // the line says why.
    let other = PciBusId { bus: 2, ..PCI };
    let tree2 = sysfs_with("nvidia", "0000:02:00.0");
    let (sampler, missing) =
        steadyhud_capture::gpu_source::open(&Root::new(tree2.path()), Some(other), so_text, 1);
    assert!(!sampler
        .columns()
        .iter()
        .any(|c| c.column().starts_with("gpu_")));
    let missing = missing.expect("a line");
    assert!(
        missing.contains("nvmlDeviceGetHandleByPciBusId_v2 failed (error 6)"),
        "{missing}"
    );
    assert_eq!(count(b"fake_nvml_inits\0"), count(b"fake_nvml_shutdowns\0"));
}

#[test]
fn missing_nvml_is_one_line() {
    let tree = sysfs_with("nvidia", "0000:01:00.0");
    let (sampler, missing) = steadyhud_capture::gpu_source::open(
        &Root::new(tree.path()),
        Some(PCI),
        "libno-such-nvml.so.1",
        1,
    );
    assert!(!sampler
        .columns()
        .iter()
        .any(|c| c.column().starts_with("gpu_")));
    let m = missing.expect("a line");
    assert!(!m.contains('\n'));
    assert!(m.contains("NVML not loaded (libno-such-nvml.so.1"), "{m}");
}

/// Not an NVIDIA GPU: NVML is not even loaded.
#[test]
fn other_drivers_do_not_load_nvml() {
    let tree = sysfs_with("amdgpu", "0000:01:00.0");
    let (_, missing) = steadyhud_capture::gpu_source::open(
        &Root::new(tree.path()),
        Some(PCI),
        "libno-such-nvml.so.1",
        1,
    );
    assert!(!missing.unwrap_or_default().contains("NVML"));
}
