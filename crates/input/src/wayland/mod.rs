//! The HUD hotkeys on Wayland: our own `wl_keyboard` on the app's
//! `wl_display`, read without ever reading the socket ourselves.
//!
//! **Binding.** The layer records every `VkSurfaceKHR` made by
//! `vkCreateWaylandSurfaceKHR` with its `wl_display`
//! ([`WaylandKeys::surface_created`]). Our queue is pumped, and the
//! keyboard bound, only from the app's own present to such a surface
//! ([`WaylandKeys::on_present`], at most every 20 ms): that is the one moment the display is known to be live (an app may disconnect
//! it once it stops presenting, even without destroying the surface). The
//! analysis thread's [`Watch::poll`] only reads the result. Binding: on
//! the display of the surface presented to,
//! an event queue of our own (`wl_display_create_queue`), a wrapper of the
//! display set to that queue (`wl_proxy_create_wrapper` +
//! `wl_proxy_set_queue`) and `get_registry` through the wrapper, so the
//! registry, the `wl_seat` it binds and the seat's `wl_keyboard` all
//! deliver their events to our queue only; the app's default queue is
//! never dispatched by us. The keymap comes with `wl_keyboard.keymap` (an
//! fd we mmap and compile with libxkbcommon); combination names are X11
//! keysym names, resolved to every keycode that produces them
//! (`xkb_keysym_from_name`, then `xkb_keymap_key_get_syms_by_level` over
//! all keys, layouts and levels). `enter`/`leave`/`key` feed the
//! [`tracker`], which finds rising edges per event. Two `wl_display.sync`
//! round trips tell when the registry and then the seat's capabilities
//! have arrived, to say once when there is no seat or no keyboard.
//! libwayland-client and libxkbcommon are loaded at run time.
//!
//! **We never read the socket.** Each pump only runs
//! `wl_display_dispatch_queue_pending` on our queue and a non-blocking
//! `wl_display_flush`, under a lock the present only tries (it skips the
//! pump rather than wait). We never call `wl_display_prepare_read`/
//! `wl_display_read_events`: with several readers, all but the last one
//! sleep in `read_events` until the last reader has read, so our thread
//! would wait on the app's readers, inside the app's own present. Events reach our queue whenever anybody reads the
//! socket: games read input every frame, and Mesa's WSI reads while it
//! waits for a frame callback (FIFO) or a buffer release. `vkcube-wayland`
//! itself only calls `wl_display_dispatch_pending` (no read) in its loop,
//! and Mesa's FIFO present is what reads for it: enough, as
//! `tests/hud_wayland.rs` shows. An app that presents never reads anyway
//! when it stops presenting, and then nobody sees a HUD to toggle.
//!
//! **Lifetime.** The Vulkan spec only requires the `wl_display` to
//! outlive the surface, not our proxies, so `vkDestroySurfaceKHR` of the
//! bound surface tears our keyboard, seat, registry, wrapper and queue
//! down before the call is forwarded ([`WaylandKeys::surface_destroyed`]);
//! the next present to another Wayland surface binds again. A surface the
//! app never destroyed is forgotten at `vkDestroyInstance` and its binding
//! leaked, not torn down: its display may be gone. One mutex guards all
//! of it; it is held for a dispatch of already-queued events (a few
//! callbacks, at worst a keymap compile, the first time) and never across
//! anything that waits. A forked child never touches it (its parent's
//! connection is not its own): no Wayland hotkey there.
//!
//! **State.** This module keeps no global: the libraries, the surface
//! map, the binding, the owner pid and the pump throttle are one
//! [`WaylandKeys`] record, owned by the layer's process-wide state and
//! passed down to the hooks, the present path and the analysis thread's
//! [`WaylandKeys::watch`]. The listener callbacks reach their binding
//! through their user data. The only statics here are the immutable
//! listener tables handed to libwayland.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod tracker;
pub mod xkb;

use std::ffi::{c_char, c_void, CStr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use steadyhud_sys::guard;
use steadyhud_sys::lock::Recover;
use steadyhud_wayland::ffi::{
    RegistryListener, Wayland, WlArray, WlDisplay, WlEventQueue, WlProxy, MARSHAL_DESTROY,
};
use tracker::Tracker;
use xkb::{Keymap, Xkb};

/// Why a combination cannot be watched on Wayland.
#[derive(Debug, thiserror::Error)]
pub enum WaylandKeyError {
    #[error("hotkey (Wayland): {0}")]
    Load(String),
    #[error("hotkey: empty key combination {0:?}")]
    Empty(String),
    #[error(
        "hotkey: {key:?} in {combo:?} is not an X11 keysym name (e.g. Shift_R, F12, Control_L)"
    )]
    UnknownKey { combo: String, key: String },
}

