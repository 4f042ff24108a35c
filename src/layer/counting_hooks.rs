//! The layer's built-in statistics counters ([`steadyhud_counters`]): tiny
//! timed calls on the functions that usually explain a stutter. The entry
//! points (`entry.rs`) find the device without a lock and delegate here:
//! take a timestamp, call the next layer, add the elapsed CPU time and the
//! count to the device's counters (relaxed atomic adds, each counter on its
//! own cache line; no lock, no allocation).
//!
//! The entry points are handed out by `vkGetDeviceProcAddr` only when the
//! config key `counters` is on and the next layer has the function; with
//! `counters=0` the app calls the next layer directly and the layer costs
//! nothing extra.
//!
//! `vkSetLatencyMarkerNV` (VK_NV_low_latency2, NVIDIA Reflex) is hooked when
//! the next layer has it: the app's markers become three more counters
//! (`nv_sim_ms`, `nv_render_submit_ms`, `nv_frame_start_to_present_ms`, see
//! [`steadyhud_counters::markers`]), registered only on such devices.
//!
//! Counters of a device are latched at every present of that device (see
//! `swapchain.rs`) and travel with the present's timestamp to the analysis
//! thread. A device presenting to several windows latches at each of their
//! presents, so its work is split between their logs in present order.

use super::capture::now_ns;
use super::entry::on_device;
use super::guard;
use super::loader::next_fn;
use ash::vk;
use steadyhud_counters::markers::{Marker, MarkerClock, Span};
use steadyhud_counters::{CounterId, Counters, Unit};
use steadyhud_sys::lock::Recover;

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
    pub layer_setup_ns: CounterId,
    pub limiter_wait_ns: CounterId,
}

use steadyhud_counters::BUILTIN;

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
            layer_setup_ns: id(10)?,
            limiter_wait_ns: id(11)?,
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
    pub acquire_next_image2: Option<vk::PFN_vkAcquireNextImage2KHR>,
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
    pub unsafe fn new(
        gdpa: vk::PFN_vkGetDeviceProcAddr,
        device: vk::Device,
    ) -> Option<DeviceCounters> {
        let table = std::sync::Arc::new(Counters::new());
        let ids = Builtin::register(&table)?;
        // SAFETY: the next layer's gdpa of the live `device` (caller's
        // contract); `next_fn` calls this only with NUL-terminated names.
        let g = |n: *const std::ffi::c_char| unsafe { gdpa(device, n) };
        // SAFETY: each name is looked up on the next layer's live device and
        // cast to its own `PFN_` type (`vkQueueSubmit2KHR` has the type of
        // its core alias).
        let fns = unsafe {
            CountedFns {
                create_graphics_pipelines: next_fn(g, c"vkCreateGraphicsPipelines"),
                create_compute_pipelines: next_fn(g, c"vkCreateComputePipelines"),
                queue_submit: next_fn(g, c"vkQueueSubmit"),
                queue_submit2: next_fn(g, c"vkQueueSubmit2")
                    .or_else(|| next_fn(g, c"vkQueueSubmit2KHR")),
                allocate_memory: next_fn(g, c"vkAllocateMemory"),
                acquire_next_image: next_fn(g, c"vkAcquireNextImageKHR"),
                acquire_next_image2: next_fn(g, c"vkAcquireNextImage2KHR"),
                set_latency_marker: next_fn(g, c"vkSetLatencyMarkerNV"),
            }
        };
        let markers = fns.set_latency_marker.and_then(|_| {
            let ids = MarkerIds {
                sim: table
                    .register("nv_sim_ms", "simulation (Reflex)", Unit::Nanos)
                    .ok()?,
                submit: table
                    .register("nv_render_submit_ms", "render submit (Reflex)", Unit::Nanos)
                    .ok()?,
                start_to_present: table
                    .register(
                        "nv_frame_start_to_present_ms",
                        "frame start to present (Reflex)",
                        Unit::Nanos,
                    )
                    .ok()?,
            };
            Some((ids, std::sync::Mutex::new(MarkerClock::default())))
        });
        Some(DeviceCounters {
            table,
            ids,
            fns,
            markers,
        })
    }

    #[inline]
    pub fn add(&self, id: impl Fn(&Builtin) -> CounterId, v: u64) {
        self.table.add(id(&self.ids), v);
    }
}

