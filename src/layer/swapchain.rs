//! Swapchain hooks and the present hook: per-swapchain state (its capture
//! stream and HUD), and the one data flow per present:
//! timestamp → ring → HUD draw (waits on the app's semaphores) → real
//! present waiting on the HUD's semaphore.

use super::capture::{now_ns, Stream};
use super::device::DeviceData;
use super::guard::{self, Site};
use super::{analysis, dispatch_key, find_device, HUD_VISIBLE};
use crate::hud::{HudError, SwapchainHud};
use ash::vk;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Serializes HUD use of the device's fallback graphics queue (setup,
/// teardown, and draws for presents on a queue outside the HUD's family),
/// which two threads must not use at once. Draws submitted on the present
/// queue itself skip it; presents without a visible HUD never touch it.
static HUD_LOCK: Mutex<()> = Mutex::new(());

/// What the layer keeps per swapchain.
pub struct SwapchainState {
    pub handle: vk::SwapchainKHR,
    /// Capture stream of the swapchain's surface.
    pub stream: Arc<Stream>,
    /// The HUD, when it could be set up. Locked only by presents of this
    /// swapchain and by its destruction.
    hud: Mutex<Option<SwapchainHud>>,
}

impl SwapchainState {
    /// Frees the HUD (before the swapchain or device goes away).
    pub fn destroy_hud(&self, dev: &DeviceData) {
        let taken = self.hud.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let (Some(mut hud), Some(hd)) = (taken, dev.hud()) {
            let _g = HUD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: the swapchain and device are still alive; destroy waits
            // for the HUD's own submissions.
            unsafe { hud.destroy(&hd) };
        }
    }
}

fn hud_disabled(why: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("steadyhud: HUD disabled: {why} (capture and log continue)");
    }
}

unsafe fn swapchain_images(dev: &DeviceData, sc: vk::SwapchainKHR) -> Result<Vec<vk::Image>, vk::Result> {
    let get = dev.fns.get_swapchain_images.ok_or(vk::Result::ERROR_EXTENSION_NOT_PRESENT)?;
    let mut n = 0u32;
    get(dev.handle, sc, &mut n, std::ptr::null_mut()).result()?;
    let mut v = vec![vk::Image::null(); n as usize];
    get(dev.handle, sc, &mut n, v.as_mut_ptr()).result()?;
    v.truncate(n as usize);
    Ok(v)
}

unsafe fn make_hud(dev: &DeviceData, info: &vk::SwapchainCreateInfoKHR, sc: vk::SwapchainKHR) -> Option<SwapchainHud> {
    let Some(hd) = dev.hud() else {
        hud_disabled("the device has no graphics queue");
        return None;
    };
    let images = match swapchain_images(dev, sc) {
        Ok(i) => i,
        Err(e) => {
            hud_disabled(&format!("vkGetSwapchainImagesKHR failed: {e}"));
            return None;
        }
    };
    let built = guard::try_run(|| {
        let _g = HUD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        SwapchainHud::new(&hd, info, &images, super::config())
    });
    match built {
        Some(Ok(h)) => Some(h),
        Some(Err(e)) => {
            hud_disabled(&e.to_string());
            None
        }
        None => {
            hud_disabled("panic during HUD setup");
            None
        }
    }
}

unsafe fn on_created(dev: &DeviceData, info: &vk::SwapchainCreateInfoKHR, sc: vk::SwapchainKHR) {
    let stream = {
        let mut streams = dev.streams.lock().unwrap_or_else(|e| e.into_inner());
        if streams.contains_key(&info.surface) {
            if let Some(dc) = dev.counters.as_ref() {
                dc.add(|b| b.swapchain_recreations, 1);
            }
        }
        let table = dev.counters.as_ref().map(|dc| dc.table.clone());
        streams.entry(info.surface).or_insert_with(|| analysis::new_stream(dev.key, table)).clone()
    };
    let hud = make_hud(dev, info, sc);
    let state = Arc::new(SwapchainState { handle: sc, stream, hud: Mutex::new(hud) });
    dev.swapchains.write().unwrap_or_else(|e| e.into_inner()).insert(sc, state);
}

unsafe fn hud_usage(dev: &DeviceData, info: &vk::SwapchainCreateInfoKHR) -> vk::ImageUsageFlags {
    let Some(inst) = super::find_instance(dispatch_key(dev.physical_device)).or_else(super::only_instance) else {
        return info.image_usage;
    };
    let Some(f) = (inst.next_gipa)(inst.handle, c"vkGetPhysicalDeviceSurfaceCapabilitiesKHR".as_ptr()) else {
        return info.image_usage;
    };
    let caps_fn: vk::PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR = std::mem::transmute(f);
    let mut caps = vk::SurfaceCapabilitiesKHR::default();
    if caps_fn(dev.physical_device, info.surface, &mut caps) != vk::Result::SUCCESS {
        return info.image_usage;
    }
    crate::hud::swapchain_usage(info.image_usage, caps.supported_usage_flags)
}

