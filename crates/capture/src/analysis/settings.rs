//! What the analysis thread reads of the layer's process-wide state.

use crate::faults::Faults;
use crate::hud_state::HudState;
use crate::limiter::FpsLimit;
use steadyhud_config::{Config, LimitMethod};
use steadyhud_input::wayland::WaylandKeys;
use steadyhud_log::Api;
use steadyhud_wayland::presentation::Presentation;
use steadyhud_x11present::observer::Observer;

/// What the analysis thread reads of the layer's state (which lives for the
/// whole process, hence `'static`).
#[derive(Clone, Copy)]
pub struct Settings {
    /// The game name: log file names, the control socket's `exe`.
    pub name: &'static str,
    /// The API whose presents or swaps the streams record (the log's
    /// `# api:` line, the summary's `api`).
    pub api: Api,
    pub config: &'static Config,
    /// The HUD's switches (shown, preset, toast): live statistics are
    /// built only while it is drawn; the hotkeys and the socket change it.
    pub hud: &'static HudState,
    /// The frame cap in force; its hotkey cycles it.
    pub limit: &'static FpsLimit,
    pub faults: &'static Faults,
    /// The Wayland hotkeys' record: the key watchers read it, the present
    /// path pumps it.
    pub wayland: &'static WaylandKeys,
    /// Wayland presentation feedback: the present paths ask, the analysis
    /// thread prints its notes.
    pub presentation: &'static Presentation,
    /// X11 Present: the present paths record, the analysis thread reads
    /// the completes (each tick) and prints the notes.
    pub x11present: &'static Observer,
}

impl Settings {
    /// The frame cap's wait on one side of a present or swap: the cap in
    /// force when its wait goes `after` the real call (the wait starts the
    /// next frame) or before it (`fps_limit_method=early`: the wait ends
    /// this frame); `None` when there is no cap or it waits on the other
    /// side. The Vulkan present and the GL swap both place it by this.
    #[inline]
    pub fn cap_at(&self, after: bool) -> Option<u32> {
        let fps = self.limit.fps();
        let early = self.config.fps_limit_method == LimitMethod::Early;
        (fps != 0 && after != early).then_some(fps)
    }
}

#[cfg(test)]
impl Settings {
    /// Default config, HUD shown, no faults, no Wayland surface.
    pub(super) fn for_tests() -> Settings {
        static CONFIG: std::sync::LazyLock<Config> = std::sync::LazyLock::new(Config::default);
        static HUD: std::sync::LazyLock<HudState> =
            std::sync::LazyLock::new(|| HudState::new(&CONFIG));
        static FAULTS: std::sync::LazyLock<Faults> = std::sync::LazyLock::new(Faults::default);
        static LIMIT: std::sync::LazyLock<FpsLimit> =
            std::sync::LazyLock::new(|| FpsLimit::new(&[]));
        static WAYLAND: WaylandKeys = WaylandKeys::new();
        static PRESENTATION: Presentation = Presentation::new();
        static X11PRESENT: Observer = Observer::new();
        Settings {
            name: "vulkan-app",
            api: Api::Vulkan,
            config: &CONFIG,
            hud: &HUD,
            limit: &LIMIT,
            faults: &FAULTS,
            wayland: &WAYLAND,
            presentation: &PRESENTATION,
            x11present: &X11PRESENT,
        }
    }
}
