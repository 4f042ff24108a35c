//! What the one client record (`crate::client`) knows and shares with the
//! analysis thread: identity, config, HUD switches, frame cap, test faults
//! and the display and input sources. The analysis reads this part
//! (`&'static ClientState`); the record above it owns the analysis thread,
//! the fork flag and the exit path, and hands this part on (`Deref`), so
//! the analysis never reaches back up to the thread that runs it.

use crate::faults::Faults;
use crate::hud_state::HudState;
use crate::limiter::FpsLimit;
use steadyhud_config::Config;
use steadyhud_input::wayland::WaylandKeys;
use steadyhud_input::x11_inputs::X11Inputs;
use steadyhud_log::Api;
use steadyhud_wayland::connection::Connections;
use steadyhud_x11::Displays;
use steadyhud_x11present::observer::Observer;

/// The client record's data: set up once, read by the hooks and the
/// analysis thread alike.
pub struct ClientState {
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
    /// Our Wayland connections, one per game display (surface map,
    /// queues, globals; `steadyhud_wayland::connection`): the hotkeys'
    /// keyboard and the presentation feedback (config `display_feedback`)
    /// read them.
    pub wayland: Connections,
    /// The Wayland hotkeys: libxkbcommon and the watched combinations
    /// (`steadyhud_input` keeps no global; it gets this record from here).
    pub hotkeys: WaylandKeys,
    /// Our X connections, one per X display (`steadyhud_x11::Displays`):
    /// the hotkeys' XInput 2 key events and X11 Present's CompleteNotify
    /// read them.
    pub x11: Displays,
    /// Input timing on X11: the game's X windows and the presses they got,
    /// read on our X connection to their display.
    pub x11inputs: X11Inputs,
    /// X11 Present's CompleteNotify on the game's windows, read on our X
    /// connection to their display: when each frame reached the screen.
    pub x11present: Observer,
}

impl ClientState {
    /// The data of a record, its sources not started.
    pub(crate) fn new(
        name: String,
        api: Api,
        config: Config,
        left_alone: bool,
        faults: Faults,
    ) -> ClientState {
        ClientState {
            name,
            api,
            left_alone,
            hud: HudState::new(&config),
            limit: FpsLimit::new(&config.fps_limit),
            config,
            faults,
            wayland: Connections::new(),
            hotkeys: WaylandKeys::new(),
            x11: Displays::new(),
            x11inputs: X11Inputs::new(),
            x11present: Observer::new(),
        }
    }

    /// Whether a reader of input times follows a window of the game's
    /// (our Wayland connection to its display, or our X connection's).
    pub fn reads_input(&self) -> bool {
        self.wayland.has_surface() || self.x11inputs.any()
    }

    /// A record's data of its own for a test (leaked): default config, HUD
    /// shown, no faults, no surface.
    #[cfg(test)]
    pub(crate) fn for_tests() -> &'static ClientState {
        let (name, api) = ("vulkan-app".to_string(), steadyhud_log::Api::Vulkan);
        let state = ClientState::new(name, api, Config::default(), false, Faults::default());
        Box::leak(Box::new(state))
    }
}
