//! Device hooks: create the device through the next layer, fetch and
//! register the app's queues, pick a graphics queue for the HUD, and build
//! the `ash::Device` the HUD uses (whose `vkAllocateCommandBuffers` registers
//! every new command buffer with the loader).

use super::capture::Stream;
use super::swapchain::SwapchainState;
use super::{dispatch_key, find_device, find_instance, guard, loader, DEVICES};
use crate::hud::HudDevice;
use ash::vk;
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex, RwLock};

/// Next-layer entry points the hooks forward to.
pub struct DeviceFns {
    pub destroy_device: vk::PFN_vkDestroyDevice,
    pub create_swapchain: Option<vk::PFN_vkCreateSwapchainKHR>,
    pub destroy_swapchain: Option<vk::PFN_vkDestroySwapchainKHR>,
    pub get_swapchain_images: Option<vk::PFN_vkGetSwapchainImagesKHR>,
    pub queue_present: Option<vk::PFN_vkQueuePresentKHR>,
    pub allocate_command_buffers: vk::PFN_vkAllocateCommandBuffers,
}

/// What the layer keeps per `VkDevice`.
pub struct DeviceData {
    pub key: usize,
    pub handle: vk::Device,
    pub physical_device: vk::PhysicalDevice,
    pub next_gdpa: vk::PFN_vkGetDeviceProcAddr,
    pub fns: DeviceFns,
    pub set_loader_data: Option<loader::PfnSetDeviceLoaderData>,
    /// Instance functions of the next layer.
    pub instance: ash::Instance,
    /// Device functions of the next layer, for the HUD; command buffer
    /// allocation goes through [`hud_allocate_command_buffers`].
    pub hud_device: ash::Device,
    /// Every queue the app created (flags 0), with its family.
    pub queues: Vec<(vk::Queue, u32)>,
    /// The queue the HUD submits to (graphics-capable), if any.
    pub graphics: Option<(vk::Queue, u32)>,
    /// Live swapchains. Present takes the read lock; only create/destroy write.
    pub swapchains: RwLock<HashMap<vk::SwapchainKHR, Arc<SwapchainState>>>,
    /// One capture stream per surface, shared by its successive swapchains.
    pub streams: Mutex<HashMap<vk::SurfaceKHR, Arc<Stream>>>,
    /// Statistics counters (`None` with config `counters=0`).
    pub counters: Option<super::counted::DeviceCounters>,
}

impl DeviceData {
    /// The view of this device the HUD gets.
    pub fn hud(&self) -> Option<HudDevice<'_>> {
        let (q, family) = self.graphics?;
        Some(HudDevice {
            instance: &self.instance,
            device: &self.hud_device,
            physical_device: self.physical_device,
            graphics_queue: q,
            graphics_family: family,
        })
    }

    /// The HUD view for a present on `queue`: when that queue is in the HUD's
    /// (graphics) family the HUD submits right there, on the queue the app
    /// is presenting on and thus not using from another thread.
    pub fn hud_for_present(&self, queue: vk::Queue) -> Option<HudDevice<'_>> {
        let mut hd = self.hud()?;
        if self.queues.iter().any(|&(q, f)| q == queue && f == hd.graphics_family) {
            hd.graphics_queue = queue;
        }
        Some(hd)
    }

    /// Family of a queue the app created (the HUD's family when unknown).
    pub fn family_of(&self, queue: vk::Queue) -> u32 {
        self.queues
            .iter()
            .find(|(q, _)| *q == queue)
            .map(|(_, f)| *f)
            .or(self.graphics.map(|(_, f)| f))
            .unwrap_or(0)
    }
}

unsafe fn gdpa_fn<F>(gdpa: vk::PFN_vkGetDeviceProcAddr, device: vk::Device, name: &[u8]) -> Option<F> {
    let f = gdpa(device, name.as_ptr() as *const c_char)?;
    Some(std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&f))
}

/// `vkAllocateCommandBuffers` as the HUD sees it: the real call, then each
/// new command buffer gets the loader's dispatch table.
unsafe extern "system" fn hud_allocate_command_buffers(
    device: vk::Device,
    info: *const vk::CommandBufferAllocateInfo,
    out: *mut vk::CommandBuffer,
) -> vk::Result {
    let Some(dev) = guard::contain(None, || find_device(dispatch_key(device))) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let r = (dev.fns.allocate_command_buffers)(device, info, out);
    if r == vk::Result::SUCCESS {
        if let Some(set) = dev.set_loader_data {
            for i in 0..(*info).command_buffer_count as usize {
                let cb = *out.add(i);
                let rr = set(device, vk::Handle::as_raw(cb) as *mut c_void);
                if rr != vk::Result::SUCCESS {
                    return rr;
                }
            }
        }
    }
    r
}

