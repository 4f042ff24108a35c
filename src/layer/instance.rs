//! Instance hooks: link to the next layer on `vkCreateInstance`, keep the
//! per-instance [`InstanceData`], and on the last `vkDestroyInstance` stop the
//! analysis thread before the loader unloads us.

use super::{dispatch_key, find_instance, guard, loader, INSTANCES};
use ash::vk;
use std::ffi::c_char;
use std::sync::Arc;

/// What the layer keeps per `VkInstance`.
pub struct InstanceData {
    pub handle: vk::Instance,
    /// The next layer's `vkGetInstanceProcAddr`.
    pub next_gipa: vk::PFN_vkGetInstanceProcAddr,
    /// Instance functions of the next layer (for the HUD and device setup).
    pub ash: ash::Instance,
}

unsafe fn next_fn<F>(gipa: vk::PFN_vkGetInstanceProcAddr, instance: vk::Instance, name: &[u8]) -> Option<F> {
    debug_assert_eq!(name.last(), Some(&0));
    let f = gipa(instance, name.as_ptr() as *const c_char)?;
    Some(std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&f))
}

pub(crate) unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Instance,
) -> vk::Result {
    // Link to the next layer; without a link we cannot forward at all.
    let Some((gipa, create)) = guard::contain(None, || {
        let gipa = loader::take_instance_link(&*info)?;
        let create: vk::PFN_vkCreateInstance = next_fn(gipa, vk::Instance::null(), b"vkCreateInstance\0")?;
        Some((gipa, create))
    }) else {
        eprintln!("steadyhud: vkCreateInstance without a loader link; failing");
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let r = create(info, alloc, out);
    if r != vk::Result::SUCCESS {
        return r;
    }
    guard::contain((), || {
        let instance = *out;
        super::config();
        let ash = ash::Instance::load_with(
            |name| match gipa(instance, name.as_ptr()) {
                Some(f) => f as *const std::ffi::c_void,
                None => std::ptr::null(),
            },
            instance,
        );
        let data = Arc::new(InstanceData { handle: instance, next_gipa: gipa, ash });
        INSTANCES.write().unwrap_or_else(|e| e.into_inner()).insert(dispatch_key(instance), data);
    });
    r
}

pub(crate) unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    alloc: *const vk::AllocationCallbacks,
) {
    if instance == vk::Instance::null() {
        return;
    }
    let key = dispatch_key(instance);
    let Some(data) = guard::contain(None, || find_instance(key)) else {
        return; // not ours: nothing we could forward to
    };
    let last = guard::contain(false, || {
        let mut map = INSTANCES.write().unwrap_or_else(|e| e.into_inner());
        map.remove(&key);
        map.is_empty()
    });
    if last {
        // The loader dlcloses us right after this call: no thread may outlive it.
        guard::contain((), super::analysis::shutdown);
    }
    (data.ash.fp_v1_0().destroy_instance)(instance, alloc);
}