/// Times `call` into counter `ns` (and adds `count` to `n`, if given).
#[inline]
fn timed<R>(
    dc: &DeviceCounters,
    ns: CounterId,
    n: Option<(CounterId, u64)>,
    call: impl FnOnce() -> R,
) -> R {
    let t = now_ns();
    let r = call();
    dc.table.add(ns, now_ns().saturating_sub(t));
    if let Some((id, count)) = n {
        dc.table.add(id, count);
    }
    r
}

/// `VK_ERROR_OUT_OF_HOST_MEMORY`: what a counted call returns when the
/// device is not ours or the next layer lacks the function (a legal result
/// of every one of them).
const NO_NEXT: vk::Result = vk::Result::ERROR_OUT_OF_HOST_MEMORY;

/// Runs `body` on the counters of `h`'s device; `fallback` when the device
/// is not ours or counts nothing.
///
/// # Safety
/// `h` is a live dispatchable handle the app is calling the layer with.
#[inline]
unsafe fn with_counters<H: vk::Handle, R: Copy>(
    h: H,
    fallback: R,
    body: impl FnOnce(&DeviceCounters) -> R,
) -> R {
    // SAFETY: `h` is live (caller's contract).
    unsafe {
        on_device(h, fallback, |_, d| match d.counters.as_ref() {
            Some(dc) => body(dc),
            None => fallback,
        })
    }
}

// The counted entry points. The entry table (`entry.rs`) hands them out
// only when counters are on and the next layer has the function; each
// looks its device's counters up, times the next layer's call and counts.

/// `vkCreateGraphicsPipelines`, counted.
///
/// # Safety
/// Called as `vkCreateGraphicsPipelines` by the loader or the layer above, with arguments
/// valid per the Vulkan spec, on a device this layer created.
pub(super) unsafe extern "system" fn create_graphics_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    infos: *const vk::GraphicsPipelineCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Pipeline,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`; the next layer's
    // `vkCreateGraphicsPipelines` gets the app's own arguments.
    unsafe {
        with_counters(device, NO_NEXT, |dc| {
            let Some(next) = dc.fns.create_graphics_pipelines else {
                return NO_NEXT;
            };
            let n = Some((dc.ids.pipelines, count as u64));
            timed(dc, dc.ids.pipeline_ns, n, || {
                next(device, cache, count, infos, alloc, out)
            })
        })
    }
}

/// `vkCreateComputePipelines`, counted.
///
/// # Safety
/// Called as `vkCreateComputePipelines` by the loader or the layer above, with arguments
/// valid per the Vulkan spec, on a device this layer created.
pub(super) unsafe extern "system" fn create_compute_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    infos: *const vk::ComputePipelineCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Pipeline,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`; the next layer's
    // `vkCreateComputePipelines` gets the app's own arguments.
    unsafe {
        with_counters(device, NO_NEXT, |dc| {
            let Some(next) = dc.fns.create_compute_pipelines else {
                return NO_NEXT;
            };
            let n = Some((dc.ids.pipelines, count as u64));
            timed(dc, dc.ids.pipeline_ns, n, || {
                next(device, cache, count, infos, alloc, out)
            })
        })
    }
}

