//! When each frame reached the screen, from the compositor: Wayland's
//! `wp_presentation` feedback on the game's own surfaces.
//!
//! **Asking.** The layer records every Wayland surface the game makes
//! (`vkCreateWaylandSurfaceKHR`, `eglCreateWindowSurface` on a
//! `wl_egl_window`) with its `wl_display` and `wl_surface`
//! ([`Presentation::surface_created`]). On each present to such a
//! surface, *before* the present is passed down, [`Presentation::on_present`]
//! sends `wp_presentation.feedback(surface)`. The protocol attaches a
//! feedback to the surface's next commit, and the WSI (Mesa's Vulkan WSI,
//! EGL) commits inside the present call we are about to make, on this
//! same thread: so the feedback is the frame's. Several feedbacks on one
//! commit all get the same answer, so a game or WSI asking for its own
//! loses nothing. The answer is `presented` (the time, the refresh period,
//! the vblank counter, flags) or `discarded` (replaced before it was ever
//! shown: a dropped frame); it goes to the frame's [`Sink`] with the
//! present's time, which is how a late answer finds its frame.
//!
//! **We never read the socket.** Everything is on an event queue of our
//! own: a wrapper of the game's display set to that queue makes our
//! registry, our `wp_presentation` and (inherited from it) every feedback
//! deliver there. Each present only dispatches what is already on our
//! queue (`wl_display_dispatch_queue_pending`) under a lock it only tries;
//! it never calls `prepare_read`/`read_events` (a second reader waits on
//! the others inside the game's present, and reading steals the game's
//! wake-ups). Our events arrive whenever someone reads: Mesa's FIFO
//! present and EGL's throttle read every frame, games read for input.
//! Binding is asynchronous: the first present sends `get_registry`, a
//! later one finds the `wp_presentation` global and binds it; its
//! `clock_id` arrives before any answer we ask for.
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
//!
//! **Lifetime.** As for the hotkeys (`steadyhud-input`): the surface's
//! destruction, while its display is live, tears our proxies and queue
//! down; an owner (Vulkan instance, EGL display) destroyed with surfaces
//! still recorded leaks their binding (the display may be gone). A forked
//! child never touches its parent's connection. One record
//! ([`Presentation`]) holds it all; the only statics are listener tables.

use crate::ffi::MARSHAL_DESTROY;
use crate::ffi::{
    RegistryListener, Wayland, WlDisplay, WlEventQueue, WlInterface, WlMessage, WlProxy,
};
use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use steadyhud_sys::guard;
use steadyhud_sys::lock::Recover;

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
    /// gave [`Presentation::on_present`]). Called on whichever thread
    /// dispatched our queue, under our lock: no waiting here.
    fn feedback(&self, present_t: u64, outcome: Outcome);
}

/// A Wayland surface of the game's.
struct Surface {
    /// The caller's key (`VkSurfaceKHR`, `EGLSurface`).
    key: u64,
    /// What owns it (instance, EGL display): see [`Presentation::owner_destroyed`].
    owner: usize,
    display: *mut WlDisplay,
    wl_surface: *mut WlProxy,
}

#[derive(Default)]
struct State {
    surfaces: Vec<Surface>,
    bindings: Vec<Owned>,
    /// Displays given up (a failed binding, a foreign clock, answers out
    /// of order): not tried again.
    given_up: Vec<usize>,
    notes: Vec<String>,
}

// SAFETY: the raw pointers are the game's display and surfaces and our
// proxies on them; libwayland-client is thread-safe, and every use is
// under `Presentation::state`'s mutex.
unsafe impl Send for State {}

/// The process's presentation feedback: libraries, surfaces, bindings.
pub struct Presentation {
    libs: OnceLock<Option<Libs>>,
    state: Mutex<State>,
    /// The process the state belongs to (0 = unused): a forked child gets
    /// none (module docs).
    owner: steadyhud_sys::owner::Owner,
    /// Whether any surface is recorded: a present's one load otherwise.
    any_surface: AtomicBool,
}

/// libwayland and our protocol tables.
struct Libs {
    wl: Wayland,
    tables: Tables,
}

