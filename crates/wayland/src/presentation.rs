//! When each frame reached the screen, from the compositor: Wayland's
//! `wp_presentation` feedback on the game's own surfaces, one reader of
//! the display's [`crate::connection`] ([`Feedback`]: its slots and
//! clock).
//!
//! **Asking.** The client records every Wayland surface the game makes
//! (`vkCreateWaylandSurfaceKHR`, `eglCreateWindowSurface` on a
//! `wl_egl_window`) on the connection, with its `wl_display` and
//! `wl_surface`. On each present to such a surface, *before* the present
//! is passed down, the connection's present call asks [`Feedback::ask`]
//! to send `wp_presentation.feedback(surface)`. The protocol attaches a
//! feedback to the surface's next commit, and the WSI (Mesa's Vulkan WSI,
//! EGL) commits inside the present call we are about to make, on this
//! same thread: so the feedback is the frame's. Several feedbacks on one
//! commit all get the same answer, so a game or WSI asking for its own
//! loses nothing. The answer is `presented` (the time, the refresh period,
//! the vblank counter, flags) or `discarded` (replaced before it was ever
//! shown: a dropped frame); it goes to the frame's [`Sink`] with the
//! present's time, which is how a late answer finds its frame.
//!
//! **We never read the socket**: the connection's queue is ours, and its
//! pump only dispatches what is already there (see
//! [`crate::connection`]). The `wp_presentation` global is bound when the
//! connection's registry announces it; its `clock_id` arrives before any
//! answer we ask for.
//!
//! **Bounded.** At most [`SLOTS`] feedbacks are out per display; with all
//! out (nobody reads the socket) a present is not asked about (its frame
//! then has no answer, never a wrong one) and counted.
//!
//! **Clock.** Answers are in the compositor's `clock_id`: CLOCK_MONOTONIC
//! is ours; CLOCK_MONOTONIC_RAW (Weston's headless backend) is converted
//! with an offset sampled when the clock is learnt and re-sampled every
//! second, adopted only when it moved by more than [`OFFSET_SLEW_NS`]
//! (an undisciplined clock keeps it, so intervals stay exact). Any other
//! clock: no feedback on that display, one line.
//!
//! **Guard.** An answer earlier than its present is impossible when the
//! feedback landed on the present's own commit; if a WSI committed
//! elsewhere (on a thread of its own, say), answers would belong to
//! other frames. After [`WRONG_ORDER_LIMIT`] such answers the display is
//! given up, with one line.

use crate::ffi::MARSHAL_DESTROY;
use crate::ffi::{Wayland, WlInterface, WlMessage, WlProxy};
use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::Arc;
use steadyhud_sys::guard;

/// Feedbacks out at once, per display.
pub const SLOTS: usize = 64;

/// A re-sampled MONOTONIC − RAW offset is adopted when it moved by more.
pub const OFFSET_SLEW_NS: i64 = 50_000;

/// Answers earlier than their present before a display is given up.
pub const WRONG_ORDER_LIMIT: u32 = 3;

/// How often the clock offset is re-sampled.
const RESAMPLE_NS: u64 = 1_000_000_000;

/// What became of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// On screen at `displayed_ns` (CLOCK_MONOTONIC).
    Presented {
        displayed_ns: u64,
        /// The output's refresh period, ns (0: unknown).
        refresh_ns: u32,
        /// The output's vblank counter (0 when it has none).
        msc: u64,
        /// `wp_presentation_feedback.kind` flags.
        flags: u32,
    },
    /// Replaced before it was ever shown.
    Discarded,
}

/// Where a frame's answer goes (the frame's capture stream).
pub trait Sink: Send + Sync {
    /// The answer for the present made at `present_t` (the key the caller
    /// gave the present call). Called on whichever thread dispatched our
    /// queue, under the connections' lock: no waiting here.
    fn feedback(&self, present_t: u64, outcome: Outcome);
}

/// `wp_presentation` and `wp_presentation_feedback`, which libwayland
/// does not carry (stable/presentation-time, version 1).
pub struct Tables {
    presentation: &'static WlInterface,
    feedback: &'static WlInterface,
}

// SAFETY: pointers into leaked, never written tables and libwayland's
// immutable interface data.
unsafe impl Send for Tables {}
// SAFETY: as above.
unsafe impl Sync for Tables {}

