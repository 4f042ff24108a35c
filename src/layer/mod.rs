//! The implicit Vulkan layer `VK_LAYER_STEADYHUD_overlay`.
//!
//! Data flow per present (as in Mesa's overlay layer): timestamp on entry →
//! push into the surface's ring ([`capture`]) → HUD draw on the swapchain
//! image (waits on the app's semaphores, signals ours) → real present waits
//! on ours. The analysis thread ([`analysis`]) drains the rings, feeds the
//! rolling metrics, publishes live stats for the HUD and streams the session
//! log.
//!
//! Only globals: the handle maps (keyed by the loader dispatch pointer
//! `*(void**)handle`, so queues find their device), the config, and the
//! analysis thread handle. Everything else lives in per-instance,
//! per-device and per-swapchain structs.
//!
//! The cdylib exports one symbol under a Vulkan name:
//! `vkNegotiateLoaderLayerInterfaceVersion`; gipa/gdpa are handed over
//! through the negotiation struct.

pub mod analysis;
pub mod capture;
mod counted;
mod counter_track;
mod device;
pub mod guard;
mod instance;
mod session;
pub mod loader;
mod swapchain;

use crate::config::Config;
use ash::vk;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, OnceLock, RwLock};

pub use device::DeviceData;
pub use instance::InstanceData;

/// The layer's name as in the manifest.
pub const LAYER_NAME: &str = "VK_LAYER_STEADYHUD_overlay";

/// Dispatch key of a dispatchable handle: the loader's dispatch table pointer
/// stored in its first word.
///
/// # Safety
/// `handle` must be a live dispatchable Vulkan object.
#[inline]
pub(crate) unsafe fn dispatch_key<H: vk::Handle>(handle: H) -> usize {
    let p = handle.as_raw() as *const *const c_void;
    if p.is_null() {
        0
    } else {
        *p as usize
    }
}

type Map<T> = LazyLock<RwLock<HashMap<usize, Arc<T>>>>;

static INSTANCES: Map<InstanceData> = LazyLock::new(Default::default);
static DEVICES: Map<DeviceData> = LazyLock::new(Default::default);

pub(crate) fn find_instance(key: usize) -> Option<Arc<InstanceData>> {
    INSTANCES.read().unwrap_or_else(|e| e.into_inner()).get(&key).cloned()
}

/// The single live instance, when there is exactly one (fallback for a
/// physical device whose dispatch key is not its instance's).
pub(crate) fn only_instance() -> Option<Arc<InstanceData>> {
    let map = INSTANCES.read().unwrap_or_else(|e| e.into_inner());
    if map.len() == 1 {
        map.values().next().cloned()
    } else {
        None
    }
}

pub(crate) fn find_device(key: usize) -> Option<Arc<DeviceData>> {
    DEVICES.read().unwrap_or_else(|e| e.into_inner()).get(&key).cloned()
}

/// Layer configuration, loaded once per load of the library (warnings
/// printed once).
pub(crate) fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let (cfg, warnings) = Config::load();
        for w in warnings {
            eprintln!("steadyhud: config: {w}");
        }
        HUD_VISIBLE.store(!cfg.hud_hidden, Ordering::Relaxed);
        cfg
    })
}

/// Whether the HUD is drawn; toggled by the hotkey.
pub static HUD_VISIBLE: AtomicBool = AtomicBool::new(true);

/// Flips HUD visibility (the hotkey poll calls this).
pub fn toggle_hud() {
    HUD_VISIBLE.fetch_xor(true, Ordering::Relaxed);
}

pub(crate) fn name_is(name: *const c_char, want: &[u8]) -> bool {
    // SAFETY: the loader passes NUL-terminated names.
    !name.is_null() && unsafe { CStr::from_ptr(name) }.to_bytes() == want
}

unsafe fn as_void(f: *const ()) -> vk::PFN_vkVoidFunction {
    Some(std::mem::transmute::<*const (), unsafe extern "system" fn()>(f))
}

