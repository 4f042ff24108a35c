//! Our side of X11 Present: the game's windows selected for
//! `PresentCompleteNotify` on our connection to their display (the one
//! `steadyhud_x11::Displays` keeps, which the hotkeys read too), and the
//! reading of those events, on the analysis thread.
//!
//! **Why this works.** The X server sends a window's `CompleteNotify` to
//! every client that selected it (xorg-server `present_send_complete_notify`),
//! with the presenter's serial, ust and msc; selecting needs no ownership of
//! the window. So a connection of ours (`xcb_connect` to the same display:
//! Xlib's `XDisplayString`, else `$DISPLAY`) learns of every present the
//! game's WSI makes with `PresentPixmap`, and never touches the game's
//! connection.
//!
//! **Who does what.**
//! - Window creation (`vkCreateXlibSurfaceKHR`, `vkCreateXcbSurfaceKHR`,
//!   GLX drawables): [`Observer::surface_created`] records the display
//!   name and window; nothing is loaded or connected yet.
//! - Swapchain creation (or a drawable's first swap):
//!   [`Observer::follow`] loads libxcb-present, takes the display's
//!   connection (made by the first of its readers), listens for Present's
//!   events on it,
//!   selects input (one round trip, checked: a bad window is one note) and
//!   hands back the new [`Chain`] the present hook records into.
//! - Each present: [`Chain::record`] only (see [`crate::matcher`]).
//! - The analysis thread: [`Observer::poll`] takes the events the
//!   connection's pump filed for it (never waits), matches each complete
//!   and hands the answer to its chain's [`Sink`].
//!
//! **Lifetime.** Our connection is ours: it can be closed at any time,
//! whatever the game does with its own. A surface's destruction reads
//! what is pending, deselects its window and lets the connection go when
//! it was the display's last (it closes when its last reader lets go). A
//! forked child never touches its parent's connection (the owner pid).

use crate::ffi::{self, Present};
use crate::matcher::{Chain, Matcher, Off, Outcome};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use steadyhud_sys::lock::Recover;
use steadyhud_x11::{Displays, OpenError, Reader, Shared};

/// Where a present's answer goes (the frame's capture stream).
pub trait Sink: Send + Sync {
    /// The answer for the present recorded at `present_t`.
    fn x11_answer(&self, present_t: u64, outcome: Outcome);
}

/// Why a window cannot be followed.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error("{0}")]
    Load(#[from] ffi::LoadError),
    #[error("{0}")]
    Open(#[from] OpenError),
    #[error("X display {display:?} has no Present extension")]
    NoPresent { display: String },
    #[error(
        "PresentSelectInput on window {window:#x} of {display:?} failed (the window is gone?)"
    )]
    Select { display: String, window: u32 },
    #[error("the display name {0:?} has a NUL byte")]
    Name(String),
}

/// A window of the game's (a Vulkan surface, a GLX drawable).
struct Surface {
    /// The caller's key (`VkSurfaceKHR`, GLX drawable).
    key: u64,
    /// What owns it (Vulkan instance, GLX display).
    owner: usize,
    /// The display name (`None`: `$DISPLAY`).
    display: Option<String>,
    window: u32,
}

struct Followed {
    key: u64,
    window: u32,
    eid: u32,
    matcher: Matcher<Arc<dyn Sink>>,
}

/// Our connection to one display, and Present's place on it.
struct Conn {
    display: Option<String>,
    shared: Shared,
    opcode: u8,
    reader: Reader,
    windows: Vec<Followed>,
}

/// A chain whose window is followed on the next poll.
struct Adopted {
    key: u64,
    chain: Arc<Chain>,
    sink: Arc<dyn Sink>,
}

#[derive(Default)]
struct State {
    surfaces: Vec<Surface>,
    adopted: Vec<Adopted>,
    conns: Vec<Conn>,
    notes: Vec<String>,
    /// Displays we could not connect to: not tried again.
    given_up: Vec<Option<String>>,
}

