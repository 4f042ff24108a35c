//! Our connection to one X display ([`XConn`]), shared by its readers, and
//! the process's record of them ([`Displays`]: one per display name).
//!
//! **One pump.** Every event on the connection is read by one function,
//! [`XConn::pump`] (`xcb_poll_for_event`, never waiting), which files each
//! generic event in the inbox of every reader of its extension
//! ([`XConn::listen`]); a reader takes its own ([`XConn::take`]). Several
//! readers of one extension (three hotkeys, and input timing, on XInput 2)
//! each get every event. An inbox holds [`INBOX_EVENTS`] events at most,
//! each cut to [`EVENT_BYTES`] (every field a reader decodes is there): a
//! reader that stops taking loses its oldest, the memory stays fixed.
//!
//! **Requests** are their wire bytes ([`XConn::round_trip`],
//! [`XConn::checked`]); a round trip may leave events libxcb read on the
//! way in its queue, so each one pumps after it.
//!
//! **Sharing.** A connection is an `Arc<Mutex<XConn>>` ([`Shared`]): every
//! call on it is made under its lock, from whichever thread (the analysis
//! thread reads; a swapchain's creation selects a window). The record
//! keeps one per display until no reader holds it ([`Displays::release`])
//! or it breaks. Lock order: the record, then a connection.
//!
//! **Lifetime.** Our connection is ours: it can be closed at any time,
//! whatever the game does with its own. A forked child never touches its
//! parent's (the record's owner pid).

use crate::ffi::{self, Extension, ProtocolRequest, VoidCookie, Xcb, XcbConn};
use std::collections::VecDeque;
use std::ffi::{c_int, c_void, CString};
use std::sync::{Arc, Mutex, OnceLock};
use steadyhud_sys::lock::Recover;

/// Why a display cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Load(String),
    #[error("cannot open X display {0:?}")]
    NoDisplay(String),
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("the X server has no {0} extension")]
    NoExtension(&'static str),
    #[error("the X server refused the request (error {0})")]
    Refused(u8),
    #[error("our X connection broke")]
    Broken,
}

/// The bytes of an event kept for a reader (the head of what libxcb
/// returned: 32 wire bytes, libxcb's `full_sequence`, the payload's start).
pub const EVENT_BYTES: usize = 64;
/// Events an inbox holds before it drops its oldest.
pub const INBOX_EVENTS: usize = 1024;

/// One event as a reader gets it.
#[derive(Clone, Copy)]
pub struct Event {
    bytes: [u8; EVENT_BYTES],
    len: usize,
}

impl Event {
    /// The event's bytes as libxcb returned them, up to [`EVENT_BYTES`].
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

struct Inbox {
    /// The extension's major opcode.
    opcode: u8,
    events: VecDeque<Event>,
}

/// One reader's place in a connection's inboxes ([`XConn::listen`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reader(usize);

/// Our connection to one X display.
pub struct XConn {
    xcb: &'static Xcb,
    /// The display's name (`$DISPLAY` resolved).
    name: String,
    c: *mut XcbConn,
    /// The screen `xcb_connect` chose (the name's `.N`).
    screen: c_int,
    /// By [`Reader`]; `None`: a reader that left.
    inbox: Vec<Option<Inbox>>,
    /// XInput 2 raw events selected on the root window: the union of what
    /// every reader asked for (a selection replaces the one before).
    pub(crate) raw_events: u32,
}

// SAFETY: our own connection, used only under its `Shared` mutex (libxcb is
// thread-safe anyway).
unsafe impl Send for XConn {}

/// A connection and its readers' way to it.
pub type Shared = Arc<Mutex<XConn>>;

/// A reply libxcb allocated, freed on drop.
pub struct Reply {
    p: *mut u8,
    len: usize,
}

impl Reply {
    /// The reply's bytes (32, plus its `length` × 4).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: libxcb's reply of `len` bytes, live until drop.
        unsafe { std::slice::from_raw_parts(self.p, self.len) }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        // SAFETY: libxcb's malloc'd reply, freed once.
        unsafe { libc::free(self.p.cast()) };
    }
}

