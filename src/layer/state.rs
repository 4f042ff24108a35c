//! The one [`Layer`] value of the process: the handle maps, the config,
//! HUD visibility, the frame cap in force, the test-only fault switches
//! (read once, with the config), the Wayland hotkeys' record and the
//! analysis thread. It is the only global holding the layer's state besides
//! the `.fini_array` hook (docs/design.md, "Where state lives"); everything
//! else lives in per-instance, per-device and per-swapchain records reached
//! through it, or is handed down from it (`steadyhud_input` gets its
//! [`WaylandKeys`]).

use super::device::Device;
use super::handles::HandleMap;
use super::instance::Instance;
use super::passthrough::Passthrough;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use steadyhud_capture::analysis::{Analysis, Settings};
use steadyhud_capture::faults::Faults;
use steadyhud_capture::hud_state::HudState;
use steadyhud_capture::identity::Identity;
use steadyhud_capture::limiter::FpsLimit;
use steadyhud_config::Config;
use steadyhud_input::wayland::WaylandKeys;
use steadyhud_sys::lock::Recover;

/// The layer's state in this process.
pub struct Layer {
    /// The game name ([`steadyhud_config::game_name`]): log file names,
    /// `ctl list`, the summary's `exe`.
    pub name: String,
    pub config: Config,
    /// `Some` in a process the blacklist leaves alone: the layer is inert
    /// and keeps only what forwarding needs (decided once, here).
    pub passthrough: Option<Passthrough>,
    /// The HUD's switches (shown, preset, toast); the hotkeys and the
    /// control socket change them.
    pub hud: HudState,
    /// The frame cap in force; its hotkey cycles it.
    pub limit: FpsLimit,
    pub faults: Faults,
    /// Instances by dispatch key (cold paths only: a mutex is fine).
    pub instances: Mutex<HashMap<usize, Arc<Instance>>>,
    /// Devices by dispatch key (their queues share it): read without a lock.
    pub devices: HandleMap<Device>,
    /// The Wayland hotkeys: surface map, binding, libraries (`steadyhud_input`
    /// keeps no global; it gets this record from here).
    pub wayland: WaylandKeys,
    pub analysis: Analysis,
    /// The process that set the layer up (a forked child is another).
    pub pid: u32,
}

static LAYER: OnceLock<Layer> = OnceLock::new();

/// The layer, set up on first use (config warnings printed once).
pub fn layer() -> &'static Layer {
    LAYER.get_or_init(|| {
        let Identity {
            name,
            config,
            left_alone,
        } = Identity::of_this_process();
        Layer {
            name,
            passthrough: left_alone.map(|_| Passthrough::default()),
            hud: HudState::new(&config),
            limit: FpsLimit::new(&config.fps_limit),
            config,
            faults: Faults::from_env(),
            instances: Mutex::default(),
            devices: HandleMap::default(),
            wayland: WaylandKeys::new(),
            analysis: Analysis::default(),
            pid: std::process::id(),
        }
    })
}

/// The layer if it was ever set up (for exit paths that must not set it up).
pub fn existing() -> Option<&'static Layer> {
    LAYER.get()
}

impl Layer {
    /// What the analysis thread and the devices read of the layer.
    pub fn settings(&'static self) -> Settings {
        Settings {
            name: &self.name,
            api: steadyhud_log::Api::Vulkan,
            config: &self.config,
            hud: &self.hud,
            limit: &self.limit,
            faults: &self.faults,
            wayland: &self.wayland,
        }
    }

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
