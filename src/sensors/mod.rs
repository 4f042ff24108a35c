//! The layer's side of the system readings (`steadyhud_sensors` reads the
//! files): what needs `unsafe` — the game device's PCI bus id from
//! `VK_EXT_pci_bus_info` (`pci`) and NVIDIA's NVML loaded at run time
//! (`nvml`) — and the choice of GPU source for a device (`open`).

mod nvml;
mod pci;

pub use nvml::{Nvml, NvmlError, NVML_LIB};
pub use pci::pci_bus_of;

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