impl Tables {
    /// Built once per process (leaked: libwayland keeps pointers to them
    /// in every proxy).
    pub fn new(wl: &Wayland) -> Tables {
        fn leak<T>(v: Vec<T>) -> *const T {
            Box::leak(v.into_boxed_slice()).as_ptr()
        }
        let none: *const *const WlInterface = leak(vec![null::<WlInterface>(); 7]);
        let msg = |name: &'static CStr, signature: &'static CStr, types| WlMessage {
            name: name.as_ptr(),
            signature: signature.as_ptr(),
            types,
        };
        let feedback: &'static WlInterface = Box::leak(Box::new(WlInterface {
            name: c"wp_presentation_feedback".as_ptr(),
            version: 1,
            method_count: 0,
            methods: null(),
            event_count: 3,
            events: leak(vec![
                msg(c"sync_output", c"o", leak(vec![wl.output_interface])),
                msg(c"presented", c"uuuuuuu", none),
                msg(c"discarded", c"", none),
            ]),
        }));
        let presentation: &'static WlInterface = Box::leak(Box::new(WlInterface {
            name: c"wp_presentation".as_ptr(),
            version: 1,
            method_count: 2,
            methods: leak(vec![
                msg(c"destroy", c"", none),
                msg(
                    c"feedback",
                    c"on",
                    leak(vec![wl.surface_interface, feedback as *const WlInterface]),
                ),
            ]),
            event_count: 1,
            events: leak(vec![msg(c"clock_id", c"u", none)]),
        }));
        Tables {
            presentation,
            feedback,
        }
    }
}

/// The compositor's presentation clock, as we convert it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clock {
    /// CLOCK_MONOTONIC: ours.
    Monotonic,
    /// CLOCK_MONOTONIC_RAW, with MONOTONIC − RAW and when it was sampled.
    Raw { offset: i64, sampled: u64 },
}

/// MONOTONIC − RAW, from the closest of three MONOTONIC, RAW, MONOTONIC
/// readings (the RAW taken between two MONOTONICs, against their middle).
pub fn raw_offset_ns() -> i64 {
    let read = |id| steadyhud_sys::clock::clock_ns(id) as i64;
    (0..3)
        .map(|_| {
            let a = read(libc::CLOCK_MONOTONIC);
            let r = read(libc::CLOCK_MONOTONIC_RAW);
            let b = read(libc::CLOCK_MONOTONIC);
            (b - a, a + (b - a) / 2 - r)
        })
        .min_by_key(|&(gap, _)| gap)
        .map_or(0, |(_, offset)| offset)
}

/// One outstanding feedback.
struct Slot {
    /// The feedback the slot belongs to (its listener's way back).
    owner: *mut Feedback,
    proxy: *mut WlProxy,
    present_t: u64,
    sink: Option<Arc<dyn Sink>>,
}

/// The feedback reader of one display's connection: our `wp_presentation`,
/// its clock and the outstanding feedbacks. It lives inside the
/// connection's heap record, so its address (the listeners' user data) is
/// stable; [`Feedback::settle`] points the slots at it once it is there.
pub struct Feedback {
    wl: &'static Wayland,
    tables: &'static Tables,
    presentation: *mut WlProxy,
    clock: Option<Clock>,
    slots: Box<[Slot]>,
    /// Presents not asked about: every slot was out.
    pub slots_full: u64,
    wrong_order: u32,
    /// Given up (a foreign clock, answers out of order): asks no more.
    pub gave_up: bool,
    /// Lines to say (printed off the present path).
    pub notes: Vec<String>,
}

/// `wp_presentation`'s `destroy` and `feedback`.
const PRESENTATION_DESTROY: u32 = 0;
const PRESENTATION_FEEDBACK: u32 = 1;

impl Feedback {
    /// Nothing bound yet.
    pub fn new(wl: &'static Wayland, tables: &'static Tables) -> Feedback {
        let slots = (0..SLOTS)
            .map(|_| Slot {
                owner: null_mut(),
                proxy: null_mut(),
                present_t: 0,
                sink: None,
            })
            .collect();
        Feedback {
            wl,
            tables,
            presentation: null_mut(),
            clock: None,
            slots,
            slots_full: 0,
            wrong_order: 0,
            gave_up: false,
            notes: Vec::new(),
        }
    }

    /// Points the slots at this feedback, now at its final address.
    pub fn settle(&mut self) {
        let me: *mut Feedback = self;
        for s in self.slots.iter_mut() {
            s.owner = me;
        }
    }

