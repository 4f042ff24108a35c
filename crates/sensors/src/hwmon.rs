//! hwmon: CPU temperature chips and the hwmon folder of a GPU.
//!
//! Format: Documentation/hwmon/sysfs-interface.rst (`name`, `tempN_input`
//! and `tempN_label` in millidegrees Celsius, `powerN_average` /
//! `powerN_input` in microwatts, `energyN_input` in microjoules,
//! `freqN_input` in Hz); the CPU drivers: Documentation/hwmon/k10temp.rst
//! (`Tctl`, `Tdie`), coretemp.rst (`Package id N`) and zenpower (out of
//! tree, `Tdie`/`Tctl` like k10temp).

use crate::root::{Kept, Root};
use std::path::{Path, PathBuf};

/// hwmon drivers whose temperature is the CPU's.
pub const CPU_CHIPS: [&str; 3] = ["k10temp", "coretemp", "zenpower"];

/// Labels of the temperature that stands for the whole CPU, best first.
const CPU_LABELS: [&str; 4] = ["Tctl", "Tdie", "Package id 0", "Physical id 0"];

/// The `temp*_input` of the first CPU chip under `sys/class/hwmon`.
pub fn cpu_temp_file(root: &Root) -> Option<PathBuf> {
    for dir in Root::list(&root.path("sys/class/hwmon"), "hwmon") {
        let name = Root::read(&dir.join("name")).unwrap_or_default();
        if CPU_CHIPS.contains(&name.trim()) {
            if let Some(f) = temp_input(&dir, &CPU_LABELS) {
                return Some(f);
            }
        }
    }
    None
}

/// In hwmon folder `dir`: the `tempN_input` whose label comes first in
/// `labels`, else the lowest-numbered readable one.
pub fn temp_input(dir: &Path, labels: &[&str]) -> Option<PathBuf> {
    let inputs: Vec<PathBuf> = Root::list(dir, "temp")
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("_input"))
        .filter(|p| Root::read_u64(p).is_some())
        .collect();
    for want in labels {
        for input in &inputs {
            let label = input.to_string_lossy().replace("_input", "_label");
            if Root::read(Path::new(&label)).is_some_and(|l| l.trim() == *want) {
                return Some(input.clone());
            }
        }
    }
    inputs.into_iter().next()
}

/// The hwmon folders of a device folder (`<device>/hwmon/hwmon*`).
pub fn device_hwmons(device: &Path) -> Vec<PathBuf> {
    Root::list(&device.join("hwmon"), "hwmon")
}

/// The first of `names` that is readable in `dir`.
pub fn first_readable(dir: &Path, names: &[&str]) -> Option<PathBuf> {
    names
        .iter()
        .map(|n| dir.join(n))
        .find(|p| Root::read_u64(p).is_some())
}

/// Millidegrees → °C.
pub fn read_temp(p: &mut Kept) -> Option<f64> {
    p.read_u64().map(|m| m as f64 / 1000.0)
}
