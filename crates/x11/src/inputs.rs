//! Input timing's reader on our connection ([`Inputs`]): the server's time
//! of each key press and button press (XInput 2 raw events on the root
//! window: every device, whatever window has the focus, nothing taken
//! from the game), kept only while one of the game's windows has the
//! focus, mapped to CLOCK_MONOTONIC ([`server_time_ns`]).
//!
//! **The clock.** The X server stamps events with `GetTimeInMillis()`:
//! CLOCK_MONOTONIC in milliseconds, truncated to 32 bits (Xorg and Xvfb
//! use CLOCK_MONOTONIC_COARSE only where its resolution is 1 ms or finer;
//! it is 4 ms on this bed's kernel, so they use CLOCK_MONOTONIC). The
//! stamp is the millisecond the server handled the event in: the time
//! mapped back is that millisecond's start, at most 1 ms before the event
//! and never after it (`crates/x11/tests/xvfb_inputs.rs` holds it to the moments
//! around an `xdotool` click).
//!
//! **The focus.** Raw events come from every device whatever has the
//! focus, so a batch is kept only when the focus (`GetInputFocus`; under
//! `PointerRoot` the window under the pointer, `QueryPointer` down the
//! tree) is one of the game's windows or inside one. One check per batch
//! taken, on the analysis thread.

use crate::conn::{Displays, OpenError, Reader, RequestError, Shared, XConn};
use crate::ffi;
use crate::xinput::{self, RawEvent};
use steadyhud_sys::lock::Recover;

/// `X_GetInputFocus`, `X_QueryPointer`.
const GET_INPUT_FOCUS: u8 = 43;
const QUERY_POINTER: u8 = 38;
/// `PointerRoot`: the focus follows the pointer.
const POINTER_ROOT: u32 = 1;
/// Windows walked down from the root under the pointer, at most.
const MAX_DEPTH: usize = 16;
/// Presses handed over by one take, at most (the analysis thread takes
/// every ≤ 250 ms: 1,000 presses a second).
pub const TAKE_MAX: usize = 256;

/// What an input was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    Key,
    Button,
}

/// One input the game's window received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// When it happened: the server's millisecond, CLOCK_MONOTONIC ns.
    pub t_ns: u64,
    /// The server's own stamp (ms, 32 bits).
    pub server_ms: u32,
    pub kind: InputKind,
}

/// The presses a take did not hand over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Left {
    /// Past [`TAKE_MAX`] in one take: lost.
    pub over: u64,
    /// The focus was not the game's: not its input.
    pub unfocused: u64,
}

impl std::ops::AddAssign for Left {
    fn add_assign(&mut self, o: Left) {
        self.over += o.over;
        self.unfocused += o.unfocused;
    }
}

/// Why input cannot be read on a display.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error("X display {0:?} has no XInput 2 (no input timing there)")]
    NoXInput2(String),
    #[error("X display {display:?}: selecting raw input events failed: {source}")]
    Select {
        display: String,
        source: RequestError,
    },
}

/// The server's 32-bit millisecond stamp `server_ms` as CLOCK_MONOTONIC ns,
/// given `now_ns` (CLOCK_MONOTONIC, read after the event): the latest
/// millisecond at or before `now_ns` whose low 32 bits are the stamp.
pub fn server_time_ns(server_ms: u32, now_ns: u64) -> u64 {
    let now_ms = now_ns / 1_000_000;
    let back = u64::from((now_ms as u32).wrapping_sub(server_ms));
    now_ms.saturating_sub(back) * 1_000_000
}

/// Input timing on one X display: a reader of XInput 2 on our connection.
pub struct Inputs {
    conn: Shared,
    reader: Reader,
    opcode: u8,
}

impl Inputs {
    /// Reads raw key and button presses on display `name` (`None`:
    /// `$DISPLAY`), on its one connection in `displays`.
    pub fn on(displays: &Displays, name: Option<&str>) -> Result<Inputs, InputError> {
        let conn = displays.conn(name)?;
        let listened = {
            let mut c = conn.lock_or_recover();
            let display = c.name().to_string();
            match xinput::opcode(&mut c) {
                None => Err(InputError::NoXInput2(display)),
                Some(opcode) => {
                    let mask =
                        xinput::bit(xinput::RAW_KEY_PRESS) | xinput::bit(xinput::RAW_BUTTON_PRESS);
                    match xinput::select_raw(&mut c, mask) {
                        Ok(()) => Ok((opcode, c.listen(opcode))),
                        Err(source) => Err(InputError::Select { display, source }),
                    }
                }
            }
        };
        match listened {
            Ok((opcode, reader)) => Ok(Inputs {
                conn,
                reader,
                opcode,
            }),
            Err(e) => {
                displays.release(&conn, false);
                Err(e)
            }
        }
    }

