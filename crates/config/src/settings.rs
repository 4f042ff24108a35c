//! The keys and their values ([`Config`]), how one `key=value` is read
//! and shown, and where the global file is; the order of the sources is
//! [`crate::sources`]'s.

use crate::{blacklist, hud};
use std::path::{Path, PathBuf};

/// The layer's name as in its manifest (`layer-manifest/`), which `steadyhud
/// run` adds to `VK_INSTANCE_LAYERS`.
pub const LAYER_NAME: &str = "VK_LAYER_STEADYHUD_overlay";

/// The function the GL library exports and the Vulkan layer calls (found
/// with `dlsym(RTLD_DEFAULT)`: the GL library is preloaded, so global)
/// each time an instance is made through the active layer: from then on
/// the GL library leaves GL-on-Vulkan contexts (zink) to the layer, which
/// sees their presents. So the process decides who measures them, not the
/// environment variables that may or may not load the layer.
pub const LAYER_MARK: &std::ffi::CStr = c"steadyhud_vulkan_layer_active";

/// Corner of the swapchain image the HUD is drawn in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Position {
    #[default]
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
}

impl Position {
    pub fn name(self) -> &'static str {
        match self {
            Position::TopLeft => "top-left",
            Position::TopRight => "top-right",
            Position::BottomLeft => "bottom-left",
            Position::BottomRight => "bottom-right",
        }
    }
}

