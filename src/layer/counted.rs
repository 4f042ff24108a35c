//! The layer's built-in statistics counters ([`crate::counters`]): tiny hooks
//! on the calls that usually explain a stutter. Each hook finds its device,
//! takes a timestamp, calls the next layer, and adds the elapsed CPU time
//! and count to the device's counters (relaxed atomic adds: no lock beyond
//! the device-map read every hook already does, no allocation).
//!
//! The hooks are handed out by `vkGetDeviceProcAddr` only when the config
//! key `counters` is on and the next layer has the function; with
//! `counters=0` the app calls the next layer directly and the layer costs
//! nothing extra.
//!
//! `vkSetLatencyMarkerNV` (VK_NV_low_latency2, NVIDIA Reflex) is hooked when
//! the next layer has it: the app's markers become three more counters
//! (`nv_sim_ms`, `nv_render_submit_ms`, `nv_frame_start_to_present_ms`, see
//! [`crate::counters::markers`]), registered only on such devices.
//!
//! Counters of a device are latched at every present of that device (see
//! `swapchain.rs`) and travel with the present's timestamp to the analysis
//! thread. A device presenting to several windows latches at each of their
//! presents, so its work is split between their logs in present order.

use super::capture::now_ns;
use super::{dispatch_key, find_device, guard, name_is};
use crate::counters::markers::{Marker, MarkerClock, Span};
use crate::counters::{CounterId, Counters, Unit};
use ash::vk;
use std::ffi::c_char;

/// Ids of the built-in counters of one device.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    pub pipeline_ns: CounterId,
    pub pipelines: CounterId,
    pub submit_ns: CounterId,
    pub submits: CounterId,
    pub alloc_count: CounterId,
    pub alloc_bytes: CounterId,
    pub acquire_ns: CounterId,
    pub present_ns: CounterId,
    pub in_present_ns: CounterId,
    pub swapchain_recreations: CounterId,
}

use crate::counters::BUILTIN;

impl Builtin {
    /// Registers the built-in counters in a fresh table.
    pub fn register(c: &Counters) -> Option<Builtin> {
        let id = |k: usize| c.register(BUILTIN[k].0, BUILTIN[k].1, BUILTIN[k].2).ok();
        Some(Builtin {
            pipeline_ns: id(0)?,
            pipelines: id(1)?,
            submit_ns: id(2)?,
            submits: id(3)?,
            alloc_count: id(4)?,
            alloc_bytes: id(5)?,
            acquire_ns: id(6)?,
            present_ns: id(7)?,
            in_present_ns: id(8)?,
            swapchain_recreations: id(9)?,
        })
    }
}

/// Next-layer functions the counter hooks forward to.
#[derive(Default)]
pub struct CountedFns {
    pub create_graphics_pipelines: Option<vk::PFN_vkCreateGraphicsPipelines>,
    pub create_compute_pipelines: Option<vk::PFN_vkCreateComputePipelines>,
    pub queue_submit: Option<vk::PFN_vkQueueSubmit>,
    pub queue_submit2: Option<vk::PFN_vkQueueSubmit2>,
    pub allocate_memory: Option<vk::PFN_vkAllocateMemory>,
    pub acquire_next_image: Option<vk::PFN_vkAcquireNextImageKHR>,
    pub set_latency_marker: Option<vk::PFN_vkSetLatencyMarkerNV>,
}

/// Counters fed by `VK_NV_low_latency2` markers.
#[derive(Clone, Copy, Debug)]
pub struct MarkerIds {
    pub sim: CounterId,
    pub submit: CounterId,
    pub start_to_present: CounterId,
}

/// A device's counters: the table, the built-in ids, the next functions.
pub struct DeviceCounters {
    pub table: std::sync::Arc<Counters>,
    pub ids: Builtin,
    pub fns: CountedFns,
    /// Present when the device has `vkSetLatencyMarkerNV`.
    pub markers: Option<(MarkerIds, std::sync::Mutex<MarkerClock>)>,
}

