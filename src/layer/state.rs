//! The one [`Layer`] value of the process: the Vulkan handle maps (the
//! instances and devices, and an inert process's pass-through record),
//! beside the process's [`Client`] (`steadyhud_capture::client`: config,
//! HUD switches, frame cap, faults, Wayland, analysis, exit hook), which
//! the GL library holds too. These two are the layer's only globals
//! (docs/design.md, "Where state lives"); everything else lives in
//! per-instance, per-device and per-swapchain records reached through
//! them.

use super::device::Device;
use super::handles::HandleMap;
use super::instance::Instance;
use super::passthrough::Passthrough;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use steadyhud_capture::client::Client;
use steadyhud_sys::lock::Recover;

/// The layer's own state in this process: what only Vulkan needs. What the
/// GL library holds too (identity, config, HUD switches, frame cap, faults,
/// Wayland, analysis, exit path) is the process's [`Client`].
pub struct Layer {
    pub client: &'static Client,
    /// `Some` in a process the blacklist leaves alone: the layer is inert
    /// and keeps only what forwarding needs (decided once, here).
    pub passthrough: Option<Passthrough>,
    /// Instances by dispatch key (cold paths only: a mutex is fine).
    pub instances: Mutex<HashMap<usize, Arc<Instance>>>,
    /// Devices by dispatch key (their queues share it): read without a lock.
    pub devices: HandleMap<Device>,
}

static LAYER: OnceLock<Layer> = OnceLock::new();

/// The layer, set up on first use (config warnings printed once).
pub fn layer() -> &'static Layer {
    LAYER.get_or_init(|| {
        let client = steadyhud_capture::client::client(steadyhud_log::Api::Vulkan);
        Layer {
            client,
            passthrough: client.left_alone.then(Passthrough::default),
            instances: Mutex::default(),
            devices: HandleMap::default(),
        }
    })
}

impl Layer {
    /// The instance record of dispatch key `key`.
    pub fn instance(&self, key: usize) -> Option<Arc<Instance>> {
        self.instances.lock_or_recover().get(&key).cloned()
    }

    /// The single live instance, when there is exactly one (fallback for a
    /// physical device whose dispatch key is not its instance's).
    pub fn only_instance(&self) -> Option<Arc<Instance>> {
        let map = self.instances.lock_or_recover();
        if map.len() == 1 {
            map.values().next().cloned()
        } else {
            None
        }
    }

    /// The device record of dispatch key `key` (a device's or one of its
    /// queues'), without a lock.
    ///
    /// # Safety
    /// Called inside a Vulkan call on that device or one of its children,
    /// so the record is not removed while the reference lives.
    #[inline]
    pub unsafe fn device(&self, key: usize) -> Option<&Device> {
        // SAFETY: the caller's contract is the map's.
        unsafe { self.devices.get(key as u64) }
    }
}