/// Declares every key once: its doc line (the field's), name (the field's),
/// type, default, how a value is read (`set`: assign the field, or return
/// what was expected) and how it is shown (`show`). From it come
/// [`Config`], its `Default`, [`KEYS`], [`Config::set`] and
/// [`Config::value_of`]; docs/cli.md's table is checked against [`KEYS`]
/// (`crates/config/tests/keys_documented.rs`). A key is one entry here and
/// nothing else.
macro_rules! keys {
    ($(
        $(#[$doc:meta])*
        $key:ident: $ty:ty = $default:expr;
        set($c:ident, $v:ident) $set:block
        show($s:ident) $show:block
    )*) => {
        /// Every setting of the layer, with its default.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Config {
            $($(#[$doc])* pub $key: $ty,)*
        }

        impl Default for Config {
            fn default() -> Self {
                Config {
                    $($key: $default,)*
                }
            }
        }

        /// Every key, in documentation order.
        pub const KEYS: [&str; [$(stringify!($key)),*].len()] = [$(stringify!($key)),*];

        impl Config {
            /// Sets one key from its text value; on a bad value returns what
            /// was expected and leaves `self` unchanged (except `fps_limit`,
            /// which a bad value turns off). Unknown keys are an error too.
            pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
                match key {
                    $(stringify!($key) => {
                        let $c = &mut *self;
                        let $v = value;
                        $set
                    })*
                    _ => return Err(format!("one of the keys {}", KEYS.join(", "))),
                }
                Ok(())
            }

            /// The current value of `key` as config text (empty for an
            /// unknown key).
            pub fn value_of(&self, key: &str) -> String {
                match key {
                    $(stringify!($key) => {
                        let $s = self;
                        $show
                    })*
                    _ => String::new(),
                }
            }
        }
    };
}

keys! {
    /// `position`: HUD corner.
    position: Position = Position::TopLeft;
    set(c, v) {
        c.position = match v.to_ascii_lowercase().replace('_', "-").as_str() {
            "top-left" => Position::TopLeft,
            "top-right" => Position::TopRight,
            "bottom-left" => Position::BottomLeft,
            "bottom-right" => Position::BottomRight,
            _ => return Err("top-left, top-right, bottom-left or bottom-right".into()),
        }
    }
    show(s) { s.position.name().into() }

    /// `toggle_key`: X11 keysym names joined by `+` (default `Shift_R+F12`).
    toggle_key: String = "Shift_R+F12".to_string();
    set(c, v) { c.toggle_key = key_combo(v)? }
    show(s) { s.toggle_key.clone() }

    /// `window_seconds`: rolling window of the live metrics (10).
    window_seconds: f64 = 10.0;
    set(c, v) {
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 && x <= 600.0 => c.window_seconds = x,
            _ => return Err("a number of seconds > 0 and ≤ 600".into()),
        }
    }
    show(s) { s.window_seconds.to_string() }

    /// `stutter_threshold`: θ of the stutter rule (0.20).
    stutter_threshold: f64 = steadyhud_metrics::DEFAULT_STUTTER_THRESHOLD;
    set(c, v) {
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => c.stutter_threshold = x,
            _ => return Err("a number > 0, e.g. 0.2".into()),
        }
    }
    show(s) { s.stutter_threshold.to_string() }

    /// `log_dir`: session log folder; `None` = `STEADYHUD_LOG_DIR` or
    /// `$XDG_STATE_HOME/steadyhud`.
    log_dir: Option<PathBuf> = None;
    set(c, v) {
        if v.is_empty() || v.contains('\0') {
            return Err("a folder path".into());
        }
        c.log_dir = Some(expand_home(v));
    }
    show(s) {
        s.log_dir
            .as_ref()
            .map_or("(default)".into(), |p| p.display().to_string())
    }

    /// `hud_hidden`: start with the HUD hidden (false).
    hud_hidden: bool = false;
    set(c, v) { c.hud_hidden = parse_bool(v)? }
    show(s) { s.hud_hidden.to_string() }

    /// `log`: write the session log (true).
    log: bool = true;
    set(c, v) { c.log = parse_bool(v)? }
    show(s) { s.log.to_string() }

    /// `target_fps`: the graph's target line, and the target whose budget
    /// (1/f s) `time_over_budget_pct` counts frames over; the session log
    /// records it (60).
    target_fps: u32 = 60;
    set(c, v) {
        match v.parse::<u32>() {
            Ok(x) if (1..=1000).contains(&x) => c.target_fps = x,
            _ => return Err("a whole number from 1 to 1000".into()),
        }
    }
    show(s) { s.target_fps.to_string() }

    /// `counters`: hook pipeline/submit/allocation/acquire calls and log
    /// per-frame statistics counters (true).
    counters: bool = true;
    set(c, v) { c.counters = parse_bool(v)? }
    show(s) { s.counters.to_string() }

    /// `hud_counters`: show the counter graphs and table under the HUD (false).
    hud_counters: bool = false;
    set(c, v) { c.hud_counters = parse_bool(v)? }
    show(s) { s.hud_counters.to_string() }

    /// `hud_counter_names`: the counters that section shows, in order
    /// (CSV column names joined by `+`; default pipeline creation, submit,
    /// acquire and in-present time). Only these keep a history.
    hud_counter_names: Vec<String> = DEFAULT_HUD_COUNTERS.iter().map(|s| s.to_string()).collect();
    set(c, v) {
        let names: Vec<String> = v.split('+').map(|n| n.trim().to_string()).collect();
        let ok = names.len() <= MAX_HUD_COUNTERS
            && names.iter().all(|n| {
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
            });
        if !ok {
            return Err(format!("up to {MAX_HUD_COUNTERS} counter column names joined by +, e.g. pipeline_create_ms+submits"));
        }
        c.hud_counter_names = names;
    }
    show(s) { s.hud_counter_names.join("+") }

    /// `gpu_timing`: time the app's queue submissions on the GPU and log
    /// `gpu_busy_ms`/`gpu_wait_ms` per frame (`auto`: on except on a CPU
    /// device; needs `counters`, and a queue family with timestamps).
    gpu_timing: GpuTiming = GpuTiming::Auto;
    set(c, v) {
        c.gpu_timing = if v.eq_ignore_ascii_case("auto") {
            GpuTiming::Auto
        } else {
            match parse_bool(v) {
                Ok(true) => GpuTiming::On,
                Ok(false) => GpuTiming::Off,
                Err(e) => return Err(format!("auto, {e}")),
            }
        }
    }
    show(s) { s.gpu_timing.name().into() }

    /// `fps_limit`: frame caps in fps, the first in force, the rest cycled
    /// by `toggle_fps_limit` (empty / `0` = off).
    fps_limit: Vec<u32> = Vec::new();
    set(c, v) {
        let caps: Option<Vec<u32>> = v
            .split('+')
            .map(|x| x.trim().parse::<u32>().ok().filter(|&f| f <= MAX_FPS_LIMIT))
            .collect();
        match caps {
            Some(caps) => c.fps_limit = if caps == [0] { Vec::new() } else { caps },
            None => {
                // A bad cap turns the limiter off rather than keep one the
                // user meant to replace.
                c.fps_limit = Vec::new();
                return Err(format!("a cap in fps from 0 (off) to {MAX_FPS_LIMIT}, or caps joined by +, e.g. 60+144+0; the cap is off"));
            }
        }
    }
    show(s) {
        match s.fps_limit.as_slice() {
            [] => "0".into(),
            caps => caps.iter().map(u32::to_string).collect::<Vec<_>>().join("+"),
        }
    }

    /// `fps_limit_method`: where the limiter waits (`late`).
    fps_limit_method: LimitMethod = LimitMethod::Late;
    set(c, v) {
        c.fps_limit_method = match v.to_ascii_lowercase().as_str() {
            "late" => LimitMethod::Late,
            "early" => LimitMethod::Early,
            _ => return Err("late or early".into()),
        }
    }
    show(s) {
        match s.fps_limit_method {
            LimitMethod::Late => "late".into(),
            LimitMethod::Early => "early".into(),
        }
    }

    /// `toggle_fps_limit`: X11 keysym names joined by `+` (`Shift_L+F1`).
    toggle_fps_limit: String = "Shift_L+F1".to_string();
    set(c, v) { c.toggle_fps_limit = key_combo(v)? }
    show(s) { s.toggle_fps_limit.clone() }

    /// `control`: serve the control socket for `steadyhud ctl` (true).
    control: bool = true;
    set(c, v) { c.control = parse_bool(v)? }
    show(s) { s.control.to_string() }

    /// `blacklist`: edits of the built-in list of processes left alone
    /// (names joined by `+`; `-name` takes one off; see [`blacklist`]).
    blacklist: Vec<String> = Vec::new();
    set(c, v) { c.blacklist = blacklist::parse_edits(v)? }
    show(s) { s.blacklist.join("+") }

    /// `display_timing`: decide at device creation how display times
    /// would be obtained (VK_EXT_present_timing, VK_GOOGLE_display_timing,
    /// VK_KHR_present_wait2/present_wait) and say so in one line; where the
    /// app uses VK_EXT_present_timing or VK_GOOGLE_display_timing itself,
    /// read the results of its own queries into the display columns (the
    /// presents it tags only). False: unit-tested only, no driver here
    /// offers either (docs/design.md, "Display timing").
    display_timing: bool = false;
    set(c, v) { c.display_timing = parse_bool(v)? }
    show(s) { s.display_timing.to_string() }

    /// `display_feedback`: ask the compositor when each frame reached the
    /// screen (Wayland `wp_presentation` feedback on the game's surface):
    /// the log's display columns, the HUD's `display` row (on: about two
    /// microseconds per present, docs/measurements.md).
    display_feedback: bool = true;
    set(c, v) { c.display_feedback = parse_bool(v)? }
    show(s) { s.display_feedback.to_string() }

    /// `display_x11`: on X11, follow the game's window with X11 Present's
    /// CompleteNotify on a connection of our own (Vulkan Xlib/xcb
    /// surfaces, GLX windows) for the log's display columns (false: never
    /// run with a real DRI3 driver, which presents through Present; Xvfb's
    /// software presents make no completes; docs/design.md "X11 Present").
    display_x11: bool = false;
    set(c, v) { c.display_x11 = parse_bool(v)? }
    show(s) { s.display_x11.to_string() }

    /// `sensor_hz`: system readings (CPU, memory, GPU) per second for the
    /// HUD and the log's sensor columns (10; 0 = off).
    sensor_hz: u32 = 10;
    set(c, v) {
        match v.parse::<u32>() {
            Ok(x) if x <= MAX_SENSOR_HZ => c.sensor_hz = x,
            _ => return Err(format!("a whole number from 0 (off) to {MAX_SENSOR_HZ}")),
        }
    }
    show(s) { s.sensor_hz.to_string() }

    /// `hud_sensor_rows`: the HUD's sensor rows, in order (`cpu`, `gpu`,
    /// `vram`, `ram` joined by `+`; default all four; `none` = no rows).
    /// A row with nothing readable is left out.
    hud_sensor_rows: Vec<String> = steadyhud_sensors::ROW_NAMES.map(String::from).into();
    set(c, v) {
        let rows: Vec<String> = v.split('+').map(|n| n.trim().to_ascii_lowercase()).collect();
        if rows == ["none"] {
            c.hud_sensor_rows = Vec::new();
        } else if rows
            .iter()
            .all(|r| steadyhud_sensors::ROW_NAMES.contains(&r.as_str()))
        {
            c.hud_sensor_rows = rows;
        } else {
            return Err(format!(
                "none, or rows of {} joined by +",
                steadyhud_sensors::ROW_NAMES.join(", ")
            ));
        }
    }
    show(s) {
        match s.hud_sensor_rows.as_slice() {
            [] => "none".into(),
            rows => rows.join("+"),
        }
    }

    /// `preset`: the HUD preset shown at start ([`crate::hud::PRESETS`];
    /// default [`crate::hud::DEFAULT_PRESET`], standard).
    preset: u8 = hud::DEFAULT_PRESET;
    set(c, v) {
        match v.parse::<u8>() {
            Ok(x) if usize::from(x) < hud::PRESETS.len() => c.preset = x,
            _ => return Err(format!("a preset from 0 to {}", hud::PRESETS.len() - 1)),
        }
    }
    show(s) { s.preset.to_string() }

    /// `preset_key`: X11 keysym names joined by `+` (`Shift_R+F10`); cycles
    /// the presets.
    preset_key: String = "Shift_R+F10".to_string();
    set(c, v) { c.preset_key = key_combo(v)? }
    show(s) { s.preset_key.clone() }

    /// `hud_rows`: rows ([`crate::hud::Row`]) in order, shown instead of
    /// the rows of the preset `preset` (empty: the preset's).
    hud_rows: Vec<hud::Row> = Vec::new();
    set(c, v) {
        let (rows, unknown) = match v.trim() {
            "" | "preset" => (Vec::new(), Vec::new()),
            other => hud::parse_rows(other),
        };
        if !unknown.is_empty() || (rows.is_empty() && !matches!(v.trim(), "" | "preset")) {
            return Err(format!(
                "preset, or rows of {} joined by +",
                hud::row_names().join(", ")
            ));
        }
        c.hud_rows = rows;
    }
    show(s) {
        match s.hud_rows.as_slice() {
            [] => "preset".into(),
            rows => hud::joined(rows),
        }
    }

    /// `hud_scale`: the HUD's scale, [`MIN_HUD_SCALE`] to [`MAX_HUD_SCALE`]
    /// (`None`, `auto`: follows the window's height).
    hud_scale: Option<f32> = None;
    set(c, v) {
        match v.parse::<f32>() {
            _ if v.eq_ignore_ascii_case("auto") => c.hud_scale = None,
            Ok(x) if (MIN_HUD_SCALE..=MAX_HUD_SCALE).contains(&x) => c.hud_scale = Some(x),
            _ => return Err(format!("auto, or a number from {MIN_HUD_SCALE} to {MAX_HUD_SCALE}")),
        }
    }
    show(s) { s.hud_scale.map_or("auto".into(), |x| x.to_string()) }

    /// `horizontal`: rows side by side in one strip along the top or bottom
    /// edge (`position` picks the edge and the end) (false).
    horizontal: bool = false;
    set(c, v) { c.horizontal = parse_bool(v)? }
    show(s) { s.horizontal.to_string() }

    /// `hud_alpha`: the opacity of the HUD's background, 0 to 1 (1).
    hud_alpha: f32 = 1.0;
    set(c, v) {
        match v.parse::<f32>() {
            Ok(x) if (0.0..=1.0).contains(&x) => c.hud_alpha = x,
            _ => return Err("a number from 0 (no background) to 1 (opaque)".into()),
        }
    }
    show(s) { s.hud_alpha.to_string() }

    /// `hud_colors`: colour Steady, Typical and the frame time green,
    /// yellow or red against `target_fps` (true).
    hud_colors: bool = true;
    set(c, v) { c.hud_colors = parse_bool(v)? }
    show(s) { s.hud_colors.to_string() }
}