/// `wp_presentation` and `wp_presentation_feedback`, which libwayland
/// does not carry (stable/presentation-time, version 1).
struct Tables {
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
    fn new(wl: &Wayland) -> Tables {
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

impl Default for Presentation {
    fn default() -> Presentation {
        Presentation::new()
    }
}

impl State {
    /// The index of our binding on `display`, made now if there is none
    /// (`None`: the display was given up, or binding failed now, with a
    /// note).
    ///
    /// # Safety
    /// `display` is live.
    unsafe fn binding_for(
        &mut self,
        libs: &'static Libs,
        display: *mut WlDisplay,
    ) -> Option<usize> {
        if self.given_up.contains(&(display as usize)) {
            return None;
        }
        if let Some(i) = self
            .bindings
            .iter()
            .position(|b| b.get_ref().display == display)
        {
            return Some(i);
        }
        // SAFETY: caller's contract.
        match unsafe { Binding::bind(libs, display) } {
            Ok(b) => {
                self.bindings.push(b);
                Some(self.bindings.len() - 1)
            }
            Err(why) => {
                self.notes
                    .push(format!("no display timing on this Wayland display: {why}"));
                self.given_up.push(display as usize);
                None
            }
        }
    }
}

impl Presentation {
    /// Nothing recorded, nothing loaded.
    pub const fn new() -> Presentation {
        Presentation {
            libs: OnceLock::new(),
            state: Mutex::new(State {
                surfaces: Vec::new(),
                bindings: Vec::new(),
                given_up: Vec::new(),
                notes: Vec::new(),
            }),
            owner: steadyhud_sys::owner::Owner::new(),
            any_surface: AtomicBool::new(false),
        }
    }

    fn owned_here(&self) -> bool {
        self.owner.here()
    }

    fn state(&self) -> Option<std::sync::MutexGuard<'_, State>> {
        self.owned_here().then(|| self.state.lock_or_recover())
    }

    /// Records the game's surface `key` (owned by `owner`) on `display`,
    /// whose `wl_surface` is `wl_surface`, loads libwayland (first time:
    /// surface creation, never a present) and binds on the display unless
    /// bound already: `get_registry` is sent now, so the global is usually
    /// known by the first present and even that one is asked about. Call
    /// it where the display is known live (its surface is being made or
    /// presented to). Returns whether its presents can be followed.
    ///
    /// # Safety
    /// `display` is the game's live `wl_display` and `wl_surface` a live
    /// `wl_surface` on it.
    pub unsafe fn surface_created(
        &'static self,
        owner: usize,
        key: u64,
        display: *mut c_void,
        wl_surface: *mut c_void,
    ) -> bool {
        if display.is_null() || wl_surface.is_null() || key == 0 {
            return false;
        }
        let loaded = self
            .libs
            .get_or_init(|| match Wayland::load() {
                Ok(wl) => {
                    let tables = Tables::new(&wl);
                    Some(Libs { wl, tables })
                }
                Err(e) => {
                    guard::say(format_args!("steadyhud: no display timing on Wayland: {e}"));
                    None
                }
            })
            .is_some();
        let Some(mut st) = self.state() else {
            return false;
        };
        st.surfaces.retain(|s| s.key != key);
        let Some(Some(libs)) = self.libs.get() else {
            return false;
        };
        st.surfaces.push(Surface {
            key,
            owner,
            display,
            wl_surface,
        });
        self.any_surface.store(true, Ordering::Relaxed);
        // SAFETY: the display is live (caller's contract).
        unsafe { st.binding_for(libs, display) }.is_some() || loaded
    }

    /// Dispatches the answers already on our queue for surface `key`'s
    /// display (never reads or waits; skipped if the lock is busy): call
    /// where the display is known live and the frames are ending (the
    /// swapchain being destroyed), so answers the game read after its
    /// last present still reach their rows.
    pub fn pump(&self, key: u64) {
        if !self.any_surface.load(Ordering::Relaxed) || !self.owned_here() {
            return;
        }
        let Ok(mut st) = self.state.try_lock() else {
            return;
        };
        let Some(display) = st.surfaces.iter().find(|s| s.key == key).map(|s| s.display) else {
            return;
        };
        if let Some(b) = st
            .bindings
            .iter_mut()
            .find(|b| b.get_ref().display == display)
        {
            // SAFETY: our live binding, no reference into it held; its
            // display is live (caller).
            unsafe { Binding::pump(b.ptr()) };
        }
    }

    /// Whether `key` is a recorded Wayland surface.
    pub fn knows(&self, key: u64) -> bool {
        self.any_surface.load(Ordering::Relaxed)
            && self
                .state()
                .is_some_and(|st| st.surfaces.iter().any(|s| s.key == key))
    }

    /// Forgets surface `key` (call before it is really destroyed: its
    /// display is still live then); the last surface of a display tears
    /// our binding on it down. Outstanding feedbacks are dropped: their
    /// frames get no answer.
    pub fn surface_destroyed(&self, key: u64) {
        self.pump(key);
        self.forget(|s| s.key == key, true);
    }

    /// Forgets the surfaces of an owner being destroyed (Vulkan instance,
    /// EGL display); bindings left without a surface are leaked, not torn
    /// down: the display may be gone already.
    pub fn owner_destroyed(&self, owner: usize) {
        self.forget(|s| s.owner == owner, false);
    }

    fn forget(&self, gone: impl Fn(&Surface) -> bool, display_live: bool) {
        let Some(mut st) = self.state() else { return };
        st.surfaces.retain(|s| !gone(s));
        self.any_surface
            .store(!st.surfaces.is_empty(), Ordering::Relaxed);
        let State {
            surfaces, bindings, ..
        } = &mut *st;
        let (keep, drop): (Vec<Owned>, Vec<Owned>) = std::mem::take(bindings)
            .into_iter()
            .partition(|b| surfaces.iter().any(|s| s.display == b.get_ref().display));
        *bindings = keep;
        for b in drop {
            if display_live {
                std::mem::drop(b); // tears the proxies and the queue down
            } else {
                std::mem::forget(b);
            }
        }
    }

    /// The present path's part, for a present to surface `key` made at
    /// `present_t` (the frame's key; CLOCK_MONOTONIC): runs the answers
    /// already on our queue, binds on this display (first time), and asks
    /// for this present's feedback. Call before the present is passed
    /// down. Returns true when an answer will come to `sink` (and only
    /// then). Never waits and never reads the socket; the one allocation
    /// is libwayland's for the new feedback proxy.
    pub fn on_present<S: Sink + 'static>(
        &'static self,
        key: u64,
        sink: &Arc<S>,
        present_t: u64,
    ) -> bool {
        if !self.any_surface.load(Ordering::Relaxed) {
            return false;
        }
        let Some(Some(libs)) = self.libs.get() else {
            return false;
        };
        if !self.owned_here() {
            return false;
        }
        let mut st = match self.state.try_lock() {
            Ok(st) => st,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        let Some((display, wl_surface)) = st
            .surfaces
            .iter()
            .find(|s| s.key == key)
            .map(|s| (s.display, s.wl_surface))
        else {
            return false;
        };
        // SAFETY: the game is presenting to a surface of `display`: it is
        // live, and stays so until the surface is destroyed (which tears
        // the binding down first) or its owner is.
        let Some(i) = (unsafe { st.binding_for(libs, display) }) else {
            return false;
        };
        let State {
            bindings,
            given_up,
            notes,
            ..
        } = &mut *st;
        let b = &mut bindings[i];
        // SAFETY: our live binding, no reference into it held; its display
        // is live (above).
        unsafe { Binding::pump(b.ptr()) };
        let b = b.get();
        notes.append(&mut b.notes);
        if b.gave_up {
            given_up.push(display as usize);
            return false;
        }
        b.ask(wl_surface, sink.clone(), present_t)
    }

    /// Lines the bindings had to say (printed by the caller off the
    /// present path, e.g. the analysis thread).
    pub fn take_notes(&self) -> Vec<String> {
        match self.state.try_lock() {
            Ok(mut st) if self.owned_here() => std::mem::take(&mut st.notes),
            _ => Vec::new(),
        }
    }

    /// Presents not asked about because all [`SLOTS`] were out, over every
    /// live binding.
    pub fn slots_full(&self) -> u64 {
        self.state().map_or(0, |st| {
            st.bindings.iter().map(|b| b.get_ref().slots_full).sum()
        })
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
    binding: *mut Binding,
    proxy: *mut WlProxy,
    present_t: u64,
    sink: Option<Arc<dyn Sink>>,
}

/// Our proxies on one display.
struct Binding {
    this: *mut Binding,
    libs: &'static Libs,
    display: *mut WlDisplay,
    queue: *mut WlEventQueue,
    wrapper: *mut WlProxy,
    registry: *mut WlProxy,
    presentation: *mut WlProxy,
    clock: Option<Clock>,
    slots: Box<[Slot]>,
    /// Presents not asked about: every slot was out.
    slots_full: u64,
    wrong_order: u32,
    gave_up: bool,
    notes: Vec<String>,
}

/// Owns a [`Binding`] through the raw pointer its listeners get (as the
/// hotkeys' binding does); freeing it tears the proxies down.
struct Owned(std::ptr::NonNull<Binding>);

// SAFETY: as `State` (used only under its mutex).
unsafe impl Send for Owned {}

impl Owned {
    fn new(b: Binding) -> Owned {
        let p = Box::into_raw(Box::new(b));
        // SAFETY: just allocated, not yet shared; the slots point back.
        unsafe {
            (*p).this = p;
            for s in (*p).slots.iter_mut() {
                s.binding = p;
            }
        }
        // SAFETY: `Box::into_raw` never returns null.
        Owned(unsafe { std::ptr::NonNull::new_unchecked(p) })
    }

    fn ptr(&self) -> *mut Binding {
        self.0.as_ptr()
    }

    /// The binding, while no dispatch runs (under the state's lock, and
    /// only [`Binding::pump`] dispatches).
    fn get(&mut self) -> &mut Binding {
        // SAFETY: live until drop; listeners only run inside `pump`.
        unsafe { &mut *self.0.as_ptr() }
    }

    fn get_ref(&self) -> &Binding {
        // SAFETY: as `get`.
        unsafe { &*self.0.as_ptr() }
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` in `new`, freed exactly once.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// `wl_display.get_registry`, `wl_registry.bind`, `wp_presentation`'s
/// `destroy` and `feedback`.
const DISPLAY_GET_REGISTRY: u32 = 1;
const REGISTRY_BIND: u32 = 0;
const PRESENTATION_DESTROY: u32 = 0;
const PRESENTATION_FEEDBACK: u32 = 1;

impl Binding {
    /// Our queue, a wrapper of `display` on it and `get_registry` through
    /// it; the globals arrive with a later dispatch.
    ///
    /// # Safety
    /// `display` is live and outlives the binding.
    unsafe fn bind(libs: &'static Libs, display: *mut WlDisplay) -> Result<Owned, &'static str> {
        let wl = &libs.wl;
        // SAFETY: `display` is live (caller).
        if unsafe { (wl.get_error)(display) } != 0 {
            return Err("the game's Wayland connection has failed");
        }
        // SAFETY: as above.
        let queue = unsafe { (wl.create_queue)(display) };
        if queue.is_null() {
            return Err("wl_display_create_queue failed");
        }
        // SAFETY: as above; a display is a proxy.
        let wrapper = unsafe { (wl.create_wrapper)(display) };
        if wrapper.is_null() {
            // SAFETY: our empty queue.
            unsafe { (wl.queue_destroy)(queue) };
            return Err("wl_proxy_create_wrapper failed");
        }
        let slots = (0..SLOTS)
            .map(|_| Slot {
                binding: null_mut(),
                proxy: null_mut(),
                present_t: 0,
                sink: None,
            })
            .collect();
        let mut owned = Owned::new(Binding {
            this: null_mut(),
            libs,
            display,
            queue,
            wrapper,
            registry: null_mut(),
            presentation: null_mut(),
            clock: None,
            slots,
            slots_full: 0,
            wrong_order: 0,
            gave_up: false,
            notes: Vec::new(),
        });
        let b = owned.get();
        // SAFETY: the wrapper is ours; get_registry takes a new_id only.
        unsafe {
            (wl.set_queue)(wrapper, queue);
            let version = (wl.proxy_version)(wrapper);
            b.registry = (wl.marshal_flags)(
                wrapper,
                DISPLAY_GET_REGISTRY,
                wl.registry_interface,
                version,
                0,
                null_mut::<c_void>(),
            );
        }
        if b.registry.is_null() {
            return Err("wl_display.get_registry failed");
        }
        // SAFETY: the binding outlives the registry (destroyed first in
        // drop); the listener covers wl_registry v1.
        unsafe {
            (wl.add_listener)(
                b.registry,
                (&REGISTRY_LISTENER as *const RegistryListener).cast(),
                b.this.cast(),
            );
            (wl.flush)(display);
        }
        Ok(owned)
    }

    /// Runs the events already on our queue; never reads or waits. Only
    /// this dispatches our queue, so our listeners run only here, under
    /// the state's lock.
    ///
    /// # Safety
    /// `this` is live, with no reference into it held across the call.
    unsafe fn pump(this: *mut Binding) {
        // SAFETY: caller's contract; copied out before the dispatch.
        let (wl, display, queue) = unsafe { (&(*this).libs.wl, (*this).display, (*this).queue) };
        // SAFETY: the display is live while we are bound.
        unsafe {
            if (wl.get_error)(display) != 0 {
                return;
            }
            (wl.dispatch_queue_pending)(display, queue);
        }
        // SAFETY: the dispatch is over; nothing else borrows it.
        let b = unsafe { &mut *this };
        if let Some(Clock::Raw { offset, sampled }) = b.clock {
            let now = steadyhud_sys::clock::now_ns();
            if now.saturating_sub(sampled) > RESAMPLE_NS {
                let fresh = raw_offset_ns();
                let offset = if (fresh - offset).abs() > OFFSET_SLEW_NS {
                    fresh
                } else {
                    offset
                };
                b.clock = Some(Clock::Raw {
                    offset,
                    sampled: now,
                });
            }
        }
    }

    /// Asks for the feedback of the next commit of `surface`, for the
    /// present at `present_t`.
    fn ask(&mut self, surface: *mut WlProxy, sink: Arc<dyn Sink>, present_t: u64) -> bool {
        // The clock need not be known yet: its event answers the bind,
        // so it reaches us before any feedback's.
        if self.presentation.is_null() {
            return false;
        }
        let Some(slot) = self.slots.iter_mut().find(|s| s.proxy.is_null()) else {
            self.slots_full += 1;
            return false;
        };
        let wl = &self.libs.wl;
        // SAFETY: our live wp_presentation; `surface` is the game's live
        // wl_surface (only its id is read); feedback's arguments are the
        // surface and the new_id.
        let proxy = unsafe {
            let version = (wl.proxy_version)(self.presentation);
            (wl.marshal_flags)(
                self.presentation,
                PRESENTATION_FEEDBACK,
                self.libs.tables.feedback,
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
        // SAFETY: the slot outlives the proxy (the binding destroys its
        // outstanding proxies before it goes); the listener covers v1.
        unsafe {
            (wl.add_listener)(
                proxy,
                (&FEEDBACK_LISTENER as *const FeedbackListener).cast(),
                (slot as *mut Slot).cast(),
            )
        };
        true
    }

    fn on_global(&mut self, registry: *mut WlProxy, name: u32, interface: &CStr) {
        if !self.presentation.is_null() || interface.to_bytes() != b"wp_presentation" {
            return;
        }
        let wl = &self.libs.wl;
        let iface = self.libs.tables.presentation;
        // SAFETY: our live registry; bind's arguments: the global's name,
        // the interface name, the version, the new_id.
        let p = unsafe {
            (wl.marshal_flags)(
                registry,
                REGISTRY_BIND,
                iface,
                1,
                0,
                name,
                iface.name,
                1u32,
                null_mut::<c_void>(),
            )
        };
        if p.is_null() {
            return;
        }
        self.presentation = p;
        // SAFETY: the binding outlives the proxy (destroyed in drop); the
        // listener covers wp_presentation v1.
        unsafe {
            (wl.add_listener)(
                p,
                (&PRESENTATION_LISTENER as *const PresentationListener).cast(),
                self.this.cast(),
            );
            (wl.flush)(self.display);
        }
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
            unsafe { (self.libs.wl.proxy_destroy)(proxy) };
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
}

impl Drop for Binding {
    fn drop(&mut self) {
        let wl = &self.libs.wl;
        // SAFETY: our own proxies, wrapper and queue, each destroyed once,
        // the queue last; the display is still live (we unbind before the
        // surface goes).
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
            }
            if !self.registry.is_null() {
                (wl.proxy_destroy)(self.registry);
            }
            (wl.wrapper_destroy)(self.wrapper);
            (wl.queue_destroy)(self.queue);
            if (wl.get_error)(self.display) == 0 {
                (wl.flush)(self.display);
            }
        }
    }
}

// Listeners: `#[repr(C)]` tables of each interface's events in protocol
// order. Handlers contain panics (unwinding into libwayland would abort
// the game).

static REGISTRY_LISTENER: RegistryListener = RegistryListener {
    global: registry_global,
    global_remove: registry_global_remove,
};

/// # Safety
/// Called by libwayland with our binding as `data`, inside `pump`.
unsafe extern "C" fn registry_global(
    data: *mut c_void,
    registry: *mut WlProxy,
    name: u32,
    interface: *const c_char,
    _version: u32,
) {
    if interface.is_null() {
        return;
    }
    // SAFETY: libwayland's NUL-terminated string, for this call.
    let interface = unsafe { CStr::from_ptr(interface) };
    // SAFETY: `data` is our live binding, not otherwise borrowed now.
    let b = unsafe { &mut *data.cast::<Binding>() };
    guard::contain((), || b.on_global(registry, name, interface));
}

unsafe extern "C" fn registry_global_remove(_: *mut c_void, _: *mut WlProxy, _: u32) {}

#[repr(C)]
struct PresentationListener {
    clock_id: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32),
}

static PRESENTATION_LISTENER: PresentationListener = PresentationListener {
    clock_id: presentation_clock_id,
};

/// # Safety
/// As [`registry_global`].
unsafe extern "C" fn presentation_clock_id(data: *mut c_void, _: *mut WlProxy, id: u32) {
    // SAFETY: our live binding (caller).
    let b = unsafe { &mut *data.cast::<Binding>() };
    guard::contain((), || b.on_clock(id));
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
/// Called by libwayland with one of our slots as `data`, inside `pump`.
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
    // SAFETY: the slot's binding is live (it outlives its slots' proxies)
    // and not otherwise borrowed during the dispatch.
    let b = unsafe { &mut *(*slot).binding };
    let secs = (u64::from(sec_hi) << 32) | u64::from(sec_lo);
    let at = secs * 1_000_000_000 + u64::from(nsec);
    let msc = (u64::from(seq_hi) << 32) | u64::from(seq_lo);
    guard::contain((), || b.answer(slot, Some((at, refresh, msc, flags))));
}

/// # Safety
/// As [`feedback_presented`].
unsafe extern "C" fn feedback_discarded(data: *mut c_void, _: *mut WlProxy) {
    let slot = data.cast::<Slot>();
    // SAFETY: as in `feedback_presented`.
    let b = unsafe { &mut *(*slot).binding };
    guard::contain((), || b.answer(slot, None));
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

    /// A surface without a key, a display or a wl_surface is not
    /// recorded (nothing is loaded or bound for it). Recording a real one
    /// binds on its display, so that is checked on a real compositor
    /// (tests/display_wayland.rs).
    #[test]
    fn a_surface_without_its_handles_is_not_recorded() {
        let p: &'static Presentation = Box::leak(Box::new(Presentation::new()));
        let s = 16usize as *mut c_void;
        // SAFETY: each call returns before using a pointer (one is null).
        unsafe {
            assert!(!p.surface_created(1, 0, 8usize as *mut c_void, s), "no key");
            assert!(!p.surface_created(1, 5, null_mut(), s), "no display");
            assert!(
                !p.surface_created(1, 5, 8usize as *mut c_void, null_mut()),
                "no surface"
            );
        }
        assert!(!p.knows(5));
        assert!(p.libs.get().is_none(), "nothing loaded for them");
        let sink = Arc::new(NoSink);
        assert!(
            !p.on_present(5, &sink, 1),
            "a present to an unknown surface is not asked"
        );
    }

    struct NoSink;
    impl Sink for NoSink {
        fn feedback(&self, _: u64, _: Outcome) {
            panic!("no answer expected");
        }
    }
}
