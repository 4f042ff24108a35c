//! What the layer keeps per `VkDevice`: its queues (and what the layer may
//! do on each, [`super::queue`]), its swapchains, their capture streams
//! ([`super::lineage`]), the HUD resources shared by its swapchains
//! ([`HudCache`]) and its statistics counters; and the swapchain calls.
//! The present path is in [`super::present`].
//!
//! No queue is touched here: the HUD of a new swapchain creates its
//! pipelines, images and buffers without one, and uploads and draws for the
//! first time inside a present, on the present queue.

use super::counters::DeviceCounters;
use super::display_observe::{ObserveNext, Observed};
use super::display_timing::Method;
use super::gpu_timing::GpuTimer;
use super::handles::HandleMap;
use super::instance::Instance;
use super::lineage::Lineage;
use super::loader;
use super::next::DeviceNext;
use super::queue::QueueInfo;
use super::swapchain::Swapchain;
use crate::guard;
use crate::hud::{self, HudCache, HudDevice, SwapchainHud};
use ash::vk;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use steadyhud_capture::analysis::StreamSpec;
use steadyhud_capture::client::Client;
use steadyhud_capture::rings::Stream;
use steadyhud_sys::clock::now_ns;
use steadyhud_sys::lock::Recover;

/// Device extensions the app enabled that decide which hooks exist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extensions {
    /// `VK_KHR_swapchain`: swapchain and present hooks.
    pub swapchain: bool,
    /// `VK_KHR_display_swapchain`: `vkCreateSharedSwapchainsKHR`.
    pub display_swapchain: bool,
}

impl Extensions {
    /// The extensions named in `info`.
    ///
    /// # Safety
    /// `info`'s extension names are valid C strings.
    pub unsafe fn of(info: &vk::DeviceCreateInfo) -> Extensions {
        let mut e = Extensions::default();
        // SAFETY: the app's names, per the caller.
        for name in unsafe {
            loader::extension_names(
                info.pp_enabled_extension_names,
                info.enabled_extension_count,
            )
        } {
            match name {
                b"VK_KHR_swapchain" => e.swapchain = true,
                b"VK_KHR_display_swapchain" => e.display_swapchain = true,
                _ => {}
            }
        }
        e
    }
}

/// One `VkDevice` of the app's.
pub struct Device {
    pub key: usize,
    pub handle: vk::Device,
    pub physical_device: vk::PhysicalDevice,
    pub next_gdpa: vk::PFN_vkGetDeviceProcAddr,
    pub next: DeviceNext,
    pub ext: Extensions,
    pub set_loader_data: Option<loader::PfnSetDeviceLoaderData>,
    /// Instance functions of the next layer.
    instance: ash::Instance,
    surface_caps: Option<vk::PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR>,
    surface_caps2: Option<vk::PFN_vkGetPhysicalDeviceSurfaceCapabilities2KHR>,
    /// Every queue the app created with flags 0.
    pub queues: Vec<QueueInfo>,
    /// Live swapchains by handle, read without a lock by their presents.
    swapchains: HandleMap<Swapchain>,
    lineage: Mutex<Lineage<Arc<Stream>>>,
    /// Statistics counters (`None` with config `counters=0`).
    pub counters: Option<DeviceCounters>,
    /// GPU timing of the app's submits (`None`: config `gpu_timing=0`, or
    /// `auto` on a CPU device, or `counters=0`, or no queue family with
    /// timestamps).
    pub gpu: Option<Arc<GpuTimer>>,
    pub hud_cache: HudCache,
    /// The process's client record (config, HUD switches, frame cap,
    /// display sources, analysis thread).
    pub client: &'static Client,
    /// Whether the "HUD off" line was printed for this device.
    hud_off_said: AtomicBool,
    /// The device's PCI address (`VK_EXT_pci_bus_info`), which picks the
    /// GPU the system readings read.
    pub pci: Option<steadyhud_sensors::PciBusId>,
    /// The display-timing method the app uses itself and the layer watches
    /// (config `display_timing`, [`super::display_observe`]).
    pub observe: Option<Method>,
    /// The next layer's display-timing queries the observer forwards to.
    pub observe_next: ObserveNext,
}

