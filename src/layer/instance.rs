//! What the layer keeps per `VkInstance`: the link to the next layer and
//! the instance extensions that change what the layer may ask of it.

use super::loader::extension_names;
use super::next::InstanceNext;
use ash::vk;

/// Instance extensions the app enabled that the layer uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstanceExtensions {
    /// `VK_KHR_get_surface_capabilities2`: lets the layer read a shared
    /// present surface's allowed usage.
    pub surface_capabilities2: bool,
    /// The app asked for Vulkan 1.1 or later: the layer may call
    /// `vkGetPhysicalDeviceProperties2` (for `VK_EXT_pci_bus_info`).
    pub properties2: bool,
}

/// One `VkInstance` of the app's.
pub struct Instance {
    pub handle: vk::Instance,
    /// The next layer's `vkGetInstanceProcAddr`.
    pub next_gipa: vk::PFN_vkGetInstanceProcAddr,
    /// Instance functions of the next layer (device setup, the HUD).
    pub ash: ash::Instance,
    pub ext: InstanceExtensions,
    /// The next layer's instance-level functions the layer forwards to or
    /// calls (`vkCreateWaylandSurfaceKHR` is hooked to record the surface's
    /// `wl_display` for the Wayland hotkeys).
    pub next: InstanceNext,
}

impl Instance {
    /// The record of an instance the next layer just created from `info`.
    ///
    /// # Safety
    /// `gipa` and `instance` are the next layer's live pair; `info` is the
    /// app's create info.
    pub unsafe fn new(
        info: &vk::InstanceCreateInfo,
        gipa: vk::PFN_vkGetInstanceProcAddr,
        instance: vk::Instance,
    ) -> Instance {
        // SAFETY: every pointer comes from the next layer's gipa of the live
        // `instance` (caller's contract), looked up by its own name.
        let ash = unsafe {
            ash::Instance::load_with(
                |name| {
                    gipa(instance, name.as_ptr())
                        .map_or(std::ptr::null(), |f| f as *const std::ffi::c_void)
                },
                instance,
            )
        };
        // SAFETY: the app's create info.
        let mut names = unsafe {
            extension_names(
                info.pp_enabled_extension_names,
                info.enabled_extension_count,
            )
        };
        Instance {
            handle: instance,
            next_gipa: gipa,
            ash,
            ext: InstanceExtensions {
                surface_capabilities2: names.any(|n| n == b"VK_KHR_get_surface_capabilities2"),
                // SAFETY: the app's create info: its application info, when
                // not null, is valid.
                properties2: unsafe { info.p_application_info.as_ref() }
                    .is_some_and(|a| a.api_version >= vk::API_VERSION_1_1),
            },
            // SAFETY: the next layer's gipa of the live `instance`.
            next: unsafe { InstanceNext::load(|n| gipa(instance, n)) },
        }
    }
}