/// Smallest and largest `hud_scale`.
pub const MIN_HUD_SCALE: f32 = 0.5;
pub const MAX_HUD_SCALE: f32 = 3.0;

/// Highest accepted `sensor_hz`.
pub const MAX_SENSOR_HZ: u32 = 100;

/// Where the frame limiter waits (config `fps_limit_method`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitMethod {
    /// After the real present returns: the app samples input right after
    /// the wait (lowest latency).
    #[default]
    Late,
    /// In the present hook before the present is timestamped and sent.
    Early,
}

/// Whether the layer times the app's submits on the GPU (config
/// `gpu_timing`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuTiming {
    /// On, except on a `VK_PHYSICAL_DEVICE_TYPE_CPU` device (lavapipe,
    /// SwiftShader): there the layer's timestamp command buffers are
    /// executed by the game's own cores, which costs more than it tells.
    #[default]
    Auto,
    /// On, CPU devices included (`1`, `on`, `true`, `yes`).
    On,
    /// Off (`0`, `off`, `false`, `no`).
    Off,
}

impl GpuTiming {
    /// Whether a device gets GPU timing, given whether its type is
    /// `VK_PHYSICAL_DEVICE_TYPE_CPU`.
    pub fn wanted(self, device_is_cpu: bool) -> bool {
        match self {
            GpuTiming::Auto => !device_is_cpu,
            GpuTiming::On => true,
            GpuTiming::Off => false,
        }
    }