pub(crate) unsafe extern "system" fn create_swapchain(
    device: vk::Device,
    info: *const vk::SwapchainCreateInfoKHR,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::SwapchainKHR,
) -> vk::Result {
    let Some(dev) = guard::contain(None, || find_device(dispatch_key(device))) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let Some(create) = dev.fns.create_swapchain else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // Ask for TRANSFER_DST too when the surface allows it: the HUD then
    // copies a cached panel instead of drawing imgui every frame.
    let mut patched = *info;
    patched.image_usage = guard::contain(patched.image_usage, || hud_usage(&dev, &*info));
    let r = create(device, &patched, alloc, out);
    if r == vk::Result::SUCCESS {
        guard::contain((), || on_created(&dev, &patched, *out));
    }
    r
}

pub(crate) unsafe extern "system" fn destroy_swapchain(
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    alloc: *const vk::AllocationCallbacks,
) {
    let Some(dev) = guard::contain(None, || find_device(dispatch_key(device))) else {
        return;
    };
    guard::contain((), || {
        let removed = dev.swapchains.write().unwrap_or_else(|e| e.into_inner()).remove(&swapchain);
        if let Some(sc) = removed {
            sc.destroy_hud(&dev);
        }
    });
    if let Some(destroy) = dev.fns.destroy_swapchain {
        destroy(device, swapchain, alloc);
    }
}

unsafe fn slice<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n as usize)
    }
}

/// Capture and HUD for one present. Returns the semaphore the real present
/// must wait on instead of the app's, when the HUD drew.
unsafe fn before_present(dev: &DeviceData, queue: vk::Queue, info: &vk::PresentInfoKHR, t: u64) -> Option<vk::Semaphore> {
    let swapchains = slice(info.p_swapchains, info.swapchain_count);
    let indices = slice(info.p_image_indices, info.swapchain_count);
    let map = dev.swapchains.read().unwrap_or_else(|e| e.into_inner());
    // The device's counters end their frame here; they ride with the first
    // swapchain of the present (on the stack: no allocation).
    let mut latched = [0u64; crate::counters::MAX_COUNTERS];
    let mut values = dev.counters.as_ref().map(|dc| {
        dc.table.latch(&mut latched);
        &latched
    });
    for sc in swapchains {
        if let Some(s) = map.get(sc) {
            s.stream.record_with(t, values.take());
        }
    }
    guard::inject(Site::Present);
    if !HUD_VISIBLE.load(Ordering::Relaxed) {
        return None;
    }
    let hd = dev.hud_for_present(queue)?;
    let family = dev.family_of(queue);
    let app_wait = slice(info.p_wait_semaphores, info.wait_semaphore_count);
    // Several swapchains in one present: chain the HUD draws, each waiting on
    // the previous one's semaphore, the first on the app's.
    let mut signal: Option<vk::Semaphore> = None;
    for (sc, &index) in swapchains.iter().zip(indices) {
        let Some(s) = map.get(sc) else { continue };
        let mut slot = s.hud.lock().unwrap_or_else(|e| e.into_inner());
        let Some(hud) = slot.as_mut() else { continue };
        let stats = s.stream.live.latest();
        let wait: &[vk::Semaphore] = match &signal {
            Some(x) => std::slice::from_ref(x),
            None => app_wait,
        };
        // On the present queue we are the only user (the app synchronizes
        // its presents); the fallback graphics queue is shared between threads.
        let _g = (hd.graphics_queue != queue).then(|| HUD_LOCK.lock().unwrap_or_else(|e| e.into_inner()));
        let drawn = if guard::device_lost() {
            Err(HudError::Vulkan { call: "vkQueueSubmit", result: vk::Result::ERROR_DEVICE_LOST })
        } else {
            hud.draw(&hd, family, index, wait, &stats)
        };
        match drawn {
            Ok(sem) => signal = Some(sem),
            Err(e) => {
                hud_disabled(&format!("draw failed: {e}"));
                // A failed draw (a lost device above all) stays failed: free
                // this swapchain's HUD instead of retrying every frame.
                if let Some(mut gone) = slot.take() {
                    gone.destroy(&hd);
                }
            }
        }
    }
    signal
}

pub(crate) unsafe extern "system" fn queue_present(queue: vk::Queue, info: *const vk::PresentInfoKHR) -> vk::Result {
    let t = now_ns();
    let Some(dev) = guard::contain(None, || find_device(dispatch_key(queue))) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let Some(present) = dev.fns.queue_present else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    let r = match guard::contain(None, || before_present(&dev, queue, &*info, t)) {
        Some(sem) => {
            let mut patched = *info;
            patched.wait_semaphore_count = 1;
            patched.p_wait_semaphores = &sem;
            timed_present(&dev, present, queue, &patched)
        }
        None => timed_present(&dev, present, queue, info),
    };
    if let Some(dc) = dev.counters.as_ref() {
        // Lands in the next latch: the frame that starts at this present.
        dc.add(|b| b.in_present_ns, now_ns().saturating_sub(t));
    }
    r
}

/// The next layer's present, timed into the `present_ms` counter.
unsafe fn timed_present(
    dev: &DeviceData,
    present: vk::PFN_vkQueuePresentKHR,
    queue: vk::Queue,
    info: *const vk::PresentInfoKHR,
) -> vk::Result {
    let Some(dc) = dev.counters.as_ref() else { return present(queue, info) };
    let t = now_ns();
    let r = present(queue, info);
    dc.add(|b| b.present_ns, now_ns().saturating_sub(t));
    r
}
