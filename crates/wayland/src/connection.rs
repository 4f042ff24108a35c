//! One connection of ours per game `wl_display`, shared by every reader of
//! that display: the hotkeys' keyboard (`steadyhud-input`, a [`Keys`]
//! reader), the presentation feedback ([`crate::presentation::Feedback`])
//! and the input timing ([`crate::input_times::InputTimes`], taken by
//! [`Connections::take_inputs`]). One record ([`Connections`]) holds the
//! libraries, the surface map and the connections; each connection
//! ([`Conn`]) has one private event queue, one registry, the globals every
//! reader needs (`wl_seat` with its keyboard and pointer, `wp_presentation`;
//! `zwp_input_timestamps_manager_v1` with the devices' nanosecond times),
//! one listener per interface and one pump.
//!
//! **Binding.** A Wayland surface the game makes (`vkCreateWaylandSurfaceKHR`,
//! an EGL window surface's first swap) is recorded with its `wl_display`
//! and `wl_surface` ([`Connections::surface_created`]); the first surface of
//! a display binds our connection on it: an event queue of our own
//! (`wl_display_create_queue`), a wrapper of the display set to that queue
//! (`wl_proxy_create_wrapper` + `wl_proxy_set_queue`) and `get_registry`
//! through the wrapper, so the registry and every object bound from it
//! (seat, keyboard, pointer, `wp_presentation`, each feedback) deliver
//! their events to our queue only; the game's default queue is never
//! dispatched by us. Binding is asynchronous: the globals arrive with a
//! later pump. Two `wl_display.sync` round trips tell when the registry
//! and then the seat's capabilities have arrived, to say once (to the
//! hotkeys) when there is no seat or no keyboard.
//!
//! **We never read the socket.** Each pump only runs
//! `wl_display_dispatch_queue_pending` on our queue and a non-blocking
//! `wl_display_flush`, under a lock the present only tries (it skips the
//! pump rather than wait). We never call `wl_display_prepare_read`/
//! `wl_display_read_events`: with several readers, all but the last one
//! sleep in `read_events` until the last reader has read, so our thread
//! would wait on the game's readers, inside the game's own present. Events
//! reach our queue whenever anybody reads the socket: games read input
//! every frame, and Mesa's WSI reads while it waits for a frame callback
//! (FIFO) or a buffer release. The present path pumps
//! ([`Connections::on_present`]): every present that asks for feedback,
//! else at most every [`PUMP_EVERY_NS`] for the keys; the game presenting
//! to a surface of the display is what shows the display live.
//!
//! **Lifetime.** The Vulkan spec only requires the `wl_display` to outlive
//! the surface, not our proxies, so the destruction of a display's last
//! recorded surface tears its connection down before the call is
//! forwarded ([`Connections::surface_destroyed`]). Surfaces of an owner
//! being destroyed (a Vulkan instance) are forgotten and their
//! connections leaked, not torn down: the display may be gone
//! ([`Connections::owner_destroyed`]). One mutex guards all of it; it is
//! held for a dispatch of already-queued events (a few callbacks, at
//! worst a keymap compile) and never across anything that waits. A forked
//! child never touches it: the record's owner pid is checked off the
//! present path, and the present path's caller checks the client's fork
//! flag (no system call per present).
//!
//! **State.** No global: the client record owns the one [`Connections`].
//! Listener callbacks reach their connection through their user data, a
//! heap pointer the connection is owned through ([`Owned`]); the only
//! statics are the immutable listener tables.

use crate::ffi::{
    RegistryListener, Wayland, WlArray, WlDisplay, WlEventQueue, WlProxy, MARSHAL_DESTROY,
};
use crate::input_times::{self, InputTime, InputTimes};
use crate::presentation::{Feedback, Sink, Tables};
use std::any::Any;
use std::ffi::{c_char, c_void, CStr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, TryLockError};
use steadyhud_sys::guard;
use steadyhud_sys::lock::Recover;

/// How often the present path pumps for the keys alone: key presses are
/// seen within this.
pub const PUMP_EVERY_NS: u64 = 20_000_000;

/// A reader of the seat's keyboard on one connection (the hotkeys: their
/// keymap and key tracker), made by the maker given to
/// [`Connections::read_keys`]. Called inside the connection's pump.
pub trait Keys: Send {
    /// `wl_keyboard.keymap`: the keymap's text (`xkb_v1`; `None` for
    /// another format or an fd that could not be read). Returns whether
    /// this compiled a keymap (setup work for the present it ran in).
    fn keymap(&mut self, text: Option<Vec<u8>>) -> bool;
    /// `enter`: the keys held, as xkb keycodes (evdev + 8).
    fn enter(&mut self, held: &[u32]);
    /// `leave`, or the keyboard gone: nothing is held any more.
    fn leave(&mut self);
    /// `key`: an xkb keycode pressed or released.
    fn key(&mut self, keycode: u32, pressed: bool);
    /// The reader itself, for the one who made it.
    fn as_any(&mut self) -> &mut dyn Any;
}

/// Makes one [`Keys`] reader per connection.
pub type MakeKeys = Box<dyn Fn() -> Box<dyn Keys> + Send + Sync>;

/// libwayland and our protocol tables, loaded once per process.
struct Libs {
    wl: Wayland,
    tables: Tables,
    inputs: input_times::Tables,
}

/// A Wayland surface of the game's.
struct Surface {
    /// The caller's key (`VkSurfaceKHR`, `EGLSurface`).
    key: u64,
    /// What owns it (Vulkan instance, EGL display).
    owner: usize,
    display: *mut WlDisplay,
    /// Null when not known (then only the keys read its display).
    wl_surface: *mut WlProxy,
    /// Its presents are asked about (config `display_feedback`).
    feedback: bool,
}

