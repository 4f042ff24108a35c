//! The layer's entry points: one table of the functions it intercepts
//! ([`hook`]), the `vkGet*ProcAddr` pair that hands them out, and thin
//! `extern "system"` functions that look the object up, contain panics and
//! delegate to the instance or device record.
//!
//! A function is handed out only where it may be called: swapchain and
//! present hooks only on devices that enabled `VK_KHR_swapchain`
//! (`vkCreateSharedSwapchainsKHR`: `VK_KHR_display_swapchain`), counted
//! calls only when counters are on and the next layer has the function.
//! Otherwise the next layer's pointer (or null) is returned, as if the layer
//! were not there.
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

use super::counting_hooks::{
    acquire_next_image, acquire_next_image2, allocate_memory, create_compute_pipelines,
    create_graphics_pipelines, set_latency_marker,
};
use super::device::{Device, Extensions, Link};
use super::gpu_timing;
use super::guard;
use super::handles::dispatch_key;
use super::instance::Instance;
use super::loader::{self, next_fn};
use super::state::{layer, Layer};
use ash::vk;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;
use steadyhud_sys::lock::Recover;

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
}

/// Level of an intercepted function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Instance,
    Device,
}

/// Casts one of our entry points for the proc-address tables.
fn void(f: *const ()) -> vk::PFN_vkVoidFunction {
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
        _ => return None,
    };
    Some((level, needs, void(f)))
}

