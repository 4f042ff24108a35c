//! The hotkey watcher the analysis thread polls: X11 ([`Hotkey`]) or
//! Wayland ([`wayland::Watch`]).
//!
//! Wayland is chosen when the app has a Wayland surface when the watcher is
//! made (the analysis thread starts with the first swapchain, so its
//! surface is known by then), X11 otherwise. A Wayland game under a session
//! with XWayland also has an X display that opens fine, but an X11 poller
//! sees no key while a Wayland window has the focus: an X display opening
//! is no sign that X11 is the right choice, the surface is.
//!
//! The Wayland side's state is the client's [`WaylandKeys`] record and its
//! Wayland connections, passed in: input sits below the client and does
//! not reach up for them.

use super::wayland::{self, WaylandKeys};
use super::x11::{Hotkey, HotkeyError};
use steadyhud_wayland::connection::Connections;
use steadyhud_x11::Displays;

/// Why a combination cannot be watched (the HUD then stays as it is).
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(transparent)]
    X11(#[from] HotkeyError),
    #[error(transparent)]
    Wayland(#[from] wayland::WaylandKeyError),
}

/// One key combination, watched on the app's windowing system.
pub enum KeyWatch {
    X11(Hotkey),
    Wayland(wayland::Watch),
}

impl KeyWatch {
    /// Watches `combo` (X11 keysym names joined by `+`, e.g. `Shift_R+F12`),
    /// on Wayland when the process's Wayland connections (`conns`) have a
    /// surface, else on X11 (`$DISPLAY`, on our connection to it in `x11`).
    pub fn new(
        combo: &str,
        wayland: &'static WaylandKeys,
        conns: &'static Connections,
        x11: &'static Displays,
    ) -> Result<KeyWatch, KeyError> {
        if conns.has_surface() {
            Ok(KeyWatch::Wayland(wayland.watch(conns, combo)?))
        } else {
            Ok(KeyWatch::X11(Hotkey::new(combo, x11)?))
        }
    }

    /// Whether key events wait already, read off the socket by another
    /// reader of the same connection (the socket no longer wakes us).
    pub fn waiting(&self) -> bool {
        match self {
            KeyWatch::X11(h) => h.waiting(),
            KeyWatch::Wayland(_) => false,
        }
    }

    /// The socket that becomes readable when a key moves, where keys come
    /// as events (X11 with XInput 2); `None`: [`KeyWatch::poll`] every 50 ms.
    pub fn fd(&self) -> Option<std::os::fd::RawFd> {
        match self {
            KeyWatch::X11(h) => h.fd(),
            KeyWatch::Wayland(_) => None,
        }
    }

    /// True once per press of the whole combination.
    pub fn poll(&mut self) -> bool {
        match self {
            KeyWatch::X11(h) => h.poll(),
            KeyWatch::Wayland(w) => w.poll(),
        }
    }
}