#[derive(Default)]
struct State {
    surfaces: Vec<Surface>,
    conns: Vec<Owned>,
    /// Displays binding failed on: not tried again.
    given_up: Vec<usize>,
    /// Lines for the display's readers (printed off the present path).
    notes: Vec<String>,
    /// The hotkeys' reader maker, once they watch a key.
    make_keys: Option<MakeKeys>,
}

// SAFETY: the raw pointers are the game's displays and surfaces and our
// proxies on them; libwayland-client is thread-safe, and every use is
// under `Connections::state`'s mutex.
unsafe impl Send for State {}

/// What one present call did ([`Connections::on_present`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Presented {
    /// Its feedback was asked for: an answer will come to the sink.
    pub asked: bool,
    /// It did setup work (bound the connection, compiled a keymap): the
    /// present's time is then the layer's setup.
    pub setup: bool,
}

/// The process's Wayland connections: libraries, surfaces, connections.
pub struct Connections {
    libs: OnceLock<Option<Libs>>,
    state: Mutex<State>,
    /// The process the state belongs to (0 = unused): a forked child gets
    /// none (module docs).
    owner: steadyhud_sys::owner::Owner,
    /// Whether any surface is recorded: a present's one load otherwise.
    any_surface: AtomicBool,
    /// When the present path next pumps for the keys (CLOCK_MONOTONIC ns).
    next_pump_ns: AtomicU64,
}

impl Default for Connections {
    fn default() -> Connections {
        Connections::new()
    }
}

impl Connections {
    /// Nothing recorded, nothing loaded.
    pub const fn new() -> Connections {
        Connections {
            libs: OnceLock::new(),
            state: Mutex::new(State {
                surfaces: Vec::new(),
                conns: Vec::new(),
                given_up: Vec::new(),
                notes: Vec::new(),
                make_keys: None,
            }),
            owner: steadyhud_sys::owner::Owner::new(),
            any_surface: AtomicBool::new(false),
            next_pump_ns: AtomicU64::new(0),
        }
    }

