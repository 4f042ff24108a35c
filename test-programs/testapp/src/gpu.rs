//! Vulkan instance and device: the loader is loaded at run time
//! (`ash::Entry::load`), so implicit layers such as steadyhud and validation
//! are picked up exactly as for any other Vulkan application.

use std::sync::Mutex;
use steadyhud_sys::lock::Recover;

use ash::{khr, vk};

use raw_window_handle::{RawDisplayHandle, RawWindowHandle};

use crate::error::{Error, VkContext};

/// The instance and the surface extension functions.
pub struct Instance {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub surface_fn: khr::surface::Instance,
}

impl Instance {
    /// An instance with the surface extensions of `display` (Xlib or
    /// Wayland: `VK_KHR_xlib_surface` or `VK_KHR_wayland_surface`).
    pub fn new(display: RawDisplayHandle) -> Result<Instance, Error> {
        // SAFETY: loading the system Vulkan loader; it stays loaded while `entry` lives.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| Error::Loader(e.to_string()))?;
        let extensions = ash_window::enumerate_required_extensions(display)
            .ctx("listing the surface extensions for the window system")?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"steadyhud-testapp")
            .application_version(1)
            .engine_name(c"steadyhud-testapp")
            .api_version(vk::API_VERSION_1_1);
        let info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_extension_names(extensions);
        // SAFETY: valid create info; extensions come from ash-window.
        let instance = unsafe { entry.create_instance(&info, None) }.ctx("vkCreateInstance")?;
        let surface_fn = khr::surface::Instance::new(&entry, &instance);
        Ok(Instance {
            entry,
            instance,
            surface_fn,
        })
    }

    /// Creates a surface for `window` (an X window, or a `wl_surface`).
    pub fn create_surface(
        &self,
        display: RawDisplayHandle,
        window: RawWindowHandle,
    ) -> Result<vk::SurfaceKHR, Error> {
        let what = match window {
            RawWindowHandle::Wayland(_) => "vkCreateWaylandSurfaceKHR",
            _ => "vkCreateXlibSurfaceKHR",
        };
        // SAFETY: the display and window outlive the surface (destroyed first in main).
        unsafe { ash_window::create_surface(&self.entry, &self.instance, display, window, None) }
            .ctx(what)
    }

    pub fn destroy_surface(&self, surface: vk::SurfaceKHR) {
        // SAFETY: the swapchain using it is already destroyed.
        unsafe { self.surface_fn.destroy_surface(surface, None) };
    }

    /// Destroys the instance; everything created from it must be gone.
    pub fn destroy(self) {
        // SAFETY: see above.
        unsafe { self.instance.destroy_instance(None) };
    }
}

/// The logical device with one graphics+present queue.
pub struct Gpu {
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub family: u32,
    /// vkQueueSubmit/vkQueuePresentKHR need external synchronisation of the
    /// queue: the `--threads` mode shares it behind this lock.
    pub queue: Mutex<vk::Queue>,
    pub swapchain_fn: khr::swapchain::Device,
    pub device_name: String,
    /// Property flags of each memory type, by index.
    pub memory_types: Vec<vk::MemoryPropertyFlags>,
}

impl Gpu {
    /// Picks the first device with a queue family that can draw and present
    /// to every surface.
    pub fn new(inst: &Instance, surfaces: &[vk::SurfaceKHR]) -> Result<Gpu, Error> {
        // SAFETY: plain queries on a live instance.
        let physicals = unsafe { inst.instance.enumerate_physical_devices() }
            .ctx("vkEnumeratePhysicalDevices")?;
        let mut chosen = None;
        'devices: for &pd in &physicals {
            let families = unsafe {
                inst.instance
                    .get_physical_device_queue_family_properties(pd)
            };
            for (i, fam) in families.iter().enumerate() {
                if !fam.queue_flags.contains(vk::QueueFlags::GRAPHICS) {
                    continue;
                }
                let mut all = true;
                for &s in surfaces {
                    let ok = unsafe {
                        inst.surface_fn
                            .get_physical_device_surface_support(pd, i as u32, s)
                    }
                    .ctx("vkGetPhysicalDeviceSurfaceSupportKHR")?;
                    all &= ok;
                }
                if all {
                    chosen = Some((pd, i as u32));
                    break 'devices;
                }
            }
        }
        let (physical, family) = chosen.ok_or_else(|| {
            Error::Unsupported(format!(
                "none of the {} Vulkan device(s) has a graphics queue that can present to the window(s)",
                physicals.len()
            ))
        })?;
        let props = unsafe { inst.instance.get_physical_device_properties(physical) };
        let device_name = props
            .device_name_as_c_str()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let extensions = [khr::swapchain::NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions);
        // SAFETY: valid create info for a device we enumerated.
        let device =
            unsafe { inst.instance.create_device(physical, &info, None) }.ctx("vkCreateDevice")?;
        let queue = unsafe { device.get_device_queue(family, 0) };
        let swapchain_fn = khr::swapchain::Device::new(&inst.instance, &device);
        let mem = unsafe {
            inst.instance
                .get_physical_device_memory_properties(physical)
        };
        let memory_types = mem
            .memory_types_as_slice()
            .iter()
            .map(|t| t.property_flags)
            .collect();
        Ok(Gpu {
            physical,
            device,
            family,
            queue: Mutex::new(queue),
            swapchain_fn,
            device_name,
            memory_types,
        })
    }

    /// A memory type allowed by `bits`, device-local if there is one;
    /// `what` names the resource in the error.
    pub fn pick_memory(&self, bits: u32, what: &str) -> Result<u32, Error> {
        let allowed = |i: usize| bits & (1 << i) != 0;
        let types = &self.memory_types;
        (0..types.len())
            .find(|&i| allowed(i) && types[i].contains(vk::MemoryPropertyFlags::DEVICE_LOCAL))
            .or_else(|| (0..types.len()).find(|&i| allowed(i)))
            .map(|i| i as u32)
            .ok_or_else(|| Error::Unsupported(format!("no memory type for {what}")))
    }

    pub fn wait_idle(&self) -> Result<(), Error> {
        // Hold the queue lock: vkDeviceWaitIdle needs every queue externally synchronised.
        let _q = self.queue.lock_or_recover();
        // SAFETY: live device.
        unsafe { self.device.device_wait_idle() }.ctx("vkDeviceWaitIdle")
    }

    /// Destroys the device; every child object (swapchains, the
    /// `--gpu-work` load, ...) must be gone.
    pub fn destroy(self) {
        // SAFETY: see above.
        unsafe { self.device.destroy_device(None) };
    }
}
