//! The layer's side of the system readings (`steadyhud_sensors` reads the
//! files): what needs `unsafe` — the game device's PCI bus id from
//! `VK_EXT_pci_bus_info` (`pci`) and NVIDIA's NVML loaded at run time
//! (`nvml`) — and the choice of GPU source for a device (`source`).

mod nvml;
mod pci;
mod source;

pub use nvml::{Nvml, NvmlError, NVML_LIB};
pub use pci::pci_bus_of;
pub use source::open;