/// Both libraries, loaded once per process.
struct Libs {
    wl: Wayland,
    xkb: Xkb,
}

/// A Wayland surface of the app's.
struct Surface {
    surface: u64,
    /// Dispatch key of its instance.
    instance: usize,
    display: *mut WlDisplay,
}

#[derive(Default)]
struct State {
    surfaces: Vec<Surface>,
    binding: Option<Owned>,
    /// Names of every watched combination, by id (= tracker id).
    combos: Vec<Vec<String>>,
    /// A surface binding failed on: not tried again.
    given_up: Option<u64>,
    /// Lines for stderr, printed by the analysis thread after it let go of
    /// the lock (never on the present path).
    notes: Vec<String>,
}

// SAFETY: the raw pointers are the app's `wl_display`s and our proxies on
// them; libwayland-client is thread-safe, and every use is under
// `WaylandKeys::state`'s mutex.
unsafe impl Send for State {}

/// How often the present path pumps: key presses are seen within this.
const PUMP_EVERY_NS: u64 = 20_000_000;

/// Everything the Wayland hotkeys keep for the process, in one record.
/// This module has no global of its own: the layer's process-wide state
/// owns the one record and hands it down (the listeners reach their
/// binding through their user data). Methods that may bind take
/// `&'static self`: a binding can outlive every call (it is leaked at
/// `vkDestroyInstance`, module docs) and keeps using the libraries.
pub struct WaylandKeys {
    /// Both libraries, loaded by the first [`WaylandKeys::watch`].
    libs: OnceLock<Result<Libs, String>>,
    /// The surface map and the binding.
    state: Mutex<State>,
    /// The process the state belongs to (0 = not used yet). Checked before
    /// `state` is locked: a forked child must not take a lock that another
    /// thread of its parent may have held at the fork, nor touch the
    /// parent's proxies. A child gets no Wayland hotkey.
    owner: steadyhud_sys::owner::Owner,
    /// Whether any Wayland surface is recorded: the present path's one load
    /// when there is none (X11 games).
    any_surface: AtomicBool,
    /// When the present path next pumps our queue (CLOCK_MONOTONIC ns).
    next_pump_ns: AtomicU64,
}

impl Default for WaylandKeys {
    fn default() -> WaylandKeys {
        WaylandKeys::new()
    }
}

impl WaylandKeys {
    /// No surface, nothing loaded, no owner yet.
    pub const fn new() -> WaylandKeys {
        WaylandKeys {
            libs: OnceLock::new(),
            state: Mutex::new(State {
                surfaces: Vec::new(),
                binding: None,
                combos: Vec::new(),
                given_up: None,
                notes: Vec::new(),
            }),
            owner: steadyhud_sys::owner::Owner::new(),
            any_surface: AtomicBool::new(false),
            next_pump_ns: AtomicU64::new(0),
        }
    }

    /// Loads both libraries (first call) or says why they cannot be.
    fn libs(&self) -> Result<&Libs, WaylandKeyError> {
        self.libs
            .get_or_init(|| {
                let xkb = Xkb::load().map_err(|e| e.to_string())?;
                let wl = Wayland::load().map_err(|e| e.to_string())?;
                Ok(Libs { wl, xkb })
            })
            .as_ref()
            .map_err(|e| WaylandKeyError::Load(e.clone()))
    }

