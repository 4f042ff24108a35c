//! A device's statistics counters ([`steadyhud_counters`]): its table, the
//! ids of the built-in counters ([`Builtin`], declared once in the counters
//! crate by name, label and unit) and, on a device whose next layer has
//! `vkSetLatencyMarkerNV`, the Reflex markers' counters ([`Reflex`]) and
//! clock ([`DeviceCounters::mark`]). [`super::device`] makes them when the
//! config key `counters` is on; the counted hooks (`hooks/counted.rs`) and
//! the device's submit, present and swapchain code add to them, and
//! `Device::before_present` (`src/layer/present.rs`) latches them once per
//! present. The next-layer functions the hooks forward to are the device's
//! table ([`super::next`]), not kept here.

use crate::guard;
use steadyhud_counters::markers::{Marker, MarkerClock, Span};
use steadyhud_counters::{Builtin, CounterId, Counters, Reflex};
use steadyhud_sys::lock::Recover;

/// A device's counters: the table, the built-in ids, the Reflex markers.
pub struct DeviceCounters {
    pub table: std::sync::Arc<Counters>,
    pub ids: Builtin,
    /// Present when the device has `vkSetLatencyMarkerNV`.
    pub markers: Option<(Reflex, std::sync::Mutex<MarkerClock>)>,
}

impl DeviceCounters {
    /// Sets up the counters of a new device; `markers`: the next layer has
    /// `vkSetLatencyMarkerNV`, so the Reflex counters are registered too.
    pub fn new(markers: bool) -> Option<DeviceCounters> {
        let table = std::sync::Arc::new(Counters::new());
        let ids = Builtin::register(&table)?;
        let markers = markers.then_some(()).and_then(|_| {
            Some((
                Reflex::register(&table)?,
                std::sync::Mutex::new(MarkerClock::default()),
            ))
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
