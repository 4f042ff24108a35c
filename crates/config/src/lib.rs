//! User configuration: defaults < the file
//! `$XDG_CONFIG_HOME/steadyhud/steadyhud.conf` (else
//! `~/.config/steadyhud/steadyhud.conf`) < the game's files `<name>.conf`
//! and (Wine) `wine-<name>.conf` next to it ([`sources`]) <
//! `STEADYHUD_CONFIG="key=value,…"` < `STEADYHUD_LOG_DIR` (for `log_dir`
//! only). The game's name is [`game_name`]'s rule; [`blacklist`] says which
//! processes the layer leaves alone.
//!
//! The file has `key=value` lines; blank lines and lines starting with `#`
//! are ignored. In `STEADYHUD_CONFIG` items are separated by commas (so a
//! `log_dir` containing a comma must come from the file or
//! `STEADYHUD_LOG_DIR`). An unknown key or a bad value gives one warning
//! naming where it came from (`file:line` or `STEADYHUD_CONFIG item N`) and
//! keeps the value from before; loading never fails and never panics.

#![forbid(unsafe_code)]

pub mod blacklist;
pub mod game_name;
pub mod hud;
mod settings;
pub mod sources;

pub use blacklist::{blacklisted, Listed};
pub use game_name::GameName;
pub use settings::{
    config_path, Config, GpuTiming, LimitMethod, Position, Source, DEFAULT_HUD_COUNTERS,
    ENV_CONFIG, ENV_LOG_DIR, KEYS, LAYER_MARK, LAYER_NAME, MAX_FPS_LIMIT, MAX_HUD_COUNTERS,
    MAX_HUD_SCALE, MAX_SENSOR_HZ, MIN_HUD_SCALE,
};
pub use sources::{resolve, Resolved};
