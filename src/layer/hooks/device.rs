//! Entry points on the device and what hangs off it: device create and
//! destroy, swapchains, the present, and the HUD's command buffers
//! registered with the loader.
//!
//! # Safety
//! Every `unsafe extern "system"` function here is a Vulkan command (or the
//! loader's `vkNegotiateLoaderLayerInterfaceVersion`) and relies on the
//! Vulkan contract with its caller, the loader or the layer above: it is
//! called only as the command it is handed out for, with arguments valid
//! per that command's valid-usage rules (live handles of an instance or
//! device created through this layer, valid pointers and `pNext` chains,
//! externally synchronised objects not used concurrently), and it hands
//! them on to the next layer unchanged.

use super::lookup::on_device;
use crate::guard;
use crate::layer::device::{Device, DeviceLink};
use crate::layer::display_observe;
use crate::layer::display_timing;
use crate::layer::gpu_timing;
use crate::layer::handles::dispatch_key;
use crate::layer::instance::Instance;
use crate::layer::loader::{self, next_fn};
use crate::layer::state::{layer, Layer};
use ash::vk;
use std::ffi::c_void;
use std::sync::Arc;

/// What every `vkCreateDevice` of the layer (followed or inert) needs
/// first: the app's instance record, and from the loader's link (the chain
/// advanced past us) the next layer's `vkGetDeviceProcAddr` and
/// `vkCreateDevice`; `None` after one line when one is missing (the
/// caller fails the call).
///
/// # Safety
/// `physical_device` is one of the app's live physical devices (a
/// dispatchable handle) and `info` its valid create info with the `pNext`
/// chain the loader built for this layer.
pub(super) unsafe fn link_device(
    l: &Layer,
    physical_device: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
) -> Option<(
    Arc<Instance>,
    vk::PFN_vkGetDeviceProcAddr,
    vk::PFN_vkCreateDevice,
)> {
    let linked = guard::contain(None, || {
        // SAFETY: a live dispatchable handle (caller's contract).
        let inst = l
            .instance(unsafe { dispatch_key(physical_device) })
            .or_else(|| l.only_instance())?;
        // SAFETY: the app's valid create info with the loader's chain
        // (caller's contract).
        let (gipa, gdpa) = unsafe { loader::take_device_link(&*info) }?;
        // SAFETY: the next layer's gipa, asked on our live instance;
        // `PFN_vkCreateDevice` is the name's type.
        let create: vk::PFN_vkCreateDevice =
            unsafe { next_fn(|n| gipa(inst.handle, n), c"vkCreateDevice") }?;
        Some((inst, gdpa, create))
    });
    if linked.is_none() {
        guard::say(format_args!(
            "steadyhud: vkCreateDevice without instance data or loader link; failing"
        ));
    }
    linked
}

