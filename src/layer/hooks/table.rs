//! The hook table ([`hook`]): every function the layer intercepts, its
//! level and when it may be handed out, and the `vkGet*ProcAddr` pair and
//! loader negotiation that hand them out.
//!
//! A function is handed out only where it may be called: swapchain and
//! present hooks only on devices that enabled `VK_KHR_swapchain`
//! (`vkCreateSharedSwapchainsKHR`: `VK_KHR_display_swapchain`), counted
//! calls only when counters are on and the next layer has the function.
//! Otherwise the next layer's pointer (or null) is returned, as if the layer
//! were not there.

use super::counted::*;
use super::device::*;
use super::instance::*;
use crate::guard;
use crate::layer::device::Extensions;
use crate::layer::display_timing::Method;
use crate::layer::handles::dispatch_key;
use crate::layer::instance::Instance;
use crate::layer::loader::{self};
use crate::layer::state::layer;
use ash::vk;
use std::ffi::{c_char, CStr};

/// When an intercepted function may be handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Needs {
    /// Always ours.
    Always,
    /// The device enabled `VK_KHR_swapchain`.
    Swapchain,
    /// The device enabled `VK_KHR_display_swapchain`.
    DisplaySwapchain,
    /// Counters are on and the next layer has the function.
    Counters,
    /// The device watches the app's own use of this display-timing method
    /// (config `display_timing`, the app enabled its extension) and the
    /// next layer has the function.
    Observe(Method),
}

/// Level of an intercepted function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Instance,
    Device,
}

/// Casts one of our entry points for the proc-address tables.
/// What the layer hands out for `name` in a process it leaves alone (the
/// blacklist, [`super::passthrough`]): its own function for the few it
/// must keep (the loader's chain, the device records), else `None` (the
/// next layer's).
fn inert_hook(name: &[u8]) -> Option<vk::PFN_vkVoidFunction> {
    let f = match name {
        b"vkGetInstanceProcAddr" => get_instance_proc_addr as *const (),
        b"vkCreateInstance" => super::instance::create_instance as *const (),
        b"vkDestroyInstance" => super::instance::destroy_instance as *const (),
        b"vkCreateDevice" => super::passthrough::create_device as *const (),
        b"vkGetDeviceProcAddr" => get_device_proc_addr as *const (),
        b"vkDestroyDevice" => super::passthrough::destroy_device as *const (),
        _ => return None,
    };
    Some(void(f))
}

pub(super) fn void(f: *const ()) -> vk::PFN_vkVoidFunction {
    // SAFETY: `f` is one of this module's `extern "system"` functions; the
    // caller of the proc address casts it back to its real type.
    Some(unsafe { std::mem::transmute::<*const (), unsafe extern "system" fn()>(f) })
}