    /// Binds the `wp_presentation` global `name` the registry announced
    /// (once).
    ///
    /// # Safety
    /// `registry` is the connection's live registry, on our queue; `self`
    /// is settled and outlives the proxy ([`Feedback::release`]).
    pub unsafe fn bind(&mut self, registry: *mut WlProxy, name: u32) {
        if !self.presentation.is_null() {
            return;
        }
        let wl = self.wl;
        let iface = self.tables.presentation;
        // SAFETY: our live registry (caller); our table.
        let p = unsafe { wl.bind(registry, iface, name, 1) };
        if p.is_null() {
            return;
        }
        self.presentation = p;
        let me: *mut Feedback = self;
        // SAFETY: this feedback outlives the proxy (released first); the
        // listener covers wp_presentation v1.
        unsafe {
            (wl.add_listener)(
                p,
                (&PRESENTATION_LISTENER as *const PresentationListener).cast(),
                me.cast(),
            );
        }
    }

    /// Re-samples the MONOTONIC − RAW offset (every [`RESAMPLE_NS`]), after
    /// a pump.
    pub fn keep_clock(&mut self) {
        if let Some(Clock::Raw { offset, sampled }) = self.clock {
            let now = steadyhud_sys::clock::now_ns();
            if now.saturating_sub(sampled) > RESAMPLE_NS {
                let fresh = raw_offset_ns();
                let offset = if (fresh - offset).abs() > OFFSET_SLEW_NS {
                    fresh
                } else {
                    offset
                };
                self.clock = Some(Clock::Raw {
                    offset,
                    sampled: now,
                });
            }
        }
    }

    /// Asks for the feedback of the next commit of `surface`, for the
    /// present at `present_t`.
    pub(crate) fn ask(
        &mut self,
        surface: *mut WlProxy,
        sink: Arc<dyn Sink>,
        present_t: u64,
    ) -> bool {
        // The clock need not be known yet: its event answers the bind,
        // so it reaches us before any feedback's.
        if self.presentation.is_null() || self.gave_up {
            return false;
        }
        let Some(slot) = self.slots.iter_mut().find(|s| s.proxy.is_null()) else {
            self.slots_full += 1;
            return false;
        };
        let wl = self.wl;
        // SAFETY: our live wp_presentation; `surface` is the game's live
        // wl_surface (only its id is read); feedback's arguments are the
        // surface and the new_id.
        let proxy = unsafe {
            let version = (wl.proxy_version)(self.presentation);
            (wl.marshal_flags)(
                self.presentation,
                PRESENTATION_FEEDBACK,
                self.tables.feedback,
                version,
                0,
                surface,
                null_mut::<c_void>(),
            )
        };
        if proxy.is_null() {
            return false;
        }
        slot.proxy = proxy;
        slot.present_t = present_t;
        slot.sink = Some(sink);
        // SAFETY: the slot outlives the proxy (released before the
        // feedback goes); the listener covers v1.
        unsafe {
            (wl.add_listener)(
                proxy,
                (&FEEDBACK_LISTENER as *const FeedbackListener).cast(),
                (slot as *mut Slot).cast(),
            )
        };
        true
    }

    fn on_clock(&mut self, id: u32) {
        self.clock = match id as i32 {
            libc::CLOCK_MONOTONIC => Some(Clock::Monotonic),
            libc::CLOCK_MONOTONIC_RAW => Some(Clock::Raw {
                offset: raw_offset_ns(),
                sampled: steadyhud_sys::clock::now_ns(),
            }),
            other => {
                self.notes.push(format!(
                    "no display timing on this Wayland display: the compositor's clock {other} is neither CLOCK_MONOTONIC nor CLOCK_MONOTONIC_RAW"
                ));
                self.gave_up = true;
                None
            }
        };
    }

    /// The answer for `slot`; frees it.
    fn answer(&mut self, slot: *mut Slot, outcome: Option<(u64, u32, u64, u32)>) {
        // SAFETY: one of our slots (the listener's user data), live.
        let slot = unsafe { &mut *slot };
        let (proxy, present_t, sink) = (
            std::mem::replace(&mut slot.proxy, null_mut()),
            slot.present_t,
            slot.sink.take(),
        );
        if !proxy.is_null() {
            // SAFETY: our feedback proxy, answered (its events are
            // destructors), destroyed once.
            unsafe { (self.wl.proxy_destroy)(proxy) };
        }
        let Some(sink) = sink else { return };
        let outcome = match outcome {
            None => Outcome::Discarded,
            Some((clock_ns, refresh_ns, msc, flags)) => {
                let displayed_ns = match self.clock {
                    Some(Clock::Monotonic) => clock_ns,
                    Some(Clock::Raw { offset, .. }) => (clock_ns as i64 + offset) as u64,
                    None => return,
                };
                if displayed_ns < present_t && !self.gave_up {
                    self.wrong_order += 1;
                    if self.wrong_order >= WRONG_ORDER_LIMIT {
                        self.gave_up = true;
                        self.notes.push(
                            "no display timing on this Wayland display: the feedback does not follow the presents (answers came before their presents)".into(),
                        );
                    }
                    return;
                }
                Outcome::Presented {
                    displayed_ns,
                    refresh_ns,
                    msc,
                    flags,
                }
            }
        };
        if !self.gave_up {
            sink.feedback(present_t, outcome);
        }
    }