    /// The value as config text (`auto`, `true`, `false`).
    pub fn name(self) -> &'static str {
        match self {
            GpuTiming::Auto => "auto",
            GpuTiming::On => "true",
            GpuTiming::Off => "false",
        }
    }
}

/// Highest accepted cap, fps.
pub const MAX_FPS_LIMIT: u32 = 1000;

/// Default of `hud_counter_names`.
pub const DEFAULT_HUD_COUNTERS: [&str; 4] = [
    "pipeline_create_ms",
    "submit_ms",
    "acquire_ms",
    "in_present_ms",
];

/// Most counters the HUD's counter section shows.
pub const MAX_HUD_COUNTERS: usize = 8;

/// Where a piece of configuration text came from; decides its syntax
/// (lines for a file, commas for the environment) and how warnings name it.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A config file: `key=value` lines, `#` comment lines.
    File(PathBuf),
    /// `STEADYHUD_CONFIG`: `key=value` items separated by commas.
    Env,
}

/// Environment variable with comma-separated settings.
pub const ENV_CONFIG: &str = "STEADYHUD_CONFIG";
/// Environment variable overriding `log_dir`.
pub const ENV_LOG_DIR: &str = "STEADYHUD_LOG_DIR";

impl Config {
    /// Parses configuration text over the defaults (pure: no file or
    /// environment access). Returns the config and its warnings.
    pub fn parse(text: &str, source: &Source) -> (Config, Vec<String>) {
        let mut cfg = Config::default();
        let warnings = cfg.apply(text, source);
        (cfg, warnings)
    }

