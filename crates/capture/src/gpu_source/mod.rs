//! The GPU a session's system readings come from, where a file source is
//! not enough: NVIDIA's NVML, loaded at run time (`nvml`, `unsafe` FFI),
//! and the choice of source for a device (`open`). The device's PCI
//! address comes from the graphics API (the Vulkan layer asks
//! `VK_EXT_pci_bus_info`); the file sources are `steadyhud_sensors`.

mod nvml;
mod open;

pub use nvml::{Nvml, NvmlError, NVML_LIB};
pub use open::open;