    /// The state, in the process that owns it (`None` in a forked child).
    fn state(&self) -> Option<std::sync::MutexGuard<'_, State>> {
        self.owned_here().then(|| self.state.lock_or_recover())
    }

    /// Whether this process owns the state (claiming it on first use).
    fn owned_here(&self) -> bool {
        self.owner.here()
    }

    /// Records a surface made by `vkCreateWaylandSurfaceKHR` on `display`,
    /// for instance `instance` (its dispatch key).
    pub fn surface_created(&self, instance: usize, surface: u64, display: *mut c_void) {
        if display.is_null() || surface == 0 {
            return;
        }
        let Some(mut st) = self.state() else { return };
        st.surfaces.retain(|s| s.surface != surface);
        st.surfaces.push(Surface {
            surface,
            instance,
            display,
        });
        self.any_surface.store(true, Ordering::Relaxed);
    }

    /// Forgets `surface`; when our keyboard is bound through it, tears the
    /// keyboard down (call before the surface is really destroyed: its
    /// display is still live then).
    pub fn surface_destroyed(&self, surface: u64) {
        self.forget(|s| s.surface == surface, true);
    }

    /// Forgets the surfaces of an instance being destroyed. A binding on
    /// one of them is leaked, not torn down: an app that never destroyed
    /// its surface may have disconnected the display already, and touching
    /// it would be a use after free.
    pub fn instance_destroyed(&self, instance: usize) {
        self.forget(|s| s.instance == instance, false);
    }

    fn forget(&self, gone: impl Fn(&Surface) -> bool, display_live: bool) {
        let Some(mut st) = self.state() else { return };
        let bound = st.binding.as_mut().map(|b| b.get().surface);
        let unbind = st
            .surfaces
            .iter()
            .any(|s| gone(s) && Some(s.surface) == bound);
        st.surfaces.retain(|s| !gone(s));
        self.any_surface
            .store(!st.surfaces.is_empty(), Ordering::Relaxed);
        if unbind {
            let binding = st.binding.take();
            if display_live {
                drop(binding); // tears the proxies and the queue down
            } else {
                std::mem::forget(binding);
            }
        }
    }

    /// Whether the app has a live Wayland surface (then the hotkeys are
    /// read on Wayland: under XWayland an X11 poller sees no key while a
    /// Wayland window has the focus).
    pub fn has_surface(&self) -> bool {
        self.state().is_some_and(|st| !st.surfaces.is_empty())
    }

    /// Whether a present at `now_ns` has [`WaylandKeys::on_present`] work
    /// to do (two relaxed loads): the present path calls that, under its
    /// guard, only then.
    #[inline]
    pub fn due(&self, now_ns: u64) -> bool {
        self.any_surface.load(Ordering::Relaxed)
            && now_ns >= self.next_pump_ns.load(Ordering::Relaxed)
    }

    /// The present path's part, for a present to `surface` at `now_ns`: at
    /// most every [`PUMP_EVERY_NS`], binds our keyboard (first time) and
    /// runs the events already on our queue. Here, and only here, the
    /// display is known to be live: the app is presenting to a surface on
    /// it. Never waits: the lock is only tried, and nothing reads the
    /// socket.
    ///
    /// Returns true when this did setup work (bound the keyboard, compiled
    /// a keymap): the present's time is then the layer's setup, as for the
    /// HUD's first draw.
    pub fn on_present(&'static self, surface: u64, now_ns: u64) -> bool {
        if !self.due(now_ns) {
            return false;
        }
        self.next_pump_ns
            .store(now_ns + PUMP_EVERY_NS, Ordering::Relaxed);
        // Loaded by the analysis thread's `watch`; not yet: next time.
        let Some(Ok(libs)) = self.libs.get() else {
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
        let bound = st.binding.is_some();
        st.ensure_bound(libs, surface);
        let Some(b) = st.binding.as_mut() else {
            return false;
        };
        // SAFETY: our live binding, no reference into it held; its display
        // is live (above).
        unsafe { Binding::pump(b.ptr()) };
        !bound || std::mem::take(&mut b.get().compiled)
    }

    /// Watches `combo`: checks its names against libxkbcommon (loading
    /// both libraries, first time) and registers it; the keyboard itself
    /// is bound at the next present to a Wayland surface.
    pub fn watch(&'static self, combo: &str) -> Result<Watch, WaylandKeyError> {
        let names = parse_combo(combo);
        if names.is_empty() {
            return Err(WaylandKeyError::Empty(combo.to_string()));
        }
        let libs = self.libs()?;
        if let Some(bad) = names.iter().find(|n| libs.xkb.keysym(n).is_none()) {
            return Err(WaylandKeyError::UnknownKey {
                combo: combo.to_string(),
                key: bad.clone(),
            });
        }
        let Some(mut st) = self.state() else {
            return Err(WaylandKeyError::Load(
                "a forked child does not watch its parent's keyboard".into(),
            ));
        };
        st.combos.push(names.clone());
        let id = st.combos.len() - 1;
        if let Some(b) = st.binding.as_mut() {
            b.get().add_combo(names);
        }
        Ok(Watch { keys: self, id })
    }
}

