//! What the HUD draws, handed from the analysis thread to the view: the
//! live statistics ([`LiveStats`], published through a [`LiveCell`]) and
//! the toast that names the player's last change ([`Toast`]). A leaf: the
//! capture core writes these and `steadyhud-hudview` reads them, and
//! neither the view nor anything it pulls in runs a thread, a socket or a
//! driver.

#![forbid(unsafe_code)]

mod stats;

pub use stats::{LastStutter, LiveCell, LiveCounter, LiveDisplay, LiveGpu, LiveLatency, LiveStats};

use steadyhud_config::hud::PRESETS;

/// What a toast says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toast {
    /// The HUD was shown (key or `ctl hud`).
    Shown,
    /// The HUD was hidden: the toast is all that is drawn for its second.
    Hidden,
    /// The preset changed to this one.
    Preset(u8),
    /// The frame cap changed (0 = off).
    Cap(u32),
}

impl Toast {
    /// Writes the toast's words, e.g. `preset 1: compact`.
    pub fn write(self, out: &mut impl std::fmt::Write) -> std::fmt::Result {
        match self {
            Toast::Shown => out.write_str("HUD on"),
            Toast::Hidden => out.write_str("HUD off"),
            Toast::Preset(n) => {
                let name = PRESETS.get(usize::from(n)).map_or("?", |p| p.name);
                write!(out, "preset {n}: {name}")
            }
            Toast::Cap(0) => out.write_str("frame cap off"),
            Toast::Cap(fps) => write!(out, "frame cap {fps} fps"),
        }
    }

    /// Which kind of toast (1 shown, 2 hidden, 3 preset, 4 cap).
    pub fn kind(self) -> u8 {
        (self.pack() >> 32) as u8
    }

    /// The toast as one word, for an atomic ([`Toast::unpack`]).
    pub fn pack(self) -> u64 {
        match self {
            Toast::Shown => 1 << 32,
            Toast::Hidden => 2 << 32,
            Toast::Preset(n) => 3 << 32 | u64::from(n),
            Toast::Cap(fps) => 4 << 32 | u64::from(fps),
        }
    }

    /// The toast [`Toast::pack`] made `v` of.
    pub fn unpack(v: u64) -> Option<Toast> {
        let arg = v as u32;
        Some(match v >> 32 {
            1 => Toast::Shown,
            2 => Toast::Hidden,
            3 => Toast::Preset(arg as u8),
            4 => Toast::Cap(arg),
            _ => return None,
        })
    }
}