pub(super) unsafe extern "system-unwind" fn create_device(
    physical_device: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Device,
) -> vk::Result {
    let l = layer();
    // SAFETY: the app's arguments (caller's contract).
    let Some((inst, gdpa, create)) = (unsafe { link_device(l, physical_device, info) }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // Whether this device gets GPU timing (config `gpu_timing`, and `auto`
    // leaves it off on a CPU device), decided once, here: it also decides
    // the calibration extension below.
    let gpu_timing = l.client.config.counters
        && guard::contain(false, || {
            // SAFETY: `physical_device` is the app's live physical device
            // of `inst` (caller's contract).
            unsafe { gpu_timing::wanted(&inst.ash, physical_device, l.client.config.gpu_timing) }
        });
    // Display timing (config `display_timing`, off by default): the decision
    // in one line; the device is created as the app asked, and a method the
    // app uses itself is watched (`display_observe`).
    let observe = if l.client.config.display_timing {
        guard::contain(None, || {
            // SAFETY: `physical_device` is the app's live physical device of
            // `inst`, `info` its valid create info (caller's contract).
            let (offer, app) = unsafe {
                display_timing::gather(
                    &inst.ash,
                    physical_device,
                    &*info,
                    inst.ext.surface_capabilities2,
                )
            };
            let plan = display_timing::decide(true, &offer, &app);
            guard::say(format_args!("{}", plan.line()));
            match plan.method {
                Some((m, display_timing::Mode::Observe)) => Some(m),
                _ => None,
            }
        })
    } else {
        None
    };
    // GPU timing maps its timestamps to the CPU clock with calibrated
    // timestamps: enabled here when the device has them (a query function
    // only; nothing changes for the app).
    let (calibration, names) = if gpu_timing {
        guard::contain((false, None), || {
            // SAFETY: `info` is the app's valid create info for
            // `physical_device` (caller's contract).
            unsafe { gpu_timing::calibration_for(&inst.ash, physical_device, &*info) }
        })
    } else {
        (false, None)
    };
    // SAFETY: `info` is the app's valid create info (caller's contract).
    let mut patched = unsafe { *info };
    if let Some(n) = names.as_ref() {
        patched.enabled_extension_count = n.len() as u32;
        patched.pp_enabled_extension_names = n.as_ptr();
    }
    // SAFETY: the next layer's `vkCreateDevice`, called with the app's own
    // arguments; `patched` is the app's create info, its extension list at
    // most extended by one the device supports (`calibration_for`), the
    // names alive in `names` until the call returns.
    let r = unsafe { create(physical_device, &patched, alloc, out) };
    if r != vk::Result::SUCCESS {
        return r;
    }
    // SAFETY: on success the next layer wrote the new device to `out`.
    let device = unsafe { *out };
    let added = guard::contain(Err(vk::Result::ERROR_INITIALIZATION_FAILED), || {
        let link = DeviceLink {
            instance: &inst,
            physical_device,
            // SAFETY: the app's valid create info (caller's contract).
            info: unsafe { &*info },
            gdpa,
            device,
            allocate_hook: hud_allocate_command_buffers,
            calibration,
            gpu_timing,
            observe,
        };
        // SAFETY: `link` describes the live device just created.
        let dev = unsafe { Device::new(link, l.client) }
            .ok_or(vk::Result::ERROR_INITIALIZATION_FAILED)?;
        l.devices
            .insert(dev.key as u64, Arc::new(dev))
            .map_err(|_| vk::Result::ERROR_TOO_MANY_OBJECTS)
    });
    if let Err(e) = added {
        // Without our device record we cannot forward its calls: fail cleanly.
        if let Some(destroy) =
            // SAFETY: the next layer's gdpa of the live `device`;
            // `PFN_vkDestroyDevice` is the name's type.
            unsafe {
                next_fn::<vk::PFN_vkDestroyDevice>(|n| gdpa(device, n), c"vkDestroyDevice")
            }
        {
            // SAFETY: destroys the device the next layer just created, with
            // the app's allocator; the app never saw the handle.
            unsafe { destroy(device, alloc) };
        }
        guard::say(format_args!(
            "steadyhud: device setup failed ({e}); vkCreateDevice fails"
        ));
        return e;
    }
    r
}

pub(super) unsafe extern "system-unwind" fn destroy_device(
    device: vk::Device,
    alloc: *const vk::AllocationCallbacks,
) {
    if device == vk::Device::null() {
        return;
    }
    let l = layer();
    // SAFETY: a non-null `device` is the app's live device (caller's
    // contract); only the call below destroys it.
    let Some(dev) = guard::contain(None, || {
        l.devices.remove(unsafe { dispatch_key(device) } as u64)
    }) else {
        return;
    };
    guard::contain((), || dev.teardown());
    // The record exists only when the next layer has `vkDestroyDevice`.
    {
        let destroy = dev.next.core.fp_v1_0().destroy_device;
        // SAFETY: the next layer's `vkDestroyDevice`, called with the app's
        // own arguments once the layer's objects of the device are freed.
        unsafe { destroy(device, alloc) };
    }
}

/// `vkAllocateCommandBuffers` as the layer's own calls see it (the HUD's
/// and GPU timing's, through the device table's core): the real call, then
/// each new command buffer gets the loader's dispatch table (layers below
/// us would crash on it otherwise).
pub(super) unsafe extern "system" fn hud_allocate_command_buffers(
    device: vk::Device,
    info: *const vk::CommandBufferAllocateInfo,
    out: *mut vk::CommandBuffer,
) -> vk::Result {
    let allocate = |_: &'static Layer, dev: &Device| {
        // Unregistered command buffers would crash the layers below: no
        // callback, no HUD (the HUD reports the error once).
        let Some(set) = dev.set_loader_data else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let allocate = dev.next.allocate_command_buffers;
        // SAFETY: the next layer's `vkAllocateCommandBuffers` of this
        // device, called with the HUD's own valid arguments.
        let r = unsafe { allocate(device, info, out) };
        if r != vk::Result::SUCCESS {
            return r;
        }
        // SAFETY: on success `out` holds `commandBufferCount` new command
        // buffers; `info` is the HUD's valid allocate info.
        let cmds =
            unsafe { std::slice::from_raw_parts(out, (*info).command_buffer_count as usize) };
        for &cmd in cmds {
            // SAFETY: the loader's callback of this device, given one of the
            // device's new command buffers.
            let rr = unsafe { set(device, vk::Handle::as_raw(cmd) as *mut c_void) };
            if rr != vk::Result::SUCCESS {
                // SAFETY: frees the command buffers just allocated from the
                // HUD's pool (`info`); none of them was used.
                unsafe {
                    dev.hud()
                        .device
                        .free_command_buffers((*info).command_pool, cmds)
                };
                return rr;
            }
        }
        r
    };
    // SAFETY: only the layer calls this (the HUD and GPU timing, through
    // the device table: `DeviceLink::allocate_hook`), on its live device.
    unsafe { on_device(device, vk::Result::ERROR_INITIALIZATION_FAILED, allocate) }
}

