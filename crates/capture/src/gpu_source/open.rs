//! The session's sampler: the file sources of `steadyhud_sensors`, plus
//! NVML for an NVIDIA GPU.

use super::nvml::Nvml;
use steadyhud_sensors::{GpuDriver, GpuReader, PciBusId, Root, Sampler};

/// The session's sampler for the GPU at `pci` under `root`: NVML when the
/// device's driver is `nvidia` (loaded from `nvml_lib`), sysfs otherwise.
/// Returns it with one line naming what is not readable, if anything.
pub fn open(
    root: &Root,
    pci: Option<PciBusId>,
    nvml_lib: &str,
    t_ns: u64,
) -> (Sampler, Option<String>) {
    let mut nvml_error = None;
    let external: Option<Box<dyn GpuReader>> = match pci {
        Some(p) if GpuDriver::of(root, p) == Some(GpuDriver::Nvidia) => {
            match Nvml::open(nvml_lib, p) {
                Ok(n) => Some(Box::new(n)),
                Err(e) => {
                    nvml_error = Some(e.to_string());
                    None
                }
            }
        }
        _ => None,
    };
    let (sampler, missing) = Sampler::open(root, pci, external, t_ns);
    let line = match (missing, nvml_error) {
        (Some(m), Some(e)) => Some(format!("{m}; {e}")),
        (m, e) => m.or(e),
    };
    (sampler, line)
}
