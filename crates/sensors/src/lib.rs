//! System readings for the HUD and the session log: CPU and busiest-core
//! load, the process's CPU time, CPU clock, temperature and package power,
//! RAM, swap and RSS, and the game's GPU (amdgpu and Intel sysfs/hwmon, the
//! process's own DRM fdinfo). Every source is a plain file read under a
//! [`Root`] (`/` in the layer, a fixture tree in tests), so fixtures go
//! through the same code as the real system. Sources that need a library
//! (NVIDIA's NVML) live outside this crate and plug in as a [`GpuReader`].
//!
//! - `root`: the file reads; `sample`: one sample ([`Sample`], [`Sensor`],
//!   [`Throttle`]); `cpu`, `memory`, `hwmon`, `rapl`, `gpu_sysfs`,
//!   `fdinfo`: the sources; `sampler`: which sources a session has and one
//!   bounded sample of them all; `rows`: the HUD's text rows.

#![forbid(unsafe_code)]

mod cpu;
mod fdinfo;
mod gpu_sysfs;
mod hwmon;
mod memory;
mod rapl;
mod root;
mod rows;
mod sample;
mod sampler;

pub use fdinfo::DrmClients;
pub use gpu_sysfs::{GpuDriver, PciBusId};
pub use root::Root;
pub use rows::{hud_row, HudRow, ROW_NAMES};
pub use sample::{Sample, Sensor, Throttle, COLUMNS, THROTTLE_COLUMN};
pub use sampler::{GpuReader, Sampler};
