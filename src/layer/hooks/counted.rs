//! The layer's built-in statistics counters ([`steadyhud_counters`]): tiny
//! timed calls on the functions that usually explain a stutter. Each
//! finds its device without a lock ([`super::lookup`]), takes a timestamp,
//! calls the next layer and adds the elapsed CPU time and the count to the
//! device's counters (relaxed atomic adds into one packed table; no lock, no
//! allocation).
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
//! Counters of a device are latched at every present of that device, in
//! `Device::before_present` (`src/layer/present.rs`), and travel to the
//! analysis thread with the timestamp, in the stream of the present's first
//! swapchain. A device presenting to several windows latches at each of
//! their presents, so its work is split between their logs in present order.
//!
//! # Safety
//! Every `unsafe extern "system"` function here is a Vulkan command (or the
//! loader's `vkNegotiateLoaderLayerInterfaceVersion`) and relies on the
//! Vulkan contract with its caller, the loader or the layer above: it is
//! called only as the command it is handed out for, with arguments valid
//! per that command's valid-usage rules (live handles of an instance or
//! device created through this layer, valid pointers and `pNext` chains,
//! externally synchronised objects not used concurrently), and it hands
//! them on to the next layer unchanged.

use super::lookup::on_device;
use crate::layer::anti_lag::{AntiLagData, PfnAntiLagUpdate};
use crate::layer::counters::DeviceCounters;
use crate::layer::next::DeviceNext;
use ash::vk;
use steadyhud_counters::CounterId;
use steadyhud_sys::clock::now_ns;

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
    body: impl FnOnce(&DeviceNext, &DeviceCounters) -> R,
) -> R {
    // SAFETY: `h` is live (caller's contract).
    unsafe {
        on_device(h, fallback, |_, d| match d.counters.as_ref() {
            Some(dc) => body(&d.next, dc),
            None => fallback,
        })
    }
}

// The counted entry points. The hook table (`table.rs`) hands them out
// only when counters are on and the next layer has the function; each
// looks its device's counters up, times the next layer's call and counts.

