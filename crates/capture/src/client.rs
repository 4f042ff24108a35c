//! The one [`Client`] record of the process: what the Vulkan layer and the
//! GL library both know of it and set up the same way (identity, config,
//! HUD switches, frame cap (its placement: [`Settings::cap_at`]), test faults, the Wayland
//! hotkeys' record, the analysis thread), with one exit path, one
//! process-exit hook and one fork check. Each graphics API keeps only what
//! is its own beside it: the layer its dispatch, devices and swapchains
//! (`src/layer/state.rs`), the GL library its contexts and windows
//! (`crates/gl/src/process.rs`).
//!
//! It is the capture core's only global (docs/design.md, "Where state
//! lives"). Each shared library links its own copy of this crate, so the
//! layer and the GL library in one process (a GL game on zink) each have
//! their own record, as they have their own logs.

use crate::analysis::{Analysis, Settings};
use crate::faults::Faults;
use crate::guard;
use crate::hud_state::HudState;
use crate::identity::Identity;
use crate::limiter::FpsLimit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use steadyhud_config::Config;
use steadyhud_input::wayland::WaylandKeys;
use steadyhud_log::Api;
use steadyhud_wayland::presentation::Presentation;
use steadyhud_x11present::observer::Observer;

/// What the process's client (the Vulkan layer or the GL library) holds.
pub struct Client {
    /// The game name ([`steadyhud_config::game_name`]): log file names,
    /// `ctl list`, the summary's `exe`.
    pub name: String,
    /// The API whose presents or swaps this client records.
    pub api: Api,
    pub config: Config,
    /// The blacklist (or, for the GL library, `DISABLE_STEADYHUD=1`) leaves
    /// this process alone:
    /// the client forwards every call and starts nothing.
    pub left_alone: bool,
    /// The HUD's switches (shown, preset, toast); the hotkeys and the
    /// control socket change them.
    pub hud: HudState,
    /// The frame cap in force; its hotkey cycles it.
    pub limit: FpsLimit,
    pub faults: Faults,
    /// The Wayland hotkeys: surface map, binding, libraries
    /// (`steadyhud_input` keeps no global; it gets this record from here).
    pub wayland: WaylandKeys,
    /// Wayland presentation feedback: when each frame reached the screen
    /// (surface map, bindings; config `display_feedback`).
    pub presentation: Presentation,
    /// X11 Present's CompleteNotify on the game's windows, read on our own
    /// X connection: when each frame reached the screen (X11).
    pub x11present: Observer,
    pub analysis: Analysis,
    /// The process that set the client up.
    pid: u32,
    /// Set in a child forked without exec: its copy of this record (locks
    /// another thread held at the fork included) is not its own.
    forked: AtomicBool,
}

static CLIENT: OnceLock<Client> = OnceLock::new();

/// `pthread_atfork`'s child handler: the child's record is its parent's.
extern "C" fn forked_child() {
    if let Some(c) = CLIENT.get() {
        c.forked.store(true, Ordering::Relaxed);
    }
}

/// The process's client record for `api`, set up on first use (config
/// warnings printed once). Every later call returns the same record.
pub fn client(api: Api) -> &'static Client {
    CLIENT.get_or_init(|| Client::of_this_process(api))
}

/// The client record if it was set up, in the process that set it up (for
/// exit paths and hooks that must not set it up; `None` in a forked child).
pub fn existing() -> Option<&'static Client> {
    CLIENT.get().filter(|c| c.is_own())
}

impl Client {
    fn of_this_process(api: Api) -> Client {
        let Identity {
            name,
            config,
            left_alone,
        } = Identity::of_this_process();
        // The Vulkan loader applies the layer manifest's
        // `disable_environment` itself, to the implicit layer only: a layer
        // enabled explicitly runs whatever it says (the present-cost bench
        // loads it so). A preloaded library has no loader to ask.
        let disabled =
            api == Api::OpenGl && std::env::var("DISABLE_STEADYHUD").as_deref() == Ok("1");
        if disabled {
            guard::say(format_args!(
                "steadyhud: DISABLE_STEADYHUD=1: steadyhud stays out of this process"
            ));
        }
        // SAFETY: registers a handler that only stores an atomic.
        unsafe { libc::pthread_atfork(None, None, Some(forked_child)) };
        Client {
            name,
            api,
            left_alone: left_alone.is_some() || disabled,
            hud: HudState::new(&config),
            limit: FpsLimit::new(&config.fps_limit),
            config,
            faults: Faults::from_env(),
            wayland: WaylandKeys::new(),
            presentation: Presentation::new(),
            x11present: Observer::new(),
            analysis: Analysis::default(),
            pid: std::process::id(),
            forked: AtomicBool::new(false),
        }
    }

    /// Whether this record belongs to the running process (false in a
    /// child forked without exec, where every hook passes through).
    #[inline]
    pub fn is_own(&self) -> bool {
        !self.forked() && self.pid == std::process::id()
    }

    /// Whether this is a child forked without exec (its copy of the
    /// record, locks included, is its parent's: every hook passes through).
    #[inline]
    pub fn forked(&self) -> bool {
        self.forked.load(Ordering::Relaxed)
    }

    /// Whether this client measures and draws at all (not left alone, not
    /// a forked child's copy).
    #[inline]
    pub fn active(&self) -> bool {
        !self.left_alone && !self.forked()
    }

    /// What the analysis thread and the present paths read of the client.
    pub fn settings(&'static self) -> Settings {
        Settings {
            name: &self.name,
            api: self.api,
            config: &self.config,
            hud: &self.hud,
            limit: &self.limit,
            faults: &self.faults,
            wayland: &self.wayland,
            presentation: &self.presentation,
            x11present: &self.x11present,
        }
    }

    /// The exit path: finishes every session log and joins the analysis
    /// thread, in the process that set the client up only.
    pub fn finish_at_exit(&self) {
        if self.is_own() {
            guard::contain((), || self.analysis.shutdown_at_exit());
        }
    }
}

/// Runs from `.fini_array` at process exit or library unload (also after
/// `exit()` without destroying anything): finishes the session logs and
/// joins the analysis thread. Touches nothing in a forked child (a lock
/// another thread of the parent held at the fork would never be released
/// there) or when no client was ever set up.
extern "C" fn on_unload() {
    if let Some(c) = existing() {
        c.finish_at_exit();
    }
}

#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;
