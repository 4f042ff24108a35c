//! Vulkan instance and device: the loader is loaded at run time
//! (`ash::Entry::load`), so implicit layers such as steadyhud and validation
//! are picked up exactly as for any other Vulkan application.

use std::sync::Mutex;
use steadyhud_sys::lock::Recover;

use ash::{khr, vk};

use raw_window_handle::{RawDisplayHandle, RawWindowHandle};

use crate::error::{Error, VkContext};

/// `VK_AMD_anti_lag`'s structures, the layer's own declaration of them.
#[path = "../../../src/layer/anti_lag.rs"]
#[allow(dead_code)]
pub mod anti_lag;

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
    /// `vkAntiLagUpdateAMD` of the device, with `--anti-lag`.
    pub anti_lag: Option<anti_lag::PfnAntiLagUpdate>,
}

impl Gpu {
    /// Picks the first device with a queue family that can draw and present
    /// to every surface.
    /// With `anti_lag`, the device enables `VK_AMD_anti_lag` (an error
    /// where it is not offered).
    pub fn new(inst: &Instance, surfaces: &[vk::SurfaceKHR], anti_lag: bool) -> Result<Gpu, Error> {
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
        const ANTI_LAG: &std::ffi::CStr = c"VK_AMD_anti_lag";
        if anti_lag {
            // SAFETY: a plain query on a live physical device.
            let offered = unsafe {
                inst.instance
                    .enumerate_device_extension_properties(physical)
            }
            .ctx("vkEnumerateDeviceExtensionProperties")?;
            if !offered
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(ANTI_LAG))
            {
                return Err(Error::Unsupported(format!(
                    "--anti-lag: {device_name} offers no VK_AMD_anti_lag (Mesa's anti-lag layer: ENABLE_LAYER_MESA_ANTI_LAG=1)"
                )));
            }
        }
        let mut extensions = vec![khr::swapchain::NAME.as_ptr()];
        // `VkPhysicalDeviceAntiLagFeaturesAMD` { antiLag: VK_TRUE }.
        #[repr(C)]
        struct AntiLagFeatures {
            s_type: vk::StructureType,
            p_next: *mut std::ffi::c_void,
            anti_lag: vk::Bool32,
        }
        let mut features = AntiLagFeatures {
            s_type: vk::StructureType::from_raw(1_000_476_000),
            p_next: std::ptr::null_mut(),
            anti_lag: vk::TRUE,
        };
        let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
        if anti_lag {
            extensions.push(ANTI_LAG.as_ptr());
            info.p_next = (&mut features as *mut AntiLagFeatures).cast();
        }
        let info = info.enabled_extension_names(&extensions);
        // SAFETY: valid create info for a device we enumerated (the
        // features struct outlives the call).
        let device =
            unsafe { inst.instance.create_device(physical, &info, None) }.ctx("vkCreateDevice")?;
        let anti_lag = if anti_lag {
            // SAFETY: the live device enabled the extension.
            let f = unsafe {
                (inst.instance.fp_v1_0().get_device_proc_addr)(
                    device.handle(),
                    c"vkAntiLagUpdateAMD".as_ptr(),
                )
            }
            .ok_or_else(|| Error::Unsupported("--anti-lag: no vkAntiLagUpdateAMD".into()))?;
            // SAFETY: the function of that name has this type.
            Some(unsafe {
                std::mem::transmute::<unsafe extern "system" fn(), anti_lag::PfnAntiLagUpdate>(f)
            })
        } else {
            None
        };
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
            anti_lag,
        })
    }

    /// `vkAntiLagUpdateAMD` for frame `frame` at `stage` (0: input, 1:
    /// present), with anti-lag on; nothing without `--anti-lag`.
    pub fn anti_lag(&self, stage: i32, frame: u64) {
        let Some(update) = self.anti_lag else {
            return;
        };
        let info = anti_lag::AntiLagPresentationInfo {
            s_type: anti_lag::ANTI_LAG_PRESENTATION_INFO,
            p_next: std::ptr::null_mut(),
            stage,
            frame_index: frame,
        };
        let data = anti_lag::AntiLagData {
            s_type: anti_lag::ANTI_LAG_DATA,
            p_next: std::ptr::null(),
            mode: 1,
            max_fps: 0,
            presentation_info: &info,
        };
        // SAFETY: the device's function, with valid structures.
        unsafe { update(self.device.handle(), &data) };
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
