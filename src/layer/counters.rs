//! A device's statistics counters ([`steadyhud_counters`]): its table, the
//! ids of the built-in counters ([`Builtin`]) and, on a device whose next
//! layer has `vkSetLatencyMarkerNV`, the Reflex markers' counters and clock
//! ([`DeviceCounters::mark`]). [`super::device`] makes them when the config
//! key `counters` is on; the counted hooks (`hooks/counted.rs`) and the
//! device's submit, present and swapchain code add to them, and
//! `Device::before_present` (`src/layer/present.rs`) latches them once per
//! present. The next-layer functions the hooks forward to are the device's
//! table ([`super::next`]), not kept here.

use crate::guard;
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

/// Counters fed by `VK_NV_low_latency2` markers.
#[derive(Clone, Copy, Debug)]
pub struct MarkerIds {
    pub sim: CounterId,
    pub submit: CounterId,
    pub start_to_present: CounterId,
}

/// A device's counters: the table, the built-in ids, the Reflex markers.
pub struct DeviceCounters {
    pub table: std::sync::Arc<Counters>,
    pub ids: Builtin,
    /// Present when the device has `vkSetLatencyMarkerNV`.
    pub markers: Option<(MarkerIds, std::sync::Mutex<MarkerClock>)>,
}

impl DeviceCounters {
    /// Sets up the counters of a new device; `markers`: the next layer has
    /// `vkSetLatencyMarkerNV`, so the Reflex counters are registered too.
    pub fn new(markers: bool) -> Option<DeviceCounters> {
        let table = std::sync::Arc::new(Counters::new());
        let ids = Builtin::register(&table)?;
        let markers = markers.then_some(()).and_then(|_| {
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
