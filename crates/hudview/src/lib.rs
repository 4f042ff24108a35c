//! What the HUD shows: the imgui window with the live metrics and the
//! frame-time graph, laid out for the window's size. No graphics API: the
//! Vulkan layer (`src/hud`) and the GL library (`crates/gl`) render the
//! same draw lists.
//!
//! What it shows is the preset's rows (`steadyhud_config::hud`: the preset
//! in the live stats, `hud_rows` in place of the configured one's), one
//! under the other or side by side (`horizontal`), at `hud_scale`, with
//! a toast for a second after a change. Modules: [`palette`] (colours and
//! the rating against `target_fps`), `rows` (one row each), `graph` (the
//! frame-time graph and the counter graphs).
//!
//! Colours are handed to imgui as sRGB-encoded values (what they look like
//! on a UNORM target) whatever the target; each renderer encodes them for
//! its own (the Vulkan layer's `hud::encoding`; the GL library writes them
//! as they are, with `GL_FRAMEBUFFER_SRGB` off).

#![forbid(unsafe_code)]

pub mod driver;
mod graph;
pub mod palette;
mod rows;

use imgui::{Condition, StyleColor, Ui, WindowFlags};
use palette::Palette;
pub use palette::{colors, rating};
use std::sync::Arc;
use steadyhud_config::{Config, Position};
use steadyhud_live::LiveStats;

/// Base font height in pixels at 720p.
const BASE_FONT_PX: f32 = 13.0;

/// imgui's spacing between items, unscaled pixels.
const ITEM_SPACING: [f32; 2] = [6.0, 3.0];
/// The window's padding, unscaled pixels.
const WINDOW_PADDING: [f32; 2] = [8.0, 6.0];

/// A size in pixels, width then height.
pub type Size = [u32; 2];

/// HUD scale for a window `height` pixels tall: 1 at 720p, 3 at 4K,
/// clamped to 1..=4 and rounded to a quarter so the bitmap font stays sharp.
pub fn hud_scale(height: u32) -> f32 {
    let s = (height as f32 / 720.0).clamp(1.0, 4.0);
    (s * 4.0).round() / 4.0
}

/// Layout and colours of one window's HUD.
pub struct View {
    scale: f32,
    /// Shared with the rows while they draw (no copy per build).
    config: Arc<Config>,
    palette: Palette,
    /// Reused text buffer: the present path formats without allocating.
    text: String,
    /// What decides the rows' layout at the last build ([`View::settled`]).
    layout: u64,
    /// Builds still needed before the layout is settled.
    unsettled: u8,
    /// Where a strip's line must end (window-relative x), set per build.
    strip_width: f32,
}

impl View {
    /// The view of a window of `extent` pixels.
    pub fn new(config: &Config, extent: Size) -> View {
        View {
            scale: config.hud_scale.unwrap_or_else(|| hud_scale(extent[1])),
            config: Arc::new(config.clone()),
            palette: Palette::new(config.hud_alpha),
            text: String::with_capacity(64),
            layout: u64::MAX,
            unsettled: 0,
            strip_width: f32::MAX,
        }
    }

    /// Scale factor applied to font and layout.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Pixel height of the HUD font.
    pub fn font_px(&self) -> f32 {
        (BASE_FONT_PX * self.scale).round()
    }

    /// Whether the renderer draws the panel's background itself: the
    /// background is opaque (`hud_alpha=1`) and a cached panel may be copied
    /// over the game's pixels.
    pub fn opaque(&self) -> bool {
        self.config.hud_alpha >= 1.0
    }

    /// Sets up a new imgui context for this view: no files, the font at
    /// [`View::font_px`] (imgui's own, pixel-snapped), the style. Every
    /// renderer calls this, so the HUD looks the same on each.
    pub fn configure(&self, ctx: &mut imgui::Context) {
        ctx.set_ini_filename(None);
        ctx.set_log_filename(None);
        ctx.fonts().add_font(&[imgui::FontSource::DefaultFontData {
            config: Some(imgui::FontConfig {
                size_pixels: self.font_px(),
                oversample_h: 1,
                oversample_v: 1,
                pixel_snap_h: true,
                ..imgui::FontConfig::default()
            }),
        }]);
        self.apply_style(ctx.style_mut());
    }