/// Splits `Shift_R+F12` into its key names.
pub(crate) fn parse_combo(combo: &str) -> Vec<String> {
    combo
        .split('+')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// One key combination watched on Wayland (made by
/// [`WaylandKeys::watch`]); [`Watch::poll`] reports each press once.
pub struct Watch {
    keys: &'static WaylandKeys,
    id: usize,
}

impl Watch {
    /// True once per press of the whole combination since the last poll
    /// (the present path dispatches the events; this only reads the
    /// result and prints what the binding had to say).
    pub fn poll(&mut self) -> bool {
        let (pressed, notes) = {
            let Some(mut st) = self.keys.state() else {
                return false;
            };
            let mut notes = std::mem::take(&mut st.notes);
            let pressed = match st.binding.as_mut() {
                Some(b) => {
                    let b = b.get();
                    notes.append(&mut b.notes);
                    b.tracker.take(self.id)
                }
                None => false,
            };
            (pressed, notes)
        };
        for note in notes {
            guard::say(format_args!("steadyhud: {note}"));
        }
        pressed
    }
}

impl State {
    /// Binds our keyboard through `surface` unless bound already (or that
    /// surface is not a Wayland one of ours, or failed before).
    fn ensure_bound(&mut self, libs: &'static Libs, surface: u64) {
        if self.binding.is_some() || self.given_up == Some(surface) {
            return;
        }
        let Some(s) = self.surfaces.iter().find(|s| s.surface == surface) else {
            return;
        };
        // SAFETY: `s.display` is the live display of the surface being
        // presented to (caller).
        match unsafe { Binding::bind(libs, s.surface, s.display, &self.combos) } {
            Ok(b) => self.binding = Some(b),
            Err(e) => {
                self.given_up = Some(surface);
                self.notes
                    .push(format!("hotkey (Wayland): {e}; HUD toggle disabled"));
            }
        }
    }
}

/// The requests we send.
#[derive(Clone, Copy)]
enum Request {
    DisplaySync,
    DisplayGetRegistry,
    RegistryBind,
    SeatGetKeyboard,
    SeatRelease,
    KeyboardRelease,
}

impl Request {
    /// The opcode on the wire: the request's index in its interface in
    /// wayland.xml.
    fn opcode(self) -> u32 {
        match self {
            Request::DisplaySync | Request::RegistryBind | Request::KeyboardRelease => 0,
            Request::DisplayGetRegistry | Request::SeatGetKeyboard => 1,
            Request::SeatRelease => 3,
        }
    }
}

/// `wl_seat.capabilities` keyboard bit.
const CAP_KEYBOARD: u32 = 2;
/// `wl_keyboard.keymap` format `xkb_v1`.
const KEYMAP_XKB_V1: u32 = 1;
/// Highest `wl_seat` version our listeners cover (events up to v5).
const SEAT_VERSION: u32 = 5;

/// Our proxies on one display, with the keyboard state their events build.
struct Binding {
    /// Its own address ([`Owned`]): the listeners' user data.
    this: *mut Binding,
    libs: &'static Libs,
    surface: u64,
    display: *mut WlDisplay,
    queue: *mut WlEventQueue,
    wrapper: *mut WlProxy,
    registry: *mut WlProxy,
    /// The pending `wl_display.sync` callback, if any.
    callback: *mut WlProxy,
    syncs_done: u32,
    seat: *mut WlProxy,
    seat_name: u32,
    keyboard: *mut WlProxy,
    keymap: Option<Keymap<'static>>,
    /// A keymap was compiled since the present path last asked (setup work).
    compiled: bool,
    tracker: Tracker,
    /// Lines to say (outside the callbacks).
    notes: Vec<String>,
}

/// Owns a [`Binding`] through the raw pointer its listeners get as user
/// data (a `Box` held on to would claim uniqueness that pointer breaks);
/// frees it on drop, which tears the proxies down.
struct Owned(std::ptr::NonNull<Binding>);

impl Owned {
    fn new(b: Binding) -> Owned {
        let p = Box::into_raw(Box::new(b));
        // SAFETY: just allocated, not yet shared.
        unsafe { (*p).this = p };
        // SAFETY: `Box::into_raw` never returns null.
        Owned(unsafe { std::ptr::NonNull::new_unchecked(p) })
    }

    fn ptr(&self) -> *mut Binding {
        self.0.as_ptr()
    }

    /// The binding; only while no dispatch runs (we hold the state's lock,
    /// and only [`Binding::pump`] dispatches).
    fn get(&mut self) -> &mut Binding {
        // SAFETY: live until drop; `&mut self` excludes other borrows made
        // through `Owned`, and listeners run only inside `pump`.
        unsafe { &mut *self.0.as_ptr() }
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` in `new`, freed exactly once.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

impl Binding {
    /// Creates our queue and registry on `display` and asks for the globals.
    ///
    /// # Safety
    /// `display` is a live `wl_display` that outlives the binding.
    unsafe fn bind(
        libs: &'static Libs,
        surface: u64,
        display: *mut WlDisplay,
        combos: &[Vec<String>],
    ) -> Result<Owned, &'static str> {
        let wl = &libs.wl;
        // SAFETY: `display` is live (caller's contract).
        if unsafe { (wl.get_error)(display) } != 0 {
            return Err("the app's Wayland connection has failed");
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
        let mut owned = Owned::new(Binding {
            this: null_mut(),
            libs,
            surface,
            display,
            queue,
            wrapper,
            registry: null_mut(),
            callback: null_mut(),
            syncs_done: 0,
            seat: null_mut(),
            seat_name: 0,
            keyboard: null_mut(),
            keymap: None,
            compiled: false,
            tracker: Tracker::default(),
            notes: Vec::new(),
        });
        let b = owned.get();
        for names in combos {
            b.tracker.add(names.clone());
        }
        // SAFETY: the wrapper is ours; get_registry takes a new_id only.
        unsafe {
            (wl.set_queue)(wrapper, queue);
            let version = (wl.proxy_version)(wrapper);
            b.registry = (wl.marshal_flags)(
                wrapper,
                Request::DisplayGetRegistry.opcode(),
                wl.registry_interface,
                version,
                0,
                null_mut::<c_void>(),
            );
        }
        if b.registry.is_null() {
            return Err("wl_display.get_registry failed");
        }
        // SAFETY: the binding outlives the registry, which it destroys
        // first; the listener covers wl_registry v1.
        unsafe {
            (wl.add_listener)(
                b.registry,
                (&REGISTRY_LISTENER as *const RegistryListener).cast(),
                b.this.cast(),
            )
        };
        b.sync();
        // SAFETY: the display is live (caller's contract); non-blocking.
        unsafe { (wl.flush)(display) };
        Ok(owned)
    }

    /// Watches one more combination (same id as in [`State::combos`]).
    fn add_combo(&mut self, names: Vec<String>) {
        self.tracker.add(names);
        self.resolve();
    }

    /// Resolves every combination's names on the current keymap.
    fn resolve(&mut self) {
        let xkb = &self.libs.xkb;
        match self.keymap.as_ref() {
            Some(km) => self
                .tracker
                .set_keymap(|n| xkb.keysym(n).map(|s| km.keycodes_of(s)).unwrap_or_default()),
            None => self.tracker.set_keymap(|_| Vec::new()),
        }
    }

    /// Sends a `wl_display.sync` through our wrapper.
    fn sync(&mut self) {
        let wl = &self.libs.wl;
        // SAFETY: the wrapper is ours and live; sync takes a new_id only.
        let cb = unsafe {
            let version = (wl.proxy_version)(self.wrapper);
            (wl.marshal_flags)(
                self.wrapper,
                Request::DisplaySync.opcode(),
                wl.callback_interface,
                version,
                0,
                null_mut::<c_void>(),
            )
        };
        if cb.is_null() {
            return;
        }
        self.callback = cb;
        let data = self.this;
        // SAFETY: the binding outlives the callback (destroyed in `done`
        // or on drop); the listener covers wl_callback.
        unsafe {
            (wl.add_listener)(
                cb,
                (&CALLBACK_LISTENER as *const CallbackListener).cast(),
                data.cast(),
            )
        };
    }

    /// Runs the events already on our queue and flushes our requests;
    /// never reads the socket or waits. Only this dispatches our queue, so
    /// our listeners only ever run here, under the state's lock.
    ///
    /// # Safety
    /// `this` is a live binding, with no reference into it held across the
    /// call: the listeners reach it through their user data (this pointer).
    unsafe fn pump(this: *mut Binding) {
        // SAFETY: caller's contract; the fields are copied out before the
        // dispatch.
        let (wl, display, queue) = unsafe { (&(*this).libs.wl, (*this).display, (*this).queue) };
        // SAFETY: the display is live while we are bound (module docs).
        unsafe {
            if (wl.get_error)(display) != 0 {
                return;
            }
            (wl.dispatch_queue_pending)(display, queue);
            (wl.flush)(display);
        }
    }

    /// Releases the keyboard (if any); nothing is held any more.
    fn drop_keyboard(&mut self) {
        if self.keyboard.is_null() {
            return;
        }
        let wl = &self.libs.wl;
        // SAFETY: our live keyboard proxy, destroyed exactly once.
        unsafe { destroy_proxy(wl, self.keyboard, 3, Request::KeyboardRelease.opcode()) };
        self.keyboard = null_mut();
        self.tracker.leave();
    }

    fn drop_seat(&mut self) {
        self.drop_keyboard();
        if !self.seat.is_null() {
            // SAFETY: our live seat proxy, destroyed exactly once.
            unsafe { destroy_proxy(&self.libs.wl, self.seat, 5, Request::SeatRelease.opcode()) };
            self.seat = null_mut();
        }
    }

    // Event handlers (called from the listeners).

    fn on_global(&mut self, registry: *mut WlProxy, name: u32, interface: &CStr, version: u32) {
        if !self.seat.is_null() || interface.to_bytes() != b"wl_seat" {
            return;
        }
        let wl = &self.libs.wl;
        let version = version.min(SEAT_VERSION);
        // SAFETY: `registry` is our live registry; bind's arguments are
        // (name, interface name, version, new_id).
        let seat = unsafe {
            (wl.marshal_flags)(
                registry,
                Request::RegistryBind.opcode(),
                wl.seat_interface,
                version,
                0,
                name,
                (*wl.seat_interface).name,
                version,
                null_mut::<c_void>(),
            )
        };
        if seat.is_null() {
            return;
        }
        self.seat = seat;
        self.seat_name = name;
        let data = self.this;
        // SAFETY: the binding outlives the seat; the listener covers the
        // seat's events up to v5.
        unsafe {
            (wl.add_listener)(
                seat,
                (&SEAT_LISTENER as *const SeatListener).cast(),
                data.cast(),
            )
        };
    }

    fn on_global_remove(&mut self, name: u32) {
        if !self.seat.is_null() && name == self.seat_name {
            self.drop_seat();
        }
    }

    fn on_capabilities(&mut self, seat: *mut WlProxy, caps: u32) {
        let has = caps & CAP_KEYBOARD != 0;
        if !has {
            self.drop_keyboard();
            return;
        }
        if !self.keyboard.is_null() {
            return;
        }
        let wl = &self.libs.wl;
        // SAFETY: `seat` is our live seat; get_keyboard takes a new_id.
        let kb = unsafe {
            let version = (wl.proxy_version)(seat);
            (wl.marshal_flags)(
                seat,
                Request::SeatGetKeyboard.opcode(),
                wl.keyboard_interface,
                version,
                0,
                null_mut::<c_void>(),
            )
        };
        if kb.is_null() {
            return;
        }
        self.keyboard = kb;
        let data = self.this;
        // SAFETY: the binding outlives the keyboard; the listener covers
        // wl_keyboard up to v5 (the seat's version).
        unsafe {
            (wl.add_listener)(
                kb,
                (&KEYBOARD_LISTENER as *const KeyboardListener).cast(),
                data.cast(),
            )
        };
    }

    fn on_keymap(&mut self, format: u32, fd: i32, size: u32) {
        let text = (format == KEYMAP_XKB_V1 && size > 0)
            .then(|| map_fd(fd, size as usize))
            .flatten();
        // SAFETY: the event handed us this fd; we own it and close it once.
        unsafe { libc::close(fd) };
        let Some(text) = text else { return };
        let libs: &'static Libs = self.libs;
        self.compiled = true;
        match libs.xkb.compile(&text) {
            Some(km) => self.keymap = Some(km),
            None => {
                self.keymap = None;
                self.notes
                    .push("hotkey (Wayland): the compositor's keymap does not compile".into());
            }
        }
        self.resolve();
    }

    fn on_done(&mut self, callback: *mut WlProxy) {
        if callback == self.callback {
            self.callback = null_mut();
        }
        // SAFETY: a wl_callback is destroyed by the client after `done`.
        unsafe { (self.libs.wl.proxy_destroy)(callback) };
        self.syncs_done += 1;
        match (self.syncs_done, self.seat.is_null()) {
            (1, true) => self.notes.push(
                "hotkey (Wayland): the compositor offers no wl_seat; HUD toggle disabled".into(),
            ),
            // Round trip after the seat's capabilities.
            (1, false) => self.sync(),
            _ if self.keyboard.is_null() => self.notes.push(
                "hotkey (Wayland): the seat has no keyboard yet; HUD toggle waits for one".into(),
            ),
            _ => {}
        }
    }
}

impl Drop for Binding {
    fn drop(&mut self) {
        self.drop_seat();
        let wl = &self.libs.wl;
        // SAFETY: our own proxies, wrapper and queue, each destroyed once,
        // the queue last; the display is still live (we unbind before the
        // surface goes). The flush sends the release requests without waiting.
        unsafe {
            if !self.callback.is_null() {
                (wl.proxy_destroy)(self.callback);
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

/// Destroys `proxy` with its destructor request `opcode` when its version
/// has it (`since`), otherwise client-side only.
///
/// # Safety
/// `proxy` is live and not used afterwards.
unsafe fn destroy_proxy(wl: &Wayland, proxy: *mut WlProxy, since: u32, opcode: u32) {
    // SAFETY: caller's contract; the release requests take no arguments.
    unsafe {
        let version = (wl.proxy_version)(proxy);
        if version >= since {
            (wl.marshal_flags)(proxy, opcode, std::ptr::null(), version, MARSHAL_DESTROY);
        } else {
            (wl.proxy_destroy)(proxy);
        }
    }
}

/// Largest keymap we read (real ones are 50–100 KB).
const MAX_KEYMAP: usize = 4 << 20;

/// The keymap text of a `wl_keyboard.keymap` fd (copied; `None` if the fd
/// cannot be mapped). The size is clamped to the file's: reading a mapping
/// past the end of its file would raise SIGBUS in the game.
fn map_fd(fd: i32, size: usize) -> Option<Vec<u8>> {
    // SAFETY: `st` is a plain struct fstat fills in.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid fd and a valid out pointer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    let size = size.min(usize::try_from(st.st_size).ok()?).min(MAX_KEYMAP);
    if size == 0 {
        return None;
    }
    // SAFETY: a read-only private mapping of the fd the compositor sent,
    // no longer than its file, unmapped before returning.
    unsafe {
        let p = libc::mmap(null_mut(), size, libc::PROT_READ, libc::MAP_PRIVATE, fd, 0);
        if p == libc::MAP_FAILED {
            return None;
        }
        let text = std::slice::from_raw_parts(p.cast::<u8>(), size).to_vec();
        libc::munmap(p, size);
        Some(text)
    }
}

// Listeners: `#[repr(C)]` tables of the events of each interface, in
// protocol order. Every handler contains panics (unwinding into
// libwayland would abort the game) and reaches the binding through `data`.

/// Runs `f` on the binding behind a listener's `data`.
///
/// # Safety
/// `data` is the `*mut Binding` given to `wl_proxy_add_listener`, live and
/// not otherwise borrowed during the dispatch (see [`Binding::pump`]).
unsafe fn with(data: *mut c_void, f: impl FnOnce(&mut Binding)) {
    // SAFETY: caller's contract.
    let b = unsafe { &mut *data.cast::<Binding>() };
    guard::contain((), || f(b));
}

static REGISTRY_LISTENER: RegistryListener = RegistryListener {
    global: registry_global,
    global_remove: registry_global_remove,
};

/// # Safety
/// Called by libwayland with our binding as `data` and a valid string.
unsafe extern "C" fn registry_global(
    data: *mut c_void,
    registry: *mut WlProxy,
    name: u32,
    interface: *const c_char,
    version: u32,
) {
    if interface.is_null() {
        return;
    }
    // SAFETY: libwayland passes a NUL-terminated interface name.
    let interface = unsafe { CStr::from_ptr(interface) };
    // SAFETY: our binding (listener contract).
    unsafe { with(data, |b| b.on_global(registry, name, interface, version)) };
}

/// # Safety
/// Called by libwayland with our binding as `data`.
unsafe extern "C" fn registry_global_remove(data: *mut c_void, _: *mut WlProxy, name: u32) {
    // SAFETY: our binding (listener contract).
    unsafe { with(data, |b| b.on_global_remove(name)) };
}

#[repr(C)]
struct SeatListener {
    capabilities: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32),
    name: unsafe extern "C" fn(*mut c_void, *mut WlProxy, *const c_char),
}

static SEAT_LISTENER: SeatListener = SeatListener {
    capabilities: seat_capabilities,
    name: seat_name,
};

/// # Safety
/// Called by libwayland with our binding as `data`.
unsafe extern "C" fn seat_capabilities(data: *mut c_void, seat: *mut WlProxy, caps: u32) {
    // SAFETY: our binding (listener contract).
    unsafe { with(data, |b| b.on_capabilities(seat, caps)) };
}

/// # Safety
/// Called by libwayland; ignores everything.
unsafe extern "C" fn seat_name(_: *mut c_void, _: *mut WlProxy, _: *const c_char) {}

#[repr(C)]
struct KeyboardListener {
    keymap: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, i32, u32),
    enter: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, *mut WlProxy, *mut WlArray),
    leave: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, *mut WlProxy),
    key: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, u32, u32, u32),
    modifiers: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, u32, u32, u32, u32),
    repeat_info: unsafe extern "C" fn(*mut c_void, *mut WlProxy, i32, i32),
}