/// How a device is made (what `vkCreateDevice` hands the layer).
pub struct DeviceLink<'a> {
    pub instance: &'a Instance,
    pub physical_device: vk::PhysicalDevice,
    pub info: &'a vk::DeviceCreateInfo<'a>,
    pub gdpa: vk::PFN_vkGetDeviceProcAddr,
    pub device: vk::Device,
    /// Our `vkAllocateCommandBuffers` wrapper for the device's table.
    pub allocate_hook: vk::PFN_vkAllocateCommandBuffers,
    /// Whether the device has `VK_EXT_calibrated_timestamps` enabled.
    pub calibration: bool,
    /// Whether the device gets GPU timing ([`super::gpu_timing::wanted`];
    /// needs counters too).
    pub gpu_timing: bool,
    /// The consuming display-timing method the app enabled itself, when
    /// config `display_timing` is on (the plan's `Mode::Observe`).
    pub observe: Option<Method>,
}

impl Device {
    /// The record of a device the next layer just created.
    ///
    /// # Safety
    /// `link` describes a live device.
    pub unsafe fn new(link: DeviceLink, client: &'static Client) -> Option<Device> {
        let DeviceLink {
            instance: inst,
            physical_device,
            info,
            gdpa,
            device,
            allocate_hook,
            calibration,
            gpu_timing,
            observe,
        } = link;
        // SAFETY: the next layer's gdpa of the live `device` (caller's
        // contract), called only with NUL-terminated names; the hook is
        // our `vkAllocateCommandBuffers` wrapper. `None` without what the
        // layer cannot do without (destroy the device, register its
        // command buffers, fetch the app's queues).
        let next = unsafe { DeviceNext::load(|n| gdpa(device, n), device, allocate_hook) }?;
        let get_queue = next.core.fp_v1_0().get_device_queue;
        // SAFETY: `info` is the app's create info with the `pNext` chain the
        // loader built (caller's contract).
        let set_loader_data = unsafe { loader::device_loader_data_callback(info) };
        // SAFETY: the live device, its instance and physical device, its
        // create info, the next layer's gdpa and the loader's callback.
        let queues = unsafe {
            fetch_queues(
                inst,
                physical_device,
                info,
                get_queue,
                device,
                set_loader_data,
            )
        }?;
        let counters = if client.config.counters {
            DeviceCounters::new(
                next.ext.set_latency_marker.is_some(),
                next.ext.anti_lag_update.is_some(),
            )
        } else {
            None
        };
        let gpu = match counters.as_ref() {
            Some(dc) if gpu_timing => {
                let handles: Vec<(vk::Queue, u32)> =
                    queues.iter().map(|q| (q.handle, q.family)).collect();
                // Only when the extension was enabled on this device.
                let calibrate = next.ext.get_calibrated_timestamps.filter(|_| calibration);
                // SAFETY: live handles of this one device: its instance,
                // physical device, table and queues.
                unsafe {
                    gpu_timer(
                        &inst.ash,
                        physical_device,
                        &next.core,
                        calibrate,
                        &handles,
                        dc,
                    )
                }
            }
            _ => None,
        };
        Some(Device {
            // SAFETY: `device` is live (caller's contract).
            key: unsafe { super::handles::dispatch_key(device) },
            handle: device,
            physical_device,
            next_gdpa: gdpa,
            next,
            // SAFETY: the app's create info, its extension names valid C
            // strings (caller's contract).
            ext: unsafe { Extensions::of(info) },
            set_loader_data,
            instance: inst.ash.clone(),
            surface_caps: inst.next.surface_caps,
            // Only when the app enabled `VK_KHR_get_surface_capabilities2`.
            surface_caps2: inst
                .next
                .surface_caps2
                .filter(|_| inst.ext.surface_capabilities2),
            queues,
            swapchains: HandleMap::default(),
            lineage: Mutex::new(Lineage::default()),
            counters,
            gpu,
            hud_cache: HudCache::new(),
            client,
            hud_off_said: AtomicBool::new(false),
            // Only asked when readings are on and the instance is 1.1+.
            pci: (client.config.sensor_hz > 0 && inst.ext.properties2)
                .then(|| {
                    guard::contain(None, || {
                        // SAFETY: the live physical device of `inst`, an
                        // instance of Vulkan 1.1 or later.
                        unsafe { super::pci::pci_bus_of(&inst.ash, physical_device) }
                    })
                })
                .flatten(),
            observe,
            // SAFETY: the next layer's gdpa of the live `device`, as for
            // `next` above.
            observe_next: unsafe { ObserveNext::load(|n| gdpa(device, n)) },
        })
    }