    /// The state, in the process that owns it (`None` in a forked child).
    fn state(&self) -> Option<MutexGuard<'_, State>> {
        self.owner.here().then(|| self.state.lock_or_recover())
    }

    /// The state if the lock is free (the present path never waits).
    fn try_state(&self) -> Option<MutexGuard<'_, State>> {
        match self.state.try_lock() {
            Ok(st) => Some(st),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Records the game's surface `key` (owned by `owner`) on `display`,
    /// whose `wl_surface` is `wl_surface` (null: not known), loads
    /// libwayland (first time: surface creation, never a present) and
    /// binds our connection on the display unless bound already:
    /// `get_registry` is sent now, so the globals are usually known by the
    /// first present. `feedback`: its presents are to be asked about.
    /// Returns whether they will be (the surface is followed).
    ///
    /// # Safety
    /// `display` is the game's live `wl_display` and `wl_surface` null or
    /// a live `wl_surface` on it.
    pub unsafe fn surface_created(
        &'static self,
        owner: usize,
        key: u64,
        display: *mut c_void,
        wl_surface: *mut c_void,
        feedback: bool,
    ) -> bool {
        if display.is_null() || key == 0 {
            return false;
        }
        let libs = self.libs.get_or_init(|| match Wayland::load() {
            Ok(wl) => {
                let tables = Tables::new(&wl);
                let inputs = input_times::Tables::new(&wl);
                Some(Libs { wl, tables, inputs })
            }
            Err(e) => {
                guard::say(format_args!(
                    "steadyhud: no Wayland connection of ours: {e}"
                ));
                None
            }
        });
        let Some(mut st) = self.state() else {
            return false;
        };
        st.surfaces.retain(|s| s.key != key);
        let Some(libs) = libs.as_ref() else {
            return false;
        };
        let feedback = feedback && !wl_surface.is_null();
        st.surfaces.push(Surface {
            key,
            owner,
            display,
            wl_surface,
            feedback,
        });
        self.any_surface.store(true, Ordering::Relaxed);
        // SAFETY: the display is live (caller's contract).
        unsafe { st.conn_for(libs, display) };
        feedback
    }

    /// Whether `key` is a recorded surface whose presents are asked about.
    pub fn knows(&self, key: u64) -> bool {
        self.any_surface.load(Ordering::Relaxed)
            && self
                .state()
                .is_some_and(|st| st.surfaces.iter().any(|s| s.key == key && s.feedback))
    }

    /// Whether the game has a live Wayland surface (then the hotkeys are
    /// read on Wayland: under XWayland an X11 poller sees no key while a
    /// Wayland window has the focus).
    pub fn has_surface(&self) -> bool {
        self.state().is_some_and(|st| !st.surfaces.is_empty())
    }

    /// Dispatches what is already on our queue for surface `key`'s display
    /// (never reads or waits; skipped if the lock is busy): call where the
    /// display is known live and the frames are ending (the swapchain
    /// being destroyed), so answers the game read after its last present
    /// still reach their rows.
    pub fn pump(&self, key: u64) {
        if !self.any_surface.load(Ordering::Relaxed) || !self.owner.here() {
            return;
        }
        let Some(st) = self.try_state() else {
            return;
        };
        if let Some(i) = st.conn_of(key) {
            // SAFETY: our live connection, no reference into it held; its
            // display is live (caller).
            unsafe { Conn::pump(st.conns[i].ptr(), steadyhud_sys::clock::now_ns()) };
        }
    }

    /// Forgets surface `key` (call before it is really destroyed: its
    /// display is still live then); the last surface of a display tears
    /// our connection on it down (outstanding feedbacks are dropped:
    /// their frames get no answer).
    pub fn surface_destroyed(&self, key: u64) {
        self.pump(key);
        self.forget(|s| s.key == key, true);
    }

    /// Forgets the surfaces of an owner being destroyed (Vulkan instance,
    /// EGL display); connections left without a surface are leaked, not
    /// torn down: the display may be gone already.
    pub fn owner_destroyed(&self, owner: usize) {
        self.forget(|s| s.owner == owner, false);
    }

    fn forget(&self, gone: impl Fn(&Surface) -> bool, display_live: bool) {
        let Some(mut st) = self.state() else { return };
        st.surfaces.retain(|s| !gone(s));
        self.any_surface
            .store(!st.surfaces.is_empty(), Ordering::Relaxed);
        let State {
            surfaces, conns, ..
        } = &mut *st;
        let (keep, drop): (Vec<Owned>, Vec<Owned>) = std::mem::take(conns)
            .into_iter()
            .partition(|c| surfaces.iter().any(|s| s.display == c.get_ref().display));
        *conns = keep;
        for c in drop {
            if display_live {
                std::mem::drop(c); // tears the proxies and the queue down
            } else {
                std::mem::forget(c);
            }
        }
    }

    /// Whether a keys' pump at `now` has work (two relaxed loads): the
    /// present path calls [`Connections::on_present`] without `ask`, under
    /// its guard, only then.
    #[inline]
    pub fn pump_due(&self, now: u64) -> bool {
        self.any_surface.load(Ordering::Relaxed) && now >= self.next_pump_ns.load(Ordering::Relaxed)
    }

    /// The present path's part, for a present to surface `key` at `now`:
    /// runs what is already on our queue (binding the connection if it is
    /// not yet) and, with `ask` (the frame's sink and key), asks for this
    /// present's feedback when the surface is followed. Without `ask` (the
    /// keys' pump) it pumps at most every [`PUMP_EVERY_NS`] and says
    /// whether setup work was done. Call before the present is
    /// passed down, and only in the process that owns the record (the
    /// caller checks the client's fork flag: no system call here). Never
    /// waits and never reads the socket; the one allocation is
    /// libwayland's for a new feedback proxy.
    pub fn on_present<S: Sink + 'static>(
        &'static self,
        key: u64,
        now: u64,
        ask: Option<(&Arc<S>, u64)>,
    ) -> Presented {
        let no = Presented::default();
        if !self.any_surface.load(Ordering::Relaxed) {
            return no;
        }
        if ask.is_none() {
            if !self.pump_due(now) {
                return no;
            }
            self.next_pump_ns
                .store(now + PUMP_EVERY_NS, Ordering::Relaxed);
        }
        let Some(Some(libs)) = self.libs.get() else {
            return no;
        };
        let Some(mut st) = self.try_state() else {
            return no;
        };
        let Some((display, wl_surface, follow)) = st
            .surfaces
            .iter()
            .find(|s| s.key == key)
            .map(|s| (s.display, s.wl_surface, s.feedback))
        else {
            return no;
        };
        let bound = st.conns.len();
        // SAFETY: the game is presenting to a surface of `display`: it is
        // live, and stays so until the surface is destroyed (which tears
        // the connection down first) or its owner is.
        let Some(i) = (unsafe { st.conn_for(libs, display) }) else {
            return no;
        };
        let bound_now = st.conns.len() != bound;
        let conn = &mut st.conns[i];
        // SAFETY: our live connection, no reference into it held; its
        // display is live (above).
        unsafe { Conn::pump(conn.ptr(), now) };
        let c = conn.get();
        // The keys' pump reports the setup work, whichever pump did it.
        let setup = ask.is_none() && (bound_now || std::mem::take(&mut c.compiled));
        let asked = match ask {
            Some((sink, present_t)) if follow => {
                c.feedback.ask(wl_surface, sink.clone(), present_t)
            }
            _ => false,
        };
        Presented { asked, setup }
    }

    /// Lines the connections had to say for the display (printed by the
    /// caller off the present path, e.g. the analysis thread).
    pub fn take_notes(&self) -> Vec<String> {
        if !self.owner.here() {
            return Vec::new();
        }
        let Some(mut st) = self.try_state() else {
            return Vec::new();
        };
        let State { conns, notes, .. } = &mut *st;
        for c in conns.iter_mut() {
            notes.append(&mut c.get().feedback.notes);
        }
        std::mem::take(notes)
    }

    /// Presents not asked about because every slot was out, over every
    /// live connection.
    pub fn slots_full(&self) -> u64 {
        self.state().map_or(0, |st| {
            st.conns
                .iter()
                .map(|c| c.get_ref().feedback.slots_full)
                .sum()
        })
    }

    /// Reads the seat's keyboard on every connection, now and from now on,
    /// with a reader `make` makes per connection (the hotkeys, once they
    /// watch a key). False in a forked child.
    pub fn read_keys(&self, make: MakeKeys) -> bool {
        let Some(mut st) = self.state() else {
            return false;
        };
        for c in st.conns.iter_mut() {
            let c = c.get();
            if c.keys.is_none() {
                c.keys = Some(make());
            }
        }
        st.make_keys = Some(make);
        true
    }

    /// Hands every input time read on the connections to `f` (oldest first
    /// per connection; off the present path, under the lock) and returns
    /// how far they are read: the earliest of the connections' pumps
    /// before their last (every event that reached the socket before then
    /// has been handed over: we never read the socket, the game does, at
    /// least once a frame, so an event still on it at a pump is read before
    /// the next one and dispatched there), `None` without a connection.
    /// Inputs lost to a full reader are added to `lost`.
    pub fn take_inputs(&self, mut f: impl FnMut(InputTime), lost: &mut u64) -> Option<u64> {
        let mut st = self.state()?;
        let mut until: Option<u64> = None;
        for c in st.conns.iter_mut() {
            let c = c.get();
            c.inputs.take(&mut f);
            *lost += std::mem::take(&mut c.inputs.lost);
            until = Some(until.map_or(c.pumped_before_ns, |u| u.min(c.pumped_before_ns)));
        }
        until
    }

    /// Runs `f` on every connection's keyboard reader, with the lines the
    /// connections had for it (under the lock; off the present path).
    pub fn with_keys(&self, mut f: impl FnMut(&mut dyn Keys), notes: &mut Vec<String>) {
        let Some(mut st) = self.state() else { return };
        for c in st.conns.iter_mut() {
            let c = c.get();
            notes.append(&mut c.key_notes);
            if let Some(k) = c.keys.as_mut() {
                f(k.as_mut());
            }
        }
    }
}

