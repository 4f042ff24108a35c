//! Input timing on X11 ([`X11Inputs`]): the game's X windows, by display,
//! and a reader of their display's raw presses
//! (`steadyhud_x11::inputs::Inputs`) on our one connection to it, opened
//! on the analysis thread's first take after a window is known and closed
//! with the display's last window.
//!
//! The hooks only record windows (no I/O there); the analysis thread
//! takes the presses ([`X11Inputs::take`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use steadyhud_sys::lock::Recover;
use steadyhud_x11::inputs::{Input, Inputs, Left};
use steadyhud_x11::Displays;

/// A window of the game's.
struct Window {
    key: u64,
    owner: usize,
    /// `None`: `$DISPLAY`.
    display: Option<String>,
    window: u32,
}

#[derive(Default)]
struct State {
    windows: Vec<Window>,
    /// A reader per display with windows.
    readers: Vec<(Option<String>, Inputs)>,
    /// Displays input cannot be read on: not tried again.
    given_up: Vec<Option<String>>,
    notes: Vec<String>,
    /// Windows' ids of a display, reused by each take.
    scratch: Vec<u32>,
}

/// The process's X11 input timing.
pub struct X11Inputs {
    state: Mutex<State>,
    /// The process the state belongs to: a forked child gets none.
    owner: steadyhud_sys::owner::Owner,
    /// Whether any window is known: the analysis thread's one load
    /// otherwise.
    any: AtomicBool,
}

impl Default for X11Inputs {
    fn default() -> Self {
        X11Inputs::new()
    }
}

impl X11Inputs {
    /// Nothing known, nothing open.
    pub const fn new() -> X11Inputs {
        X11Inputs {
            state: Mutex::new(State {
                windows: Vec::new(),
                readers: Vec::new(),
                given_up: Vec::new(),
                notes: Vec::new(),
                scratch: Vec::new(),
            }),
            owner: steadyhud_sys::owner::Owner::new(),
            any: AtomicBool::new(false),
        }
    }

    fn state(&self) -> Option<std::sync::MutexGuard<'_, State>> {
        self.owner.here().then(|| self.state.lock_or_recover())
    }

    /// The game made window `window` on display `display` (`None`:
    /// `$DISPLAY`) as `key`, owned by `owner`. Nothing is sent.
    pub fn surface_created(&self, owner: usize, key: u64, display: Option<&str>, window: u32) {
        if window == 0 {
            return;
        }
        let Some(mut st) = self.state() else { return };
        st.windows.retain(|w| w.key != key);
        st.windows.push(Window {
            key,
            owner,
            display: display.map(str::to_owned),
            window,
        });
        self.any.store(true, Ordering::Relaxed);
    }

    /// Forgets window `key`, and the reader of its display after its last.
    pub fn surface_destroyed(&self, displays: &Displays, key: u64) {
        self.forget(displays, |w| w.key == key);
    }

    /// Forgets the windows of an owner being destroyed.
    pub fn owner_destroyed(&self, displays: &Displays, owner: usize) {
        self.forget(displays, |w| w.owner == owner);
    }

    fn forget(&self, displays: &Displays, gone: impl Fn(&Window) -> bool) {
        let Some(mut st) = self.state() else { return };
        st.windows.retain(|w| !gone(w));
        let State {
            windows, readers, ..
        } = &mut *st;
        let mut kept = Vec::with_capacity(readers.len());
        for (display, inputs) in readers.drain(..) {
            if windows.iter().any(|w| w.display == display) {
                kept.push((display, inputs));
            } else {
                inputs.close(displays);
            }
        }
        *readers = kept;
        self.any.store(!windows.is_empty(), Ordering::Relaxed);
    }

    /// Hands `f` the presses taken on every display with a window of the
    /// game's while one had the focus (opening a display's reader the
    /// first time, on our connection in `displays`); `now_ns` is
    /// CLOCK_MONOTONIC read just before. Returns the presses not handed
    /// over (no focus, or too many at once).
    pub fn take(&self, displays: &Displays, now_ns: u64, mut f: impl FnMut(Input)) -> Left {
        let mut left = Left::default();
        if !self.any.load(Ordering::Relaxed) {
            return left;
        }
        let Some(mut st) = self.state() else {
            return left;
        };
        let State {
            windows,
            readers,
            given_up,
            notes,
            scratch,
        } = &mut *st;
        for w in windows.iter() {
            if readers.iter().any(|(d, _)| *d == w.display) || given_up.contains(&w.display) {
                continue;
            }
            match Inputs::on(displays, w.display.as_deref()) {
                Ok(inputs) => readers.push((w.display.clone(), inputs)),
                Err(e) => {
                    notes.push(format!("no input timing: {e}"));
                    given_up.push(w.display.clone());
                }
            }
        }
        for (display, inputs) in readers.iter() {
            scratch.clear();
            scratch.extend(
                windows
                    .iter()
                    .filter(|w| w.display == *display)
                    .map(|w| w.window),
            );
            left += inputs.take(scratch, now_ns, &mut f);
        }
        left
    }

    /// Whether any window of the game's is known (the analysis thread
    /// takes then).
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// Lines to print (by the caller, off the present path).
    pub fn take_notes(&self) -> Vec<String> {
        match self.state.try_lock() {
            Ok(mut st) if self.owner.here() => std::mem::take(&mut st.notes),
            _ => Vec::new(),
        }
    }
}