/// `vkCreateGraphicsPipelines`, counted.
///
/// # Safety
/// Called as `vkCreateGraphicsPipelines` by the loader or the layer above, with arguments
/// valid per the Vulkan spec, on a device this layer created.
pub(super) unsafe extern "system-unwind" fn create_graphics_pipelines(
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
        with_counters(device, NO_NEXT, |next_layer, dc| {
            let next = next_layer.core.fp_v1_0().create_graphics_pipelines;
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
pub(super) unsafe extern "system-unwind" fn create_compute_pipelines(
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
        with_counters(device, NO_NEXT, |next_layer, dc| {
            let next = next_layer.core.fp_v1_0().create_compute_pipelines;
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
pub(super) unsafe extern "system-unwind" fn allocate_memory(
    device: vk::Device,
    info: *const vk::MemoryAllocateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::DeviceMemory,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`; the next layer's
    // `vkAllocateMemory` gets the app's own arguments; `info` is read only
    // when not null (the app's valid allocate info).
    unsafe {
        with_counters(device, NO_NEXT, |next_layer, dc| {
            let next = next_layer.core.fp_v1_0().allocate_memory;
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
pub(super) unsafe extern "system-unwind" fn acquire_next_image(
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
        with_counters(device, NO_NEXT, |next_layer, dc| {
            let Some(next) = next_layer.ext.acquire_next_image else {
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
pub(super) unsafe extern "system-unwind" fn acquire_next_image2(
    device: vk::Device,
    info: *const vk::AcquireNextImageInfoKHR<'_>,
    index: *mut u32,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `device`; the next layer's
    // `vkAcquireNextImage2KHR` gets the app's own arguments.
    unsafe {
        with_counters(device, NO_NEXT, |next_layer, dc| {
            let Some(next) = next_layer.ext.acquire_next_image2 else {
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
pub(super) unsafe extern "system-unwind" fn set_latency_marker(
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    info: *const vk::SetLatencyMarkerInfoNV<'_>,
) {
    // SAFETY: inside the app's call on its live `device`, with its own
    // arguments.
    unsafe {
        with_counters(device, (), |next_layer, dc| {
            if let Some(next) = next_layer.ext.set_latency_marker {
                pass_marker(next, dc, device, swapchain, info);
            }
        })
    }
}

/// The next layer's `vkSetLatencyMarkerNV` with the app's arguments, then
/// the marker into `dc` at the time of the call.
///
/// # Safety
/// `next` is the next layer's function of `device`; the rest are the app's
/// arguments (`info` null or its valid marker info).
unsafe fn pass_marker(
    next: vk::PFN_vkSetLatencyMarkerNV,
    dc: &DeviceCounters,
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    info: *const vk::SetLatencyMarkerInfoNV<'_>,
) {
    let t = now_ns();
    // SAFETY: caller's contract.
    unsafe { next(device, swapchain, info) };
    // SAFETY: null or the app's valid marker info (caller).
    if let Some(i) = unsafe { info.as_ref() } {
        dc.mark(i.present_id, i.marker.as_raw(), t);
    }
}

/// `vkAntiLagUpdateAMD` (`VK_AMD_anti_lag`), counted.
///
/// # Safety
/// Called as `vkAntiLagUpdateAMD` by the loader or the layer above, with
/// arguments valid per the Vulkan spec, on a device this layer created.
pub(super) unsafe extern "system-unwind" fn anti_lag_update(
    device: vk::Device,
    data: *const AntiLagData,
) {
    // SAFETY: inside the app's call on its live `device`, with its own
    // arguments.
    unsafe {
        with_counters(device, (), |next_layer, dc| {
            if let Some(next) = next_layer.ext.anti_lag_update {
                pass_anti_lag(next, dc, device, data);
            }
        })
    }
}

/// The next layer's `vkAntiLagUpdateAMD` with the app's arguments, then
/// its stage into `dc` at the call's return (the driver may hold the input
/// stage back to pace the game: input is read after that).
///
/// # Safety
/// `next` is the next layer's function of `device`; `data` is the app's
/// (null or a valid `VkAntiLagDataAMD`).
unsafe fn pass_anti_lag(
    next: PfnAntiLagUpdate,
    dc: &DeviceCounters,
    device: vk::Device,
    data: *const AntiLagData,
) {
    // SAFETY: caller's contract.
    unsafe {
        next(device, data);
        dc.anti_lag(data, now_ns());
    }
}

const NO_DEVICE: vk::Result = vk::Result::ERROR_OUT_OF_HOST_MEMORY;

pub(super) unsafe extern "system-unwind" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `queue`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe {
        on_device(queue, NO_DEVICE, |_, d| {
            d.queue_submit(queue, count, submits, fence)
        })
    }
}

pub(super) unsafe extern "system-unwind" fn queue_submit2(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: inside the app's call on its live `queue`, with the app's own
    // arguments, valid per the Vulkan spec (caller's contract), handed on
    // as they are.
    unsafe {
        on_device(queue, NO_DEVICE, |_, d| {
            d.queue_submit2(queue, count, submits, fence)
        })
    }
}

#[cfg(test)]
mod tests {
    //! The observe paths of the game's own frame-start calls, against the
    //! spec's structures and fake next-layer functions: no driver here
    //! offers `VK_NV_low_latency2` or `VK_AMD_anti_lag`.
    use super::*;
    use crate::layer::anti_lag::{
        AntiLagPresentationInfo, ANTI_LAG_DATA, ANTI_LAG_PRESENTATION_INFO,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// The input stage's wait in the fake driver.
    const HELD: Duration = Duration::from_millis(3);
    static LAST_DATA: AtomicUsize = AtomicUsize::new(0);
    static LAST_MARKER: AtomicUsize = AtomicUsize::new(0);

    /// A driver's `vkAntiLagUpdateAMD` that holds the input stage back.
    unsafe extern "system" fn fake_anti_lag(_: vk::Device, data: *const AntiLagData) {
        LAST_DATA.store(data as usize, Ordering::SeqCst);
        // SAFETY: null or the test's valid structures.
        let info = unsafe { data.as_ref().and_then(|d| d.presentation_info.as_ref()) };
        if info.is_some_and(|i| i.stage == 0) {
            std::thread::sleep(HELD);
        }
    }

    /// A driver's `vkSetLatencyMarkerNV`.
    unsafe extern "system" fn fake_marker(
        _: vk::Device,
        _: vk::SwapchainKHR,
        info: *const vk::SetLatencyMarkerInfoNV<'_>,
    ) {
        LAST_MARKER.store(info as usize, Ordering::SeqCst);
    }

    fn frame(dc: &DeviceCounters) -> steadyhud_counters::FrameValues {
        let mut v = [0; steadyhud_counters::MAX_COUNTERS];
        dc.table.latch(&mut v);
        v
    }

    #[test]
    fn anti_lag_input_to_present_is_timed_from_the_input_stages_return() {
        let dc = DeviceCounters::new(false, true).expect("counters");
        let ids = dc.anti_lag.as_ref().expect("anti-lag counters").0;
        let stage = |stage, frame_index| AntiLagPresentationInfo {
            s_type: ANTI_LAG_PRESENTATION_INFO,
            p_next: std::ptr::null_mut(),
            stage,
            frame_index,
        };
        let (input, present) = (stage(0, 7), stage(1, 7));
        let data = |p: &AntiLagPresentationInfo| AntiLagData {
            s_type: ANTI_LAG_DATA,
            p_next: std::ptr::null(),
            mode: 1,
            max_fps: 0,
            presentation_info: p,
        };
        let (d_in, d_present) = (data(&input), data(&present));
        let a = now_ns();
        // SAFETY: the fake driver and the test's structures.
        unsafe { pass_anti_lag(fake_anti_lag, &dc, vk::Device::null(), &d_in) };
        assert_eq!(LAST_DATA.load(Ordering::SeqCst), &d_in as *const _ as usize);
        std::thread::sleep(Duration::from_millis(1));
        // SAFETY: as above.
        unsafe { pass_anti_lag(fake_anti_lag, &dc, vk::Device::null(), &d_present) };
        let c = now_ns();
        let span = frame(&dc)[ids.input_to_present.index()];
        // From the input stage's return (after the driver's hold) to the
        // present stage's: within the calls, and without the hold.
        assert!(span >= 1_000_000, "{span} ns");
        assert!(
            span <= c - a - HELD.as_nanos() as u64,
            "{span} ns: the input stage timed before the driver's hold"
        );
        // A present stage of another frame, or no presentation info: nothing.
        let other = stage(1, 8);
        let mode_only = AntiLagData {
            presentation_info: std::ptr::null(),
            ..data(&other)
        };
        // SAFETY: as above.
        unsafe {
            pass_anti_lag(fake_anti_lag, &dc, vk::Device::null(), &data(&other));
            pass_anti_lag(fake_anti_lag, &dc, vk::Device::null(), &mode_only);
            pass_anti_lag(fake_anti_lag, &dc, vk::Device::null(), std::ptr::null());
        }
        assert_eq!(frame(&dc)[ids.input_to_present.index()], 0);
    }

    #[test]
    fn reflex_input_sample_and_simulation_start_end_at_present_start() {
        let dc = DeviceCounters::new(true, false).expect("counters");
        let ids = dc.markers.as_ref().expect("Reflex counters").0;
        let mark = |marker, id| {
            let info = vk::SetLatencyMarkerInfoNV::default()
                .present_id(id)
                .marker(marker);
            let before = now_ns();
            // SAFETY: the fake driver and the test's structure.
            unsafe {
                pass_marker(
                    fake_marker,
                    &dc,
                    vk::Device::null(),
                    vk::SwapchainKHR::null(),
                    &info,
                )
            };
            assert_eq!(
                LAST_MARKER.load(Ordering::SeqCst),
                &info as *const _ as usize
            );
            before
        };
        let a = mark(vk::LatencyMarkerNV::SIMULATION_START, 3);
        std::thread::sleep(Duration::from_millis(1));
        let b = mark(vk::LatencyMarkerNV::INPUT_SAMPLE, 3);
        std::thread::sleep(Duration::from_millis(1));
        mark(vk::LatencyMarkerNV::PRESENT_START, 3);
        let end = now_ns();
        let v = frame(&dc);
        let (sim, input) = (
            v[ids.start_to_present.index()],
            v[ids.input_to_present.index()],
        );
        // Each from its marker's call to PRESENT_START's.
        assert!(sim > input && input >= 1_000_000, "{sim} / {input} ns");
        assert!(sim <= end - a && input <= end - b, "{sim} / {input} ns");
    }
}