/// The process's X11 Present observer.
pub struct Observer {
    present: OnceLock<Option<Present>>,
    state: Mutex<State>,
    /// The process the state belongs to (0 = unused): a forked child gets
    /// none.
    owner: steadyhud_sys::owner::Owner,
    /// Whether any window is followed: the analysis thread's one load
    /// otherwise.
    any: AtomicBool,
}

impl Default for Observer {
    fn default() -> Self {
        Observer::new()
    }
}

fn answer_to(sink: &Arc<dyn Sink>, t: u64, o: Outcome) {
    sink.x11_answer(t, o);
}

impl Observer {
    /// Nothing recorded, nothing loaded.
    pub const fn new() -> Observer {
        Observer {
            present: OnceLock::new(),
            state: Mutex::new(State {
                surfaces: Vec::new(),
                adopted: Vec::new(),
                conns: Vec::new(),
                notes: Vec::new(),
                given_up: Vec::new(),
            }),
            owner: steadyhud_sys::owner::Owner::new(),
            any: AtomicBool::new(false),
        }
    }

    fn owned_here(&self) -> bool {
        self.owner.here()
    }

    fn state(&self) -> Option<std::sync::MutexGuard<'_, State>> {
        self.owned_here().then(|| self.state.lock_or_recover())
    }

    /// Records the game's window `window` on display `display` (`None`:
    /// `$DISPLAY`) as `key`, owned by `owner`. Nothing is loaded or sent.
    pub fn surface_created(&self, owner: usize, key: u64, display: Option<&str>, window: u32) {
        if key == 0 || window == 0 {
            return;
        }
        let Some(mut st) = self.state() else { return };
        st.surfaces.retain(|s| s.key != key);
        st.surfaces.push(Surface {
            key,
            owner,
            display: display.map(str::to_owned),
            window,
        });
    }

    /// Whether `key` is a recorded X11 window.
    pub fn knows(&self, key: u64) -> bool {
        self.state()
            .is_some_and(|st| st.surfaces.iter().any(|s| s.key == key))
    }

    /// Starts a new chain of presents on window `key` (a new swapchain; a
    /// GLX drawable's first swap), whose answers go to `sink`: selects the
    /// window on our connection to its display (in `displays`) the first
    /// time (a round trip). `None` (with a note) when the window cannot be
    /// followed. Call off the present path.
    pub fn follow(
        &self,
        displays: &Displays,
        key: u64,
        sink: Arc<dyn Sink>,
        now: u64,
    ) -> Option<Arc<Chain>> {
        let mut st = self.state()?;
        let present = self.present()?;
        let chain = Arc::new(Chain::new());
        self.follow_in(&mut st, displays, present, key, chain.clone(), sink, now)
            .then_some(chain)
    }

    /// [`Observer::follow`] without any I/O, for a swap hook: `chain`, which
    /// the caller records into from now on, is followed on the analysis
    /// thread's next [`Observer::poll`] (turned off if it cannot be).
    pub fn adopt(&self, key: u64, chain: Arc<Chain>, sink: Arc<dyn Sink>) {
        let Some(mut st) = self.state() else { return };
        st.adopted.push(Adopted { key, chain, sink });
        self.any.store(true, Ordering::Relaxed);
    }

    fn present(&self) -> Option<&Present> {
        self.present
            .get_or_init(|| match Present::load() {
                Ok(x) => Some(x),
                Err(e) => {
                    steadyhud_sys::guard::say(format_args!(
                        "steadyhud: no display timing on X11: {e}"
                    ));
                    None
                }
            })
            .as_ref()
    }

    /// Follows window `key` with `chain` as its newest chain; false (with
    /// a note) when it cannot be.
    #[allow(clippy::too_many_arguments)]
    fn follow_in(
        &self,
        st: &mut State,
        displays: &Displays,
        present: &Present,
        key: u64,
        chain: Arc<Chain>,
        sink: Arc<dyn Sink>,
        now: u64,
    ) -> bool {
        let Some((display, window)) = st
            .surfaces
            .iter()
            .find(|s| s.key == key)
            .map(|s| (s.display.clone(), s.window))
        else {
            return false;
        };
        let i = match st.conn_for(displays, present, &display) {
            Ok(i) => i,
            Err(e) => {
                st.note_once(display, e);
                return false;
            }
        };
        let conn = &mut st.conns[i];
        if let Some(w) = conn.windows.iter_mut().find(|w| w.key == key) {
            w.matcher.add_chain(chain, sink, now);
            return true;
        }
        let (eid, error) = {
            let mut c = conn.shared.lock_or_recover();
            // SAFETY: our live connection; a checked request on ids we
            // name, its error ours to free.
            let (eid, error) = unsafe {
                let eid = (c.xcb().generate_id)(c.raw());
                let cookie =
                    (present.select_input_checked)(c.raw(), eid, window, ffi::COMPLETE_NOTIFY_MASK);
                (eid, (c.xcb().request_check)(c.raw(), cookie))
            };
            // What libxcb read while it waited reaches its readers.
            c.pump();
            (eid, error)
        };
        if !error.is_null() {
            // SAFETY: libxcb's reply buffer, ours to free.
            unsafe { libc::free(error) };
            let e = FollowError::Select {
                display: display_name(&display),
                window,
            };
            st.notes.push(format!("no display timing: {e}"));
            return false;
        }
        let mut matcher = Matcher::new();
        matcher.add_chain(chain, sink, now);
        conn.windows.push(Followed {
            key,
            window,
            eid,
            matcher,
        });
        self.any.store(true, Ordering::Relaxed);
        true
    }

    /// Takes every event filed for us on our connections (never waits) and
    /// answers the presents they complete; then turns off windows that
    /// stayed silent. The analysis thread calls this on each tick, and a
    /// window's end calls it to dispatch what came after its last read.
    pub fn poll(&self, displays: &Displays, now: u64) {
        if !self.any.load(Ordering::Relaxed) {
            return;
        }
        let Some(mut st) = self.state() else { return };
        let adopted = std::mem::take(&mut st.adopted);
        let present = if adopted.is_empty() {
            self.present.get().and_then(Option::as_ref)
        } else {
            self.present()
        };
        let Some(present) = present else {
            for a in adopted {
                a.chain.turn_off();
            }
            return;
        };
        for a in adopted {
            let (key, chain) = (a.key, a.chain.clone());
            if !self.follow_in(&mut st, displays, present, key, chain, a.sink, now) {
                a.chain.turn_off();
            }
        }
        let State { conns, notes, .. } = &mut *st;
        conns.retain_mut(|conn| {
            let broken = {
                let mut c = conn.shared.lock_or_recover();
                let (opcode, windows) = (conn.opcode, &mut conn.windows);
                c.take(conn.reader, |ev| {
                    let Some((eid, _window, complete)) = ffi::complete_notify(ev.bytes(), opcode)
                    else {
                        return;
                    };
                    if let Some(w) = windows.iter_mut().find(|w| w.eid == eid) {
                        if let Some(off) = w.matcher.complete(&complete, now, &mut answer_to) {
                            notes.push(off_note(w.window, off));
                        }
                    }
                });
                c.broken()
            };
            for w in &mut conn.windows {
                if let Some(off) = w.matcher.check_silence(&mut answer_to) {
                    notes.push(off_note(w.window, off));
                }
            }
            if broken {
                notes.push(format!(
                    "no more display timing on X display {:?}: our connection broke",
                    display_name(&conn.display)
                ));
                for w in &mut conn.windows {
                    w.matcher.release(&mut answer_to);
                }
                displays.release(&conn.shared, true);
            }
            !broken
        });
    }

    /// Forgets window `key` (its surface is being destroyed): reads what is
    /// pending first, deselects it, and lets the connection go after the
    /// display's last window.
    pub fn surface_destroyed(&self, displays: &Displays, key: u64) {
        self.poll(displays, steadyhud_sys::clock::now_ns());
        self.forget(displays, |s| s.key == key);
    }

    /// Forgets the windows of an owner being destroyed (Vulkan instance,
    /// GLX display).
    pub fn owner_destroyed(&self, displays: &Displays, owner: usize) {
        self.forget(displays, |s| s.owner == owner);
    }

    fn forget(&self, displays: &Displays, gone: impl Fn(&Surface) -> bool) {
        let Some(mut st) = self.state() else { return };
        let keys: Vec<u64> = st
            .surfaces
            .iter()
            .filter(|s| gone(s))
            .map(|s| s.key)
            .collect();
        st.surfaces.retain(|s| !gone(s));
        st.adopted.retain(|a| !keys.contains(&a.key));
        let present = self.present.get().and_then(Option::as_ref);
        st.conns.retain_mut(|conn| {
            let mut c = conn.shared.lock_or_recover();
            conn.windows.retain_mut(|w| {
                if !keys.contains(&w.key) {
                    return true;
                }
                w.matcher.release(&mut answer_to);
                if let Some(present) = present {
                    // SAFETY: our live connection; mask 0 deletes our
                    // selection (a window already gone: an error event the
                    // pump drops).
                    unsafe { (present.select_input)(c.raw(), w.eid, w.window, 0) };
                }
                false
            });
            c.flush();
            if !conn.windows.is_empty() {
                return true;
            }
            c.leave(conn.reader);
            drop(c);
            displays.release(&conn.shared, false);
            false
        });
        self.any.store(
            st.conns.iter().any(|c| !c.windows.is_empty()),
            Ordering::Relaxed,
        );
    }

    /// Lines to print (by the caller, off the present path).
    pub fn take_notes(&self) -> Vec<String> {
        match self.state.try_lock() {
            Ok(mut st) if self.owned_here() => std::mem::take(&mut st.notes),
            _ => Vec::new(),
        }
    }
}

