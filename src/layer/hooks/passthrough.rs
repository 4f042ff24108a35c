//! Entry points of a process the layer leaves alone
//! ([`crate::layer::passthrough`]): instance and device creation still pass
//! through the layer (the loader's chain must be advanced), everything else
//! is the next layer's.
//!
//! # Safety
//! As for every entry point (see [`super::instance`]): each function is a
//! Vulkan command called under that command's valid-usage rules, and hands
//! its arguments on unchanged.

use crate::guard;
use crate::layer::handles::dispatch_key;
use crate::layer::loader::next_fn;
use crate::layer::passthrough::PassDevice;
use crate::layer::state::layer;
use ash::vk;
use std::ffi::c_char;

/// The next layer's `name` of `device` in an inert process (the two
/// device functions the layer keeps are handed out by the hook table).
///
/// # Safety
/// `device` is a live device created through this layer; `name` is
/// NUL-terminated.
pub(super) unsafe fn next_device_proc_addr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    let l = layer();
    // SAFETY: a live dispatchable handle (caller's contract).
    let d = l
        .passthrough
        .as_ref()?
        .get(unsafe { dispatch_key(device) })?;
    // SAFETY: the next layer's gdpa of this device, with the app's
    // arguments.
    unsafe { (d.gdpa)(device, name) }
}

pub(super) unsafe extern "system-unwind" fn create_device(
    physical_device: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Device,
) -> vk::Result {
    let l = layer();
    // SAFETY: the app's arguments (caller's contract).
    let Some((_, gdpa, create)) = (unsafe { super::device::link_device(l, physical_device, info) })
    else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: the next layer's `vkCreateDevice` with the app's arguments,
    // the chain advanced past us.
    let r = unsafe { create(physical_device, info, alloc, out) };
    if r == vk::Result::SUCCESS {
        guard::contain((), || {
            // SAFETY: on success `*out` is the new live device.
            let device = unsafe { *out };
            // SAFETY: the next layer's gdpa of that device;
            // `PFN_vkDestroyDevice` is the name's type.
            let destroy = unsafe { next_fn(|n| gdpa(device, n), c"vkDestroyDevice") };
            if let Some(p) = &l.passthrough {
                // SAFETY: the live device just created.
                p.insert(
                    unsafe { dispatch_key(device) },
                    PassDevice { gdpa, destroy },
                );
            }
        });
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
    // SAFETY: the app's live device (caller's contract).
    let key = unsafe { dispatch_key(device) };
    let d = guard::contain(None, || l.passthrough.as_ref()?.remove(key));
    if let Some(destroy) = d.and_then(|d| d.destroy) {
        // SAFETY: the next layer's `vkDestroyDevice`, with the app's
        // arguments.
        unsafe { destroy(device, alloc) };
    }
}
