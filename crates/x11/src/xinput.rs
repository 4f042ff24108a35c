//! XInput 2 on our connection: the raw events of the root window (every
//! key and button, whatever window has the focus, without taking it from
//! the game), selected by their wire bytes, and decoded from the events
//! the connection's pump files ([`RawEvent`]).
//!
//! A selection replaces the one before, so the connection keeps the union
//! of what its readers asked for and selects that ([`select_raw`]).

use crate::conn::{RequestError, XConn};
use crate::ffi::{self, Extension};

/// XInput 2's extension record.
pub static XINPUT: Extension = Extension::new(c"XInputExtension");
const NAME: &str = "XInputExtension";

/// Raw event types (`XI_RawKeyPress` …).
pub const RAW_KEY_PRESS: u16 = 13;
pub const RAW_KEY_RELEASE: u16 = 14;
pub const RAW_BUTTON_PRESS: u16 = 15;
pub const RAW_BUTTON_RELEASE: u16 = 16;
pub const RAW_MOTION: u16 = 17;

/// `XIAllDevices`: raw events of every device (the master keyboard and
/// its slaves, XTEST's among them).
const ALL_DEVICES: u16 = 0;
/// `X_XIQueryVersion`, `X_XISelectEvents`.
const QUERY_VERSION: u8 = 47;
const SELECT_EVENTS: u8 = 46;

/// The bit of raw event type `t` in a selection mask.
pub const fn bit(t: u16) -> u32 {
    1 << t
}

/// XInput 2's major opcode on `conn` when the server speaks version 2 or
/// later (a round trip the first time), else `None`.
pub fn opcode(conn: &mut XConn) -> Option<u8> {
    let op = conn.opcode(&XINPUT)?;
    // XIQueryVersion(2, 0): header, major, minor.
    let mut req = [0u8; 8];
    req[4..6].copy_from_slice(&2u16.to_ne_bytes());
    let reply = conn
        .round_trip(Some((&XINPUT, NAME)), QUERY_VERSION, &mut req)
        .ok()?;
    (ffi::u16_at(reply.bytes(), 8)? >= 2).then_some(op)
}

/// Adds the raw events in `mask` ([`bit`]s) to what the connection selects
/// on its root window, for every device.
pub fn select_raw(conn: &mut XConn, mask: u32) -> Result<(), RequestError> {
    let union = conn.raw_events | mask;
    if union == conn.raw_events {
        return Ok(());
    }
    let root = conn.root().ok_or(RequestError::Broken)?;
    // XISelectEvents: header, window, num_mask = 1, pad; one mask:
    // deviceid, mask_len = 1 word, the mask's bytes (bit n of byte n / 8).
    let mut req = [0u8; 20];
    req[4..8].copy_from_slice(&root.to_ne_bytes());
    req[8..10].copy_from_slice(&1u16.to_ne_bytes());
    req[12..14].copy_from_slice(&ALL_DEVICES.to_ne_bytes());
    req[14..16].copy_from_slice(&1u16.to_ne_bytes());
    req[16..20].copy_from_slice(&union.to_le_bytes());
    conn.checked(Some((&XINPUT, NAME)), SELECT_EVENTS, &mut req)?;
    conn.raw_events = union;
    Ok(())
}

/// A raw event's head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEvent {
    /// [`RAW_KEY_PRESS`] …
    pub kind: u16,
    pub device: u16,
    /// The server's time, milliseconds.
    pub time_ms: u32,
    /// The keycode or button.
    pub detail: u32,
    pub source: u16,
}

impl RawEvent {
    /// Decodes a raw event of XInput 2 (major opcode `opcode`) from an
    /// event's bytes as libxcb returned them.
    pub fn decode(ev: &[u8], opcode: u8) -> Option<RawEvent> {
        if ev.first()? & 0x7f != ffi::GE_GENERIC || *ev.get(1)? != opcode {
            return None;
        }
        let kind = ffi::u16_at(ev, 8)?;
        if !(RAW_KEY_PRESS..=RAW_MOTION).contains(&kind) {
            return None;
        }
        Some(RawEvent {
            kind,
            device: ffi::u16_at(ev, 10)?,
            time_ms: ffi::u32_at(ev, 12)?,
            detail: ffi::u32_at(ev, 16)?,
            source: ffi::u16_at(ev, 20)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_raw_key_press() {
        let mut ev = [0u8; 36];
        ev[0] = ffi::GE_GENERIC;
        ev[1] = 131;
        ev[8..10].copy_from_slice(&RAW_KEY_PRESS.to_ne_bytes());
        ev[10..12].copy_from_slice(&3u16.to_ne_bytes());
        ev[12..16].copy_from_slice(&123_456u32.to_ne_bytes());
        ev[16..20].copy_from_slice(&96u32.to_ne_bytes());
        ev[20..22].copy_from_slice(&8u16.to_ne_bytes());
        let e = RawEvent::decode(&ev, 131).expect("decoded");
        assert_eq!(
            e,
            RawEvent {
                kind: RAW_KEY_PRESS,
                device: 3,
                time_ms: 123_456,
                detail: 96,
                source: 8
            }
        );
        assert_eq!(RawEvent::decode(&ev, 130), None, "another extension's");
        assert_eq!(RawEvent::decode(&ev[..20], 131), None, "short");
        ev[8] = 2; // XI_KeyPress, not raw
        assert_eq!(RawEvent::decode(&ev, 131), None);
    }

    #[test]
    fn mask_bits_are_the_event_types() {
        assert_eq!(
            (bit(RAW_KEY_PRESS) | bit(RAW_KEY_RELEASE)).to_le_bytes(),
            [0, 0x60, 0, 0]
        );
    }
}