    /// Sets the imgui style: dark, compact, scaled (sRGB-encoded colours);
    /// a window background of [`colors::PANEL_BG`] at `hud_alpha` where the
    /// view draws it (not on a cached panel, whose clear is the background).
    fn apply_style(&self, style: &mut imgui::Style) {
        style.use_dark_colors();
        style.window_rounding = 4.0;
        style.window_border_size = 0.0;
        style.window_padding = WINDOW_PADDING;
        style.item_spacing = ITEM_SPACING;
        style.colors[StyleColor::Text as usize] = colors::VALUE;
        let mut bg = colors::PANEL_BG;
        bg[3] = self.config.hud_alpha;
        style.colors[StyleColor::WindowBg as usize] = bg;
        style.scale_all_sizes(self.scale);
    }

    /// Margin between the HUD and the image edges, pixels.
    fn margin(&self) -> f32 {
        10.0 * self.scale
    }

    /// Top-left pixel of a HUD of `content` size in the configured corner of
    /// an image of `extent` size.
    pub fn corner_offset(&self, content: Size, extent: Size) -> [i32; 2] {
        let m = self.margin().round() as i32;
        let (w, h) = (content[0] as i32, content[1] as i32);
        let (ew, eh) = (extent[0] as i32, extent[1] as i32);
        let (x, y) = match self.config.position {
            Position::TopLeft => (m, m),
            Position::TopRight => (ew - m - w, m),
            Position::BottomLeft => (m, eh - m - h),
            Position::BottomRight => (ew - m - w, eh - m - h),
        };
        [x.max(0), y.max(0)]
    }

    /// Whether the last build's layout was seen in the build before it: an
    /// auto-resized window takes its new size one build after its rows
    /// change (a preset, a toast), so a renderer that caches the panel
    /// builds again until this holds.
    pub fn settled(&self) -> bool {
        self.unsettled == 0
    }

    /// Builds the HUD window for a display of `size` pixels, in the
    /// configured corner, or at (0, 0) with `at_origin` (a cached panel,
    /// whose renderer clears it to the background); returns the window's
    /// rectangle `[x0, y0, x1, y1]` (the only pixels it touches).
    pub fn build(
        &mut self,
        ui: &Ui,
        size: [f32; 2],
        stats: &LiveStats,
        at_origin: bool,
    ) -> [f32; 4] {
        let layout = layout_of(stats);
        if layout != self.layout {
            self.layout = layout;
            self.unsettled = 2;
        }
        self.unsettled = self.unsettled.saturating_sub(1);
        let margin = self.margin();
        // A strip's rows end where the window's right padding would pass
        // the right margin.
        self.strip_width = size[0] - 2.0 * margin - WINDOW_PADDING[0] * self.scale;
        let (pos, pivot) = match self.config.position {
            _ if at_origin => ([0.0, 0.0], [0.0, 0.0]),
            Position::TopLeft => ([margin, margin], [0.0, 0.0]),
            Position::TopRight => ([size[0] - margin, margin], [1.0, 0.0]),
            Position::BottomLeft => ([margin, size[1] - margin], [0.0, 1.0]),
            Position::BottomRight => ([size[0] - margin, size[1] - margin], [1.0, 1.0]),
        };
        // A background only where it is seen through (hud_alpha < 1) or
        // drawn straight into the frame; a cached panel's clear is its own.
        let mut flags = WindowFlags::NO_DECORATION
            | WindowFlags::NO_INPUTS
            | WindowFlags::NO_MOVE
            | WindowFlags::NO_SAVED_SETTINGS
            | WindowFlags::NO_FOCUS_ON_APPEARING
            | WindowFlags::NO_NAV
            | WindowFlags::ALWAYS_AUTO_RESIZE;
        if at_origin || self.config.hud_alpha <= 0.0 {
            flags |= WindowFlags::NO_BACKGROUND;
        }
        ui.window("steadyhud")
            .position(pos, Condition::Always)
            .position_pivot(pivot)
            .flags(flags)
            .build(|| {
                self.contents(ui, stats);
                let (p, s) = (ui.window_pos(), ui.window_size());
                [p[0], p[1], p[0] + s[0], p[1] + s[1]]
            })
            .unwrap_or([0.0; 4])
    }
}

/// What decides which rows a build lays out (not their numbers).
fn layout_of(s: &LiveStats) -> u64 {
    let toast = s.toast.map_or(0u64, |t| 1 + t.kind() as u64);
    let flags = [
        s.hidden,
        s.summary.is_some(),
        s.gpu.is_some(),
        s.fps_cap != 0,
        s.last_stutter.is_some(),
        s.ring_overflows > 0,
    ]
    .iter()
    .fold(0u64, |a, &b| a << 1 | u64::from(b));
    u64::from(s.preset.unwrap_or(u8::MAX))
        | toast << 8
        | flags << 16
        | (s.sensors.len() as u64) << 24
        | (s.counters.len() as u64) << 32
}

#[cfg(test)]
mod tests;
