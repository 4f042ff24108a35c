//! User configuration: `STEADYHUD_CONFIG="key=value,key=value"` over the file
//! `$XDG_CONFIG_HOME/steadyhud/steadyhud.conf` over defaults.
//!
//! (Interface fixed by the lead; parsing is owned by the formats branch.)

use std::path::PathBuf;

/// Corner of the swapchain image the HUD is drawn in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Position {
    #[default]
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
}

/// Every setting of the layer, with its default.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `position`: HUD corner.
    pub position: Position,
    /// `toggle_key`: X11 keysym names joined by `+` (default `Shift_R+F12`).
    pub toggle_key: String,
    /// `window_seconds`: rolling window of the live metrics (10).
    pub window_seconds: f64,
    /// `stutter_threshold`: θ of the stutter rule (0.20).
    pub stutter_threshold: f64,
    /// `log_dir`: session log folder; `None` = `STEADYHUD_LOG_DIR` or
    /// `$XDG_STATE_HOME/steadyhud`.
    pub log_dir: Option<PathBuf>,
    /// `hud_hidden`: start with the HUD hidden (false).
    pub hud_hidden: bool,
    /// `log`: write the session log (true).
    pub log: bool,
    /// `target_fps`: the graph's target line (60).
    pub target_fps: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            position: Position::TopLeft,
            toggle_key: "Shift_R+F12".to_string(),
            window_seconds: 10.0,
            stutter_threshold: 0.20,
            log_dir: None,
            hud_hidden: false,
            log: true,
            target_fps: 60,
        }
    }
}

impl Config {
    /// Reads the environment and the config file. Returns the config and one
    /// warning line per problem (unknown key, bad value: default kept).
    pub fn load() -> (Config, Vec<String>) {
        (Config::default(), Vec::new())
    }
}