    /// The connection's socket (readable when events came).
    pub fn fd(&self) -> std::ffi::c_int {
        self.conn.lock_or_recover().fd()
    }

    /// Hands `f` every key or button press taken since the last call, when
    /// the focus is in one of `windows` (the game's) now; `now_ns` is
    /// CLOCK_MONOTONIC read just before. Returns the presses not handed
    /// over.
    pub fn take(&self, windows: &[u32], now_ns: u64, mut f: impl FnMut(Input)) -> Left {
        let mut c = self.conn.lock_or_recover();
        let mut presses = [None; TAKE_MAX];
        let (mut n, mut over) = (0, 0);
        let opcode = self.opcode;
        c.take(self.reader, |ev| {
            // A slave device's own event: its master's copy (same press,
            // device ≠ source) is not counted twice.
            let Some(e) = RawEvent::decode(ev.bytes(), opcode).filter(|e| e.device == e.source)
            else {
                return;
            };
            let kind = match e.kind {
                xinput::RAW_KEY_PRESS => InputKind::Key,
                xinput::RAW_BUTTON_PRESS => InputKind::Button,
                _ => return,
            };
            match presses.get_mut(n) {
                Some(slot) => {
                    *slot = Some(Input {
                        t_ns: server_time_ns(e.time_ms, now_ns),
                        server_ms: e.time_ms,
                        kind,
                    });
                    n += 1;
                }
                None => over += 1,
            }
        });
        if n == 0 {
            return Left { over, unfocused: 0 };
        }
        if !focus_in(&mut c, windows) {
            return Left {
                over,
                unfocused: n as u64,
            };
        }
        drop(c);
        presses[..n].iter().flatten().for_each(|&i| f(i));
        Left { over, unfocused: 0 }
    }
}

impl Inputs {
    /// Stops reading: the reader leaves the connection, which closes when
    /// its last reader lets go.
    pub fn close(self, displays: &Displays) {
        let broke = {
            let mut c = self.conn.lock_or_recover();
            c.leave(self.reader);
            c.broken()
        };
        displays.release(&self.conn, broke);
    }
}

/// Whether the input focus is one of `windows` or inside one: the focus
/// window, or under `PointerRoot` the windows under the pointer from the
/// root down.
fn focus_in(c: &mut XConn, windows: &[u32]) -> bool {
    let mut req = [0u8; 4];
    let Ok(reply) = c.round_trip(None, GET_INPUT_FOCUS, &mut req) else {
        return false;
    };
    let Some(focus) = ffi::u32_at(reply.bytes(), 8) else {
        return false;
    };
    if windows.contains(&focus) {
        return true;
    }
    // The focus on an ancestor (a frame, the root under PointerRoot):
    // the windows under the pointer, walked down from it.
    let mut at = if focus == POINTER_ROOT {
        match c.root() {
            Some(r) => r,
            None => return false,
        }
    } else {
        focus
    };
    for _ in 0..MAX_DEPTH {
        let mut req = [0u8; 8];
        req[4..8].copy_from_slice(&at.to_ne_bytes());
        let Ok(reply) = c.round_trip(None, QUERY_POINTER, &mut req) else {
            return false;
        };
        // QueryPointer's reply: same-screen at byte 1, child at 12.
        match ffi::u32_at(reply.bytes(), 12) {
            Some(child) if child != 0 => {
                if windows.contains(&child) {
                    return true;
                }
                at = child;
            }
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_milliseconds_map_to_the_monotonic_millisecond_they_name() {
        // An event 3 ms before now, stamped with now's low 32 bits − 3.
        let now_ns = 5_000_000_123_456_789u64;
        let now_ms = now_ns / 1_000_000;
        let stamp = (now_ms as u32).wrapping_sub(3);
        assert_eq!(server_time_ns(stamp, now_ns), (now_ms - 3) * 1_000_000);
        // The same millisecond as now: its start, not after now.
        assert_eq!(server_time_ns(now_ms as u32, now_ns), now_ms * 1_000_000);
        // Across the 32-bit wrap (every 49.7 days).
        let now_ns = (1u64 << 32) * 1_000_000 + 2_000_000;
        assert_eq!(
            server_time_ns(u32::MAX, now_ns),
            ((1u64 << 32) - 1) * 1_000_000
        );
        // A stamp "from the future" reads as 49.7 days ago, never after now.
        assert!(server_time_ns(u32::MAX, 10_000_000) <= 10_000_000);
    }
}