/// Whether a device-level hook with `needs` is ours on a device with
/// extensions `ext` and counters on or off; `next_has` tells whether the
/// next layer has the function at all.
fn allowed(needs: Needs, ext: Extensions, counting: bool, next_has: bool) -> bool {
    match needs {
        Needs::Always => true,
        Needs::Swapchain => ext.swapchain && next_has,
        Needs::DisplaySwapchain => ext.display_swapchain && next_has,
        Needs::Counters => counting && next_has,
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
        match hook(wanted, l.faults.on_present_path()) {
            Some((Level::Instance, _, f)) => f,
            // A device function through gipa (a layer above may ask this
            // way): ours when it exists below and, for counted calls, when
            // counters are on (the device's own table decides per device in
            // gdpa).
            Some((Level::Device, needs, f)) => match inst.as_ref() {
                Some(i) if next(i).is_some() && (needs != Needs::Counters || l.config.counters) => {
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
        // SAFETY: inside the app's call on `device`, a live device (caller's
        // contract), so its record is not removed while we use it.
        let dev = unsafe { l.device(dispatch_key(device)) }?;
        // SAFETY: the next layer's gdpa of this device, called with the
        // app's own arguments.
        let next = unsafe { (dev.next_gdpa)(device, name) };
        match hook(name_bytes(name), l.faults.on_present_path()) {
            Some((Level::Device, needs, f))
                if allowed(needs, dev.ext, dev.counters.is_some(), next.is_some()) =>
            {
                f
            }
            _ => next,
        }
    })
}

/// Looks a dispatchable handle's device up and runs `f` on it; `fallback`
/// when the device is not ours (or the lookup panicked).
///
/// # Safety
/// `h` is a live dispatchable handle: the app is calling the layer on it.
#[inline]
pub(super) unsafe fn on_device<H: vk::Handle, R>(
    h: H,
    fallback: R,
    f: impl FnOnce(&'static Layer, &Device) -> R,
) -> R {
    let l = layer();
    // SAFETY: we are inside the app's call on `h`, a live handle.
    match guard::contain(None, || unsafe { l.device(dispatch_key(h)) }) {
        Some(dev) => f(l, dev),
        None => fallback,
    }
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

unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Instance,
) -> vk::Result {
    // Link to the next layer; without a link we cannot forward at all.
    let Some((gipa, create)) = guard::contain(None, || {
        // SAFETY: `info` is the app's valid create info with the `pNext`
        // chain the loader built for this layer (caller's contract).
        let gipa = unsafe { loader::take_instance_link(&*info) }?;
        // SAFETY: the next layer's gipa, asked with a null instance as for
        // any global command; `PFN_vkCreateInstance` is the name's type.
        let create: vk::PFN_vkCreateInstance =
            unsafe { next_fn(|n| gipa(vk::Instance::null(), n), c"vkCreateInstance") }?;
        Some((gipa, create))
    }) else {
        guard::say(format_args!(
            "steadyhud: vkCreateInstance without a loader link; failing"
        ));
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: the next layer's `vkCreateInstance`, called with the app's own
    // arguments (caller's contract), the link chain advanced past us.
    let r = unsafe { create(info, alloc, out) };
    if r == vk::Result::SUCCESS {
        guard::contain((), || {
            // SAFETY: on success `*out` is the new live instance, whose next
            // layer `gipa` belongs to; `info` is the app's create info.
            let data = Arc::new(unsafe { Instance::new(&*info, gipa, *out) });
            // SAFETY: `*out` is the live instance just created.
            layer()
                .instances
                .lock_or_recover()
                .insert(unsafe { dispatch_key(*out) }, data);
        });
    }
    r
}

unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    alloc: *const vk::AllocationCallbacks,
) {
    if instance == vk::Instance::null() {
        return;
    }
    let l = layer();
    // SAFETY: a non-null `instance` is the app's live instance (caller's
    // contract); only the call below destroys it.
    let key = unsafe { dispatch_key(instance) };
    let Some((data, last)) = guard::contain(None, || {
        let mut map = l.instances.lock_or_recover();
        let data = map.remove(&key)?;
        Some((data, map.is_empty()))
    }) else {
        return; // not ours: nothing we could forward to
    };
    guard::contain((), || crate::hud::wayland::instance_destroyed(key));
    if last {
        // The loader dlcloses us right after this call: no thread may outlive it.
        guard::contain((), || l.analysis.shutdown());
    }
    // SAFETY: the next layer's `vkDestroyInstance` of this instance, called
    // with the app's own arguments.
    unsafe { (data.ash.fp_v1_0().destroy_instance)(instance, alloc) };
}

unsafe extern "system" fn destroy_surface(
    instance: vk::Instance,
    surface: vk::SurfaceKHR,
    alloc: *const vk::AllocationCallbacks,
) {
    let l = layer();
    // SAFETY: `instance` is the app's live instance (caller's contract).
    let Some(inst) = guard::contain(None, || l.instance(unsafe { dispatch_key(instance) })) else {
        return;
    };
    guard::contain((), || {
        for dev in l.devices.all() {
            dev.surface_destroyed(surface);
        }
        // Our Wayland keyboard goes before the surface: the app may
        // disconnect its wl_display right after.
        crate::hud::wayland::surface_destroyed(vk::Handle::as_raw(surface));
    });
    if let Some(destroy) = inst.destroy_surface {
        // SAFETY: the next layer's `vkDestroySurfaceKHR` of this instance,
        // called with the app's own arguments.
        unsafe { destroy(instance, surface, alloc) };
    }
}

unsafe extern "system" fn create_wayland_surface(
    instance: vk::Instance,
    info: *const vk::WaylandSurfaceCreateInfoKHR,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::SurfaceKHR,
) -> vk::Result {
    let l = layer();
    // SAFETY: `instance` is the app's live instance (caller's contract).
    let key = unsafe { dispatch_key(instance) };
    let Some(create) = guard::contain(None, || l.instance(key)?.create_wayland_surface) else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // SAFETY: the next layer's `vkCreateWaylandSurfaceKHR` of this
    // instance, called with the app's own arguments.
    let r = unsafe { create(instance, info, alloc, out) };
    if r == vk::Result::SUCCESS && !info.is_null() {
        guard::contain((), || {
            // SAFETY: on success `*out` is the new surface; `info` is the
            // app's valid create info (caller's contract).
            let (surface, display) = unsafe { (*out, (*info).display) };
            crate::hud::wayland::surface_created(key, vk::Handle::as_raw(surface), display.cast());
        });
    }
    r
}

unsafe extern "system" fn create_device(
    physical_device: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Device,
) -> vk::Result {
    let l = layer();
    let linked = guard::contain(None, || {
        // SAFETY: `physical_device` is one of the app's live physical
        // devices (caller's contract): a dispatchable handle.
        let inst = l
            .instance(unsafe { dispatch_key(physical_device) })
            .or_else(|| l.only_instance())?;
        // SAFETY: `info` is the app's valid create info with the `pNext`
        // chain the loader built for this layer (caller's contract).
        let (gipa, gdpa) = unsafe { loader::take_device_link(&*info) }?;
        // SAFETY: the next layer's gipa, asked on our live instance;
        // `PFN_vkCreateDevice` is the name's type.
        let create: vk::PFN_vkCreateDevice =
            unsafe { next_fn(|n| gipa(inst.handle, n), c"vkCreateDevice") }?;
        Some((inst, gdpa, create))
    });
    let Some((inst, gdpa, create)) = linked else {
        guard::say(format_args!(
            "steadyhud: vkCreateDevice without instance data or loader link; failing"
        ));
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // Whether this device gets GPU timing (config `gpu_timing`, and `auto`
    // leaves it off on a CPU device), decided once, here: it also decides
    // the calibration extension below.
    let gpu_timing = l.config.counters
        && guard::contain(false, || {
            // SAFETY: `physical_device` is the app's live physical device
            // of `inst` (caller's contract).
            unsafe { gpu_timing::wanted(&inst.ash, physical_device, l.config.gpu_timing) }
        });
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
        let link = Link {
            instance: &inst,
            physical_device,
            // SAFETY: the app's valid create info (caller's contract).
            info: unsafe { &*info },
            gdpa,
            device,
            allocate_hook: hud_allocate_command_buffers as *const c_void,
            calibration,
            gpu_timing,
        };
        // SAFETY: `link` describes the live device just created.
        let dev = unsafe { Device::new(link, l.settings(), &l.analysis) }
            .ok_or(vk::Result::ERROR_INITIALIZATION_FAILED)?;
        l.devices
            .insert(dev.key, Arc::new(dev))
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

unsafe extern "system" fn destroy_device(
    device: vk::Device,
    alloc: *const vk::AllocationCallbacks,
) {
    if device == vk::Device::null() {
        return;
    }
    let l = layer();
    // SAFETY: a non-null `device` is the app's live device (caller's
    // contract); only the call below destroys it.
    let Some(dev) = guard::contain(None, || l.devices.remove(unsafe { dispatch_key(device) }))
    else {
        return;
    };
    guard::contain((), || dev.teardown());
    // SAFETY: the next layer's `vkDestroyDevice`, called with the app's own
    // arguments once the layer's objects of the device are freed.
    unsafe { (dev.fns.destroy_device)(device, alloc) };
}

/// `vkAllocateCommandBuffers` as the HUD sees it: the real call, then each
/// new command buffer gets the loader's dispatch table (layers below us
/// would crash on it otherwise).
unsafe extern "system" fn hud_allocate_command_buffers(
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
        // SAFETY: the next layer's `vkAllocateCommandBuffers` of this
        // device, called with the HUD's own valid arguments.
        let r = unsafe { (dev.fns.allocate_command_buffers)(device, info, out) };
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
    // SAFETY: only the HUD calls this, through its own device table
    // (`Link::allocate_hook`), on its live device.
    unsafe { on_device(device, vk::Result::ERROR_INITIALIZATION_FAILED, allocate) }
}

unsafe extern "system" fn create_swapchain(
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

unsafe extern "system" fn create_shared_swapchains(
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

unsafe extern "system" fn destroy_swapchain(
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
unsafe extern "system" fn queue_present<const FAULTS: bool>(
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

const NO_DEVICE: vk::Result = vk::Result::ERROR_OUT_OF_HOST_MEMORY;

unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `queue`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe {
        on_device(queue, NO_DEVICE, |_, d| {
            d.queue_submit(queue, count, submits, fence)
        })
    }
}

unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `queue`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe {
        on_device(queue, NO_DEVICE, |_, d| {
            d.queue_submit2(queue, count, submits, fence)
        })
    }
}

/// Runs from `.fini_array` when the library is unloaded or the process
/// exits (also via `exit()` without destroying the instance): finishes the
/// session logs and joins the analysis thread. Returns at once, touching no
/// lock, in a forked child (a lock another thread of the parent held at
/// fork time would never be released there) and when the layer was never
/// set up. (With loader 1.3.239 glibc keeps the library mapped after the
/// loader's dlclose, so in practice this runs at process exit.)
extern "C" fn on_unload() {
    let Some(l) = super::state::existing() else {
        return;
    };
    if l.pid != std::process::id() {
        return;
    }
    guard::contain((), || l.analysis.shutdown());
}

#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;

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
        assert!(!allowed(Needs::Swapchain, none, true, true));
        assert!(allowed(Needs::Swapchain, sc, true, true));
        assert!(
            !allowed(Needs::Swapchain, sc, true, false),
            "nothing below to forward to"
        );
        assert!(!allowed(Needs::DisplaySwapchain, sc, true, true));
        assert!(!allowed(Needs::Counters, sc, false, true), "counters=0");
        assert!(allowed(Needs::Counters, none, true, true));
        assert!(allowed(Needs::Always, none, false, false));
    }
}