impl State {
    /// The index of our connection on `display`, made now if there is none
    /// (`None`: binding failed, now with a note or before).
    ///
    /// # Safety
    /// `display` is live.
    unsafe fn conn_for(&mut self, libs: &'static Libs, display: *mut WlDisplay) -> Option<usize> {
        if let Some(i) = self
            .conns
            .iter()
            .position(|c| c.get_ref().display == display)
        {
            return Some(i);
        }
        if self.given_up.contains(&(display as usize)) {
            return None;
        }
        let keys = self.make_keys.as_ref().map(|m| m());
        // SAFETY: caller's contract.
        match unsafe { Conn::bind(libs, display, keys) } {
            Ok(c) => {
                self.conns.push(c);
                Some(self.conns.len() - 1)
            }
            Err(why) => {
                self.notes.push(format!(
                    "no Wayland connection of ours on this display: {why}"
                ));
                self.given_up.push(display as usize);
                None
            }
        }
    }

    /// The index of the connection of surface `key`'s display.
    fn conn_of(&self, key: u64) -> Option<usize> {
        let display = self.surfaces.iter().find(|s| s.key == key)?.display;
        self.conns
            .iter()
            .position(|c| c.get_ref().display == display)
    }
}

/// The requests we send, by their opcode (the request's index in its
/// interface in wayland.xml).
const DISPLAY_SYNC: u32 = 0;
const DISPLAY_GET_REGISTRY: u32 = 1;
const SEAT_GET_POINTER: u32 = 0;
const SEAT_GET_KEYBOARD: u32 = 1;
const SEAT_RELEASE: u32 = 3;
const POINTER_RELEASE: u32 = 1;
const KEYBOARD_RELEASE: u32 = 0;

/// `wl_seat.capabilities` bits.
const CAP_POINTER: u32 = 1;
const CAP_KEYBOARD: u32 = 2;
/// `wl_keyboard.keymap` format `xkb_v1`.
const KEYMAP_XKB_V1: u32 = 1;
/// Highest `wl_seat` version our listeners cover (events up to v5).
const SEAT_VERSION: u32 = 5;

/// Our connection on one display: its queue, registry and globals, and
/// the readers on it.
pub struct Conn {
    /// Its own address ([`Owned`]): the listeners' user data.
    this: *mut Conn,
    libs: &'static Libs,
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
    /// Its button presses are the input timing's.
    pointer: *mut WlProxy,
    /// The `zwp_input_timestamps_manager_v1` global's name, when the
    /// compositor has one, and the manager bound from it.
    pub input_timestamps: Option<u32>,
    timestamps_manager: *mut WlProxy,
    /// `zwp_input_timestamps_v1` of the keyboard and of the pointer.
    keyboard_stamps: *mut WlProxy,
    pointer_stamps: *mut WlProxy,
    /// The input timing's reader: key and button presses while the game
    /// has the focus.
    inputs: InputTimes,
    /// When the pump running now started (its events' read time).
    pump_ns: u64,
    /// When the last pump ended: every event read from the socket before
    /// then has been dispatched.
    pumped_ns: u64,
    /// When the pump before it ended: every event that reached the socket
    /// before then has been dispatched, as the game read the socket
    /// between the two (a game that reads it at its frame's start, as SDL
    /// does, leaves an event that came after that read on it at our next
    /// pump: taking the last pump as the bound refused such an input as
    /// `late`, seen with the GL test program on sway).
    pumped_before_ns: u64,
    /// The presentation feedback reader.
    feedback: Feedback,
    /// The keyboard reader (the hotkeys), once they watch a key.
    keys: Option<Box<dyn Keys>>,
    /// A keymap was compiled since the present path last asked (setup).
    compiled: bool,
    /// Lines for the hotkeys (outside the callbacks).
    key_notes: Vec<String>,
}

/// Owns a [`Conn`] through the raw pointer its listeners get as user data
/// (a `Box` held on to would claim uniqueness that pointer breaks); frees
/// it on drop, which tears the proxies down.
struct Owned(std::ptr::NonNull<Conn>);

// SAFETY: as `State` (used only under its mutex).
unsafe impl Send for Owned {}

impl Owned {
    fn new(c: Conn) -> Owned {
        let p = Box::into_raw(Box::new(c));
        // SAFETY: just allocated, not yet shared; the feedback's slots
        // point into it from now on.
        unsafe {
            (*p).this = p;
            (*p).feedback.settle();
        }
        // SAFETY: `Box::into_raw` never returns null.
        Owned(unsafe { std::ptr::NonNull::new_unchecked(p) })
    }

    fn ptr(&self) -> *mut Conn {
        self.0.as_ptr()
    }

    /// The connection, while no dispatch runs (under the state's lock, and
    /// only [`Conn::pump`] dispatches).
    fn get(&mut self) -> &mut Conn {
        // SAFETY: live until drop; listeners only run inside `pump`.
        unsafe { &mut *self.0.as_ptr() }
    }