/// `vkAllocateMemory`, counted.
///
/// # Safety
/// Called as `vkAllocateMemory` by the loader or the layer above, with arguments
/// valid per the Vulkan spec, on a device this layer created.
pub(super) unsafe extern "system" fn allocate_memory(
    device: vk::Device,
    info: *const vk::MemoryAllocateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::DeviceMemory,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`; the next layer's
    // `vkAllocateMemory` gets the app's own arguments; `info` is read only
    // when not null (the app's valid allocate info).
    unsafe {
        with_counters(device, NO_NEXT, |dc| {
            let Some(next) = dc.fns.allocate_memory else {
                return NO_NEXT;
            };
            let r = next(device, info, alloc, out);
            if r == vk::Result::SUCCESS && !info.is_null() {
                dc.add(|b| b.alloc_count, 1);
                dc.add(|b| b.alloc_bytes, (*info).allocation_size);
            }
            r
        })
    }
}

/// `vkAcquireNextImageKHR`, counted.
///
/// # Safety
/// Called as `vkAcquireNextImageKHR` by the loader or the layer above, with arguments
/// valid per the Vulkan spec, on a device this layer created.
pub(super) unsafe extern "system" fn acquire_next_image(
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    timeout: u64,
    semaphore: vk::Semaphore,
    fence: vk::Fence,
    index: *mut u32,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`; the next layer's
    // `vkAcquireNextImageKHR` gets the app's own arguments.
    unsafe {
        with_counters(device, NO_NEXT, |dc| {
            let Some(next) = dc.fns.acquire_next_image else {
                return NO_NEXT;
            };
            timed(dc, dc.ids.acquire_ns, None, || {
                next(device, swapchain, timeout, semaphore, fence, index)
            })
        })
    }
}

/// `vkAcquireNextImage2KHR`, counted.
///
/// # Safety
/// Called as `vkAcquireNextImage2KHR` by the loader or the layer above, with arguments
/// valid per the Vulkan spec, on a device this layer created.
pub(super) unsafe extern "system" fn acquire_next_image2(
    device: vk::Device,
    info: *const vk::AcquireNextImageInfoKHR<'_>,
    index: *mut u32,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`; the next layer's
    // `vkAcquireNextImage2KHR` gets the app's own arguments.
    unsafe {
        with_counters(device, NO_NEXT, |dc| {
            let Some(next) = dc.fns.acquire_next_image2 else {
                return NO_NEXT;
            };
            timed(dc, dc.ids.acquire_ns, None, || next(device, info, index))
        })
    }
}

/// `vkSetLatencyMarkerNV`, counted.
///
/// # Safety
/// Called as `vkSetLatencyMarkerNV` by the loader or the layer above, with arguments
/// valid per the Vulkan spec, on a device this layer created.
pub(super) unsafe extern "system" fn set_latency_marker(
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    info: *const vk::SetLatencyMarkerInfoNV<'_>,
) {
    // SAFETY: inside the app's call on its live `device`; the next layer's
    // `vkSetLatencyMarkerNV` gets the app's own arguments; `info` is read
    // only when not null (the app's valid marker info).
    unsafe {
        with_counters(device, (), |dc| {
            let t = now_ns();
            let Some(next) = dc.fns.set_latency_marker else {
                return;
            };
            next(device, swapchain, info);
            if info.is_null() {
                return;
            }
            let (id, raw) = ((*info).present_id, (*info).marker.as_raw());
            dc.mark(id, raw, t);
        })
    }
}

impl DeviceCounters {
    /// Adds the span a Reflex marker closes (`raw` of frame `id`, at `t`).
    fn mark(&self, id: u64, raw: i32, t: u64) {
        guard::contain((), || {
            let (Some(marker), Some((ids, clock))) = (Marker::from_raw(raw), self.markers.as_ref())
            else {
                return;
            };
            let span = clock.lock_or_recover().mark(marker, id, t);
            match span {
                Some(Span::Simulation(ns)) => self.table.add(ids.sim, ns),
                Some(Span::RenderSubmit(ns)) => self.table.add(ids.submit, ns),
                Some(Span::FrameStartToPresent(ns)) => self.table.add(ids.start_to_present, ns),
                None => {}
            }
        });
    }
}
