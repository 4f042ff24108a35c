//! The layer in a process it leaves alone (the blacklist, see
//! `steadyhud_capture::identity`): loaded, but inert. It keeps only what forwarding
//! needs: per instance the usual link record, per device the next layer's
//! `vkGetDeviceProcAddr` and `vkDestroyDevice`. No HUD, no log, no control
//! socket, no analysis thread; every other call goes straight to the next
//! layer, because `vkGet*ProcAddr` hands out the next layer's functions
//! (`hooks::passthrough`).

use ash::vk;
use std::collections::HashMap;
use std::sync::Mutex;
use steadyhud_sys::lock::Recover;

/// What the layer keeps of one device it does not follow.
#[derive(Clone, Copy)]
pub struct PassDevice {
    /// The next layer's `vkGetDeviceProcAddr` of the device.
    pub gdpa: vk::PFN_vkGetDeviceProcAddr,
    /// The next layer's `vkDestroyDevice`.
    pub destroy: Option<vk::PFN_vkDestroyDevice>,
}

/// The devices of an inert process, by dispatch key (cold paths only:
/// device creation, destruction and proc-address lookups).
#[derive(Default)]
pub struct Passthrough {
    devices: Mutex<HashMap<usize, PassDevice>>,
}

impl Passthrough {
    pub fn insert(&self, key: usize, d: PassDevice) {
        self.devices.lock_or_recover().insert(key, d);
    }

    pub fn get(&self, key: usize) -> Option<PassDevice> {
        self.devices.lock_or_recover().get(&key).copied()
    }

    pub fn remove(&self, key: usize) -> Option<PassDevice> {
        self.devices.lock_or_recover().remove(&key)
    }
}