    /// The device's GPU timer, as the capture core reads it.
    fn gpu_times(&self) -> Option<Arc<dyn steadyhud_capture::gpu_times::GpuTimes>> {
        self.gpu
            .clone()
            .map(|g| g as Arc<dyn steadyhud_capture::gpu_times::GpuTimes>)
    }

    /// The view of this device the HUD gets.
    pub fn hud(&self) -> HudDevice<'_> {
        HudDevice {
            instance: &self.instance,
            device: &self.next.core,
            physical_device: self.physical_device,
        }
    }

    /// The live swapchain `sc`, without a lock.
    ///
    /// # Safety
    /// Inside one of the app's calls on `sc` (a present): the app may not
    /// destroy it meanwhile, which keeps the record alive.
    #[inline]
    pub unsafe fn swapchain(&self, sc: vk::SwapchainKHR) -> Option<&Swapchain> {
        // SAFETY: the caller's contract is the map's.
        unsafe { self.swapchains.get(vk::Handle::as_raw(sc)) }
    }

    /// The layer's knowledge of the app's queue `q`.
    pub fn queue(&self, q: vk::Queue) -> Option<&QueueInfo> {
        self.queues.iter().find(|i| i.handle == q)
    }

    /// Prints, once per device, why the HUD is off somewhere.
    pub fn hud_off(&self, why: &str) {
        if !self.hud_off_said.swap(true, Ordering::Relaxed) {
            guard::say(format_args!(
                "steadyhud: HUD disabled: {why} (capture and log continue)"
            ));
        }
    }

    /// Adds the layer's own setup time (`t0` to now) to the device's
    /// `layer_setup_ms` counter, so a stutter it causes is named as the
    /// layer's, never blamed on the game.
    pub fn add_setup_time(&self, t0: u64) {
        if let Some(dc) = self.counters.as_ref() {
            dc.add(|b| b.layer_setup_ns, now_ns().saturating_sub(t0));
        }
    }

    /// `vkCreateSwapchainKHR`.
    ///
    /// # Safety
    /// The app's arguments, for this device.
    pub unsafe fn create_swapchain(
        &self,
        info: *const vk::SwapchainCreateInfoKHR,
        alloc: *const vk::AllocationCallbacks,
        out: *mut vk::SwapchainKHR,
    ) -> vk::Result {
        let Some(create) = self.next.ext.create_swapchain else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: `info` is the app's valid create info (caller's contract).
        let mut patched = unsafe { *info };
        // SAFETY: the app's create info, for this device.
        patched.image_usage =
            guard::contain(patched.image_usage, || unsafe { self.hud_usage(&patched) });
        // SAFETY: the next layer's `vkCreateSwapchainKHR` of this device,
        // called with the app's arguments; `patched` adds only usage the
        // surface supports.
        let r = unsafe { create(self.handle, &patched, alloc, out) };
        if r == vk::Result::SUCCESS {
            // SAFETY: on success `*out` is the new swapchain, made from `patched`.
            guard::contain((), || unsafe { self.on_created(&patched, *out) });
        }
        r
    }

    /// `vkCreateSharedSwapchainsKHR` (`VK_KHR_display_swapchain`): each
    /// swapchain is one of ours like any other, and its presents are logged.
    ///
    /// # Safety
    /// The app's arguments, for this device.
    pub unsafe fn create_shared_swapchains(
        &self,
        count: u32,
        infos: *const vk::SwapchainCreateInfoKHR,
        alloc: *const vk::AllocationCallbacks,
        out: *mut vk::SwapchainKHR,
    ) -> vk::Result {
        let Some(create) = self.next.ext.create_shared_swapchains else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let app: &[vk::SwapchainCreateInfoKHR] = if infos.is_null() {
            &[]
        } else {
            // SAFETY: the app's array of `count` create infos (caller's
            // contract).
            unsafe { std::slice::from_raw_parts(infos, count as usize) }
        };
        let patched: Vec<vk::SwapchainCreateInfoKHR> = guard::contain(app.to_vec(), || {
            app.iter()
                .map(|i| {
                    let mut p = *i;
                    // SAFETY: one of the app's create infos, for this device.
                    p.image_usage = unsafe { self.hud_usage(i) };
                    p
                })
                .collect()
        });
        // SAFETY: the next layer's `vkCreateSharedSwapchainsKHR` of this
        // device, called with the app's arguments; `patched` holds the app's
        // `count` create infos, each adding only usage its surface supports.
        let r = unsafe { create(self.handle, count, patched.as_ptr(), alloc, out) };
        if r == vk::Result::SUCCESS {
            for (k, info) in patched.iter().enumerate() {
                // SAFETY: on success `out` holds `count` new swapchains, the
                // `k`-th made from `patched[k]`.
                guard::contain((), || unsafe { self.on_created(info, *out.add(k)) });
            }
        }
        r
    }

    /// `vkDestroySwapchainKHR`.
    ///
    /// # Safety
    /// The app's arguments, for this device.
    pub unsafe fn destroy_swapchain(
        &self,
        swapchain: vk::SwapchainKHR,
        alloc: *const vk::AllocationCallbacks,
    ) {
        guard::contain((), || {
            let removed = self.swapchains.remove(vk::Handle::as_raw(swapchain));
            if let Some(sc) = removed {
                sc.destroy_hud(&self.hud(), &self.hud_cache);
                // The answers the game read since its last present reach
                // their rows (the display is live: its surface is).
                if sc.stream.has_display() {
                    self.client.display_pump(sc.surface);
                }
            }
            self.lineage
                .lock_or_recover()
                .swapchain_destroyed(swapchain);
        });
        if let Some(destroy) = self.next.ext.destroy_swapchain {
            // SAFETY: the next layer's `vkDestroySwapchainKHR` of this device,
            // called with the app's arguments once the HUD's objects of the
            // swapchain are freed.
            unsafe { destroy(self.handle, swapchain, alloc) };
        }
    }

    /// A surface of the device's instance was destroyed: its handle value
    /// no longer names a window.
    pub fn surface_destroyed(&self, surface: vk::SurfaceKHR) {
        self.lineage.lock_or_recover().surface_destroyed(surface);
    }

    /// Frees everything of the layer's before the real `vkDestroyDevice`,
    /// and ends the device's session logs.
    pub fn teardown(&self) {
        let dev = self.hud();
        let left = self.swapchains.drain();
        let mut freed = true;
        for sc in left {
            freed &= sc.destroy_hud(&dev, &self.hud_cache);
        }
        if freed {
            // SAFETY: every swapchain HUD using the cache is gone. This runs
            // inside vkDestroyDevice, where the app must own every queue of
            // the device: idling it is legal, and it is what guarantees (to
            // the driver and to validation) that no present still waits on a
            // spare present semaphore. An error (a lost device) leaves
            // nothing pending either.
            unsafe {
                if self.hud_cache.semaphores.spare_count() > 0 {
                    let _ = dev.device.device_wait_idle();
                }
                self.hud_cache.destroy(&dev)
            };
        }
        // else: a HUD leaked on a lost or hung device still uses the cache's
        // pipeline and font: leak those too rather than free them under it.
        self.lineage.lock_or_recover().clear();
        // Streams finish first: their last rows read the final GPU results.
        if let Some(gpu) = self.gpu.as_ref() {
            // SAFETY: inside vkDestroyDevice.
            unsafe { gpu.last_poll() };
        }
        self.client.analysis.finish_device(self.key);
        if let Some(gpu) = self.gpu.as_ref() {
            // SAFETY: inside vkDestroyDevice (the app's work is done).
            unsafe { gpu.destroy() };
        }
    }

    /// # Safety
    /// Inside the app's swapchain creation on this device: `sc` is the live
    /// swapchain the next layer just made from `info`, the app's create info
    /// valid per the Vulkan spec.
    unsafe fn on_created(&self, info: &vk::SwapchainCreateInfoKHR, sc: vk::SwapchainKHR) {
        let t0 = now_ns();
        let stream = {
            let mut lineage = self.lineage.lock_or_recover();
            let table = self.counters.as_ref().map(|dc| dc.table.clone());
            let (stream, recreation) = lineage.stream_for(info.old_swapchain, info.surface, || {
                // Displayed-frame timing where the surface is a Wayland
                // one (config `display_feedback`) or an X11 window
                // (`display_x11`) we follow (each records its surfaces
                // only when on), or the app's own display-timing queries
                // are watched (config `display_timing`).
                let raw = vk::Handle::as_raw(info.surface);
                self.client.new_stream(StreamSpec {
                    device_key: self.key,
                    counters: table,
                    gpu: self.gpu_times(),
                    pci: self.pci,
                    display: self.observe.is_some() || self.client.follows(raw),
                })
            });
            if recreation {
                if let Some(dc) = self.counters.as_ref() {
                    dc.add(|b| b.swapchain_recreations, 1);
                }
            }
            lineage.created(sc, info.surface, stream.clone());
            stream
        };
        // X11 Present: a new chain of serials (Mesa's X11 WSI numbers each
        // swapchain's presents from 1).
        let raw = vk::Handle::as_raw(info.surface);
        let x11 = self.client.x11_chain(raw, &stream, now_ns(), false);
        // SAFETY: `sc` is the live swapchain just made from `info` on this
        // device (caller).
        let hud = unsafe { self.make_hud(info, sc) };
        let state = Arc::new(Swapchain {
            surface: raw,
            stream,
            hud: Mutex::new(hud),
            failed: Mutex::new(None),
            observed: self.observe.map(|_| Observed::new()),
            x11,
        });
        if self
            .swapchains
            .insert(vk::Handle::as_raw(sc), state)
            .is_err()
        {
            guard::say(format_args!(
                "steadyhud: more than {} live swapchains on one device: this one is not followed",
                super::handles::CAPACITY
            ));
        }
        self.add_setup_time(t0);
    }

    /// # Safety
    /// As [`Device::on_created`]: `sc` is the live swapchain just made from
    /// `info` on this device.
    unsafe fn make_hud(
        &self,
        info: &vk::SwapchainCreateInfoKHR,
        sc: vk::SwapchainKHR,
    ) -> Option<SwapchainHud> {
        let plan = match hud::plan::plan(info) {
            Ok(p) => p,
            Err(why) => {
                self.hud_off(why);
                return None;
            }
        };
        // SAFETY: `sc` is a live swapchain of this device (caller).
        let images = match unsafe { self.swapchain_images(sc) } {
            Ok(i) => i,
            Err(e) => {
                self.hud_off(&format!("vkGetSwapchainImagesKHR failed: {e}"));
                return None;
            }
        };
        // SAFETY: `info` describes `sc`, whose images these are; the HUD's
        // device is this live device and `hud_cache` is its cache.
        let built = guard::try_run(|| unsafe {
            SwapchainHud::new(
                &self.hud(),
                &self.hud_cache,
                info,
                &images,
                &plan,
                &self.client.config,
            )
        });
        match built {
            Some(Ok(h)) => Some(h),
            Some(Err(e)) => {
                self.hud_off(&e.to_string());
                None
            }
            None => {
                self.hud_off("panic during HUD setup");
                None
            }
        }
    }

    /// # Safety
    /// `sc` is a live swapchain of this device.
    unsafe fn swapchain_images(&self, sc: vk::SwapchainKHR) -> Result<Vec<vk::Image>, vk::Result> {
        let get = self
            .next
            .ext
            .get_swapchain_images
            .ok_or(vk::Result::ERROR_INITIALIZATION_FAILED)?;
        let mut n = 0u32;
        // SAFETY: the next layer's `vkGetSwapchainImagesKHR` of this device,
        // on a live swapchain of it (caller), asking for the count.
        unsafe { get(self.handle, sc, &mut n, std::ptr::null_mut()) }.result()?;
        let mut v = vec![vk::Image::null(); n as usize];
        // SAFETY: as above, into `v`'s `n` elements.
        unsafe { get(self.handle, sc, &mut n, v.as_mut_ptr()) }.result()?;
        v.truncate(n as usize);
        Ok(v)
    }

    /// The usage to create the app's swapchain with: the app's, plus
    /// `TRANSFER_DST` where the surface allows it (the HUD then copies a
    /// cached panel). Shared present modes take their allowed usage from
    /// `sharedPresentSupportedUsageFlags` (when the app enabled
    /// `VK_KHR_get_surface_capabilities2`, else nothing is added); protected
    /// swapchains get no HUD and keep their usage.
    ///
    /// # Safety
    /// `info` is the app's create info for this device, valid per the
    /// Vulkan spec; its surface is live (the surface queries read it).
    unsafe fn hud_usage(&self, info: &vk::SwapchainCreateInfoKHR) -> vk::ImageUsageFlags {
        let supported = match usage_from(info) {
            UsageFrom::Nothing => return info.image_usage,
            // SAFETY: `info.surface` is the live surface of the app's create
            // info, on this device's instance (caller).
            UsageFrom::SharedPresent => unsafe { self.shared_present_usage(info.surface) },
            // SAFETY: as above.
            UsageFrom::Surface => unsafe { self.surface_usage(info.surface) },
        };
        hud::swapchain_usage(info.image_usage, supported)
    }

    /// # Safety
    /// `surface` is a live surface of this device's instance.
    unsafe fn surface_usage(&self, surface: vk::SurfaceKHR) -> vk::ImageUsageFlags {
        let mut caps = vk::SurfaceCapabilitiesKHR::default();
        match self.surface_caps {
            Some(f)
                // SAFETY: the next layer's instance function, on this
                // device's physical device and a live surface (caller), into
                // `caps`.
                if unsafe { f(self.physical_device, surface, &mut caps) }
                    == vk::Result::SUCCESS =>
            {
                caps.supported_usage_flags
            }
            _ => vk::ImageUsageFlags::empty(),
        }
    }

    /// # Safety
    /// `surface` is a live surface of this device's instance.
    unsafe fn shared_present_usage(&self, surface: vk::SurfaceKHR) -> vk::ImageUsageFlags {
        let Some(f) = self.surface_caps2 else {
            return vk::ImageUsageFlags::empty();
        };
        let mut shared = vk::SharedPresentSurfaceCapabilitiesKHR::default();
        let mut caps = vk::SurfaceCapabilities2KHR {
            p_next: &mut shared as *mut _ as *mut c_void,
            ..Default::default()
        };
        let info = vk::PhysicalDeviceSurfaceInfo2KHR {
            surface,
            ..Default::default()
        };
        // SAFETY: the next layer's instance function, on this device's
        // physical device and a live surface (caller); `caps` chains
        // `shared`, both alive for the call.
        if unsafe { f(self.physical_device, &info, &mut caps) } == vk::Result::SUCCESS {
            shared.shared_present_supported_usage_flags
        } else {
            vk::ImageUsageFlags::empty()
        }
    }
}

