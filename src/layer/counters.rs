//! A device's statistics counters ([`steadyhud_counters`]): its table, the
//! ids of the built-in counters ([`Builtin`], declared once in the counters
//! crate by name, label and unit) and, on a device whose next layer has
//! `vkSetLatencyMarkerNV`, the Reflex markers' counters ([`Reflex`]) and
//! clock ([`DeviceCounters::mark`]); on one whose next layer has
//! `vkAntiLagUpdateAMD`, Anti-Lag's ([`AntiLag`], [`DeviceCounters::anti_lag`]). [`super::device`] makes them when the
//! config key `counters` is on; the counted hooks (`hooks/counted.rs`) and
//! the device's submit, present and swapchain code add to them, and
//! `Device::before_present` (`src/layer/present.rs`) latches them once per
//! present. The next-layer functions the hooks forward to are the device's
//! table ([`super::next`]), not kept here.

use super::anti_lag::{self, AntiLagData, Stage};
use crate::guard;
use std::sync::Mutex;
use steadyhud_counters::markers::{Marker, MarkerClock, Span};
use steadyhud_counters::{AntiLag, Builtin, CounterId, Counters, Reflex};
use steadyhud_sys::lock::Recover;

/// A device's counters: the table, the built-in ids, the Reflex markers,
/// Anti-Lag's stages.
pub struct DeviceCounters {
    pub table: std::sync::Arc<Counters>,
    pub ids: Builtin,
    /// Present when the device has `vkSetLatencyMarkerNV`.
    pub markers: Option<(Reflex, Mutex<MarkerClock>)>,
    /// Present when the device has `vkAntiLagUpdateAMD`: its stages on a
    /// clock of their own (frame indices are not presentIDs).
    pub anti_lag: Option<(AntiLag, Mutex<MarkerClock>)>,
}

impl DeviceCounters {
    /// Sets up the counters of a new device; `reflex`, `anti_lag`: the
    /// next layer has `vkSetLatencyMarkerNV`, `vkAntiLagUpdateAMD`, so
    /// their counters are registered too.
    pub fn new(reflex: bool, anti_lag: bool) -> Option<DeviceCounters> {
        let table = std::sync::Arc::new(Counters::new());
        let ids = Builtin::register(&table)?;
        let clock = || Mutex::new(MarkerClock::default());
        let markers = reflex
            .then(|| Some((Reflex::register(&table)?, clock())))
            .flatten();
        let anti_lag = anti_lag
            .then(|| Some((AntiLag::register(&table)?, clock())))
            .flatten();
        Some(DeviceCounters {
            table,
            ids,
            markers,
            anti_lag,
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
            let spans = clock.lock_or_recover().mark(marker, id, t);
            for span in spans.into_iter().flatten() {
                let (id, ns) = match span {
                    Span::Simulation(ns) => (ids.sim, ns),
                    Span::RenderSubmit(ns) => (ids.submit, ns),
                    Span::FrameStartToPresent(ns) => (ids.start_to_present, ns),
                    Span::InputToPresent(ns) => (ids.input_to_present, ns),
                };
                self.table.add(id, ns);
            }
        });
    }

    /// Adds the span an Anti-Lag update closes: `data` is the app's
    /// `vkAntiLagUpdateAMD` argument, `t` when the call returned (the
    /// input stage may wait in the driver: input is read after it).
    ///
    /// # Safety
    /// `data` is null or the app's valid `VkAntiLagDataAMD`.
    pub unsafe fn anti_lag(&self, data: *const AntiLagData, t: u64) {
        // SAFETY: null or the app's valid structure (caller).
        let Some((stage, frame)) = (unsafe { anti_lag::stage_of(data) }) else {
            return;
        };
        guard::contain((), || {
            let Some((ids, clock)) = self.anti_lag.as_ref() else {
                return;
            };
            // The input stage is an input sample, the present stage a
            // present start, on Anti-Lag's own clock.
            let marker = match stage {
                Stage::Input => Marker::InputSample,
                Stage::Present => Marker::PresentStart,
            };
            let spans = clock.lock_or_recover().mark(marker, frame, t);
            for span in spans.into_iter().flatten() {
                if let Span::InputToPresent(ns) = span {
                    self.table.add(ids.input_to_present, ns);
                }
            }
        });
    }
}
