//! A device's statistics counters ([`steadyhud_counters`]): its table, the
//! ids of the built-in counters, the next-layer functions the counted hooks
//! forward to ([`super::hooks`]), and the Reflex markers.

use crate::guard;
use crate::layer::loader::next_fn;
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

impl DeviceCounters {
    /// Adds the span a Reflex marker closes (`raw` of frame `id`, at `t`).
    pub fn mark(&self, id: u64, raw: i32, t: u64) {
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