pub(super) unsafe extern "system-unwind" fn create_swapchain(
    device: vk::Device,
    info: *const vk::SwapchainCreateInfoKHR,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::SwapchainKHR,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe {
        on_device(device, vk::Result::ERROR_INITIALIZATION_FAILED, |_, d| {
            d.create_swapchain(info, alloc, out)
        })
    }
}

pub(super) unsafe extern "system-unwind" fn create_shared_swapchains(
    device: vk::Device,
    count: u32,
    infos: *const vk::SwapchainCreateInfoKHR,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::SwapchainKHR,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe {
        on_device(device, vk::Result::ERROR_INITIALIZATION_FAILED, |_, d| {
            d.create_shared_swapchains(count, infos, alloc, out)
        })
    }
}

pub(super) unsafe extern "system-unwind" fn destroy_swapchain(
    device: vk::Device,
    sc: vk::SwapchainKHR,
    alloc: *const vk::AllocationCallbacks,
) {
    // SAFETY: inside the app's call on its live `device`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe { on_device(device, (), |_, d| d.destroy_swapchain(sc, alloc)) }
}

/// `vkQueuePresentKHR`; `FAULTS` compiles the test-only switches in.
pub(super) unsafe extern "system-unwind" fn queue_present<const FAULTS: bool>(
    queue: vk::Queue,
    info: *const vk::PresentInfoKHR,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `queue`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe {
        on_device(queue, vk::Result::ERROR_OUT_OF_HOST_MEMORY, |_, d| {
            d.present::<FAULTS>(queue, info)
        })
    }
}

/// `vkGetPastPresentationTimingGOOGLE`, handed out only to a device that
/// watches the app's own use of it (`display_observe`).
pub(super) unsafe extern "system-unwind" fn past_presentation_timing_google(
    device: vk::Device,
    sc: vk::SwapchainKHR,
    count: *mut u32,
    timings: *mut vk::PastPresentationTimingGOOGLE,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe {
        on_device(device, vk::Result::ERROR_INITIALIZATION_FAILED, |_, d| {
            d.past_timing_google(sc, count, timings)
        })
    }
}

/// `vkGetRefreshCycleDurationGOOGLE`, as above.
pub(super) unsafe extern "system-unwind" fn refresh_cycle_duration_google(
    device: vk::Device,
    sc: vk::SwapchainKHR,
    out: *mut vk::RefreshCycleDurationGOOGLE,
) -> vk::Result {
    // SAFETY: as above.
    unsafe {
        on_device(device, vk::Result::ERROR_INITIALIZATION_FAILED, |_, d| {
            d.refresh_cycle_google(sc, out)
        })
    }
}

/// `vkGetPastPresentationTimingEXT`, handed out only to a device that
/// watches the app's own use of it (`display_observe`).
pub(super) unsafe extern "system-unwind" fn past_presentation_timing_ext(
    device: vk::Device,
    info: *const display_observe::PastPresentationTimingInfo,
    props: *mut display_observe::PastPresentationTimingProperties,
) -> vk::Result {
    // SAFETY: as above.
    unsafe {
        on_device(device, vk::Result::ERROR_INITIALIZATION_FAILED, |_, d| {
            d.past_timing_ext(info, props)
        })
    }
}

/// `vkGetSwapchainTimingPropertiesEXT`, as above.
pub(super) unsafe extern "system-unwind" fn swapchain_timing_properties_ext(
    device: vk::Device,
    sc: vk::SwapchainKHR,
    out: *mut display_observe::SwapchainTimingProperties,
    counter: *mut u64,
) -> vk::Result {
    // SAFETY: as above.
    unsafe {
        on_device(device, vk::Result::ERROR_INITIALIZATION_FAILED, |_, d| {
            d.swapchain_timing_ext(sc, out, counter)
        })
    }
}
