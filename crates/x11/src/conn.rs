//! Our connection to one X display ([`XConn`]), shared by its readers, and
//! the process's record of them ([`Displays`]: one per display name).
//!
//! **Why Xlib opens it.** The hotkeys speak Xlib and XInput 2 (libXi is an
//! Xlib library: `XIQueryVersion`, `XISelectEvents`; `XQueryKeymap`,
//! `XKeysymToKeycode`), X11 Present speaks xcb (libxcb-present). Xlib
//! opens the connection and hands its xcb side over (libX11-xcb's
//! `XGetXCBConnection`), so both work on one socket; libxcb owns its event
//! queue (`XSetEventQueueOwner`), so one pump ([`XConn::pump`]) reads every
//! event (`xcb_poll_for_event`, never waiting) and files each generic event
//! for the reader of its extension ([`XConn::listen`], [`XConn::take`]).
//! The reverse (xcb opening, the hotkeys ported to xcb) would need
//! libxcb-xinput, which a system with libXi may lack.
//!
//! **Sharing.** A connection is an `Arc<Mutex<XConn>>` ([`Shared`]): every
//! call on it is made under its lock, from whichever thread (the analysis
//! thread reads; a swapchain's creation selects a window), so Xlib is
//! never entered from two threads at once. The record keeps one per
//! display until no reader holds it ([`Displays::release`]).
//!
//! **Lifetime.** Our connection is ours: it can be closed at any time,
//! whatever the game does with its own. A forked child never touches its
//! parent's (the record's owner pid).

use crate::ffi::{self, Display, Libs, XcbConn};
use std::ffi::{c_int, c_void, CString};
use std::sync::{Arc, Mutex, OnceLock};
use steadyhud_sys::lock::Recover;

/// Why a display cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The libraries (libX11's own error says "cannot load libX11").
    #[error("{0}")]
    Libs(String),
    #[error("cannot open X display {0:?}")]
    NoDisplay(String),
}

/// Our connection to one X display.
pub struct XConn {
    libs: &'static Libs,
    /// The display's name (`$DISPLAY` resolved).
    name: String,
    dpy: *mut Display,
    c: *mut XcbConn,
    /// Events read for each reader (by [`Reader`]): its extension's major
    /// opcode and the events as libxcb returned them, copied. Several
    /// readers of one extension (three hotkeys) each get every event.
    inbox: Vec<(u8, Vec<Vec<u8>>)>,
}

// SAFETY: our own connection, used only under its `Shared` mutex (Xlib is
// never entered from two threads at once; libxcb is thread-safe).
unsafe impl Send for XConn {}

/// A connection and its readers' way to it.
pub type Shared = Arc<Mutex<XConn>>;

/// One reader's place in a connection's inbox ([`XConn::listen`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reader(usize);

impl XConn {
    /// Opens display `name` with Xlib and hands its events to libxcb.
    pub fn open(libs: &'static Libs, name: &str) -> Result<XConn, OpenError> {
        if name.is_empty() {
            return Err(OpenError::NoDisplay("$DISPLAY unset".to_string()));
        }
        let c_name = CString::new(name).map_err(|_| OpenError::NoDisplay(name.to_string()))?;
        // SAFETY: a NUL-terminated display name.
        let dpy = unsafe { (libs.open_display)(c_name.as_ptr()) };
        if dpy.is_null() {
            return Err(OpenError::NoDisplay(name.to_string()));
        }
        // SAFETY: our live display; its xcb side lives as long as it.
        let c = unsafe {
            libs.xcb_owns_events(dpy);
            (libs.get_xcb)(dpy)
        };
        Ok(XConn {
            libs,
            name: name.to_string(),
            dpy,
            c,
            inbox: Vec::new(),
        })
    }

