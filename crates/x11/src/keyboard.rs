//! The core protocol's keyboard on our connection: which keys are down
//! ([`keys_down`], `QueryKeymap`) and which keycode makes a keysym
//! ([`keycode_of`], `GetKeyboardMapping`, searched as Xlib's
//! `XKeysymToKeycode` does), by their wire bytes.

use crate::conn::XConn;
use crate::ffi;

/// `X_QueryKeymap`, `X_GetKeyboardMapping`.
const QUERY_KEYMAP: u8 = 44;
const GET_KEYBOARD_MAPPING: u8 = 101;

/// The keys down now, a bit per keycode (a round trip), `None` when the
/// connection broke.
pub fn keys_down(conn: &mut XConn) -> Option<[u8; 32]> {
    let mut req = [0u8; 4];
    let reply = conn.round_trip(None, QUERY_KEYMAP, &mut req).ok()?;
    reply.bytes().get(8..40)?.try_into().ok()
}

/// The first keycode whose mapping holds `keysym` (a round trip), `None`
/// when no key makes it.
pub fn keycode_of(conn: &mut XConn, keysym: u32) -> Option<u8> {
    let (min, max) = conn.keycode_range()?;
    let count = max.checked_sub(min)?.checked_add(1)?;
    // GetKeyboardMapping: header, first keycode, count, 2 unused.
    let mut req = [0u8; 8];
    req[4] = min;
    req[5] = count;
    let reply = conn.round_trip(None, GET_KEYBOARD_MAPPING, &mut req).ok()?;
    let b = reply.bytes();
    let per = usize::from(*b.get(1)?);
    if per == 0 {
        return None;
    }
    // The keysyms from byte 32, `per` for each keycode from `min`.
    (0..usize::from(count)).find_map(|k| {
        let found = (0..per).any(|j| ffi::u32_at(b, 32 + (k * per + j) * 4) == Some(keysym));
        found.then(|| min + k as u8)
    })
}