impl DeviceCounters {
    /// Sets up the counters of a new device (`None` when `counters=0`).
    ///
    /// # Safety
    /// `gdpa` and `device` must be the next layer's live pair.
    pub unsafe fn new(gdpa: vk::PFN_vkGetDeviceProcAddr, device: vk::Device) -> Option<DeviceCounters> {
        if !super::config().counters {
            return None;
        }
        let table = std::sync::Arc::new(Counters::new());
        let ids = Builtin::register(&table)?;
        unsafe fn f<F>(gdpa: vk::PFN_vkGetDeviceProcAddr, device: vk::Device, name: &[u8]) -> Option<F> {
            let p = gdpa(device, name.as_ptr() as *const c_char)?;
            Some(std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&p))
        }
        let fns = CountedFns {
            create_graphics_pipelines: f(gdpa, device, b"vkCreateGraphicsPipelines\0"),
            create_compute_pipelines: f(gdpa, device, b"vkCreateComputePipelines\0"),
            queue_submit: f(gdpa, device, b"vkQueueSubmit\0"),
            queue_submit2: f(gdpa, device, b"vkQueueSubmit2\0").or_else(|| f(gdpa, device, b"vkQueueSubmit2KHR\0")),
            allocate_memory: f(gdpa, device, b"vkAllocateMemory\0"),
            acquire_next_image: f(gdpa, device, b"vkAcquireNextImageKHR\0"),
            set_latency_marker: f(gdpa, device, b"vkSetLatencyMarkerNV\0"),
        };
        let markers = fns.set_latency_marker.and_then(|_| {
            let ids = MarkerIds {
                sim: table.register("nv_sim_ms", "simulation (Reflex)", Unit::Nanos).ok()?,
                submit: table.register("nv_render_submit_ms", "render submit (Reflex)", Unit::Nanos).ok()?,
                start_to_present: table
                    .register("nv_frame_start_to_present_ms", "frame start to present (Reflex)", Unit::Nanos)
                    .ok()?,
            };
            Some((ids, std::sync::Mutex::new(MarkerClock::default())))
        });
        Some(DeviceCounters { table, ids, fns, markers })
    }

    #[inline]
    pub fn add(&self, id: impl Fn(&Builtin) -> CounterId, v: u64) {
        self.table.add(id(&self.ids), v);
    }
}

unsafe fn as_void(f: *const ()) -> vk::PFN_vkVoidFunction {
    Some(std::mem::transmute::<*const (), unsafe extern "system" fn()>(f))
}

/// Our hook for a device function `name`, if it is a counted one and the
/// device counts and its next layer has the function.
pub fn hook(name: *const c_char, dc: Option<&DeviceCounters>) -> vk::PFN_vkVoidFunction {
    let dc = dc?;
    let f = &dc.fns;
    unsafe {
        if name_is(name, b"vkCreateGraphicsPipelines") {
            f.create_graphics_pipelines.and_then(|_| as_void(create_graphics_pipelines as *const ()))
        } else if name_is(name, b"vkCreateComputePipelines") {
            f.create_compute_pipelines.and_then(|_| as_void(create_compute_pipelines as *const ()))
        } else if name_is(name, b"vkQueueSubmit") {
            f.queue_submit.and_then(|_| as_void(queue_submit as *const ()))
        } else if name_is(name, b"vkQueueSubmit2") || name_is(name, b"vkQueueSubmit2KHR") {
            f.queue_submit2.and_then(|_| as_void(queue_submit2 as *const ()))
        } else if name_is(name, b"vkAllocateMemory") {
            f.allocate_memory.and_then(|_| as_void(allocate_memory as *const ()))
        } else if name_is(name, b"vkSetLatencyMarkerNV") {
            f.set_latency_marker.and_then(|_| as_void(set_latency_marker as *const ()))
        } else if name_is(name, b"vkAcquireNextImageKHR") {
            f.acquire_next_image.and_then(|_| as_void(acquire_next_image as *const ()))
        } else {
            None
        }
    }
}

