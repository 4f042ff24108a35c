//! The input timing's reader on our connection ([`InputTimes`]): the time
//! of each key press and pointer button press the compositor sends to our
//! seat devices while one of the game's surfaces has their focus, mapped to
//! CLOCK_MONOTONIC, in fixed memory; and `zwp_input_timestamps_v1`'s
//! interface tables, for nanosecond times where the compositor offers
//! them (docs/metrics.md, "PC latency").
//!
//! The compositor sends the focused client's input to each of its
//! `wl_keyboard` and `wl_pointer` objects, so ours (bound for the hotkeys
//! on the game's own connection, their events on our private queue) see
//! what the game sees, when the game's reads bring it in; nothing is taken
//! from the game. The events run inside the connection's pump; the
//! analysis thread takes them ([`crate::connection::Connections::take_inputs`]).

use crate::ffi::{Wayland, WlInterface, WlMessage};
use std::ffi::CStr;
use std::ptr::null;

/// Inputs held between two takes by the analysis thread (every ≤ 250 ms):
/// one more is counted in [`InputTimes::lost`], not kept.
pub const CAPACITY: usize = 512;

/// What an input was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A key press (`wl_keyboard.key`, pressed).
    Key,
    /// A pointer button press (`wl_pointer.button`, pressed).
    Button,
}

/// One input the game's window received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputTime {
    /// When it happened, CLOCK_MONOTONIC ns (the event's milliseconds, or
    /// `zwp_input_timestamps_v1`'s nanoseconds when `exact`).
    pub t_ns: u64,
    /// When our pump dispatched it, CLOCK_MONOTONIC ns.
    pub read_ns: u64,
    pub kind: InputKind,
    /// The time came in nanoseconds, not milliseconds.
    pub exact: bool,
}

/// The input times of one connection.
pub struct InputTimes {
    queue: Vec<InputTime>,
    /// Inputs not kept: [`CAPACITY`] were waiting.
    pub lost: u64,
    /// Our keyboard's / pointer's focus is on a surface of the game's.
    pub keyboard_focus: bool,
    pub pointer_focus: bool,
    /// `zwp_input_timestamps_v1`'s time for the next event of the keyboard
    /// / pointer that carries one.
    keyboard_ns: Option<u64>,
    pointer_ns: Option<u64>,
    /// Inputs counted, by whether their time came in nanoseconds.
    pub counted: [u64; 2],
}

impl Default for InputTimes {
    fn default() -> Self {
        InputTimes {
            queue: Vec::with_capacity(CAPACITY),
            lost: 0,
            keyboard_focus: false,
            pointer_focus: false,
            keyboard_ns: None,
            pointer_ns: None,
            counted: [0; 2],
        }
    }
}

impl InputTimes {
    /// `zwp_input_timestamps_v1.timestamp` on the keyboard's (`keyboard`)
    /// or the pointer's object: the time of the next event that carries one.
    pub fn stamp(&mut self, keyboard: bool, sec_hi: u32, sec_lo: u32, nsec: u32) {
        let sec = (u64::from(sec_hi) << 32) | u64::from(sec_lo);
        let ns = sec
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::from(nsec));
        if keyboard {
            self.keyboard_ns = Some(ns);
        } else {
            self.pointer_ns = Some(ns);
        }
    }

    /// A pointer event with a time that is not a press (motion, axis): the
    /// nanosecond time sent before it was its own.
    pub fn pointer_event(&mut self) {
        self.pointer_ns = None;
    }

    /// `wl_keyboard.key` at `time_ms`, read at `now_ns`.
    pub fn key(&mut self, time_ms: u32, pressed: bool, now_ns: u64) {
        let exact = self.keyboard_ns.take();
        if pressed && self.keyboard_focus {
            self.push(InputKind::Key, time_ms, exact, now_ns);
        }
    }

    /// `wl_pointer.button` at `time_ms`, read at `now_ns`.
    pub fn button(&mut self, time_ms: u32, pressed: bool, now_ns: u64) {
        let exact = self.pointer_ns.take();
        if pressed && self.pointer_focus {
            self.push(InputKind::Button, time_ms, exact, now_ns);
        }
    }

    fn push(&mut self, kind: InputKind, time_ms: u32, exact: Option<u64>, now_ns: u64) {
        if self.queue.len() >= CAPACITY {
            self.lost += 1;
            return;
        }
        self.counted[usize::from(exact.is_some())] += 1;
        self.queue.push(InputTime {
            t_ns: exact.unwrap_or_else(|| ms_to_monotonic(time_ms, now_ns)),
            read_ns: now_ns,
            kind,
            exact: exact.is_some(),
        });
    }

    /// Hands every input held to `f`, oldest first, and forgets them.
    pub fn take(&mut self, f: &mut impl FnMut(InputTime)) {
        self.queue.drain(..).for_each(f);
    }

    /// The devices are gone: nothing has their focus any more.
    pub fn unfocus(&mut self) {
        self.keyboard_focus = false;
        self.pointer_focus = false;
        self.keyboard_ns = None;
        self.pointer_ns = None;
    }
}

