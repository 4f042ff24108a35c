//! A device's statistics counters ([`steadyhud_counters`]): its table with
//! the built-in counters' ids ([`Builtin`], declared once in the counters
//! crate by name, label and unit), and the Reflex markers' counters
//! ([`Reflex`]) on devices that have them. The counted hooks that add to
//! them are [`super::hooks`]; their latch is in the present path.

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
