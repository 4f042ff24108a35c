//! libxcb-present, loaded at run time with `libloading` (no build-time
//! dependency; Debian: `libxcb-present0`), for the requests made on our
//! connection (`steadyhud_x11`, which loads libxcb itself), and the
//! decoding of a `CompleteNotify` from the event bytes its pump files.

use crate::matcher::{Complete, Mode};
use std::ffi::{c_char, c_void};

pub use steadyhud_x11::ffi::{event_len, QueryExtensionReply, VoidCookie, XcbConn, GE_GENERIC};

pub const XCB_PRESENT_LIB: &str = "libxcb-present.so.0";

/// `XCB_PRESENT_EVENT_MASK_COMPLETE_NOTIFY`.
pub const COMPLETE_NOTIFY_MASK: u32 = 2;
/// `XCB_PRESENT_COMPLETE_NOTIFY` (the generic event's `event_type`).
pub const COMPLETE_NOTIFY: u16 = 1;

use steadyhud_dl::sym;
pub use steadyhud_dl::LoadError;

/// What to install when libxcb-present is missing.
const HINT: &str = "; Debian: libxcb-present0";

/// The functions we use.
pub struct Present {
    pub select_input_checked: unsafe extern "C" fn(*mut XcbConn, u32, u32, u32) -> VoidCookie,
    pub select_input: unsafe extern "C" fn(*mut XcbConn, u32, u32, u32) -> VoidCookie,
    /// `xcb_present_id` (an `xcb_extension_t`, a data symbol).
    pub present_id: *mut c_void,
    _present: libloading::Library,
}

// SAFETY: function pointers and the address of libxcb-present's extension
// record, kept valid by the library held; libxcb is thread-safe.
unsafe impl Send for Present {}
// SAFETY: as above; nothing in the struct is written after loading.
unsafe impl Sync for Present {}

impl Present {
    pub fn load() -> Result<Present, LoadError> {
        let p = XCB_PRESENT_LIB;
        let present = steadyhud_dl::open(p, HINT)?;
        // SAFETY: each type is the libxcb-present prototype of the named
        // function (present.h), or a pointer for the data symbol
        // `xcb_present_id`.
        unsafe {
            Ok(Present {
                select_input_checked: sym(&present, p, "xcb_present_select_input_checked\0", "")?,
                select_input: sym(&present, p, "xcb_present_select_input\0", "")?,
                present_id: sym(&present, p, "xcb_present_id\0", "")?,
                _present: present,
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