pub(crate) unsafe extern "system" fn create_device(
    physical_device: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Device,
) -> vk::Result {
    let linked = guard::contain(None, || {
        let inst = find_instance(dispatch_key(physical_device)).or_else(super::only_instance)?;
        let (gipa, gdpa) = loader::take_device_link(&*info)?;
        let create: vk::PFN_vkCreateDevice =
            std::mem::transmute_copy(&gipa(inst.handle, c"vkCreateDevice".as_ptr())?);
        Some((inst, gdpa, create))
    });
    let Some((inst, gdpa, create)) = linked else {
        eprintln!("steadyhud: vkCreateDevice without instance data or loader link; failing");
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let r = create(physical_device, info, alloc, out);
    if r != vk::Result::SUCCESS {
        return r;
    }
    let device = *out;
    let ok = guard::contain(false, || {
        let Some(data) = setup_device(&inst, physical_device, &*info, gdpa, device) else {
            return false;
        };
        DEVICES.write().unwrap_or_else(|e| e.into_inner()).insert(data.key, Arc::new(data));
        true
    });
    if !ok {
        // Without our device record we cannot forward its calls: fail cleanly.
        if let Some(destroy) = gdpa_fn::<vk::PFN_vkDestroyDevice>(gdpa, device, b"vkDestroyDevice\0") {
            destroy(device, alloc);
        }
        eprintln!("steadyhud: device setup failed; vkCreateDevice fails");
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    r
}

unsafe fn setup_device(
    inst: &super::InstanceData,
    physical_device: vk::PhysicalDevice,
    info: &vk::DeviceCreateInfo,
    gdpa: vk::PFN_vkGetDeviceProcAddr,
    device: vk::Device,
) -> Option<DeviceData> {
    let set_loader_data = loader::device_loader_data_callback(info);
    let fns = DeviceFns {
        destroy_device: gdpa_fn(gdpa, device, b"vkDestroyDevice\0")?,
        create_swapchain: gdpa_fn(gdpa, device, b"vkCreateSwapchainKHR\0"),
        destroy_swapchain: gdpa_fn(gdpa, device, b"vkDestroySwapchainKHR\0"),
        get_swapchain_images: gdpa_fn(gdpa, device, b"vkGetSwapchainImagesKHR\0"),
        queue_present: gdpa_fn(gdpa, device, b"vkQueuePresentKHR\0"),
        allocate_command_buffers: gdpa_fn(gdpa, device, b"vkAllocateCommandBuffers\0")?,
    };
    let get_queue: vk::PFN_vkGetDeviceQueue = gdpa_fn(gdpa, device, b"vkGetDeviceQueue\0")?;

    let families = inst.ash.get_physical_device_queue_family_properties(physical_device);
    let mut queues = Vec::new();
    let qinfos: &[vk::DeviceQueueCreateInfo] = if info.queue_create_info_count == 0 || info.p_queue_create_infos.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(info.p_queue_create_infos, info.queue_create_info_count as usize)
    };
    for qi in qinfos {
        if !qi.flags.is_empty() {
            continue; // protected queues need vkGetDeviceQueue2; the HUD never uses them
        }
        for i in 0..qi.queue_count {
            let mut q = vk::Queue::null();
            get_queue(device, qi.queue_family_index, i, &mut q);
            if q == vk::Queue::null() {
                continue;
            }
            if let Some(set) = set_loader_data {
                if set(device, vk::Handle::as_raw(q) as *mut c_void) != vk::Result::SUCCESS {
                    continue;
                }
            }
            queues.push((q, qi.queue_family_index));
        }
    }
    let graphics = queues.iter().copied().find(|(_, f)| {
        families
            .get(*f as usize)
            .is_some_and(|p| p.queue_flags.contains(vk::QueueFlags::GRAPHICS))
    });

    let hud_device = ash::Device::load_with(
        |name| {
            if name.to_bytes() == b"vkAllocateCommandBuffers" {
                hud_allocate_command_buffers as *const c_void
            } else {
                match gdpa(device, name.as_ptr()) {
                    Some(f) => f as *const c_void,
                    None => std::ptr::null(),
                }
            }
        },
        device,
    );
    Some(DeviceData {
        key: dispatch_key(device),
        handle: device,
        physical_device,
        next_gdpa: gdpa,
        fns,
        set_loader_data,
        instance: inst.ash.clone(),
        hud_device,
        queues,
        graphics,
        swapchains: RwLock::new(HashMap::new()),
        streams: Mutex::new(HashMap::new()),
        counters: super::counted::DeviceCounters::new(gdpa, device),
    })
}

pub(crate) unsafe extern "system" fn destroy_device(device: vk::Device, alloc: *const vk::AllocationCallbacks) {
    if device == vk::Device::null() {
        return;
    }
    let key = dispatch_key(device);
    let Some(dev) = guard::contain(None, || DEVICES.write().unwrap_or_else(|e| e.into_inner()).remove(&key)) else {
        return;
    };
    guard::contain((), || {
        // Swapchains the app forgot: free their HUDs while the device lives.
        let left: Vec<_> = dev.swapchains.write().unwrap_or_else(|e| e.into_inner()).drain().collect();
        for (_, sc) in left {
            sc.destroy_hud(&dev);
        }
        dev.streams.lock().unwrap_or_else(|e| e.into_inner()).clear();
        super::analysis::finish_device(key);
    });
    (dev.fns.destroy_device)(device, alloc);
}