static KEYBOARD_LISTENER: KeyboardListener = KeyboardListener {
    keymap: keyboard_keymap,
    enter: keyboard_enter,
    leave: keyboard_leave,
    key: keyboard_key,
    modifiers: keyboard_modifiers,
    repeat_info: keyboard_repeat_info,
};

/// # Safety
/// Called by libwayland with our binding as `data`; `fd` is ours.
unsafe extern "C" fn keyboard_keymap(
    data: *mut c_void,
    _: *mut WlProxy,
    format: u32,
    fd: i32,
    size: u32,
) {
    // SAFETY: our binding (listener contract).
    unsafe { with(data, |b| b.on_keymap(format, fd, size)) };
}

/// # Safety
/// Called by libwayland with our binding as `data` and a valid array of
/// `u32` evdev keycodes.
unsafe extern "C" fn keyboard_enter(
    data: *mut c_void,
    _: *mut WlProxy,
    _serial: u32,
    _surface: *mut WlProxy,
    keys: *mut WlArray,
) {
    let held: Vec<u32> = if keys.is_null() {
        Vec::new()
    } else {
        // SAFETY: libwayland's array of `size` bytes of u32 keycodes.
        unsafe {
            let a = &*keys;
            if a.data.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(a.data.cast::<u32>(), a.size / 4).to_vec()
            }
        }
    };
    // SAFETY: our binding (listener contract).
    unsafe {
        with(data, |b| {
            b.tracker.enter(held.iter().map(|k| k.saturating_add(8)))
        })
    };
}

