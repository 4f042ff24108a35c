//! libX11, libX11-xcb and libxcb, loaded at run time with `libloading` (no
//! build-time dependency; Debian: `libx11-6`, `libx11-xcb1`, `libxcb1`):
//! what our connection needs to open, pump and close itself. Its readers
//! load their own extension's functions (libXi, libxcb-present) and take
//! Xlib's from [`Libs::x11`].

use std::ffi::{c_char, c_int, c_void, OsString};
use steadyhud_dl::sym;
pub use steadyhud_dl::LoadError;

/// Environment variable overriding the Xlib library name: the fault tests
/// set it to a name that does not exist to see what a system without
/// libX11 gets (an X11 game has libX11 loaded already, so hiding the
/// system library would not reach this code).
pub const X11_LIB_ENV: &str = "STEADYHUD_X11_LIB";
pub const X11_LIB: &str = "libX11.so.6";
pub const X11_XCB_LIB: &str = "libX11-xcb.so.1";
pub const XCB_LIB: &str = "libxcb.so.1";

/// What to install when libX11-xcb or libxcb is missing.
const HINT: &str = "; Debian: libx11-xcb1 and libxcb1";

/// Xlib's `Display`.
pub type Display = c_void;
/// `xcb_connection_t`.
pub type XcbConn = c_void;

/// `xcb_void_cookie_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VoidCookie {
    pub sequence: std::ffi::c_uint,
}

/// `xcb_query_extension_reply_t`.
#[repr(C)]
pub struct QueryExtensionReply {
    pub response_type: u8,
    pub pad0: u8,
    pub sequence: u16,
    pub length: u32,
    pub present: u8,
    pub major_opcode: u8,
    pub first_event: u8,
    pub first_error: u8,
}

/// `XCBOwnsEventQueue`: libxcb, not Xlib, reads the connection's events.
const XCB_OWNS_EVENT_QUEUE: c_int = 1;

/// `XCB_GE_GENERIC`: every extension event we read is a generic event.
pub const GE_GENERIC: u8 = 35;

/// Why the libraries cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LibsError {
    /// libX11 itself (its own error: the hotkeys name it so).
    #[error("cannot load libX11 ({0})")]
    X11(#[source] libloading::Error),
    #[error("{0}")]
    Other(#[from] LoadError),
}

/// The functions our connection uses.
pub struct Libs {
    pub open_display: unsafe extern "C" fn(*const c_char) -> *mut Display,
    pub close_display: unsafe extern "C" fn(*mut Display) -> c_int,
    pub get_xcb: unsafe extern "C" fn(*mut Display) -> *mut XcbConn,
    pub set_queue_owner: unsafe extern "C" fn(*mut Display, c_int),
    pub connection_has_error: unsafe extern "C" fn(*mut XcbConn) -> c_int,
    pub get_file_descriptor: unsafe extern "C" fn(*mut XcbConn) -> c_int,
    pub generate_id: unsafe extern "C" fn(*mut XcbConn) -> u32,
    pub poll_for_event: unsafe extern "C" fn(*mut XcbConn) -> *mut u8,
    pub get_extension_data:
        unsafe extern "C" fn(*mut XcbConn, *mut c_void) -> *const QueryExtensionReply,
    pub request_check: unsafe extern "C" fn(*mut XcbConn, VoidCookie) -> *mut c_void,
    pub flush: unsafe extern "C" fn(*mut XcbConn) -> c_int,
    /// libX11, for the readers' Xlib calls (kept loaded with these).
    pub x11: libloading::Library,
    _x11_xcb: libloading::Library,
    _xcb: libloading::Library,
}

// SAFETY: function pointers kept valid by the libraries held; the
// connections they are used on are each behind a mutex.
unsafe impl Send for Libs {}
// SAFETY: as above; nothing in the struct is written after loading.
unsafe impl Sync for Libs {}

impl Libs {
    /// Loads libX11 (or what `STEADYHUD_X11_LIB` names), libX11-xcb and
    /// libxcb; in an X11 game they are mapped already.
    pub fn load() -> Result<Libs, LibsError> {
        let x11_name: OsString = std::env::var_os(X11_LIB_ENV).unwrap_or_else(|| X11_LIB.into());
        // SAFETY: loading the system libX11 runs its (trivial) initialisers.
        let x11 = unsafe { libloading::Library::new(&x11_name) }.map_err(LibsError::X11)?;
        let (l, xx, xc) = (X11_LIB, X11_XCB_LIB, XCB_LIB);
        let x11_xcb = steadyhud_dl::open(xx, HINT)?;
        let xcb = steadyhud_dl::open(xc, HINT)?;
        // SAFETY: each type is the prototype of the named function
        // (Xlib.h, Xlib-xcb.h, xcb.h).
        unsafe {
            Ok(Libs {
                open_display: sym(&x11, l, "XOpenDisplay\0", "")?,
                close_display: sym(&x11, l, "XCloseDisplay\0", "")?,
                get_xcb: sym(&x11_xcb, xx, "XGetXCBConnection\0", "")?,
                set_queue_owner: sym(&x11_xcb, xx, "XSetEventQueueOwner\0", "")?,
                connection_has_error: sym(&xcb, xc, "xcb_connection_has_error\0", "")?,
                get_file_descriptor: sym(&xcb, xc, "xcb_get_file_descriptor\0", "")?,
                generate_id: sym(&xcb, xc, "xcb_generate_id\0", "")?,
                poll_for_event: sym(&xcb, xc, "xcb_poll_for_event\0", "")?,
                get_extension_data: sym(&xcb, xc, "xcb_get_extension_data\0", "")?,
                request_check: sym(&xcb, xc, "xcb_request_check\0", "")?,
                flush: sym(&xcb, xc, "xcb_flush\0", "")?,
                x11,
                _x11_xcb: x11_xcb,
                _xcb: xcb,
            })
        }
    }

    /// Hands the connection's events to libxcb (Xlib's requests and
    /// replies still work; only events are read through libxcb).
    ///
    /// # Safety
    /// `dpy` is a live display opened with these libraries.
    pub(crate) unsafe fn xcb_owns_events(&self, dpy: *mut Display) {
        // SAFETY: caller's contract.
        unsafe { (self.set_queue_owner)(dpy, XCB_OWNS_EVENT_QUEUE) };
    }
}

/// The length of the event at `ev` as libxcb allocated it: 36 bytes, plus
/// `length` × 4 for a generic event.
///
/// # Safety
/// `ev` is an event `xcb_poll_for_event` returned (not yet freed).
pub unsafe fn event_len(ev: *const u8) -> usize {
    // SAFETY: every libxcb event is at least 36 bytes (32 wire bytes and
    // `full_sequence`).
    let head = unsafe { std::slice::from_raw_parts(ev, 36) };
    if head[0] & 0x7f == GE_GENERIC {
        let length = u32::from_ne_bytes([head[4], head[5], head[6], head[7]]) as usize;
        36 + length.min(1 << 16) * 4
    } else {
        36
    }
}