fn display_name(d: &Option<String>) -> String {
    d.clone()
        .or_else(|| std::env::var("DISPLAY").ok())
        .unwrap_or_default()
}

fn off_note(window: u32, off: Off) -> String {
    format!("X11 Present on window {window:#x}: {off}")
}

impl State {
    fn note_once(&mut self, display: Option<String>, e: FollowError) {
        if !self.given_up.contains(&display) {
            self.notes.push(format!("no display timing: {e}"));
            self.given_up.push(display);
        }
    }

    /// Present's place on our connection to `display` (in `displays`),
    /// made now if there is none.
    fn conn_for(
        &mut self,
        displays: &Displays,
        present: &Present,
        display: &Option<String>,
    ) -> Result<usize, FollowError> {
        if let Some(i) = self.conns.iter().position(|c| &c.display == display) {
            return Ok(i);
        }
        if self.given_up.contains(display) {
            return Err(FollowError::NoPresent {
                display: display_name(display),
            });
        }
        if let Some(d) = display.as_deref().filter(|d| d.contains('\0')) {
            return Err(FollowError::Name(d.to_owned()));
        }
        let shared = displays.conn(display.as_deref())?;
        let listened = {
            let mut c = shared.lock_or_recover();
            // SAFETY: libxcb-present's extension record (a round trip:
            // QueryExtension, the first time).
            unsafe { c.opcode_of(present.present_id) }.map(|op| (op, c.listen(op)))
        };
        let Some((opcode, reader)) = listened else {
            displays.release(&shared, false);
            return Err(FollowError::NoPresent {
                display: display_name(display),
            });
        };
        self.conns.push(Conn {
            display: display.clone(),
            shared,
            opcode,
            reader,
            windows: Vec::new(),
        });
        Ok(self.conns.len() - 1)
    }
}