    fn get_ref(&self) -> &Conn {
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

impl Conn {
    /// Our queue, a wrapper of `display` on it and `get_registry` through
    /// it; the globals arrive with a later dispatch.
    ///
    /// # Safety
    /// `display` is live and outlives the connection.
    unsafe fn bind(
        libs: &'static Libs,
        display: *mut WlDisplay,
        keys: Option<Box<dyn Keys>>,
    ) -> Result<Owned, &'static str> {
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
        let mut owned = Owned::new(Conn {
            this: null_mut(),
            libs,
            display,
            queue,
            wrapper,
            registry: null_mut(),
            callback: null_mut(),
            syncs_done: 0,
            seat: null_mut(),
            seat_name: 0,
            keyboard: null_mut(),
            pointer: null_mut(),
            input_timestamps: None,
            timestamps_manager: null_mut(),
            keyboard_stamps: null_mut(),
            pointer_stamps: null_mut(),
            inputs: InputTimes::default(),
            pump_ns: 0,
            pumped_ns: 0,
            pumped_before_ns: 0,
            feedback: Feedback::new(&libs.wl, &libs.tables),
            keys,
            compiled: false,
            key_notes: Vec::new(),
        });
        let c = owned.get();
        // SAFETY: the wrapper is ours; get_registry takes a new_id only.
        unsafe {
            (wl.set_queue)(wrapper, queue);
            c.registry = c.request(wrapper, DISPLAY_GET_REGISTRY, wl.registry_interface);
        }
        if c.registry.is_null() {
            return Err("wl_display.get_registry failed");
        }
        // SAFETY: the connection outlives the registry (destroyed first in
        // drop); the listener covers wl_registry v1.
        unsafe { c.listen(c.registry, &REGISTRY_LISTENER) };
        c.sync();
        // SAFETY: the display is live (caller's contract); non-blocking.
        unsafe { (wl.flush)(display) };
        Ok(owned)
    }

    /// Sends the request `opcode` of `proxy` whose one argument is a new
    /// object of `interface` (at the proxy's version); the new proxy.
    ///
    /// # Safety
    /// `proxy` is our live proxy and `opcode` such a request of it.
    unsafe fn request(
        &self,
        proxy: *mut WlProxy,
        opcode: u32,
        interface: *const crate::ffi::WlInterface,
    ) -> *mut WlProxy {
        let wl = &self.libs.wl;
        // SAFETY: caller's contract.
        unsafe {
            let version = (wl.proxy_version)(proxy);
            (wl.marshal_flags)(proxy, opcode, interface, version, 0, null_mut::<c_void>())
        }
    }

    /// Listens to `proxy` with `listener`, this connection as user data.
    ///
    /// # Safety
    /// `proxy` is our live proxy, destroyed before the connection, and
    /// `listener` covers every event of its version.
    unsafe fn listen<L>(&self, proxy: *mut WlProxy, listener: &'static L) {
        // SAFETY: caller's contract.
        unsafe {
            (self.libs.wl.add_listener)(proxy, (listener as *const L).cast(), self.this.cast())
        };
    }

    /// Sends a `wl_display.sync` through our wrapper.
    fn sync(&mut self) {
        let wl = &self.libs.wl;
        // SAFETY: the wrapper is ours and live; sync takes a new_id only.
        let cb = unsafe { self.request(self.wrapper, DISPLAY_SYNC, wl.callback_interface) };
        if cb.is_null() {
            return;
        }
        self.callback = cb;
        // SAFETY: the connection outlives the callback (destroyed in
        // `done` or on drop); the listener covers wl_callback.
        unsafe { self.listen(cb, &CALLBACK_LISTENER) };
    }

    /// Runs the events already on our queue and flushes our requests;
    /// never reads the socket or waits. Only this dispatches our queue, so
    /// our listeners only ever run here, under the state's lock.
    ///
    /// # Safety
    /// `this` is a live connection, with no reference into it held across
    /// the call: the listeners reach it through their user data.
    unsafe fn pump(this: *mut Conn, now: u64) {
        // SAFETY: caller's contract; copied out before the dispatch. The
        // listeners read `pump_ns` as the time their events were read.
        let (wl, display, queue) = unsafe {
            (*this).pump_ns = now;
            (&(*this).libs.wl, (*this).display, (*this).queue)
        };
        // SAFETY: the display is live while we are bound (module docs).
        unsafe {
            if (wl.get_error)(display) != 0 {
                return;
            }
            (wl.dispatch_queue_pending)(display, queue);
            (wl.flush)(display);
        }
        // SAFETY: the dispatch is over; nothing else borrows it.
        unsafe {
            (*this).feedback.keep_clock();
            (*this).pumped_before_ns = (*this).pumped_ns;
            (*this).pumped_ns = now;
        }
    }

    /// Releases the keyboard (if any); nothing is held any more.
    fn drop_keyboard(&mut self) {
        if self.keyboard.is_null() {
            return;
        }
        Self::drop_stamps(&self.libs.wl, &mut self.keyboard_stamps);
        self.inputs.keyboard_focus = false;
        // SAFETY: our live keyboard proxy, destroyed exactly once.
        unsafe { destroy_proxy(&self.libs.wl, self.keyboard, 3, KEYBOARD_RELEASE) };
        self.keyboard = null_mut();
        if let Some(k) = self.keys.as_mut() {
            k.leave();
        }
    }

    /// Releases the pointer (if any).
    fn drop_pointer(&mut self) {
        if !self.pointer.is_null() {
            Self::drop_stamps(&self.libs.wl, &mut self.pointer_stamps);
            self.inputs.pointer_focus = false;
            // SAFETY: our live pointer proxy, destroyed exactly once.
            unsafe { destroy_proxy(&self.libs.wl, self.pointer, 3, POINTER_RELEASE) };
            self.pointer = null_mut();
        }
    }

    fn drop_seat(&mut self) {
        self.drop_keyboard();
        self.drop_pointer();
        if !self.seat.is_null() {
            // SAFETY: our live seat proxy, destroyed exactly once.
            unsafe { destroy_proxy(&self.libs.wl, self.seat, 5, SEAT_RELEASE) };
            self.seat = null_mut();
        }
    }

    // Event handlers (called from the listeners).

    fn on_global(&mut self, registry: *mut WlProxy, name: u32, interface: &CStr, version: u32) {
        match interface.to_bytes() {
            b"wl_seat" if self.seat.is_null() => self.bind_seat(registry, name, version),
            // SAFETY: our live registry; the feedback lives in this
            // connection, settled, and is released before it goes.
            b"wp_presentation" => unsafe { self.feedback.bind(registry, name) },
            b"zwp_input_timestamps_manager_v1" if self.timestamps_manager.is_null() => {
                self.input_timestamps = Some(name);
                self.bind_timestamps(registry, name);
            }
            _ => {}
        }
    }

    fn bind_seat(&mut self, registry: *mut WlProxy, name: u32, version: u32) {
        let wl = &self.libs.wl;
        let version = version.min(SEAT_VERSION);
        // SAFETY: `registry` is our live registry; libwayland's table.
        let seat = unsafe { wl.bind(registry, wl.seat_interface, name, version) };
        if seat.is_null() {
            return;
        }
        self.seat = seat;
        self.seat_name = name;
        // SAFETY: the connection outlives the seat; the listener covers the
        // seat's events up to v5.
        unsafe { self.listen(seat, &SEAT_LISTENER) };
    }

    fn on_global_remove(&mut self, name: u32) {
        if !self.seat.is_null() && name == self.seat_name {
            self.drop_seat();
        }
        if self.input_timestamps == Some(name) {
            self.input_timestamps = None;
            self.drop_timestamps();
        }
    }

    /// Binds `zwp_input_timestamps_manager_v1` (version 1) and asks for
    /// the devices' nanosecond times.
    fn bind_timestamps(&mut self, registry: *mut WlProxy, name: u32) {
        let wl = &self.libs.wl;
        let iface = self.libs.inputs.manager;
        // SAFETY: `registry` is our live registry; the manager's table.
        let manager = unsafe { wl.bind(registry, iface, name, 1) };
        self.timestamps_manager = manager;
        self.stamp_devices();
    }

    /// Asks for the nanosecond times of the keyboard and the pointer we
    /// have and are not asked for yet (the manager bound).
    fn stamp_devices(&mut self) {
        if self.timestamps_manager.is_null() {
            return;
        }
        for keyboard in [true, false] {
            let (device, stamps, get) = if keyboard {
                (
                    self.keyboard,
                    self.keyboard_stamps,
                    input_times::GET_KEYBOARD_TIMESTAMPS,
                )
            } else {
                (
                    self.pointer,
                    self.pointer_stamps,
                    input_times::GET_POINTER_TIMESTAMPS,
                )
            };
            if device.is_null() || !stamps.is_null() {
                continue;
            }
            let wl = &self.libs.wl;
            let iface = self.libs.inputs.timestamps;
            // SAFETY: our live manager and device; the request's arguments
            // are (new_id, the device).
            let p = unsafe {
                (wl.marshal_flags)(
                    self.timestamps_manager,
                    get,
                    iface,
                    1,
                    0,
                    null_mut::<c_void>(),
                    device,
                )
            };
            if p.is_null() {
                continue;
            }
            // SAFETY: the connection outlives the object (destroyed with
            // its device or in drop); the listener covers v1.
            unsafe {
                if keyboard {
                    self.listen(p, &KEYBOARD_STAMPS_LISTENER);
                    self.keyboard_stamps = p;
                } else {
                    self.listen(p, &POINTER_STAMPS_LISTENER);
                    self.pointer_stamps = p;
                }
            }
        }
    }

    /// Destroys a `zwp_input_timestamps_v1` (if any).
    fn drop_stamps(wl: &Wayland, stamps: &mut *mut WlProxy) {
        if !stamps.is_null() {
            // SAFETY: our live object, destroyed exactly once.
            unsafe { destroy_proxy(wl, *stamps, 1, input_times::TIMESTAMPS_DESTROY) };
            *stamps = null_mut();
        }
    }

    /// Destroys the timestamps objects and their manager.
    fn drop_timestamps(&mut self) {
        Self::drop_stamps(&self.libs.wl, &mut self.keyboard_stamps);
        Self::drop_stamps(&self.libs.wl, &mut self.pointer_stamps);
        if !self.timestamps_manager.is_null() {
            // SAFETY: our live manager, destroyed exactly once.
            unsafe {
                destroy_proxy(
                    &self.libs.wl,
                    self.timestamps_manager,
                    1,
                    input_times::MANAGER_DESTROY,
                )
            };
            self.timestamps_manager = null_mut();
        }
    }

    fn on_capabilities(&mut self, seat: *mut WlProxy, caps: u32) {
        let (keyboard, pointer) = (caps & CAP_KEYBOARD != 0, caps & CAP_POINTER != 0);
        if !keyboard {
            self.drop_keyboard();
        }
        if !pointer {
            self.drop_pointer();
        }
        let wl = &self.libs.wl;
        // SAFETY: our live seat; the listeners cover wl_keyboard and
        // wl_pointer up to v5 (the seat's version).
        unsafe {
            if keyboard && self.keyboard.is_null() {
                let (get, listener) = (SEAT_GET_KEYBOARD, &KEYBOARD_LISTENER);
                self.keyboard = self.seat_device(seat, get, wl.keyboard_interface, listener);
            }
            if pointer && self.pointer.is_null() {
                let (get, listener) = (SEAT_GET_POINTER, &POINTER_LISTENER);
                self.pointer = self.seat_device(seat, get, wl.pointer_interface, listener);
            }
        }
        self.stamp_devices();
    }

    /// Gets the seat's device with request `opcode` (`get_keyboard`,
    /// `get_pointer`: a new_id only) and listens to it; null on failure.
    ///
    /// # Safety
    /// `seat` is our live seat, and `listener` covers every event of the
    /// device's interface at the seat's version.
    unsafe fn seat_device<L>(
        &self,
        seat: *mut WlProxy,
        opcode: u32,
        interface: *const crate::ffi::WlInterface,
        listener: &'static L,
    ) -> *mut WlProxy {
        // SAFETY: caller's contract.
        let device = unsafe { self.request(seat, opcode, interface) };
        if !device.is_null() {
            // SAFETY: the connection outlives the device (released in
            // drop); the listener covers it (caller).
            unsafe { self.listen(device, listener) };
        }
        device
    }

    fn on_keymap(&mut self, format: u32, fd: i32, size: u32) {
        let text = (format == KEYMAP_XKB_V1 && size > 0)
            .then(|| map_fd(fd, size as usize))
            .flatten();
        // SAFETY: the event handed us this fd; we own it and close it once.
        unsafe { libc::close(fd) };
        if let Some(k) = self.keys.as_mut() {
            self.compiled |= k.keymap(text);
        }
    }

    fn on_done(&mut self, callback: *mut WlProxy) {
        if callback == self.callback {
            self.callback = null_mut();
        }
        // SAFETY: a wl_callback is destroyed by the client after `done`.
        unsafe { (self.libs.wl.proxy_destroy)(callback) };
        self.syncs_done += 1;
        match (self.syncs_done, self.seat.is_null()) {
            (1, true) => self.key_notes.push(
                "hotkey (Wayland): the compositor offers no wl_seat; HUD toggle disabled".into(),
            ),
            // Round trip after the seat's capabilities.
            (1, false) => self.sync(),
            _ if self.keyboard.is_null() => self.key_notes.push(
                "hotkey (Wayland): the seat has no keyboard yet; HUD toggle waits for one".into(),
            ),
            _ => {}
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.feedback.release();
        self.drop_timestamps();
        self.drop_seat();
        let wl = &self.libs.wl;
        // SAFETY: our own proxies, wrapper and queue, each destroyed once,
        // the queue last; the display is still live (we unbind before the
        // surface goes). The flush sends the release requests without
        // waiting.
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
// libwayland would abort the game) and reaches the connection through
// `data`.

/// Runs `f` on the connection behind a listener's `data`.
///
/// # Safety
/// `data` is the `*mut Conn` given to `wl_proxy_add_listener`, live and
/// not otherwise borrowed during the dispatch (see [`Conn::pump`]).
unsafe fn with(data: *mut c_void, f: impl FnOnce(&mut Conn)) {
    // SAFETY: caller's contract.
    let c = unsafe { &mut *data.cast::<Conn>() };
    guard::contain((), || f(c));
}

static REGISTRY_LISTENER: RegistryListener = RegistryListener {
    global: registry_global,
    global_remove: registry_global_remove,
};

/// # Safety
/// Called by libwayland with our connection as `data` and a valid string.
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
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.on_global(registry, name, interface, version)) };
}

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn registry_global_remove(data: *mut c_void, _: *mut WlProxy, name: u32) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.on_global_remove(name)) };
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
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn seat_capabilities(data: *mut c_void, seat: *mut WlProxy, caps: u32) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.on_capabilities(seat, caps)) };
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
    modifiers: ignore_5,
    repeat_info: keyboard_repeat_info,
};

