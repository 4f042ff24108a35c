//! The next layer's functions: one table per object (instance, device),
//! each declared once below as a list of (field, Vulkan name, type) and
//! filled by the one routine the declaration generates, which asks the
//! object's own `vkGet*ProcAddr` of the next layer. Every function the
//! layer forwards to or calls itself on that object is a field here; a
//! function the next layer lacks is `None`.

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
            $( $field:ident: $pfn:ident = $vk:literal $(or $alias:literal)?, )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default)]
        pub struct $name {
            $( #[doc = stringify!($vk)] pub $field: Option<vk::$pfn>, )*
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
        destroy_surface: PFN_vkDestroySurfaceKHR = c"vkDestroySurfaceKHR",
        create_wayland_surface: PFN_vkCreateWaylandSurfaceKHR = c"vkCreateWaylandSurfaceKHR",
        surface_caps: PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR =
            c"vkGetPhysicalDeviceSurfaceCapabilitiesKHR",
        surface_caps2: PFN_vkGetPhysicalDeviceSurfaceCapabilities2KHR =
            c"vkGetPhysicalDeviceSurfaceCapabilities2KHR",
    }
}

next_table! {
    /// The next layer's device-level functions the layer forwards to (its
    /// hooks, counted or not) or calls itself.
    pub struct DeviceNext {
        destroy_device: PFN_vkDestroyDevice = c"vkDestroyDevice",
        get_device_queue: PFN_vkGetDeviceQueue = c"vkGetDeviceQueue",
        allocate_command_buffers: PFN_vkAllocateCommandBuffers = c"vkAllocateCommandBuffers",
        create_swapchain: PFN_vkCreateSwapchainKHR = c"vkCreateSwapchainKHR",
        create_shared_swapchains: PFN_vkCreateSharedSwapchainsKHR = c"vkCreateSharedSwapchainsKHR",
        destroy_swapchain: PFN_vkDestroySwapchainKHR = c"vkDestroySwapchainKHR",
        get_swapchain_images: PFN_vkGetSwapchainImagesKHR = c"vkGetSwapchainImagesKHR",
        queue_present: PFN_vkQueuePresentKHR = c"vkQueuePresentKHR",
        queue_submit: PFN_vkQueueSubmit = c"vkQueueSubmit",
        queue_submit2: PFN_vkQueueSubmit2 = c"vkQueueSubmit2" or c"vkQueueSubmit2KHR",
        create_graphics_pipelines: PFN_vkCreateGraphicsPipelines = c"vkCreateGraphicsPipelines",
        create_compute_pipelines: PFN_vkCreateComputePipelines = c"vkCreateComputePipelines",
        allocate_memory: PFN_vkAllocateMemory = c"vkAllocateMemory",
        acquire_next_image: PFN_vkAcquireNextImageKHR = c"vkAcquireNextImageKHR",
        acquire_next_image2: PFN_vkAcquireNextImage2KHR = c"vkAcquireNextImage2KHR",
        set_latency_marker: PFN_vkSetLatencyMarkerNV = c"vkSetLatencyMarkerNV",
        get_calibrated_timestamps: PFN_vkGetCalibratedTimestampsKHR =
            c"vkGetCalibratedTimestampsEXT" or c"vkGetCalibratedTimestampsKHR",
    }
}