impl XConn {
    /// Connects to display `name`.
    pub fn open(xcb: &'static Xcb, name: &str) -> Result<XConn, OpenError> {
        if name.is_empty() {
            return Err(OpenError::NoDisplay("$DISPLAY unset".to_string()));
        }
        let c_name = CString::new(name).map_err(|_| OpenError::NoDisplay(name.to_string()))?;
        let mut screen = 0;
        // SAFETY: a NUL-terminated display name and a place for the screen.
        let c = unsafe { (xcb.connect)(c_name.as_ptr(), &mut screen) };
        // SAFETY: `xcb_connect` never returns null (an error connection).
        if unsafe { (xcb.connection_has_error)(c) } != 0 {
            // SAFETY: the error connection, freed once.
            unsafe { (xcb.disconnect)(c) };
            return Err(OpenError::NoDisplay(name.to_string()));
        }
        Ok(XConn {
            xcb,
            name: name.to_string(),
            c,
            screen,
            inbox: Vec::new(),
            raw_events: 0,
        })
    }

    /// The display's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The xcb connection (for an extension library's calls, under the lock).
    pub fn raw(&self) -> *mut XcbConn {
        self.c
    }

    /// libxcb's functions.
    pub fn xcb(&self) -> &'static Xcb {
        self.xcb
    }

    /// The socket: readable when events came.
    pub fn fd(&self) -> c_int {
        // SAFETY: our live connection.
        unsafe { (self.xcb.get_file_descriptor)(self.c) }
    }

    /// Whether the connection broke (the server went away).
    pub fn broken(&self) -> bool {
        // SAFETY: our live connection.
        unsafe { (self.xcb.connection_has_error)(self.c) != 0 }
    }

    /// The root window of the connection's screen.
    pub fn root(&self) -> Option<u32> {
        // SAFETY: our live connection; the setup and its screens live as
        // long as it; `screen_next` walks libxcb's own iterator.
        unsafe {
            let setup = (self.xcb.get_setup)(self.c);
            if setup.is_null() {
                return None;
            }
            // The iterator's `index` is a byte offset, not the screen's
            // number: count the screens.
            let mut it = (self.xcb.setup_roots_iterator)(setup);
            let mut n = 0;
            while it.rem > 0 {
                if n == self.screen {
                    return Some(*it.data);
                }
                (self.xcb.screen_next)(&mut it);
                n += 1;
            }
            None
        }
    }

    /// The keyboard's keycode range (min, max) from the connection setup.
    pub fn keycode_range(&self) -> Option<(u8, u8)> {
        // SAFETY: our live connection; `xcb_setup_t` has min_keycode and
        // max_keycode at bytes 34 and 35 of its fixed 40-byte head.
        unsafe {
            let setup = (self.xcb.get_setup)(self.c);
            (!setup.is_null()).then(|| (*setup.add(34), *setup.add(35)))
        }
    }

    /// The major opcode of `ext` (a round trip the first time), `None`
    /// when the server lacks it.
    pub fn opcode(&self, ext: &'static Extension) -> Option<u8> {
        // SAFETY: an extension record of ours.
        unsafe { self.opcode_of((ext as *const Extension).cast()) }
    }

    /// [`XConn::opcode`] of an extension library's record.
    ///
    /// # Safety
    /// `ext` is a libxcb `xcb_extension_t` (an extension library's data
    /// symbol, e.g. `xcb_present_id`, or an [`Extension`]).
    pub unsafe fn opcode_of(&self, ext: *const c_void) -> Option<u8> {
        // SAFETY: our live connection and an extension record (caller).
        let reply = unsafe { (self.xcb.get_extension_data)(self.c, ext) };
        // SAFETY: null or libxcb's cached reply, valid while the connection is.
        match unsafe { reply.as_ref() } {
            Some(r) if r.present != 0 => Some(r.major_opcode),
            _ => None,
        }
    }

    /// Sends request `body` (its whole wire bytes, a multiple of 4; libxcb
    /// fills the opcodes and the length) of `ext` (`None`: core) with
    /// minor opcode `opcode` (a core request's own opcode).
    fn send(
        &self,
        ext: Option<(&'static Extension, &'static str)>,
        opcode: u8,
        body: &mut [u8],
        isvoid: bool,
        flags: c_int,
    ) -> Result<u32, RequestError> {
        if let Some((e, name)) = ext {
            // libxcb shuts the connection down on a request of an
            // extension the server lacks: ask first.
            self.opcode(e).ok_or(RequestError::NoExtension(name))?;
        }
        // `%`, not `is_multiple_of`: the i686 build's compiler is Rust 1.85.
        #[allow(clippy::manual_is_multiple_of)]
        let whole_words = body.len() >= 4 && body.len() % 4 == 0;
        debug_assert!(whole_words);
        // libxcb may use the two iovecs before the ones it is given.
        let mut parts = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; 3];
        parts[2] = libc::iovec {
            iov_base: body.as_mut_ptr().cast(),
            iov_len: body.len(),
        };
        let req = ProtocolRequest {
            count: 1,
            ext: ext.map_or(std::ptr::null(), |(e, _)| e as *const Extension),
            opcode,
            isvoid: u8::from(isvoid),
        };
        // SAFETY: our live connection; a request of whole words whose
        // extension the server has; the two iovecs before it are ours.
        let seq =
            unsafe { (self.xcb.send_request)(self.c, flags, parts.as_mut_ptr().add(2), &req) };
        if seq == 0 {
            return Err(RequestError::Broken);
        }
        Ok(seq)
    }

    /// Sends a request with a reply and waits for it (then pumps what
    /// came before it).
    pub fn round_trip(
        &mut self,
        ext: Option<(&'static Extension, &'static str)>,
        opcode: u8,
        body: &mut [u8],
    ) -> Result<Reply, RequestError> {
        let seq = self.send(ext, opcode, body, false, ffi::REQUEST_CHECKED)?;
        let mut error: *mut c_void = std::ptr::null_mut();
        // SAFETY: our live connection and the request just sent.
        let p = unsafe { (self.xcb.wait_for_reply)(self.c, seq, &mut error) };
        let out = error_of(error).and_then(|()| {
            if p.is_null() {
                return Err(RequestError::Broken);
            }
            // SAFETY: a reply is at least 32 bytes, then `length` words.
            let len = 32
                + unsafe { ffi::u32_at(std::slice::from_raw_parts(p, 8), 4) }
                    .unwrap_or(0)
                    .min(1 << 16) as usize
                    * 4;
            Ok(Reply { p, len })
        });
        self.pump();
        out
    }

    /// Sends a request without a reply and waits for the server's verdict
    /// (then pumps what came before it).
    pub fn checked(
        &mut self,
        ext: Option<(&'static Extension, &'static str)>,
        opcode: u8,
        body: &mut [u8],
    ) -> Result<(), RequestError> {
        let seq = self.send(ext, opcode, body, true, ffi::REQUEST_CHECKED)?;
        // SAFETY: our live connection and the checked request just sent.
        let error = unsafe { (self.xcb.request_check)(self.c, VoidCookie { sequence: seq }) };
        self.pump();
        error_of(error)
    }

    /// Files the generic events of extension `opcode` for a new reader,
    /// from now on.
    pub fn listen(&mut self, opcode: u8) -> Reader {
        let inbox = Some(Inbox {
            opcode,
            events: VecDeque::new(),
        });
        match self.inbox.iter().position(Option::is_none) {
            Some(i) => {
                self.inbox[i] = inbox;
                Reader(i)
            }
            None => {
                self.inbox.push(inbox);
                Reader(self.inbox.len() - 1)
            }
        }
    }

    /// `reader` reads no more: its inbox goes.
    pub fn leave(&mut self, reader: Reader) {
        if let Some(slot) = self.inbox.get_mut(reader.0) {
            *slot = None;
        }
    }

    /// Reads every event pending on the connection (never waits) and files
    /// each for its readers; events no reader listens for (and errors of
    /// unchecked requests) are dropped.
    pub fn pump(&mut self) {
        loop {
            // SAFETY: our live connection.
            let ev = unsafe { (self.xcb.poll_for_event)(self.c) };
            if ev.is_null() {
                break;
            }
            // SAFETY: an event libxcb just returned: `event_len` bytes.
            let bytes = unsafe { std::slice::from_raw_parts(ev, ffi::event_len(ev)) };
            if bytes[0] & 0x7f == ffi::GE_GENERIC {
                let len = bytes.len().min(EVENT_BYTES);
                let mut e = Event {
                    bytes: [0; EVENT_BYTES],
                    len,
                };
                e.bytes[..len].copy_from_slice(&bytes[..len]);
                for inbox in self.inbox.iter_mut().flatten() {
                    if inbox.opcode == bytes[1] {
                        if inbox.events.len() == INBOX_EVENTS {
                            inbox.events.pop_front();
                        }
                        inbox.events.push_back(e);
                    }
                }
            }
            // SAFETY: libxcb's event buffer, ours to free; `bytes` is not
            // used after.
            unsafe { libc::free(ev.cast()) };
        }
    }

    /// Hands `f` every event filed for `reader` so far (pumping first).
    pub fn take(&mut self, reader: Reader, mut f: impl FnMut(&Event)) {
        self.pump();
        if let Some(Some(inbox)) = self.inbox.get_mut(reader.0) {
            while let Some(e) = inbox.events.pop_front() {
                f(&e);
            }
        }
    }

    /// Whether events wait in `reader`'s inbox (filed by another reader's
    /// pump, so the socket no longer says so).
    pub fn waiting(&self, reader: Reader) -> bool {
        matches!(self.inbox.get(reader.0), Some(Some(i)) if !i.events.is_empty())
    }

    /// Sends what is buffered (never waits for the server).
    pub fn flush(&self) {
        // SAFETY: our live connection.
        unsafe { (self.xcb.flush)(self.c) };
    }
}

