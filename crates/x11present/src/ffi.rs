//! libxcb and libxcb-present, loaded at run time with `libloading` (no
//! build-time dependency; Debian: `libxcb1`, `libxcb-present0`), and the
//! decoding of a `CompleteNotify` from the event buffer libxcb returns.

use crate::matcher::{Complete, Mode};
use std::ffi::{c_char, c_int, c_uint, c_void};

pub const XCB_LIB: &str = "libxcb.so.1";
pub const XCB_PRESENT_LIB: &str = "libxcb-present.so.0";

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

/// `XCB_PRESENT_EVENT_MASK_COMPLETE_NOTIFY`.
pub const COMPLETE_NOTIFY_MASK: u32 = 2;
/// `XCB_PRESENT_COMPLETE_NOTIFY` (the generic event's `event_type`).
pub const COMPLETE_NOTIFY: u16 = 1;
/// `XCB_GE_GENERIC`.
pub const GE_GENERIC: u8 = 35;

use steadyhud_dl::sym;
pub use steadyhud_dl::LoadError;

/// What to install when libxcb or libxcb-present is missing.
const HINT: &str = "; Debian: libxcb1 and libxcb-present0";

/// The functions we use.
pub struct Xcb {
    pub connect: unsafe extern "C" fn(*const c_char, *mut c_int) -> *mut XcbConn,
    pub connection_has_error: unsafe extern "C" fn(*mut XcbConn) -> c_int,
    pub disconnect: unsafe extern "C" fn(*mut XcbConn),
    pub generate_id: unsafe extern "C" fn(*mut XcbConn) -> u32,
    pub poll_for_event: unsafe extern "C" fn(*mut XcbConn) -> *mut u8,
    pub get_extension_data:
        unsafe extern "C" fn(*mut XcbConn, *mut c_void) -> *const QueryExtensionReply,
    pub request_check: unsafe extern "C" fn(*mut XcbConn, VoidCookie) -> *mut c_void,
    pub flush: unsafe extern "C" fn(*mut XcbConn) -> c_int,
    pub present_select_input_checked:
        unsafe extern "C" fn(*mut XcbConn, u32, u32, u32) -> VoidCookie,
    pub present_select_input: unsafe extern "C" fn(*mut XcbConn, u32, u32, u32) -> VoidCookie,
    /// `xcb_present_id` (an `xcb_extension_t`, a data symbol).
    pub present_id: *mut c_void,
    _present: libloading::Library,
    _xcb: libloading::Library,
}

// SAFETY: function pointers and the address of libxcb-present's extension
// record, kept valid by the libraries held; libxcb is thread-safe.
unsafe impl Send for Xcb {}
// SAFETY: as above; nothing in the struct is written after loading.
unsafe impl Sync for Xcb {}

impl Xcb {
    pub fn load() -> Result<Xcb, LoadError> {
        let (x, p) = (XCB_LIB, XCB_PRESENT_LIB);
        let xcb = steadyhud_dl::open(x, HINT)?;
        let present = steadyhud_dl::open(p, HINT)?;
        // SAFETY: each type is the libxcb / libxcb-present prototype of the
        // named function (xcb.h, present.h), or a pointer for the data
        // symbol `xcb_present_id`.
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
                present_select_input_checked: sym(
                    &present,
                    p,
                    "xcb_present_select_input_checked\0",
                    "",
                )?,
                present_select_input: sym(&present, p, "xcb_present_select_input\0", "")?,
                present_id: sym(&present, p, "xcb_present_id\0", "")?,
                _present: present,
                _xcb: xcb,
            })
        }
    }
}

/// A Present `CompleteNotify` of the extension whose major opcode is
/// `opcode`, decoded from one event of `xcb_poll_for_event`: `ev` is the
/// event's bytes as libxcb returns them (a generic event is the 32-byte
/// wire header, libxcb's 4-byte `full_sequence`, then `length` × 4 more
/// wire bytes). Returns (event id, window, complete).
pub fn complete_notify(ev: &[u8], opcode: u8) -> Option<(u32, u32, Complete)> {
    let u16_at = |o: usize| Some(u16::from_ne_bytes(ev.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_ne_bytes(ev.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_ne_bytes(ev.get(o..o + 8)?.try_into().ok()?));
    if ev.first()? & 0x7f != GE_GENERIC || *ev.get(1)? != opcode {
        return None;
    }
    if u16_at(8)? != COMPLETE_NOTIFY || u32_at(4)? < 2 {
        return None;
    }
    Some((
        u32_at(12)?,
        u32_at(16)?,
        Complete {
            kind: *ev.get(10)?,
            mode: Mode::from_wire(*ev.get(11)?),
            serial: u32_at(20)?,
            ust_us: u64_at(24)?,
            // Wire offset 32, moved 4 on by libxcb's full_sequence.
            msc: u64_at(36)?,
        },
    ))
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

/// The name of the app's Xlib display (`XDisplayString`, which only
/// reads the `Display`'s name field: no request on the app's connection);
/// `None` when libX11 is not in the process or gives none (`$DISPLAY` is
/// then used).
///
/// # Safety
/// `dpy` is null or the app's live Xlib `Display`.
pub unsafe fn xlib_display_name(dpy: *mut c_void) -> Option<String> {
    if dpy.is_null() {
        return None;
    }
    // SAFETY: `dlsym` with a C string.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"XDisplayString".as_ptr()) };
    if f.is_null() {
        return None;
    }
    type DisplayString = unsafe extern "C" fn(*mut c_void) -> *const c_char;
    // SAFETY: libX11's `char *XDisplayString(Display *)`, on the app's
    // live display (caller); the string lives as long as the display and
    // is copied at once.
    unsafe {
        let display_string = std::mem::transmute::<*mut c_void, DisplayString>(f);
        let s = display_string(dpy);
        (!s.is_null()).then(|| std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_complete_notify() {
        let mut ev = [0u8; 44];
        ev[0] = GE_GENERIC;
        ev[1] = 147;
        ev[4..8].copy_from_slice(&2u32.to_ne_bytes());
        ev[8..10].copy_from_slice(&COMPLETE_NOTIFY.to_ne_bytes());
        ev[10] = 0;
        ev[11] = 2;
        ev[12..16].copy_from_slice(&0x0060_0001u32.to_ne_bytes());
        ev[16..20].copy_from_slice(&0x0040_0002u32.to_ne_bytes());
        ev[20..24].copy_from_slice(&7u32.to_ne_bytes());
        ev[24..32].copy_from_slice(&123_456_789u64.to_ne_bytes());
        ev[32..36].copy_from_slice(&0xdead_beefu32.to_ne_bytes());
        ev[36..44].copy_from_slice(&4242u64.to_ne_bytes());
        let (eid, window, c) = complete_notify(&ev, 147).expect("decoded");
        assert_eq!((eid, window), (0x0060_0001, 0x0040_0002));
        assert_eq!(
            c,
            Complete {
                kind: 0,
                mode: Mode::Skip,
                serial: 7,
                ust_us: 123_456_789,
                msc: 4242
            }
        );
        assert_eq!(complete_notify(&ev, 148), None, "another extension's");
        assert_eq!(complete_notify(&ev[..40], 147), None, "short");
        ev[8] = 2; // IdleNotify
        assert_eq!(complete_notify(&ev, 147), None);
    }
}
