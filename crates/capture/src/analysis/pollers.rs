//! The jobs the analysis thread runs every tick, each behind one
//! interface ([`Poller`]), so the thread is a loop over a list: the
//! streams, the control socket, the HUD key and the frame-cap key.

use super::analyzer::Analyzer;
use super::control::Control;
use crate::client_state::ClientState;
use crate::guard;
use crate::hud_state::Toast;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use steadyhud_input::KeyWatch;

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

/// The grid the thread's wake-ups fall on: every job's period is a
/// multiple of it (polled keys 50 ms, live statistics 100 ms, system
/// readings 100 ms at 10 Hz, log flushes 250 ms), so jobs due near one
/// another share one wake-up.
pub(super) const TICK: Duration = Duration::from_millis(50);

/// The longest sleep, whatever is due: the rings hold seconds of frames,
/// and a key event queued inside Xlib (not on its socket) waits no longer.
pub(super) const MAX_SLEEP: Duration = Duration::from_secs(1);

/// The grid while a device times its submits: a GPU-timing slot is freed
/// only when the thread reads its results, and a queue has
/// 256 of them in the Vulkan layer (25,600 submits a second).
const GPU_TICK: Duration = Duration::from_millis(10);

/// One job of the analysis thread.
pub(super) trait Poller: Send {
    /// One turn, `now` being this tick's time. Bounded work; never blocks.
    fn poll(&mut self, now: Instant, client: &'static ClientState, analyzer: &Mutex<Analyzer>);
    /// What a panic in [`Poller::poll`] costs.
    fn after_panic(&self) -> AfterPanic;
    /// The sockets the poller waits for (appended to `fds`, for the
    /// thread's sleep); true when work is waiting already.
    fn interest(&self, _fds: &mut Vec<libc::pollfd>) -> bool {
        false
    }
    /// How long the thread may sleep from `now` before this poller has
    /// work due (`None`: nothing is due but what its sockets bring).
    fn max_sleep(&self, _now: Instant) -> Option<Duration> {
        None
    }
    /// The grid this poller's work needs the wake-ups on.
    fn grid(&self) -> Duration {
        TICK
    }
    /// Whether what the poller holds must be left to the OS when the
    /// process exits, rather than closed: at exit other libraries may be
    /// torn down already (libX11's global lock, which closing a display
    /// with XInput's hooks takes: a crash seen with mpv).
    fn leak_at_exit(&self) -> bool {
        false
    }
}

/// Drains every stream's rings into rows, live stats and summaries.
pub(super) struct Streams {
    /// A stream's device times its submits: shorter sleeps.
    gpu: bool,
    /// When the streams have work due next (live statistics, a flush).
    next: Instant,
}

impl Default for Streams {
    fn default() -> Self {
        Streams {
            gpu: false,
            next: Instant::now(),
        }
    }
}

impl Poller for Streams {
    fn poll(&mut self, now: Instant, _: &'static ClientState, analyzer: &Mutex<Analyzer>) {
        use steadyhud_sys::lock::Recover;
        let mut a = analyzer.lock_or_recover();
        a.tick(now);
        self.gpu = a.times_gpu();
        self.next = a.next_due();
    }
    fn after_panic(&self) -> AfterPanic {
        AfterPanic::Retry("steadyhud: analysis step failed; retrying")
    }
    fn max_sleep(&self, now: Instant) -> Option<Duration> {
        Some(self.next.saturating_duration_since(now))
    }
    fn grid(&self) -> Duration {
        if self.gpu {
            GPU_TICK
        } else {
            TICK
        }
    }
}

impl Poller for Control {
    fn poll(&mut self, _: Instant, client: &'static ClientState, analyzer: &Mutex<Analyzer>) {
        Control::poll(self, client, analyzer);
    }
    fn after_panic(&self) -> AfterPanic {
        AfterPanic::Drop("steadyhud: control socket failed; closed (the game keeps running)")
    }
    fn interest(&self, fds: &mut Vec<libc::pollfd>) -> bool {
        Control::interest(self, fds)
    }
    fn max_sleep(&self, _: Instant) -> Option<Duration> {
        // Open connections are checked for idleness.
        self.has_connections().then_some(Duration::from_millis(500))
    }
}

/// What a key combination does when pressed.
#[derive(Clone, Copy)]
pub(super) enum KeyAction {
    /// Shows or hides the HUD (`toggle_key`).
    ToggleHud,
    /// Moves to the next preset (`preset_key`).
    CyclePreset,
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
    /// Watches `combo` for `action` (on Wayland through the client's
    /// connections, when the app has a Wayland surface); `None` after one
    /// line saying why not (what the key would do is still reachable
    /// through the socket).
    pub(super) fn watch(
        combo: &str,
        action: KeyAction,
        client: &'static ClientState,
    ) -> Result<Key, String> {
        match guard::try_run(|| KeyWatch::new(combo, &client.hotkeys, &client.wayland, &client.x11))
        {
            Some(Ok(watch)) => Ok(Key {
                watch,
                action,
                next: Instant::now(),
            }),
            Some(Err(e)) => Err(e.to_string()),
            None => Err("internal error".into()),
        }
    }
}

impl KeyAction {
    /// The key's name in messages.
    pub(super) fn name(self) -> &'static str {
        match self {
            KeyAction::ToggleHud => "HUD",
            KeyAction::CyclePreset => "preset",
            KeyAction::CycleCap => "frame cap",
        }
    }
}

impl Poller for Key {
    fn poll(&mut self, now: Instant, client: &'static ClientState, _: &Mutex<Analyzer>) {
        // Events are read at every turn; a polled key every KEY_EVERY.
        if self.watch.fd().is_none() && now < self.next {
            return;
        }
        self.next = now + KEY_EVERY;
        if self.watch.poll() {
            match self.action {
                KeyAction::ToggleHud => {
                    client.hud.toggle();
                }
                KeyAction::CyclePreset => {
                    client.hud.cycle_preset();
                }
                KeyAction::CycleCap => {
                    client.limit.cycle();
                    client.hud.say(Toast::Cap(client.limit.fps()));
                }
            }
        }
    }
    fn after_panic(&self) -> AfterPanic {
        AfterPanic::Ignore
    }
    fn interest(&self, fds: &mut Vec<libc::pollfd>) -> bool {
        if let Some(fd) = self.watch.fd() {
            fds.push(libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            });
        }
        self.watch.waiting()
    }
    fn max_sleep(&self, now: Instant) -> Option<Duration> {
        match self.watch.fd() {
            Some(_) => None,
            None => Some(self.next.saturating_duration_since(now)),
        }
    }
    fn leak_at_exit(&self) -> bool {
        true
    }
}
