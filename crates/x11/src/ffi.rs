//! libxcb, loaded at run time with `libloading` (no build-time
//! dependency; Debian: `libxcb1`), and the bytes of the events it returns.
//!
//! Requests are sent by their wire bytes (`xcb_send_request`), so no
//! extension library is needed for the few we make (XInput 2's two, the
//! core keymap's two): a system with libXi but without libxcb-xinput
//! still gets key events.

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use steadyhud_dl::sym;
pub use steadyhud_dl::LoadError;

pub const XCB_LIB: &str = "libxcb.so.1";

/// What to install when libxcb is missing.
const HINT: &str = "; Debian: libxcb1";

/// `xcb_connection_t`.
pub type XcbConn = c_void;

/// `xcb_void_cookie_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VoidCookie {
    pub sequence: c_uint,
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

/// `xcb_protocol_request_t`.
#[repr(C)]
pub struct ProtocolRequest {
    pub count: usize,
    pub ext: *const Extension,
    pub opcode: u8,
    pub isvoid: u8,
}

/// `xcb_screen_iterator_t` (its `data` points at an `xcb_screen_t`, whose
/// first field is the root window; `index` is a byte offset).
#[repr(C)]
pub struct ScreenIterator {
    pub data: *const u32,
    pub rem: c_int,
    pub index: c_int,
}

/// `xcb_extension_t`: an extension's name and libxcb's cache slot for its
/// `QueryExtension` reply (libxcb writes the slot once, under its lock).
/// One per extension for the whole process, as libxcb's own libraries
/// keep theirs.
#[repr(C)]
pub struct Extension {
    name: *const c_char,
    global_id: UnsafeCell<c_int>,
}

// SAFETY: the name is a static C string; libxcb writes `global_id` under
// its own global lock, and we never touch it.
unsafe impl Sync for Extension {}

impl Extension {
    pub const fn new(name: &'static CStr) -> Extension {
        Extension {
            name: name.as_ptr(),
            global_id: UnsafeCell::new(0),
        }
    }
}

/// `XCB_REQUEST_CHECKED`: errors of a void request are kept for
/// `xcb_request_check` instead of coming as events.
pub const REQUEST_CHECKED: c_int = 1;

/// `XCB_GE_GENERIC`: the response type of every extension event with a
/// payload (XInput 2, Present).
pub const GE_GENERIC: u8 = 35;

/// The functions we use.
pub struct Xcb {
    pub connect: unsafe extern "C" fn(*const c_char, *mut c_int) -> *mut XcbConn,
    pub connection_has_error: unsafe extern "C" fn(*mut XcbConn) -> c_int,
    pub disconnect: unsafe extern "C" fn(*mut XcbConn),
    pub generate_id: unsafe extern "C" fn(*mut XcbConn) -> u32,
    pub poll_for_event: unsafe extern "C" fn(*mut XcbConn) -> *mut u8,
    pub get_extension_data:
        unsafe extern "C" fn(*mut XcbConn, *const c_void) -> *const QueryExtensionReply,
    pub request_check: unsafe extern "C" fn(*mut XcbConn, VoidCookie) -> *mut c_void,
    pub flush: unsafe extern "C" fn(*mut XcbConn) -> c_int,
    pub get_file_descriptor: unsafe extern "C" fn(*mut XcbConn) -> c_int,
    pub send_request: unsafe extern "C" fn(
        *mut XcbConn,
        c_int,
        *mut libc::iovec,
        *const ProtocolRequest,
    ) -> c_uint,
    pub wait_for_reply: unsafe extern "C" fn(*mut XcbConn, c_uint, *mut *mut c_void) -> *mut u8,
    pub get_setup: unsafe extern "C" fn(*mut XcbConn) -> *const u8,
    pub setup_roots_iterator: unsafe extern "C" fn(*const u8) -> ScreenIterator,
    pub screen_next: unsafe extern "C" fn(*mut ScreenIterator),
    _xcb: libloading::Library,
}

// SAFETY: function pointers kept valid by the library held; libxcb is
// thread-safe.
unsafe impl Send for Xcb {}
// SAFETY: as above; nothing in the struct is written after loading.
unsafe impl Sync for Xcb {}

impl Xcb {
    pub fn load() -> Result<Xcb, LoadError> {
        let x = XCB_LIB;
        let xcb = steadyhud_dl::open(x, HINT)?;
        // SAFETY: each type is the libxcb prototype of the named function
        // (xcb.h, xcbext.h, xproto.h).
        unsafe {
            Ok(Xcb {
                connect: sym(&xcb, x, "xcb_connect\0", "")?,
                connection_has_error: sym(&xcb, x, "xcb_connection_has_error\0", "")?,
                disconnect: sym(&xcb, x, "xcb_disconnect\0", "")?,
                generate_id: sym(&xcb, x, "xcb_generate_id\0", "")?,
                poll_for_event: sym(&xcb, x, "xcb_poll_for_event\0", "")?,
                get_extension_data: sym(&xcb, x, "xcb_get_extension_data\0", "")?,
                request_check: sym(&xcb, x, "xcb_request_check\0", "")?,
                flush: sym(&xcb, x, "xcb_flush\0", "")?,
                get_file_descriptor: sym(&xcb, x, "xcb_get_file_descriptor\0", "")?,
                send_request: sym(&xcb, x, "xcb_send_request\0", "")?,
                wait_for_reply: sym(&xcb, x, "xcb_wait_for_reply\0", "")?,
                get_setup: sym(&xcb, x, "xcb_get_setup\0", "")?,
                setup_roots_iterator: sym(&xcb, x, "xcb_setup_roots_iterator\0", "")?,
                screen_next: sym(&xcb, x, "xcb_screen_next\0", "")?,
                _xcb: xcb,
            })
        }
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

/// The `u16`, `u32` at byte `o` of `b` (the connection's byte order, which
/// libxcb makes the host's).
pub fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(o..o + 2)?.try_into().ok()?))
}

/// See [`u16_at`].
pub fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