/// The device record of a dispatchable handle (panics contained).
fn device_of<H: vk::Handle>(h: H) -> Option<std::sync::Arc<super::DeviceData>> {
    // SAFETY: the app passes a live dispatchable handle.
    guard::contain(None, || find_device(unsafe { dispatch_key(h) }))
}

unsafe extern "system" fn create_graphics_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    infos: *const vk::GraphicsPipelineCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Pipeline,
) -> vk::Result {
    let Some(dev) = device_of(device) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(dc) = dev.counters.as_ref() else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(next) = dc.fns.create_graphics_pipelines else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let t = now_ns();
    let r = next(device, cache, count, infos, alloc, out);
    dc.add(|b| b.pipeline_ns, now_ns() - t);
    dc.add(|b| b.pipelines, count as u64);
    r
}

unsafe extern "system" fn create_compute_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    infos: *const vk::ComputePipelineCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Pipeline,
) -> vk::Result {
    let Some(dev) = device_of(device) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(dc) = dev.counters.as_ref() else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(next) = dc.fns.create_compute_pipelines else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let t = now_ns();
    let r = next(device, cache, count, infos, alloc, out);
    dc.add(|b| b.pipeline_ns, now_ns() - t);
    dc.add(|b| b.pipelines, count as u64);
    r
}

unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    let Some(dev) = device_of(queue) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(dc) = dev.counters.as_ref() else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(next) = dc.fns.queue_submit else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let t = now_ns();
    let r = next(queue, count, submits, fence);
    dc.add(|b| b.submit_ns, now_ns() - t);
    dc.add(|b| b.submits, 1);
    r
}

unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    let Some(dev) = device_of(queue) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(dc) = dev.counters.as_ref() else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(next) = dc.fns.queue_submit2 else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let t = now_ns();
    let r = next(queue, count, submits, fence);
    dc.add(|b| b.submit_ns, now_ns() - t);
    dc.add(|b| b.submits, 1);
    r
}

unsafe extern "system" fn allocate_memory(
    device: vk::Device,
    info: *const vk::MemoryAllocateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::DeviceMemory,
) -> vk::Result {
    let Some(dev) = device_of(device) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(dc) = dev.counters.as_ref() else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(next) = dc.fns.allocate_memory else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let r = next(device, info, alloc, out);
    if r == vk::Result::SUCCESS && !info.is_null() {
        dc.add(|b| b.alloc_count, 1);
        dc.add(|b| b.alloc_bytes, (*info).allocation_size);
    }
    r
}

unsafe extern "system" fn acquire_next_image(
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    timeout: u64,
    semaphore: vk::Semaphore,
    fence: vk::Fence,
    index: *mut u32,
) -> vk::Result {
    let Some(dev) = device_of(device) else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(dc) = dev.counters.as_ref() else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let Some(next) = dc.fns.acquire_next_image else { return vk::Result::ERROR_INITIALIZATION_FAILED };
    let t = now_ns();
    let r = next(device, swapchain, timeout, semaphore, fence, index);
    dc.add(|b| b.acquire_ns, now_ns() - t);
    r
}

unsafe extern "system" fn set_latency_marker(
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    info: *const vk::SetLatencyMarkerInfoNV<'_>,
) {
    let t = now_ns();
    let Some(dev) = device_of(device) else { return };
    let Some(dc) = dev.counters.as_ref() else { return };
    let Some(next) = dc.fns.set_latency_marker else { return };
    next(device, swapchain, info);
    if info.is_null() {
        return;
    }
    let (id, raw) = ((*info).present_id, (*info).marker.as_raw());
    guard::contain((), || {
        let (Some(marker), Some((ids, clock))) = (Marker::from_raw(raw), dc.markers.as_ref()) else { return };
        let span = clock.lock().unwrap_or_else(|e| e.into_inner()).mark(marker, id, t);
        match span {
            Some(Span::Simulation(ns)) => dc.table.add(ids.sim, ns),
            Some(Span::RenderSubmit(ns)) => dc.table.add(ids.submit, ns),
            Some(Span::FrameStartToPresent(ns)) => dc.table.add(ids.start_to_present, ns),
            None => {}
        }
    });
}