/// # Safety
/// Called by libwayland with our connection as `data`; `fd` is ours.
unsafe extern "C" fn keyboard_keymap(
    data: *mut c_void,
    _: *mut WlProxy,
    format: u32,
    fd: i32,
    size: u32,
) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.on_keymap(format, fd, size)) };
}

/// # Safety
/// Called by libwayland with our connection as `data` and a valid array
/// of `u32` evdev keycodes.
unsafe extern "C" fn keyboard_enter(
    data: *mut c_void,
    _: *mut WlProxy,
    _serial: u32,
    surface: *mut WlProxy,
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
    let held: Vec<u32> = held.iter().map(|k| k.saturating_add(8)).collect();
    // SAFETY: our connection (listener contract).
    unsafe {
        with(data, |c| {
            // Every surface on the game's connection is the game's.
            c.inputs.keyboard_focus = !surface.is_null();
            if let Some(k) = c.keys.as_mut() {
                k.enter(&held);
            }
        })
    };
}

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn keyboard_leave(data: *mut c_void, _: *mut WlProxy, _: u32, _: *mut WlProxy) {
    // SAFETY: our connection (listener contract).
    unsafe {
        with(data, |c| {
            c.inputs.keyboard_focus = false;
            if let Some(k) = c.keys.as_mut() {
                k.leave();
            }
        })
    };
}

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn keyboard_key(
    data: *mut c_void,
    _: *mut WlProxy,
    _serial: u32,
    time: u32,
    key: u32,
    state: u32,
) {
    // SAFETY: our connection (listener contract). xkb keycode = evdev + 8;
    // state 0 = released, 1 = pressed (2 = repeated, from v10: not an
    // input of the player's).
    unsafe {
        with(data, |c| {
            c.inputs.key(time, state == 1, c.pump_ns);
            if let Some(k) = c.keys.as_mut() {
                k.key(key.saturating_add(8), state != 0);
            }
        })
    };
}

