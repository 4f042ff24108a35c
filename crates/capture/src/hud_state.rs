//! What the player switches on the HUD — shown or hidden, the preset — and
//! the short notice (toast) that names each change. The hotkeys and the
//! control socket change it on the analysis thread; that thread hands it to
//! the HUD with the live statistics ([`crate::live::LiveStats`]); the
//! present or swap path reads only [`HudState::drawn`] (two atomic loads).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use steadyhud_config::Config;

/// How long a toast stays, ns (about a second).
pub const TOAST_NS: u64 = 1_000_000_000;

use steadyhud_config::hud::PRESETS;
pub use steadyhud_live::Toast;

/// The HUD's switches, one per process (the layer's and the GL library's
/// process records each hold one).
#[derive(Debug)]
pub struct HudState {
    visible: AtomicBool,
    preset: AtomicU8,
    /// The toast's [`Toast::pack`]ed words, and until when it shows
    /// (`steadyhud_sys::clock::now_ns`; 0 = none yet).
    toast: AtomicU64,
    toast_until: AtomicU64,
}

impl HudState {
    /// As the config starts it: `hud_hidden`, `preset`.
    pub fn new(config: &Config) -> HudState {
        HudState {
            visible: AtomicBool::new(!config.hud_hidden),
            preset: AtomicU8::new(config.preset),
            toast: AtomicU64::new(0),
            toast_until: AtomicU64::new(0),
        }
    }

    /// Whether the HUD is shown.
    #[inline]
    pub fn visible(&self) -> bool {
        self.visible.load(Ordering::Relaxed)
    }

    /// Whether a present at `now_ns` draws anything: the HUD is shown, or
    /// a toast is still up.
    #[inline]
    pub fn drawn(&self, now_ns: u64) -> bool {
        self.visible() || now_ns < self.toast_until.load(Ordering::Relaxed)
    }

    /// Shows or hides the HUD, with a toast when that changes it.
    pub fn set_visible(&self, on: bool) {
        if self.visible.swap(on, Ordering::Relaxed) != on {
            self.say(if on { Toast::Shown } else { Toast::Hidden });
        }
    }

    /// Flips the HUD; returns whether it is now shown.
    pub fn toggle(&self) -> bool {
        let on = !self.visible.fetch_xor(true, Ordering::Relaxed);
        self.say(if on { Toast::Shown } else { Toast::Hidden });
        on
    }

    /// The preset shown.
    pub fn preset(&self) -> u8 {
        self.preset.load(Ordering::Relaxed)
    }

    /// Shows preset `n` (taken modulo the number of presets), with a toast.
    pub fn set_preset(&self, n: u8) {
        let n = n % PRESETS.len() as u8;
        self.preset.store(n, Ordering::Relaxed);
        self.say(Toast::Preset(n));
    }

    /// Moves to the next preset (after the last, the first); returns it.
    pub fn cycle_preset(&self) -> u8 {
        let n = (self.preset() + 1) % PRESETS.len() as u8;
        self.set_preset(n);
        n
    }

    /// Puts up `toast` for [`TOAST_NS`] from now.
    pub fn say(&self, toast: Toast) {
        self.toast.store(toast.pack(), Ordering::Relaxed);
        let until = steadyhud_sys::clock::now_ns() + TOAST_NS;
        self.toast_until.store(until, Ordering::Relaxed);
    }

    /// The toast up at `now_ns`, if any.
    pub fn toast(&self, now_ns: u64) -> Option<Toast> {
        (now_ns < self.toast_until.load(Ordering::Relaxed))
            .then(|| Toast::unpack(self.toast.load(Ordering::Relaxed)))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use steadyhud_sys::clock::now_ns;

    #[test]
    fn presets_cycle_and_each_change_has_a_toast_for_about_a_second() {
        let h = HudState::new(&Config::default());
        assert_eq!(h.preset(), steadyhud_config::hud::DEFAULT_PRESET);
        assert_eq!(h.toast(now_ns()), None, "no toast at start");
        let seen: Vec<u8> = (0..4).map(|_| h.cycle_preset()).collect();
        assert_eq!(seen, [3, 0, 1, 2]);
        let t = now_ns();
        assert_eq!(h.toast(t), Some(Toast::Preset(2)));
        assert!(h.drawn(t));
        assert_eq!(h.toast(t + TOAST_NS + 1), None, "gone after a second");
        h.set_preset(7);
        assert_eq!(h.preset(), 3);
    }

    #[test]
    fn a_hidden_hud_is_drawn_only_while_its_toast_is_up() {
        let h = HudState::new(&Config::default());
        assert!(!h.toggle());
        let t = now_ns();
        assert_eq!(h.toast(t), Some(Toast::Hidden));
        assert!(h.drawn(t) && !h.visible());
        assert!(!h.drawn(t + TOAST_NS + 1));
        h.set_visible(true);
        assert_eq!(h.toast(now_ns()), Some(Toast::Shown));
        let mut s = String::new();
        Toast::Preset(1).write(&mut s).unwrap();
        assert_eq!(s, "preset 1: compact");
    }
}