/// Which allowed usage bounds the usage the layer adds to a swapchain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UsageFrom {
    /// Protected swapchains get no HUD: nothing is added.
    Nothing,
    /// Shared present modes: `sharedPresentSupportedUsageFlags`.
    SharedPresent,
    /// Everything else: the surface's `supportedUsageFlags`.
    Surface,
}

fn usage_from(info: &vk::SwapchainCreateInfoKHR) -> UsageFrom {
    if info.flags.contains(vk::SwapchainCreateFlagsKHR::PROTECTED) {
        UsageFrom::Nothing
    } else if matches!(
        info.present_mode,
        vk::PresentModeKHR::SHARED_DEMAND_REFRESH | vk::PresentModeKHR::SHARED_CONTINUOUS_REFRESH
    ) {
        UsageFrom::SharedPresent
    } else {
        UsageFrom::Surface
    }
}

/// Fetches and registers the app's queues (flags 0; protected queues need
/// `vkGetDeviceQueue2` and never get a HUD).
/// GPU timing for a device with counters: the timer and its two counter
/// columns, or `None` (one line) when the device cannot time.
///
/// # Safety
/// Live handles of one device.
unsafe fn gpu_timer(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    device: &ash::Device,
    calibrate: Option<vk::PFN_vkGetCalibratedTimestampsKHR>,
    queues: &[(vk::Queue, u32)],
    dc: &DeviceCounters,
) -> Option<Arc<GpuTimer>> {
    use steadyhud_counters::Unit;
    // SAFETY: live handles (caller).
    let Some(timer) =
        (unsafe { GpuTimer::new(instance, physical_device, device.clone(), calibrate, queues) })
    else {
        guard::say(format_args!(
            "steadyhud: GPU timing off: no queue family of this device has timestamps"
        ));
        return None;
    };
    use steadyhud_metrics::gpu::{BUSY_COLUMN, GPU_WAIT_LABEL, GPU_WORK_LABEL, WAIT_COLUMN};
    let busy = dc.table.register(BUSY_COLUMN, GPU_WORK_LABEL, Unit::Nanos);
    let wait = dc.table.register(WAIT_COLUMN, GPU_WAIT_LABEL, Unit::Nanos);
    if busy.is_err() || wait.is_err() {
        guard::say(format_args!(
            "steadyhud: GPU timing off: the counter table is full"
        ));
        return None;
    }
    Some(Arc::new(timer))
}