/// # Safety
/// Called by libwayland; ignores everything.
unsafe extern "C" fn ignore_5(
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

/// `wl_pointer`'s events up to v5: the focus and the button presses are
/// the input timing's; an event with a time takes the nanosecond time
/// sent before it.
#[repr(C)]
struct PointerListener {
    enter: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, *mut WlProxy, i32, i32),
    leave: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, *mut WlProxy),
    motion: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, i32, i32),
    button: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, u32, u32, u32),
    axis: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, u32, i32),
    frame: unsafe extern "C" fn(*mut c_void, *mut WlProxy),
    axis_source: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32),
    axis_stop: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, u32),
    axis_discrete: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, i32),
}

static POINTER_LISTENER: PointerListener = PointerListener {
    enter: pointer_enter,
    leave: pointer_leave,
    motion: pointer_motion,
    button: pointer_button,
    axis: pointer_axis,
    frame: pointer_frame,
    axis_source: pointer_axis_source,
    axis_stop: pointer_axis_stop,
    axis_discrete: pointer_axis_discrete,
};

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn pointer_enter(
    data: *mut c_void,
    _: *mut WlProxy,
    _: u32,
    surface: *mut WlProxy,
    _: i32,
    _: i32,
) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.inputs.pointer_focus = !surface.is_null()) };
}

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn pointer_leave(data: *mut c_void, _: *mut WlProxy, _: u32, _: *mut WlProxy) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.inputs.pointer_focus = false) };
}

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn pointer_motion(data: *mut c_void, _: *mut WlProxy, _: u32, _: i32, _: i32) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.inputs.pointer_event()) };
}

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn pointer_button(
    data: *mut c_void,
    _: *mut WlProxy,
    _serial: u32,
    time: u32,
    _button: u32,
    state: u32,
) {
    // SAFETY: our connection (listener contract). State 1 = pressed.
    unsafe { with(data, |c| c.inputs.button(time, state == 1, c.pump_ns)) };
}

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn pointer_axis(data: *mut c_void, _: *mut WlProxy, _: u32, _: u32, _: i32) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.inputs.pointer_event()) };
}