    /// Destroys our outstanding feedbacks and `wp_presentation` (their
    /// frames get no answer); the connection calls it before its queue
    /// goes. Idempotent.
    pub fn release(&mut self) {
        let wl = self.wl;
        // SAFETY: our own proxies, each destroyed once (nulled after); the
        // display is still live (the connection is torn down before its
        // last surface goes).
        unsafe {
            for s in self.slots.iter_mut() {
                if !s.proxy.is_null() {
                    (wl.proxy_destroy)(s.proxy);
                    s.proxy = null_mut();
                    s.sink = None;
                }
            }
            if !self.presentation.is_null() {
                let v = (wl.proxy_version)(self.presentation);
                (wl.marshal_flags)(
                    self.presentation,
                    PRESENTATION_DESTROY,
                    null(),
                    v,
                    MARSHAL_DESTROY,
                );
                self.presentation = null_mut();
            }
        }
    }
}

// Listeners: `#[repr(C)]` tables of each interface's events in protocol
// order. Handlers contain panics (unwinding into libwayland would abort
// the game).

#[repr(C)]
struct PresentationListener {
    clock_id: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32),
}

static PRESENTATION_LISTENER: PresentationListener = PresentationListener {
    clock_id: presentation_clock_id,
};

/// # Safety
/// Called by libwayland with our feedback as `data`, inside the
/// connection's pump.
unsafe extern "C" fn presentation_clock_id(data: *mut c_void, _: *mut WlProxy, id: u32) {
    // SAFETY: our live feedback (caller), not otherwise borrowed now.
    let f = unsafe { &mut *data.cast::<Feedback>() };
    guard::contain((), || f.on_clock(id));
}

#[repr(C)]
struct FeedbackListener {
    sync_output: unsafe extern "C" fn(*mut c_void, *mut WlProxy, *mut WlProxy),
    presented: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, u32, u32, u32, u32, u32, u32),
    discarded: unsafe extern "C" fn(*mut c_void, *mut WlProxy),
}

static FEEDBACK_LISTENER: FeedbackListener = FeedbackListener {
    sync_output: feedback_sync_output,
    presented: feedback_presented,
    discarded: feedback_discarded,
};

unsafe extern "C" fn feedback_sync_output(_: *mut c_void, _: *mut WlProxy, _: *mut WlProxy) {}

/// # Safety
/// Called by libwayland with one of our slots as `data`, inside the
/// connection's pump.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn feedback_presented(
    data: *mut c_void,
    _: *mut WlProxy,
    sec_hi: u32,
    sec_lo: u32,
    nsec: u32,
    refresh: u32,
    seq_hi: u32,
    seq_lo: u32,
    flags: u32,
) {
    let slot = data.cast::<Slot>();
    // SAFETY: the slot's feedback is live (it outlives its slots' proxies)
    // and not otherwise borrowed during the dispatch.
    let f = unsafe { &mut *(*slot).owner };
    let secs = (u64::from(sec_hi) << 32) | u64::from(sec_lo);
    let at = secs * 1_000_000_000 + u64::from(nsec);
    let msc = (u64::from(seq_hi) << 32) | u64::from(seq_lo);
    guard::contain((), || f.answer(slot, Some((at, refresh, msc, flags))));
}

/// # Safety
/// As [`feedback_presented`].
unsafe extern "C" fn feedback_discarded(data: *mut c_void, _: *mut WlProxy) {
    let slot = data.cast::<Slot>();
    // SAFETY: as in `feedback_presented`.
    let f = unsafe { &mut *(*slot).owner };
    guard::contain((), || f.answer(slot, None));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_raw_offset_is_stable_on_an_undisciplined_clock() {
        // Two samples a moment apart differ by the read noise only (or by
        // a real NTP slew, well under the adoption threshold in 10 ms).
        let a = raw_offset_ns();
        std::thread::sleep(std::time::Duration::from_millis(10));
        let b = raw_offset_ns();
        assert!((a - b).abs() < OFFSET_SLEW_NS, "{a} vs {b}");
    }
}