/// The table: every function the layer intercepts, its level, when it may
/// be handed out, and our entry point.
fn hook(name: &[u8], faults: bool) -> Option<(Level, Needs, vk::PFN_vkVoidFunction)> {
    use Level::{Device as D, Instance as I};
    let present = if faults {
        queue_present::<true> as *const ()
    } else {
        queue_present::<false> as *const ()
    };
    let (level, needs, f) = match name {
        b"vkGetInstanceProcAddr" => (I, Needs::Always, get_instance_proc_addr as *const ()),
        b"vkCreateInstance" => (I, Needs::Always, create_instance as *const ()),
        b"vkDestroyInstance" => (I, Needs::Always, destroy_instance as *const ()),
        b"vkCreateDevice" => (I, Needs::Always, create_device as *const ()),
        b"vkDestroySurfaceKHR" => (I, Needs::Always, destroy_surface as *const ()),
        b"vkCreateWaylandSurfaceKHR" => (I, Needs::Always, create_wayland_surface as *const ()),
        b"vkCreateXlibSurfaceKHR" => (I, Needs::Always, create_xlib_surface as *const ()),
        b"vkCreateXcbSurfaceKHR" => (I, Needs::Always, create_xcb_surface as *const ()),
        b"vkGetDeviceProcAddr" => (D, Needs::Always, get_device_proc_addr as *const ()),
        b"vkDestroyDevice" => (D, Needs::Always, destroy_device as *const ()),
        b"vkCreateSwapchainKHR" => (D, Needs::Swapchain, create_swapchain as *const ()),
        b"vkCreateSharedSwapchainsKHR" => (
            D,
            Needs::DisplaySwapchain,
            create_shared_swapchains as *const (),
        ),
        b"vkDestroySwapchainKHR" => (D, Needs::Swapchain, destroy_swapchain as *const ()),
        b"vkQueuePresentKHR" => (D, Needs::Swapchain, present),
        b"vkCreateGraphicsPipelines" => {
            (D, Needs::Counters, create_graphics_pipelines as *const ())
        }
        b"vkCreateComputePipelines" => (D, Needs::Counters, create_compute_pipelines as *const ()),
        b"vkQueueSubmit" => (D, Needs::Counters, queue_submit as *const ()),
        b"vkQueueSubmit2" | b"vkQueueSubmit2KHR" => {
            (D, Needs::Counters, queue_submit2 as *const ())
        }
        b"vkAllocateMemory" => (D, Needs::Counters, allocate_memory as *const ()),
        b"vkAcquireNextImageKHR" => (D, Needs::Counters, acquire_next_image as *const ()),
        b"vkAcquireNextImage2KHR" => (D, Needs::Counters, acquire_next_image2 as *const ()),
        b"vkSetLatencyMarkerNV" => (D, Needs::Counters, set_latency_marker as *const ()),
        b"vkAntiLagUpdateAMD" => (D, Needs::Counters, anti_lag_update as *const ()),
        b"vkGetPastPresentationTimingGOOGLE" => (
            D,
            Needs::Observe(Method::DisplayTimingGoogle),
            past_presentation_timing_google as *const (),
        ),
        b"vkGetRefreshCycleDurationGOOGLE" => (
            D,
            Needs::Observe(Method::DisplayTimingGoogle),
            refresh_cycle_duration_google as *const (),
        ),
        b"vkGetPastPresentationTimingEXT" => (
            D,
            Needs::Observe(Method::PresentTiming),
            past_presentation_timing_ext as *const (),
        ),
        b"vkGetSwapchainTimingPropertiesEXT" => (
            D,
            Needs::Observe(Method::PresentTiming),
            swapchain_timing_properties_ext as *const (),
        ),
        _ => return None,
    };
    Some((level, needs, void(f)))
}

/// Whether a device-level hook with `needs` is ours on a device with
/// extensions `ext`, counters on or off, and watching the app's display
/// timing method `observing`; `next_has` tells whether the next layer has
/// the function at all.
fn allowed(
    needs: Needs,
    ext: Extensions,
    counting: bool,
    observing: Option<Method>,
    next_has: bool,
) -> bool {
    match needs {
        Needs::Always => true,
        Needs::Swapchain => ext.swapchain && next_has,
        Needs::DisplaySwapchain => ext.display_swapchain && next_has,
        Needs::Counters => counting && next_has,
        Needs::Observe(m) => observing == Some(m) && next_has,
    }
}