// SAFETY (each below): called by libwayland; ignores everything.
unsafe extern "C" fn pointer_frame(_: *mut c_void, _: *mut WlProxy) {}
unsafe extern "C" fn pointer_axis_source(_: *mut c_void, _: *mut WlProxy, _: u32) {}
unsafe extern "C" fn pointer_axis_stop(_: *mut c_void, _: *mut WlProxy, _: u32, _: u32) {}
unsafe extern "C" fn pointer_axis_discrete(_: *mut c_void, _: *mut WlProxy, _: u32, _: i32) {}

/// `zwp_input_timestamps_v1`'s one event.
#[repr(C)]
struct StampsListener {
    timestamp: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, u32, u32),
}

static KEYBOARD_STAMPS_LISTENER: StampsListener = StampsListener {
    timestamp: keyboard_stamp,
};

static POINTER_STAMPS_LISTENER: StampsListener = StampsListener {
    timestamp: pointer_stamp,
};

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn keyboard_stamp(data: *mut c_void, _: *mut WlProxy, hi: u32, lo: u32, ns: u32) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.inputs.stamp(true, hi, lo, ns)) };
}

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn pointer_stamp(data: *mut c_void, _: *mut WlProxy, hi: u32, lo: u32, ns: u32) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.inputs.stamp(false, hi, lo, ns)) };
}

#[repr(C)]
struct CallbackListener {
    done: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32),
}

static CALLBACK_LISTENER: CallbackListener = CallbackListener {
    done: callback_done,
};

/// # Safety
/// Called by libwayland with our connection as `data`.
unsafe extern "C" fn callback_done(data: *mut c_void, callback: *mut WlProxy, _: u32) {
    // SAFETY: our connection (listener contract).
    unsafe { with(data, |c| c.on_done(callback)) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presentation::Outcome;

    /// A record of this test's own (leaked: a connection may hold on to it).
    fn fresh() -> &'static Connections {
        Box::leak(Box::default())
    }

    struct NoSink;
    impl Sink for NoSink {
        fn feedback(&self, _: u64, _: Outcome) {
            panic!("no answer expected");
        }
    }

    /// A surface without a key or a display is not recorded (nothing is
    /// loaded or bound for it), and one without a wl_surface is not
    /// followed. Recording a real one binds on its display, so that is
    /// checked on a real compositor (tests/display_wayland.rs).
    #[test]
    fn a_surface_without_its_handles_is_not_recorded() {
        let p = fresh();
        let s = 16usize as *mut c_void;
        // SAFETY: each call returns before using a pointer (one is null).
        unsafe {
            assert!(
                !p.surface_created(1, 0, 8usize as *mut c_void, s, true),
                "no key"
            );
            assert!(!p.surface_created(1, 5, null_mut(), s, true), "no display");
        }
        assert!(!p.knows(5));
        assert!(p.libs.get().is_none(), "nothing loaded for them");
        let sink = Arc::new(NoSink);
        assert!(
            !p.on_present(5, 1, Some((&sink, 1))).asked,
            "a present to an unknown surface is not asked"
        );
    }

    #[test]
    fn no_surface_nothing_to_pump() {
        let p = fresh();
        assert!(!p.has_surface());
        assert_eq!(p.on_present::<NoSink>(0x10, 1, None), Presented::default());
        p.surface_destroyed(0x10);
        p.owner_destroyed(7);
        assert!(!p.any_surface.load(Ordering::Relaxed));
    }
}