    /// The libraries it was opened with (libX11's functions among them).
    pub fn libs(&self) -> &'static Libs {
        self.libs
    }

    /// The display's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Xlib side (for Xlib and XInput 2 calls, under the lock).
    pub fn display(&self) -> *mut Display {
        self.dpy
    }

    /// The xcb side (for xcb calls, under the lock).
    pub fn xcb(&self) -> *mut XcbConn {
        self.c
    }

    /// The socket: readable when events came.
    pub fn fd(&self) -> c_int {
        // SAFETY: our live connection.
        unsafe { (self.libs.get_file_descriptor)(self.c) }
    }

    /// Whether the connection broke (the server went away).
    pub fn broken(&self) -> bool {
        // SAFETY: our live connection.
        unsafe { (self.libs.connection_has_error)(self.c) != 0 }
    }

    /// The major opcode of the extension whose xcb record is `ext` (a
    /// round trip the first time), `None` when the server lacks it.
    ///
    /// # Safety
    /// `ext` is a libxcb `xcb_extension_t` (an extension library's data
    /// symbol, e.g. `xcb_present_id`).
    pub unsafe fn opcode_of(&self, ext: *mut c_void) -> Option<u8> {
        // SAFETY: our live connection and a libxcb extension record
        // (caller).
        let reply = unsafe { (self.libs.get_extension_data)(self.c, ext) };
        // SAFETY: null or libxcb's cached reply, valid while the connection is.
        match unsafe { reply.as_ref() } {
            Some(r) if r.present != 0 => Some(r.major_opcode),
            _ => None,
        }
    }

    /// Files the generic events of extension `opcode` for a new reader,
    /// from now on.
    pub fn listen(&mut self, opcode: u8) -> Reader {
        self.inbox.push((opcode, Vec::new()));
        Reader(self.inbox.len() - 1)
    }

    /// Reads every event pending on the connection (never waits) and files
    /// each for its reader; events no reader listens for are dropped.
    pub fn pump(&mut self) {
        loop {
            // SAFETY: our live connection.
            let ev = unsafe { (self.libs.poll_for_event)(self.c) };
            if ev.is_null() {
                break;
            }
            // SAFETY: an event libxcb just returned: `event_len` bytes.
            let bytes = unsafe { std::slice::from_raw_parts(ev, ffi::event_len(ev)) };
            if bytes[0] & 0x7f == ffi::GE_GENERIC {
                for (_, events) in self.inbox.iter_mut().filter(|(o, _)| *o == bytes[1]) {
                    events.push(bytes.to_vec());
                }
            }
            // SAFETY: libxcb's event buffer, ours to free; `bytes` is not
            // used after.
            unsafe { libc::free(ev.cast()) };
        }
    }

    /// The events filed for `reader` so far (pumping first).
    pub fn take(&mut self, reader: Reader) -> Vec<Vec<u8>> {
        self.pump();
        self.inbox
            .get_mut(reader.0)
            .map(|(_, events)| std::mem::take(events))
            .unwrap_or_default()
    }

    /// Sends what is buffered (never waits for the server).
    pub fn flush(&self) {
        // SAFETY: our live connection.
        unsafe { (self.libs.flush)(self.c) };
    }
}

impl Drop for XConn {
    fn drop(&mut self) {
        // SAFETY: opened in `open`, closed exactly once (its xcb side
        // with it).
        unsafe { (self.libs.close_display)(self.dpy) };
    }
}

/// The process's connections, one per X display, and their libraries.
pub struct Displays {
    /// Loaded by the first connection (leaked: connections point at them
    /// for as long as a reader holds one).
    libs: OnceLock<Result<&'static Libs, String>>,
    /// (display name, connection).
    conns: Mutex<Vec<(String, Shared)>>,
    /// The process the record belongs to (0 = unused): a forked child
    /// gets none.
    owner: steadyhud_sys::owner::Owner,
}

impl Default for Displays {
    fn default() -> Displays {
        Displays::new()
    }
}

impl Displays {
    /// Nothing loaded, nothing open.
    pub const fn new() -> Displays {
        Displays {
            libs: OnceLock::new(),
            conns: Mutex::new(Vec::new()),
            owner: steadyhud_sys::owner::Owner::new(),
        }
    }

    /// The libraries (loaded the first time), or why not.
    pub fn libs(&self) -> Result<&'static Libs, String> {
        self.libs
            .get_or_init(|| {
                Libs::load()
                    .map(|l| &*Box::leak(Box::new(l)))
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// Our connection to display `name` (`None`: `$DISPLAY`), opened now
    /// if there is none.
    pub fn conn(&self, name: Option<&str>) -> Result<Shared, OpenError> {
        if !self.owner.here() {
            return Err(OpenError::NoDisplay(
                "a forked child does not use its parent's connection".into(),
            ));
        }
        let name = match name {
            Some(n) => n.to_string(),
            None => std::env::var("DISPLAY").unwrap_or_default(),
        };
        let mut conns = self.conns.lock_or_recover();
        if let Some((_, c)) = conns.iter().find(|(n, _)| *n == name) {
            return Ok(c.clone());
        }
        let libs = self.libs().map_err(OpenError::Libs)?;
        let c = Arc::new(Mutex::new(XConn::open(libs, &name)?));
        conns.push((name, c.clone()));
        Ok(c)
    }

    /// Drops the record's handle on `conn` when no reader but the caller
    /// holds it any more, or when it `broke`: the connection closes with
    /// the last handle. Call without holding `conn`'s lock.
    pub fn release(&self, conn: &Shared, broke: bool) {
        if !self.owner.here() {
            return;
        }
        self.conns
            .lock_or_recover()
            .retain(|(_, c)| !Arc::ptr_eq(c, conn) || (!broke && Arc::strong_count(c) > 2));
    }
}