/// # Safety
/// Called by libwayland with our binding as `data`.
unsafe extern "C" fn keyboard_leave(data: *mut c_void, _: *mut WlProxy, _: u32, _: *mut WlProxy) {
    // SAFETY: our binding (listener contract).
    unsafe { with(data, |b| b.tracker.leave()) };
}

/// # Safety
/// Called by libwayland with our binding as `data`.
unsafe extern "C" fn keyboard_key(
    data: *mut c_void,
    _: *mut WlProxy,
    _serial: u32,
    _time: u32,
    key: u32,
    state: u32,
) {
    // SAFETY: our binding (listener contract). xkb keycode = evdev + 8;
    // state 0 = released, 1 = pressed (2 = repeated, from v10).
    unsafe { with(data, |b| b.tracker.key(key.saturating_add(8), state != 0)) };
}

/// # Safety
/// Called by libwayland; ignores everything.
unsafe extern "C" fn keyboard_modifiers(
    _: *mut c_void,
    _: *mut WlProxy,
    _: u32,
    _: u32,
    _: u32,
    _: u32,
    _: u32,
) {
}

/// # Safety
/// Called by libwayland; ignores everything.
unsafe extern "C" fn keyboard_repeat_info(_: *mut c_void, _: *mut WlProxy, _: i32, _: i32) {}