fn name_bytes<'a>(name: *const c_char) -> &'a [u8] {
    if name.is_null() {
        return &[];
    }
    // SAFETY: the loader and apps pass NUL-terminated names.
    unsafe { CStr::from_ptr(name) }.to_bytes()
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
        let l = layer();
        let wanted = name_bytes(name);
        // SAFETY: a non-null `instance` is one of the app's live instances
        // (caller's contract): a dispatchable handle.
        let inst = (instance != vk::Instance::null())
            .then(|| l.instance(unsafe { dispatch_key(instance) }))
            .flatten();
        // SAFETY: the next layer's gipa of this instance, called with the
        // app's own arguments (caller's contract).
        let next = |inst: &Instance| unsafe { (inst.next_gipa)(instance, name) };
        if l.passthrough.is_some() {
            // A process left alone: only the lifecycle functions are ours.
            return match inert_hook(wanted) {
                Some(f) => f,
                None => inst.as_ref().and_then(|i| next(i)),
            };
        }
        match hook(wanted, l.client.faults.on_present_path()) {
            Some((Level::Instance, _, f)) => f,
            // A device function through gipa (a layer above may ask this
            // way): ours when it exists below and, for counted calls, when
            // counters are on (the device's own table decides per device in
            // gdpa).
            Some((Level::Device, needs, f)) => match inst.as_ref() {
                Some(i)
                    if next(i).is_some()
                        && (needs != Needs::Counters || l.client.config.counters)
                        && (!matches!(needs, Needs::Observe(_))
                            || l.client.config.display_timing) =>
                {
                    f
                }
                Some(i) => next(i),
                None => None,
            },
            None => inst.as_ref().and_then(|i| next(i)),
        }
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
        let l = layer();
        if device == vk::Device::null() {
            return None;
        }
        if l.passthrough.is_some() {
            let wanted = name_bytes(name);
            if matches!(wanted, b"vkGetDeviceProcAddr" | b"vkDestroyDevice") {
                return inert_hook(wanted).flatten();
            }
            // SAFETY: inside the app's call on the live `device`.
            return unsafe { super::passthrough::next_device_proc_addr(device, name) };
        }
        // SAFETY: inside the app's call on `device`, a live device (caller's
        // contract), so its record is not removed while we use it.
        let dev = unsafe { l.device(dispatch_key(device)) }?;
        // SAFETY: the next layer's gdpa of this device, called with the
        // app's own arguments.
        let next = unsafe { (dev.next_gdpa)(device, name) };
        match hook(name_bytes(name), l.client.faults.on_present_path()) {
            Some((Level::Device, needs, f))
                if allowed(
                    needs,
                    dev.ext,
                    dev.counters.is_some(),
                    dev.observe,
                    next.is_some(),
                ) =>
            {
                f
            }
            _ => next,
        }
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
        // SAFETY: `p` is not null here, and the loader passes a valid struct
        // (caller's contract).
        if p.is_null() || unsafe { (*p).s_type } != loader::LAYER_NEGOTIATE_INTERFACE_STRUCT {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: as above; the loader lends us the struct, unaliased, for
        // the duration of this call.
        let v = unsafe { &mut *p };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name the table knows maps to one level; unknown names and the
    /// per-extension rules.
    #[test]
    fn table_levels_and_needs() {
        assert!(matches!(
            hook(b"vkCreateInstance", false),
            Some((Level::Instance, Needs::Always, Some(_)))
        ));
        assert!(matches!(
            hook(b"vkQueuePresentKHR", false),
            Some((Level::Device, Needs::Swapchain, Some(_)))
        ));
        assert!(matches!(
            hook(b"vkCreateSharedSwapchainsKHR", false),
            Some((Level::Device, Needs::DisplaySwapchain, _))
        ));
        assert!(matches!(
            hook(b"vkAcquireNextImage2KHR", false),
            Some((Level::Device, Needs::Counters, _))
        ));
        assert!(hook(b"vkCmdDraw", false).is_none());
        for (name, m) in [
            (
                &b"vkGetPastPresentationTimingGOOGLE"[..],
                Method::DisplayTimingGoogle,
            ),
            (
                b"vkGetRefreshCycleDurationGOOGLE",
                Method::DisplayTimingGoogle,
            ),
            (b"vkGetPastPresentationTimingEXT", Method::PresentTiming),
            (b"vkGetSwapchainTimingPropertiesEXT", Method::PresentTiming),
        ] {
            assert_eq!(
                hook(name, false).map(|h| (h.0, h.1)),
                Some((Level::Device, Needs::Observe(m)))
            );
        }
        // The faulty present is another function than the normal one.
        let p = |f| {
            hook(b"vkQueuePresentKHR", f)
                .and_then(|h| h.2)
                .map(|f| f as usize)
        };
        assert_ne!(p(true), p(false));
    }

    /// Functions of extensions the app did not enable are not ours: the
    /// next layer's answer (null) is returned instead.
    #[test]
    fn hooks_only_where_the_app_enabled_their_extension() {
        let none = Extensions::default();
        let sc = Extensions {
            swapchain: true,
            display_swapchain: false,
        };
        assert!(!allowed(Needs::Swapchain, none, true, None, true));
        assert!(allowed(Needs::Swapchain, sc, true, None, true));
        assert!(
            !allowed(Needs::Swapchain, sc, true, None, false),
            "nothing below to forward to"
        );
        assert!(!allowed(Needs::DisplaySwapchain, sc, true, None, true));
        assert!(
            !allowed(Needs::Counters, sc, false, None, true),
            "counters=0"
        );
        assert!(allowed(Needs::Counters, none, true, None, true));
        assert!(allowed(Needs::Always, none, false, None, false));
        // The display-timing queries: only on a device watching that very
        // method (config on, the app enabled its extension), and only when
        // there is something below.
        let google = Needs::Observe(Method::DisplayTimingGoogle);
        let ext = Needs::Observe(Method::PresentTiming);
        assert!(!allowed(google, sc, true, None, true), "not observing");
        assert!(allowed(
            google,
            sc,
            true,
            Some(Method::DisplayTimingGoogle),
            true
        ));
        assert!(!allowed(
            google,
            sc,
            true,
            Some(Method::PresentTiming),
            true
        ));
        assert!(allowed(ext, sc, true, Some(Method::PresentTiming), true));
        assert!(!allowed(ext, sc, true, Some(Method::PresentTiming), false));
    }
}