/// A Wayland event's milliseconds (the compositor's CLOCK_MONOTONIC,
/// wrapping at 2³²) as CLOCK_MONOTONIC ns, read at `now_ns`: the instant
/// with those low 32 bits of milliseconds nearest to `now_ns` (within
/// 24.8 days), at the start of its millisecond.
pub fn ms_to_monotonic(time_ms: u32, now_ns: u64) -> u64 {
    let now_ms = now_ns / 1_000_000;
    let back = i64::from((now_ms as u32).wrapping_sub(time_ms) as i32);
    u64::try_from(now_ms as i64 - back).unwrap_or(0) * 1_000_000
}

/// `zwp_input_timestamps_manager_v1` and `zwp_input_timestamps_v1`
/// (unstable/input-timestamps, version 1), which libwayland does not carry.
pub struct Tables {
    pub manager: &'static WlInterface,
    pub timestamps: &'static WlInterface,
}

// SAFETY: pointers into leaked, never written tables and libwayland's
// immutable interface data.
unsafe impl Send for Tables {}
// SAFETY: as above.
unsafe impl Sync for Tables {}

/// `zwp_input_timestamps_manager_v1`'s requests.
pub const MANAGER_DESTROY: u32 = 0;
pub const GET_KEYBOARD_TIMESTAMPS: u32 = 1;
pub const GET_POINTER_TIMESTAMPS: u32 = 2;
/// `zwp_input_timestamps_v1.destroy`.
pub const TIMESTAMPS_DESTROY: u32 = 0;

impl Tables {
    /// Built once per process (leaked: libwayland keeps pointers to them).
    pub fn new(wl: &Wayland) -> Tables {
        fn leak<T>(v: Vec<T>) -> *const T {
            Box::leak(v.into_boxed_slice()).as_ptr()
        }
        let none: *const *const WlInterface = leak(vec![null::<WlInterface>(); 3]);
        let msg = |name: &'static CStr, signature: &'static CStr, types| WlMessage {
            name: name.as_ptr(),
            signature: signature.as_ptr(),
            types,
        };
        let timestamps: &'static WlInterface = Box::leak(Box::new(WlInterface {
            name: c"zwp_input_timestamps_v1".as_ptr(),
            version: 1,
            method_count: 1,
            methods: leak(vec![msg(c"destroy", c"", none)]),
            event_count: 1,
            events: leak(vec![msg(c"timestamp", c"uuu", none)]),
        }));
        let ts = timestamps as *const WlInterface;
        let manager: &'static WlInterface = Box::leak(Box::new(WlInterface {
            name: c"zwp_input_timestamps_manager_v1".as_ptr(),
            version: 1,
            method_count: 3,
            methods: leak(vec![
                msg(c"destroy", c"", none),
                msg(
                    c"get_keyboard_timestamps",
                    c"no",
                    leak(vec![ts, wl.keyboard_interface]),
                ),
                msg(
                    c"get_pointer_timestamps",
                    c"no",
                    leak(vec![ts, wl.pointer_interface]),
                ),
            ]),
            event_count: 0,
            events: null(),
        }));
        Tables {
            manager,
            timestamps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn milliseconds_map_to_the_nearest_instant_with_those_low_bits() {
        let now = 5_000_000_123 * MS + 400_000;
        let low = (5_000_000_123u64 as u32).wrapping_sub(7);
        assert_eq!(ms_to_monotonic(low, now), 5_000_000_116 * MS);
        // A stamp a little ahead of the clock (the server's rounding).
        assert_eq!(
            ms_to_monotonic(low.wrapping_add(8), now),
            5_000_000_124 * MS
        );
        // Across the wrap of the 32-bit milliseconds.
        let now = (1u64 << 32) * MS + 3 * MS;
        assert_eq!(ms_to_monotonic(u32::MAX, now), ((1u64 << 32) - 1) * MS);
        // Before the clock's start: 0, refused later as far in the past.
        assert_eq!(ms_to_monotonic(u32::MAX, 2 * MS), 0);
    }

    #[test]
    fn presses_count_only_with_the_focus_and_take_their_exact_time() {
        let mut t = InputTimes::default();
        let now = 10_000 * MS;
        t.key(9_990, true, now);
        assert_eq!(t.counted, [0, 0], "no focus, no input");
        t.keyboard_focus = true;
        t.key(9_990, false, now);
        t.key(9_991, true, now);
        t.stamp(true, 0, 9, 991_500_000);
        t.key(9_991, true, now);
        t.pointer_focus = true;
        t.stamp(false, 0, 9, 992_000_001);
        t.pointer_event(); // a motion: the stamp was its own
        t.button(9_993, true, now);
        let mut got = Vec::new();
        t.take(&mut |i| got.push(i));
        let times: Vec<(u64, InputKind, bool)> =
            got.iter().map(|i| (i.t_ns, i.kind, i.exact)).collect();
        assert_eq!(
            times,
            [
                (9_991 * MS, InputKind::Key, false),
                (9_991 * MS + 500_000, InputKind::Key, true),
                (9_993 * MS, InputKind::Button, false),
            ]
        );
        assert!(got.iter().all(|i| i.read_ns == now));
        t.take(&mut |_| panic!("taken already"));
        for _ in 0..=CAPACITY {
            t.key(9_995, true, now);
        }
        assert_eq!((t.lost, t.queue.capacity()), (1, CAPACITY));
    }
}