/// # Safety
/// Inside the app's `vkCreateDevice`: `device` is the device the next
/// layer just created from `info` (valid per the Vulkan spec) on
/// `physical_device` of `inst`, `gdpa` is the next layer's
/// `vkGetDeviceProcAddr` for it, and `set_loader_data` the loader's
/// callback for it, if the loader gave one.
unsafe fn fetch_queues(
    inst: &Instance,
    physical_device: vk::PhysicalDevice,
    info: &vk::DeviceCreateInfo,
    get_queue: vk::PFN_vkGetDeviceQueue,
    device: vk::Device,
    set_loader_data: Option<loader::PfnSetDeviceLoaderData>,
) -> Option<Vec<QueueInfo>> {
    // SAFETY: the device's live physical device, of `inst`.
    let families = unsafe {
        inst.ash
            .get_physical_device_queue_family_properties(physical_device)
    };
    let qinfos: &[vk::DeviceQueueCreateInfo] =
        if info.queue_create_info_count == 0 || info.p_queue_create_infos.is_null() {
            &[]
        } else {
            // SAFETY: the app's array of `queue_create_info_count` queue
            // create infos (caller).
            unsafe {
                std::slice::from_raw_parts(
                    info.p_queue_create_infos,
                    info.queue_create_info_count as usize,
                )
            }
        };
    let mut queues = Vec::new();
    for qi in qinfos.iter().filter(|q| q.flags.is_empty()) {
        let flags = families
            .get(qi.queue_family_index as usize)
            .map_or(vk::QueueFlags::empty(), |p| p.queue_flags);
        for i in 0..qi.queue_count {
            let mut q = vk::Queue::null();
            // SAFETY: the next layer's `vkGetDeviceQueue` of the live device,
            // for a queue its create info asked for (family, index < count,
            // flags 0).
            unsafe { get_queue(device, qi.queue_family_index, i, &mut q) };
            if q == vk::Queue::null() {
                continue;
            }
            if let Some(set) = set_loader_data {
                // SAFETY: the loader's callback of the live device, given one
                // of the device's queues.
                if unsafe { set(device, vk::Handle::as_raw(q) as *mut c_void) }
                    != vk::Result::SUCCESS
                {
                    continue;
                }
            }
            queues.push(QueueInfo::new(q, qi.queue_family_index, flags));
        }
    }
    Some(queues)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// lavapipe has neither shared present modes nor protected swapchains.
    #[test]
    fn added_usage_is_bounded_by_the_right_capability() {
        let mut info = vk::SwapchainCreateInfoKHR::default().present_mode(vk::PresentModeKHR::FIFO);
        assert_eq!(usage_from(&info), UsageFrom::Surface);
        info.present_mode = vk::PresentModeKHR::SHARED_CONTINUOUS_REFRESH;
        assert_eq!(usage_from(&info), UsageFrom::SharedPresent);
        info.present_mode = vk::PresentModeKHR::SHARED_DEMAND_REFRESH;
        assert_eq!(usage_from(&info), UsageFrom::SharedPresent);
        info.flags = vk::SwapchainCreateFlagsKHR::PROTECTED;
        assert_eq!(usage_from(&info), UsageFrom::Nothing);
    }

    #[test]
    fn extensions_decide_the_swapchain_hooks() {
        let names = [c"VK_KHR_swapchain".as_ptr(), c"VK_EXT_other".as_ptr()];
        let info = vk::DeviceCreateInfo::default().enabled_extension_names(&names);
        // SAFETY: valid names.
        let e = unsafe { Extensions::of(&info) };
        assert_eq!(
            e,
            Extensions {
                swapchain: true,
                display_swapchain: false
            }
        );
        let none = vk::DeviceCreateInfo::default();
        // SAFETY: no names at all.
        assert_eq!(unsafe { Extensions::of(&none) }, Extensions::default());
    }
}
