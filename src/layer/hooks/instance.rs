//! Entry points on instance-level objects: the instance itself and the
//! surfaces the layer follows (a Wayland surface for the hotkeys and
//! presentation feedback, an X11 window, Xlib or xcb, for X11 Present's
//! completes, a destroyed surface ending its window's log).
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

use crate::guard;
use crate::layer::handles::dispatch_key;
use crate::layer::instance::Instance;
use crate::layer::loader::{self, next_fn};
use crate::layer::state::layer;
use ash::vk;
use std::sync::Arc;
use steadyhud_capture::sources::Native;
use steadyhud_sys::lock::Recover;

pub(super) unsafe extern "system-unwind" fn create_instance(
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
            mark_gl_library();
        });
    }
    r
}

/// Tells the GL library, when it is in this process, that the layer is
/// active here ([`steadyhud_config::LAYER_MARK`]): a zink context's frames
/// reach this layer, so the GL library leaves them to it.
fn mark_gl_library() {
    // SAFETY: `dlsym` with a C string; what it finds under that name is
    // the GL library's `extern "C" fn()` (steadyhud_gl's `path.rs`).
    unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, steadyhud_config::LAYER_MARK.as_ptr());
        if !f.is_null() {
            let mark: extern "C" fn() = std::mem::transmute(f);
            mark();
        }
    }
}

pub(super) unsafe extern "system-unwind" fn destroy_instance(
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
    guard::contain((), || l.client.owner_destroyed(key));
    if last {
        // The loader dlcloses us right after this call: no thread may outlive it.
        guard::contain((), || l.client.analysis.shutdown());
    }
    // SAFETY: the next layer's `vkDestroyInstance` of this instance, called
    // with the app's own arguments.
    unsafe { (data.ash.fp_v1_0().destroy_instance)(instance, alloc) };
}

pub(super) unsafe extern "system-unwind" fn destroy_surface(
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
        l.client.surface_destroyed(vk::Handle::as_raw(surface));
    });
    if let Some(destroy) = inst.next.destroy_surface {
        // SAFETY: the next layer's `vkDestroySurfaceKHR` of this instance,
        // called with the app's own arguments.
        unsafe { destroy(instance, surface, alloc) };
    }
}

/// A `vkCreate*SurfaceKHR` of the platform whose create info is `I`: the
/// next layer's (`next` of the instance), then, on success, the client's
/// display sources record the new surface and the `native` window it was
/// made of.
///
/// # Safety
/// The hook's own contract: `instance` is the app's live instance, `info`,
/// `alloc` and `out` the app's valid arguments of that command.
unsafe fn create_surface<I>(
    instance: vk::Instance,
    info: *const I,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::SurfaceKHR,
    next: impl FnOnce(&Instance) -> Option<SurfaceCreate<I>>,
    native: impl FnOnce(&I) -> Native,
) -> vk::Result {
    let l = layer();
    // SAFETY: `instance` is the app's live instance (caller's contract).
    let key = unsafe { dispatch_key(instance) };
    let Some(create) = guard::contain(None, || next(&*l.instance(key)?)) else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // SAFETY: the next layer's command of this instance, called with the
    // app's own arguments.
    let r = unsafe { create(instance, info, alloc.cast(), out) };
    if r == vk::Result::SUCCESS && !info.is_null() {
        guard::contain((), || {
            // SAFETY: on success `*out` is the new surface; `info` is the
            // app's valid create info, naming the app's live native
            // objects (the spec requires them to outlive the surface).
            unsafe {
                let raw = vk::Handle::as_raw(*out);
                l.client.surface_created(key, raw, native(&*info));
            }
        });
    }
    r
}

/// A `vkCreate*SurfaceKHR` of the next layer, by its create info's type.
type SurfaceCreate<I> = unsafe extern "system" fn(
    vk::Instance,
    *const I,
    *const vk::AllocationCallbacks<'static>,
    *mut vk::SurfaceKHR,
) -> vk::Result;

/// A `vkCreate*SurfaceKHR` hook: its create info's type, the next layer's
/// function in the instance's table, and the native window its info names.
macro_rules! surface_hook {
    ($name:ident, $info:ident, |$i:ident| $native:expr) => {
        pub(super) unsafe extern "system-unwind" fn $name(
            instance: vk::Instance,
            info: *const vk::$info,
            alloc: *const vk::AllocationCallbacks,
            out: *mut vk::SurfaceKHR,
        ) -> vk::Result {
            let info: *const vk::$info<'static> = info.cast();
            // SAFETY: the hook's contract, handed on.
            unsafe {
                create_surface(
                    instance,
                    info,
                    alloc,
                    out,
                    |inst| inst.next.$name.map(|f| f as SurfaceCreate<_>),
                    |$i| $native,
                )
            }
        }
    };
}

surface_hook!(create_wayland_surface, WaylandSurfaceCreateInfoKHR, |i| {
    Native::Wayland {
        display: i.display.cast(),
        surface: i.surface.cast(),
    }
});
surface_hook!(create_xlib_surface, XlibSurfaceCreateInfoKHR, |i| {
    Native::Xlib {
        display: i.dpy.cast(),
        window: i.window as u32,
    }
});
surface_hook!(create_xcb_surface, XcbSurfaceCreateInfoKHR, |i| {
    Native::Xcb { window: i.window }
});