    /// Applies configuration text on top of `self`; returns the warnings.
    pub fn apply(&mut self, text: &str, source: &Source) -> Vec<String> {
        self.apply_noting(text, source, &mut |_, _| {})
    }

    /// [`Config::apply`], calling `note(key, where)` for every value set
    /// (`where` as warnings name it: `FILE:LINE`, `STEADYHUD_CONFIG item N`).
    pub fn apply_noting(
        &mut self,
        text: &str,
        source: &Source,
        note: &mut dyn FnMut(&str, String),
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        let items: Vec<(String, &str)> = match source {
            Source::File(path) => text
                .lines()
                .enumerate()
                .map(|(i, l)| (format!("{}:{}", path.display(), i + 1), l))
                .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                .collect(),
            Source::Env => text
                .split(',')
                .enumerate()
                .map(|(i, l)| (format!("{ENV_CONFIG} item {}", i + 1), l))
                .filter(|(_, l)| !l.trim().is_empty())
                .collect(),
        };
        for (at, item) in items {
            let Some((key, value)) = item.split_once('=') else {
                warnings.push(format!(
                    "{at}: expected key=value, found {:?}; ignored",
                    clip(item.trim())
                ));
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            if !KEYS.contains(&key.as_str()) {
                warnings.push(format!(
                    "{at}: unknown key {:?} (known: {}); ignored",
                    clip(&key),
                    KEYS.join(", ")
                ));
                continue;
            }
            // An unknown row is left out with one warning; the rest stay.
            let rows;
            let value = if key == "hud_rows" {
                let (known, unknown) = hud::parse_rows(value);
                for name in unknown {
                    warnings.push(format!(
                        "{at}: unknown HUD row {:?} in hud_rows (known: {}); left out",
                        clip(&name),
                        hud::row_names().join(", ")
                    ));
                }
                rows = if known.is_empty() && !value.trim().is_empty() {
                    "preset".to_string()
                } else {
                    hud::joined(&known)
                };
                rows.as_str()
            } else {
                value
            };
            match self.set(&key, value) {
                Ok(()) => note(&key, at),
                Err(expected) => warnings.push(format!(
                    "{at}: bad value {:?} for {key} (expected {expected}); keeping {}",
                    clip(value),
                    printable(&clip(&self.value_of(&key)))
                )),
            }
        }
        warnings
    }

    /// The folder session logs go to: `log_dir`, else
    /// [`steadyhud_log::default_log_dir`].
    pub fn resolved_log_dir(&self) -> Option<PathBuf> {
        self.log_dir.clone().or_else(steadyhud_log::default_log_dir)
    }
}

/// A key combination: X11 keysym names joined by `+`.
fn key_combo(value: &str) -> Result<String, String> {
    let ok = !value.is_empty()
        && value
            .split('+')
            .all(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    if ok {
        Ok(value.to_string())
    } else {
        Err("X11 key names joined by +, e.g. Shift_R+F12".into())
    }
}

/// `$XDG_CONFIG_HOME/steadyhud/steadyhud.conf`, else
/// `$HOME/.config/steadyhud/steadyhud.conf`.
pub fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .filter(|d| Path::new(d).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            env("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(".config"))
        })?;
    Some(base.join("steadyhud").join("steadyhud.conf"))
}

fn parse_bool(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err("1/0, true/false, yes/no or on/off".into()),
    }
}

fn expand_home(v: &str) -> PathBuf {
    match v.strip_prefix("~/") {
        Some(rest) => {
            steadyhud_sys::home::home_dir().map_or_else(|| PathBuf::from(v), |h| h.join(rest))
        }
        None => PathBuf::from(v),
    }
}