#[repr(C)]
struct CallbackListener {
    done: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32),
}

static CALLBACK_LISTENER: CallbackListener = CallbackListener {
    done: callback_done,
};

/// # Safety
/// Called by libwayland with our binding as `data`.
unsafe extern "C" fn callback_done(data: *mut c_void, callback: *mut WlProxy, _: u32) {
    // SAFETY: our binding (listener contract).
    unsafe { with(data, |b| b.on_done(callback)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of this test's own (leaked: a binding may hold on to it).
    fn fresh() -> &'static WaylandKeys {
        Box::leak(Box::default())
    }

    #[test]
    fn combos_are_checked_before_anything_is_bound() {
        let keys = fresh();
        assert!(matches!(keys.watch(" + "), Err(WaylandKeyError::Empty(_))));
        if let Err(e) = keys.libs() {
            eprintln!("skipped the rest: {e}");
            return;
        }
        match keys.watch("Shift_R+NoSuchKey") {
            Err(e @ WaylandKeyError::UnknownKey { .. }) => {
                assert!(e.to_string().contains("\"NoSuchKey\""), "{e}")
            }
            other => panic!("expected UnknownKey, got {:?}", other.err()),
        }
        // No Wayland surface in this record: nothing to bind, no press.
        let mut w = keys.watch("shift_r+f12").expect("valid combination");
        assert!(!keys.has_surface());
        assert!(!w.poll());
        assert!(keys.state().unwrap().binding.is_none());
        assert!(!keys.on_present(0x10, 1), "no surface: nothing to pump");
    }

    #[test]
    fn the_surface_map_follows_creates_and_destroys() {
        // Never pumped here: the display is not real, and the libraries are
        // not loaded in this record (only `watch` loads them), so the
        // present path stops before touching it.
        let keys = fresh();
        let fake = std::ptr::NonNull::<c_void>::dangling().as_ptr();
        keys.surface_created(7, 0x10, fake);
        keys.surface_created(7, 0x20, fake);
        keys.surface_created(8, 0x30, null_mut());
        assert!(keys.has_surface());
        assert!(!keys.on_present(0x10, 1), "libraries not loaded: no pump");
        keys.surface_destroyed(0x10);
        assert!(keys.has_surface(), "0x20 is left");
        keys.instance_destroyed(7);
        assert!(!keys.has_surface(), "a null display is not recorded");
        assert!(!keys.any_surface.load(Ordering::Relaxed));
    }
}