/// `Ok` for no error, else the error's code (freeing libxcb's buffer).
fn error_of(error: *mut c_void) -> Result<(), RequestError> {
    if error.is_null() {
        return Ok(());
    }
    // SAFETY: an `xcb_generic_error_t` (32 bytes; its code at byte 1),
    // ours to free.
    let code = unsafe {
        let code = *error.cast::<u8>().add(1);
        libc::free(error);
        code
    };
    Err(RequestError::Refused(code))
}

impl Drop for XConn {
    fn drop(&mut self) {
        // SAFETY: connected in `open`, closed exactly once.
        unsafe { (self.xcb.disconnect)(self.c) };
    }
}

/// The process's connections, one per X display, and libxcb.
pub struct Displays {
    /// Loaded by the first connection (leaked: connections point at it for
    /// as long as a reader holds one).
    xcb: OnceLock<Result<&'static Xcb, String>>,
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
            xcb: OnceLock::new(),
            conns: Mutex::new(Vec::new()),
            owner: steadyhud_sys::owner::Owner::new(),
        }
    }

    /// libxcb (loaded the first time), or why not.
    pub fn xcb(&self) -> Result<&'static Xcb, String> {
        self.xcb
            .get_or_init(|| {
                Xcb::load()
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
        // A connection no reader holds any more (its readers went without
        // a word), or that broke (its server went away; another may have
        // taken its name since), is not handed out again.
        conns.retain(|(_, c)| Arc::strong_count(c) > 1 && !c.lock_or_recover().broken());
        if let Some((_, c)) = conns.iter().find(|(n, _)| *n == name) {
            return Ok(c.clone());
        }
        let xcb = self.xcb().map_err(OpenError::Load)?;
        let c = Arc::new(Mutex::new(XConn::open(xcb, &name)?));
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