/// `s` with control characters escaped, so a kept value set earlier (a
/// `log_dir` from `STEADYHUD_CONFIG` may hold a newline) cannot split a
/// warning over several lines (found by fuzzing).
fn printable(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if s.chars().nth(60).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (Config, Vec<String>) {
        Config::parse(text, &Source::File(PathBuf::from("/c/steadyhud.conf")))
    }

    fn env(text: &str) -> (Config, Vec<String>) {
        Config::parse(text, &Source::Env)
    }

    #[test]
    fn empty_text_gives_defaults() {
        assert_eq!(file(""), (Config::default(), vec![]));
        assert_eq!(env(""), (Config::default(), vec![]));
    }

    #[test]
    fn every_key_parses() {
        let (c, w) = file(
            "# comment\n\nposition = bottom-right\ntoggle_key=Control_L+F10\nwindow_seconds=2.5\n\
             stutter_threshold=0.35\nlog_dir=/tmp/x\nhud_hidden=yes\nlog=off\ntarget_fps=144\n",
        );
        assert_eq!(w, Vec::<String>::new());
        assert_eq!(c.position, Position::BottomRight);
        assert_eq!(c.toggle_key, "Control_L+F10");
        assert_eq!(c.window_seconds, 2.5);
        assert_eq!(c.stutter_threshold, 0.35);
        assert_eq!(c.log_dir, Some(PathBuf::from("/tmp/x")));
        assert!(c.hud_hidden);
        assert!(!c.log);
        assert_eq!(c.target_fps, 144);
    }

    /// Frame cap keys: caps, lists, methods, the hotkey; a bad cap is one
    /// warning naming its source and turns the cap off.
    #[test]
    fn frame_cap_keys() {
        let (c, w) = env("fps_limit=60+144+0,fps_limit_method=early,toggle_fps_limit=Control_L+F2");
        assert_eq!(w, Vec::<String>::new());
        assert_eq!(c.fps_limit, [60, 144, 0]);
        assert_eq!(c.fps_limit_method, LimitMethod::Early);
        assert_eq!(c.toggle_fps_limit, "Control_L+F2");
        assert_eq!(Config::default().fps_limit_method, LimitMethod::Late);
        assert!(env("fps_limit=0").0.fps_limit.is_empty());
        for bad in ["-5", "abc", "1001", "60+x", "nan", ""] {
            let (c, w) = file(&format!("fps_limit=144\nfps_limit={bad}\n"));
            assert!(c.fps_limit.is_empty(), "{bad:?}: {:?}", c.fps_limit);
            assert_eq!(w.len(), 1, "{bad:?}: {w:?}");
            assert!(w[0].contains(":2") && w[0].contains("fps_limit"), "{w:?}");
        }
        assert_eq!(env("fps_limit_method=sometimes").1.len(), 1);
    }

    #[test]
    fn positions() {
        for (v, p) in [
            ("top-left", Position::TopLeft),
            ("TOP-RIGHT", Position::TopRight),
            ("bottom_left", Position::BottomLeft),
            ("bottom-right", Position::BottomRight),
        ] {
            assert_eq!(env(&format!("position={v}")).0.position, p);
        }
        let (c, w) = env("position=middle");
        assert_eq!(c.position, Position::TopLeft);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("STEADYHUD_CONFIG item 1") && w[0].contains("keeping top-left"),
            "{w:?}"
        );
    }

    #[test]
    fn warnings_stay_one_line_when_the_kept_value_has_a_newline() {
        // Fuzzer input, reduced: a log_dir with a newline from the
        // environment, then a bad log_dir that reports the kept one.
        let (c, w) = env("log_dir=/tmp/a\n# b\u{1b}[31m,log_dir=");
        assert_eq!(c.log_dir, Some(PathBuf::from("/tmp/a\n# b\u{1b}[31m")));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(!w[0].contains('\n') && !w[0].contains('\u{1b}'), "{w:?}");
        assert!(w[0].contains("keeping /tmp/a\\n# b\\u{1b}[31m"), "{w:?}");
    }

    #[test]
    fn booleans() {
        for (v, b) in [
            ("1", true),
            ("0", false),
            ("true", true),
            ("False", false),
            ("yes", true),
            ("no", false),
            ("on", true),
            ("off", false),
        ] {
            assert_eq!(env(&format!("hud_hidden={v}")).0.hud_hidden, b, "{v}");
            assert_eq!(env(&format!("log={v}")).0.log, b, "{v}");
        }
        let (c, w) = env("log=maybe");
        assert!(c.log);
        assert!(w[0].contains("bad value \"maybe\" for log"), "{w:?}");
    }

    /// `gpu_timing` is `auto` by default, takes `auto` and every boolean
    /// spelling, warns on anything else, and prints back as it parses.
    #[test]
    fn gpu_timing_is_auto_on_or_off() {
        assert_eq!(Config::default().gpu_timing, GpuTiming::Auto);
        for (v, want) in [
            ("auto", GpuTiming::Auto),
            ("AUTO", GpuTiming::Auto),
            ("1", GpuTiming::On),
            ("on", GpuTiming::On),
            ("true", GpuTiming::On),
            ("Yes", GpuTiming::On),
            ("0", GpuTiming::Off),
            ("off", GpuTiming::Off),
            ("FALSE", GpuTiming::Off),
            ("no", GpuTiming::Off),
        ] {
            let (c, w) = env(&format!("gpu_timing={v}"));
            assert_eq!((c.gpu_timing, w.len()), (want, 0), "{v}");
            let again = env(&format!("gpu_timing={}", c.value_of("gpu_timing"))).0;
            assert_eq!(again.gpu_timing, want, "{v} printed back");
        }
        let (c, w) = file("gpu_timing=0\ngpu_timing=sometimes\n");
        assert_eq!(c.gpu_timing, GpuTiming::Off);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains(":2: bad value \"sometimes\" for gpu_timing (expected auto, 1/0")
                && w[0].ends_with("keeping false"),
            "{w:?}"
        );
    }

    /// Who gets GPU timing: `auto` all but CPU devices, `on`/`off` every
    /// device.
    #[test]
    fn gpu_timing_wanted_by_device_type() {
        for (setting, cpu, want) in [
            (GpuTiming::Auto, false, true),
            (GpuTiming::Auto, true, false),
            (GpuTiming::On, false, true),
            (GpuTiming::On, true, true),
            (GpuTiming::Off, false, false),
            (GpuTiming::Off, true, false),
        ] {
            assert_eq!(setting.wanted(cpu), want, "{setting:?}, CPU device {cpu}");
        }
    }

    #[test]
    fn hud_counter_names_are_column_names_joined_by_plus() {
        let (c, w) = env("hud_counters=1,hud_counter_names=alloc_bytes+pipelines+submit_ms");
        assert_eq!(w, Vec::<String>::new());
        assert_eq!(
            c.hud_counter_names,
            ["alloc_bytes", "pipelines", "submit_ms"]
        );
        assert_eq!(
            c.value_of("hud_counter_names"),
            "alloc_bytes+pipelines+submit_ms"
        );
        assert_eq!(Config::default().hud_counter_names, DEFAULT_HUD_COUNTERS);
        for bad in ["", "a++b", "a b", "pipelines+x-y", "a+b+c+d+e+f+g+h+i"] {
            let (c, w) = env(&format!("hud_counter_names={bad}"));
            assert_eq!(c.hud_counter_names, DEFAULT_HUD_COUNTERS, "{bad}");
            assert_eq!(w.len(), 1, "{bad}");
        }
    }

    #[test]
    fn numeric_ranges() {
        assert_eq!(env("window_seconds=600").0.window_seconds, 600.0);
        for bad in ["0", "-1", "600.5", "nan", "inf", "ten"] {
            let (c, w) = env(&format!("window_seconds={bad}"));
            assert_eq!(c.window_seconds, 10.0, "{bad}");
            assert_eq!(w.len(), 1, "{bad}");
        }
        for bad in ["0", "-0.1", "NaN", "x"] {
            let (c, w) = env(&format!("stutter_threshold={bad}"));
            assert_eq!((c.stutter_threshold, w.len()), (0.20, 1), "{bad}");
        }
        assert_eq!(env("target_fps=1").0.target_fps, 1);
        assert_eq!(env("target_fps=1000").0.target_fps, 1000);
        for bad in ["0", "1001", "60.5", "-60", ""] {
            let (c, w) = env(&format!("target_fps={bad}"));
            assert_eq!((c.target_fps, w.len()), (60, 1), "{bad}");
        }
    }

    /// The HUD's look: presets, rows, scale, layout, alpha, colours; an
    /// unknown row is one warning naming it and the other rows stay.
    #[test]
    fn hud_look_keys() {
        let (c, w) = env(
            "preset=0,preset_key=Control_L+F9,hud_rows=steady_fps+graph+cpu,hud_scale=2,\
             horizontal=1,hud_alpha=0.25,hud_colors=0",
        );
        assert_eq!(w, Vec::<String>::new());
        assert_eq!(c.preset, 0);
        assert_eq!(c.preset_key, "Control_L+F9");
        assert_eq!(hud::joined(&c.hud_rows), "steady_fps+graph+cpu");
        assert_eq!(c.hud_scale, Some(2.0));
        assert!(c.horizontal);
        assert_eq!(c.hud_alpha, 0.25);
        assert!(!c.hud_colors);
        let (c, w) = env("hud_rows=steady_fps+bogus_row+graph");
        assert_eq!(hud::joined(&c.hud_rows), "steady_fps+graph");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("\"bogus_row\"") && w[0].contains("left out"),
            "{w:?}"
        );
        let (c, w) = env("hud_rows=nope");
        assert!(c.hud_rows.is_empty(), "the preset's rows");
        assert_eq!(w.len(), 1, "{w:?}");
        for bad in [
            "preset=4",
            "preset=x",
            "hud_scale=0.4",
            "hud_scale=3.5",
            "hud_alpha=1.5",
            "hud_alpha=-0.1",
            "horizontal=maybe",
        ] {
            let (c, w) = env(bad);
            assert_eq!((c, w.len()), (Config::default(), 1), "{bad}");
        }
        let (c, _) = env("hud_scale=2,hud_scale=auto");
        assert_eq!(c.hud_scale, None);
        // Every key's shown value reads back as itself (log_dir shows
        // "(default)" for none, which is no folder).
        for key in KEYS.into_iter().filter(|&k| k != "log_dir") {
            let mut c = Config::default();
            let text = c.value_of(key);
            assert_eq!(c.set(key, &text), Ok(()), "{key}={text}");
            assert_eq!(c, Config::default(), "{key}={text} round-trips");
        }
    }

    #[test]
    fn toggle_key_syntax() {
        assert_eq!(env("toggle_key=F12").0.toggle_key, "F12");
        for bad in ["", "Shift_R+", "+F12", "Shift R", "F12;rm"] {
            let (c, w) = env(&format!("toggle_key={bad}"));
            assert_eq!(
                (c.toggle_key.as_str(), w.len()),
                ("Shift_R+F12", 1),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn unknown_keys_and_junk_name_their_line() {
        let (c, w) = file("position=top-right\npostion=bottom-left\njunk\n\u{0}=\u{1}\n");
        assert_eq!(c.position, Position::TopRight);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w[0].starts_with("/c/steadyhud.conf:2: unknown key \"postion\""),
            "{w:?}"
        );
        assert!(
            w[1].starts_with("/c/steadyhud.conf:3: expected key=value"),
            "{w:?}"
        );
        assert!(
            w[2].starts_with("/c/steadyhud.conf:4: unknown key"),
            "{w:?}"
        );
        let (_, w) = env("log=1,,nope=2");
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("STEADYHUD_CONFIG item 3: unknown key \"nope\""),
            "{w:?}"
        );
    }

    #[test]
    fn layering_file_then_env_then_log_dir_env() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("steadyhud");
        std::fs::create_dir_all(&conf).unwrap();
        std::fs::write(
            conf.join("steadyhud.conf"),
            "target_fps=30\nposition=bottom-left\nlog_dir=/from/file\nbad=1\n",
        )
        .unwrap();
        let xdg = dir.path().to_string_lossy().into_owned();
        let vars = |extra: &'static [(&'static str, &'static str)]| {
            let xdg = xdg.clone();
            move |k: &str| -> Option<String> {
                if k == "XDG_CONFIG_HOME" {
                    return Some(xdg.clone());
                }
                extra
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let (c, w) = Config::load_with(&vars(&[]));
        assert_eq!((c.target_fps, c.position), (30, Position::BottomLeft));
        assert_eq!(c.log_dir, Some(PathBuf::from("/from/file")));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("steadyhud.conf:4: unknown key \"bad\""),
            "{w:?}"
        );
        let (c, w) = Config::load_with(&vars(&[(
            "STEADYHUD_CONFIG",
            "target_fps=90,log_dir=/from/env",
        )]));
        assert_eq!((c.target_fps, c.position), (90, Position::BottomLeft));
        assert_eq!(c.log_dir, Some(PathBuf::from("/from/env")));
        assert_eq!(w.len(), 1);
        let (c, _) = Config::load_with(&vars(&[
            ("STEADYHUD_CONFIG", "log_dir=/from/env"),
            ("STEADYHUD_LOG_DIR", "/from/log_dir_env"),
        ]));
        assert_eq!(c.log_dir, Some(PathBuf::from("/from/log_dir_env")));
    }

    #[test]
    fn missing_file_is_silent_and_home_is_the_fallback() {
        let (c, w) = Config::load_with(&|k| (k == "HOME").then(|| "/nonexistent-home".to_string()));
        assert_eq!((c, w), (Config::default(), vec![]));
        let p = config_path(&|k| (k == "HOME").then(|| "/h".to_string())).unwrap();
        assert_eq!(p, PathBuf::from("/h/.config/steadyhud/steadyhud.conf"));
        // A relative XDG_CONFIG_HOME is invalid per the spec: ignored.
        let p = config_path(&|k| match k {
            "HOME" => Some("/h".into()),
            "XDG_CONFIG_HOME" => Some("rel".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(p, PathBuf::from("/h/.config/steadyhud/steadyhud.conf"));
    }

    #[test]
    fn unreadable_file_is_one_warning() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be: read fails, not NotFound.
        std::fs::create_dir_all(dir.path().join("steadyhud/steadyhud.conf")).unwrap();
        let xdg = dir.path().to_string_lossy().into_owned();
        let (c, w) = Config::load_with(&|k| (k == "XDG_CONFIG_HOME").then(|| xdg.clone()));
        assert_eq!(c, Config::default());
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("cannot read"), "{w:?}");
    }

    #[test]
    fn sensor_keys() {
        let (c, w) = env("sensor_hz=4,hud_sensor_rows=ram+GPU");
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            (c.sensor_hz, c.hud_sensor_rows.clone()),
            (4, vec!["ram".to_string(), "gpu".to_string()])
        );
        assert_eq!(c.value_of("hud_sensor_rows"), "ram+gpu");
        let d = Config::default();
        assert_eq!(
            (d.sensor_hz, d.value_of("hud_sensor_rows").as_str()),
            (10, "cpu+gpu+vram+ram")
        );
        assert_eq!(
            env("hud_sensor_rows=none").0.hud_sensor_rows,
            Vec::<String>::new()
        );
        assert_eq!(env("sensor_hz=0").0.sensor_hz, 0);
        for bad in [
            "sensor_hz=101",
            "sensor_hz=-1",
            "hud_sensor_rows=cpu+disk",
            "hud_sensor_rows=",
        ] {
            let (c, w) = env(bad);
            assert_eq!(w.len(), 1, "{bad}");
            assert_eq!((c.sensor_hz, c.hud_sensor_rows.len()), (10, 4), "{bad}");
        }
    }
}
