//! The next layer's functions: one table per object (instance, device),
//! each filled by one lookup pass of the object's own `vkGet*ProcAddr` of
//! the next layer. The instance's and a device's optional functions are
//! declared once below as lists of (field, Vulkan name, type), which
//! generate their `load`; a device's Vulkan 1.0 functions are ash's core
//! table, loaded in the same pass ([`DeviceNext`]). A function the next
//! layer lacks is `None`.

use super::loader::next_fn;
use ash::vk;
use std::ffi::c_char;

/// Declares a table of next-layer functions and its `load`: each field is
/// looked up by its Vulkan name (then by its alias, if given) and cast to
/// its `PFN_` type.
macro_rules! next_table {
    (
        $(#[$doc:meta])*
        pub struct $name:ident {
            $( $field:ident: $pfn:ty = $vk:literal $(or $alias:literal)?, )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default)]
        pub struct $name {
            $( #[doc = stringify!($vk)] pub $field: Option<$pfn>, )*
        }

        impl $name {
            /// Every function of the table from `get`.
            ///
            /// # Safety
            /// `get` is the next layer's `vkGet*ProcAddr` bound to a live
            /// object of the table's level; it is called only with
            /// NUL-terminated names.
            pub unsafe fn load(get: impl Fn(*const c_char) -> vk::PFN_vkVoidFunction) -> $name {
                // SAFETY: each name is looked up on the live object (caller)
                // and cast to the `PFN_` type Vulkan gives that name (an
                // alias has the type of the function it aliases).
                unsafe {
                    $name {
                        $( $field: next_fn(&get, $vk) $( .or_else(|| next_fn(&get, $alias)) )?, )*
                    }
                }
            }
        }
    };
}

next_table! {
    /// The next layer's instance-level functions the layer uses.
    pub struct InstanceNext {
        destroy_surface: vk::PFN_vkDestroySurfaceKHR = c"vkDestroySurfaceKHR",
        create_wayland_surface: vk::PFN_vkCreateWaylandSurfaceKHR = c"vkCreateWaylandSurfaceKHR",
        create_xlib_surface: vk::PFN_vkCreateXlibSurfaceKHR = c"vkCreateXlibSurfaceKHR",
        create_xcb_surface: vk::PFN_vkCreateXcbSurfaceKHR = c"vkCreateXcbSurfaceKHR",
        surface_caps: vk::PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR =
            c"vkGetPhysicalDeviceSurfaceCapabilitiesKHR",
        surface_caps2: vk::PFN_vkGetPhysicalDeviceSurfaceCapabilities2KHR =
            c"vkGetPhysicalDeviceSurfaceCapabilities2KHR",
    }
}

next_table! {
    /// The next layer's device functions the core table lacks: extensions,
    /// and versions the device may not have (each `None` where the next
    /// layer has no such function).
    pub struct DeviceExt {
        create_swapchain: vk::PFN_vkCreateSwapchainKHR = c"vkCreateSwapchainKHR",
        create_shared_swapchains: vk::PFN_vkCreateSharedSwapchainsKHR = c"vkCreateSharedSwapchainsKHR",
        destroy_swapchain: vk::PFN_vkDestroySwapchainKHR = c"vkDestroySwapchainKHR",
        get_swapchain_images: vk::PFN_vkGetSwapchainImagesKHR = c"vkGetSwapchainImagesKHR",
        queue_present: vk::PFN_vkQueuePresentKHR = c"vkQueuePresentKHR",
        queue_submit2: vk::PFN_vkQueueSubmit2 = c"vkQueueSubmit2" or c"vkQueueSubmit2KHR",
        acquire_next_image: vk::PFN_vkAcquireNextImageKHR = c"vkAcquireNextImageKHR",
        acquire_next_image2: vk::PFN_vkAcquireNextImage2KHR = c"vkAcquireNextImage2KHR",
        set_latency_marker: vk::PFN_vkSetLatencyMarkerNV = c"vkSetLatencyMarkerNV",
        anti_lag_update: super::anti_lag::PfnAntiLagUpdate = c"vkAntiLagUpdateAMD",
        get_calibrated_timestamps: vk::PFN_vkGetCalibratedTimestampsKHR =
            c"vkGetCalibratedTimestampsEXT" or c"vkGetCalibratedTimestampsKHR",
    }
}

/// The device's one table of the next layer's functions, filled by one
/// lookup pass ([`DeviceNext::load`]): the hooks forward through it, the
/// HUD draws and GPU timing times through it.
pub struct DeviceNext {
    /// Vulkan 1.0's functions (every device has them), as ash's table,
    /// which the HUD and GPU timing call through; its
    /// `vkAllocateCommandBuffers` is the layer's own wrapper, which gives
    /// each new command buffer the loader's dispatch pointer (layers below
    /// would crash on it otherwise).
    pub core: ash::Device,
    /// The next layer's own `vkAllocateCommandBuffers` (what the wrapper
    /// calls).
    pub allocate_command_buffers: vk::PFN_vkAllocateCommandBuffers,
    /// Extensions and later versions.
    pub ext: DeviceExt,
}

impl DeviceNext {
    /// The table of `device` from the next layer's `get` (its gdpa bound to
    /// the device), with `wrapper` as the core table's
    /// `vkAllocateCommandBuffers`; `None` when the next layer lacks a
    /// function the layer cannot do without (`vkDestroyDevice`,
    /// `vkGetDeviceQueue`, `vkAllocateCommandBuffers`).
    ///
    /// # Safety
    /// `get` is the next layer's `vkGetDeviceProcAddr` bound to the live
    /// `device`, called only with NUL-terminated names; `wrapper` is a
    /// `PFN_vkAllocateCommandBuffers` of this layer's.
    pub unsafe fn load(
        get: impl Fn(*const c_char) -> vk::PFN_vkVoidFunction,
        device: vk::Device,
        wrapper: vk::PFN_vkAllocateCommandBuffers,
    ) -> Option<DeviceNext> {
        // SAFETY: looked up on the live device (caller), cast to the type
        // Vulkan gives each name.
        let (allocate, _, _): (
            vk::PFN_vkAllocateCommandBuffers,
            vk::PFN_vkDestroyDevice,
            vk::PFN_vkGetDeviceQueue,
        ) = unsafe {
            (
                next_fn(&get, c"vkAllocateCommandBuffers")?,
                next_fn(&get, c"vkDestroyDevice")?,
                next_fn(&get, c"vkGetDeviceQueue")?,
            )
        };
        // SAFETY: every pointer is the next layer's for the live device,
        // or null where it has none, except `vkAllocateCommandBuffers`:
        // the caller's wrapper, of the same type.
        let core = unsafe {
            ash::Device::load_with(
                |name| {
                    if name.to_bytes() == b"vkAllocateCommandBuffers" {
                        wrapper as *const std::ffi::c_void
                    } else {
                        get(name.as_ptr())
                            .map_or(std::ptr::null(), |f| f as *const std::ffi::c_void)
                    }
                },
                device,
            )
        };
        Some(DeviceNext {
            core,
            allocate_command_buffers: allocate,
            // SAFETY: as above.
            ext: unsafe { DeviceExt::load(get) },
        })
    }
}
