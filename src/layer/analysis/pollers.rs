//! The jobs the analysis thread runs every tick, each behind one
//! interface ([`Poller`]), so the thread is a loop over a list: the
//! streams, the control socket, the HUD key and the frame-cap key.

use super::analyzer::Analyzer;
use super::control::Control;
use super::settings::Settings;
use crate::guard;
use crate::input::wayland::WaylandKeys;
use crate::input::KeyWatch;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a key combination is polled: each poll of an X11 key is a
/// round trip to the X server.
const KEY_EVERY: Duration = Duration::from_millis(50);

/// What a panic inside [`Poller::poll`] costs the poller.
pub(super) enum AfterPanic {
    /// Say this line and poll again next tick.
    Retry(&'static str),
    /// Say this line and drop the poller for the rest of the session.
    Drop(&'static str),
    /// Poll again next tick, silently.
    Ignore,
}

/// One job of the analysis thread.
pub(super) trait Poller: Send {
    /// One turn, `now` being this tick's time. Bounded work; never blocks.
    fn poll(&mut self, now: Instant, settings: &Settings, analyzer: &Mutex<Analyzer>);
    /// What a panic in [`Poller::poll`] costs.
    fn after_panic(&self) -> AfterPanic;
}

/// Drains every stream's rings into rows, live stats and summaries.
pub(super) struct Streams;

impl Poller for Streams {
    fn poll(&mut self, now: Instant, _: &Settings, analyzer: &Mutex<Analyzer>) {
        use steadyhud_sys::lock::Recover;
        analyzer.lock_or_recover().tick(now);
    }
    fn after_panic(&self) -> AfterPanic {
        AfterPanic::Retry("steadyhud: analysis step failed; retrying")
    }
}

impl Poller for Control {
    fn poll(&mut self, _: Instant, settings: &Settings, analyzer: &Mutex<Analyzer>) {
        Control::poll(self, settings, analyzer);
    }
    fn after_panic(&self) -> AfterPanic {
        AfterPanic::Drop("steadyhud: control socket failed; closed (the game keeps running)")
    }
}

/// What a key combination does when pressed.
#[derive(Clone, Copy)]
pub(super) enum KeyAction {
    /// Shows or hides the HUD (`toggle_key`).
    ToggleHud,
    /// Moves to the next frame cap of the list (`toggle_fps_limit`).
    CycleCap,
}

/// A key combination, polled every [`KEY_EVERY`].
pub(super) struct Key {
    watch: KeyWatch,
    action: KeyAction,
    next: Instant,
}

impl Key {
    /// Watches `combo` for `action` (on Wayland through `wayland`, when
    /// the app has a Wayland surface); `None` after one line saying why
    /// not (what the key would do is still reachable through the socket).
    pub(super) fn watch(
        combo: &str,
        action: KeyAction,
        wayland: &'static WaylandKeys,
    ) -> Option<Key> {
        let what = match action {
            KeyAction::ToggleHud => "HUD hotkey",
            KeyAction::CycleCap => "frame cap hotkey",
        };
        match guard::try_run(|| KeyWatch::new(combo, wayland))? {
            Ok(watch) => Some(Key {
                watch,
                action,
                next: Instant::now(),
            }),
            Err(e) => {
                guard::say(format_args!("steadyhud: {what} unavailable: {e}"));
                None
            }
        }
    }
}

impl Poller for Key {
    fn poll(&mut self, now: Instant, settings: &Settings, _: &Mutex<Analyzer>) {
        if now < self.next {
            return;
        }
        self.next = now + KEY_EVERY;
        if self.watch.poll() {
            match self.action {
                KeyAction::ToggleHud => {
                    settings.hud_visible.fetch_xor(true, Ordering::Relaxed);
                }
                KeyAction::CycleCap => {
                    settings.limit.cycle();
                }
            }
        }
    }
    fn after_panic(&self) -> AfterPanic {
        AfterPanic::Ignore
    }
}