/// Device-level functions this layer intercepts.
fn device_hook(name: *const c_char) -> vk::PFN_vkVoidFunction {
    unsafe {
        if name_is(name, b"vkGetDeviceProcAddr") {
            as_void(get_device_proc_addr as *const ())
        } else if name_is(name, b"vkDestroyDevice") {
            as_void(device::destroy_device as *const ())
        } else if name_is(name, b"vkCreateSwapchainKHR") {
            as_void(swapchain::create_swapchain as *const ())
        } else if name_is(name, b"vkDestroySwapchainKHR") {
            as_void(swapchain::destroy_swapchain as *const ())
        } else if name_is(name, b"vkQueuePresentKHR") {
            as_void(swapchain::queue_present as *const ())
        } else {
            None
        }
    }
}

/// Instance-level functions this layer intercepts.
fn instance_hook(name: *const c_char) -> vk::PFN_vkVoidFunction {
    unsafe {
        if name_is(name, b"vkGetInstanceProcAddr") {
            as_void(get_instance_proc_addr as *const ())
        } else if name_is(name, b"vkCreateInstance") {
            as_void(instance::create_instance as *const ())
        } else if name_is(name, b"vkDestroyInstance") {
            as_void(instance::destroy_instance as *const ())
        } else if name_is(name, b"vkCreateDevice") {
            as_void(device::create_device as *const ())
        } else {
            None
        }
    }
}

/// Our `vkGetInstanceProcAddr`.
///
/// # Safety
/// Called by the loader or the app with a valid (or null) instance and a
/// NUL-terminated name.
pub unsafe extern "system" fn get_instance_proc_addr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    guard::contain(None, || {
        if let Some(f) = instance_hook(name).or_else(|| device_hook(name)) {
            return Some(f);
        }
        if instance == vk::Instance::null() {
            return None;
        }
        let data = find_instance(dispatch_key(instance))?;
        (data.next_gipa)(instance, name)
    })
}

/// Our `vkGetDeviceProcAddr`.
///
/// # Safety
/// Called by the loader or the app with a valid (or null) device and a
/// NUL-terminated name.
pub unsafe extern "system" fn get_device_proc_addr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    guard::contain(None, || {
        if let Some(f) = device_hook(name) {
            return Some(f);
        }
        if device == vk::Device::null() {
            return None;
        }
        let data = find_device(dispatch_key(device))?;
        if let Some(f) = counted::hook(name, data.counters.as_ref()) {
            return Some(f);
        }
        (data.next_gdpa)(device, name)
    })
}

/// Loader ↔ layer interface negotiation (the library's only Vulkan-named export).
///
/// # Safety
/// Called by the Vulkan loader with a valid struct.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(
    p: *mut loader::NegotiateLayerInterface,
) -> vk::Result {
    guard::contain(vk::Result::ERROR_INITIALIZATION_FAILED, || {
        if p.is_null() || (*p).s_type != loader::LAYER_NEGOTIATE_INTERFACE_STRUCT {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        }
        let v = &mut *p;
        if v.loader_layer_interface_version < loader::LAYER_INTERFACE_VERSION {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        }
        v.loader_layer_interface_version = loader::LAYER_INTERFACE_VERSION;
        v.pfn_get_instance_proc_addr = Some(get_instance_proc_addr);
        v.pfn_get_device_proc_addr = Some(get_device_proc_addr);
        v.pfn_get_physical_device_proc_addr = None;
        vk::Result::SUCCESS
    })
}

/// Runs from `.fini_array` when the library is unloaded or the process
/// exits (also via `exit()` without destroying the instance): finishes the
/// session logs and joins the analysis thread. A no-op when the last
/// `vkDestroyInstance` already did that, or in a forked child. (With loader
/// 1.3.239 glibc keeps the library mapped after the loader's dlclose, so in
/// practice this runs at process exit.)
extern "C" fn on_unload() {
    guard::contain((), analysis::shutdown);
}

#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;
