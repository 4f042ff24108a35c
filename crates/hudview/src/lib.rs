//! What the HUD shows: the imgui window with the live metrics and the
//! frame-time graph, laid out for the window's size. No graphics API: the
//! Vulkan layer (`src/hud`) and the GL library (`crates/gl`) render the
//! same draw lists.
//!
//! Colours are handed to imgui as sRGB-encoded values (what they look like
//! on a UNORM target) whatever the target; each renderer encodes them for
//! its own (the Vulkan layer's `hud::encoding`; the GL library writes them
//! as they are, with `GL_FRAMEBUFFER_SRGB` off).

#![forbid(unsafe_code)]

use imgui::{Condition, ImColor32, StyleColor, Ui, WindowFlags};
use std::fmt::Write;
use steadyhud_capture::live::LiveStats;

/// A metric's short label, as the catalog declares it for every table.
fn short(key: &'static str) -> &'static str {
    steadyhud_metrics::catalog::metric(key).map_or(key, |m| m.short)
}
use steadyhud_config::{Config, Position};

/// Base font height in pixels at 720p.
const BASE_FONT_PX: f32 = 13.0;
/// Graph size in unscaled pixels.
const GRAPH_W: f32 = 240.0;
const GRAPH_H: f32 = 56.0;
/// Height of one counter's graph in unscaled pixels.
const COUNTER_GRAPH_H: f32 = 18.0;

/// sRGB-encoded colours of the HUD (exact values the tests look for).
pub mod colors {
    /// Frame-time bar of a normal frame.
    pub const BAR: [f32; 4] = [0.30, 0.85, 0.40, 1.0];
    /// Frame-time bar and tick of a stutter frame.
    pub const STUTTER: [f32; 4] = [1.00, 0.22, 0.22, 1.0];
    /// Target-FPS line.
    pub const TARGET: [f32; 4] = [1.00, 0.80, 0.20, 1.0];
    /// Graph backdrop (translucent: the only filled background).
    pub const GRAPH_BG: [f32; 4] = [0.0, 0.0, 0.0, 0.45];
    /// Graph frame.
    pub const GRAPH_FRAME: [f32; 4] = [0.70, 0.72, 0.78, 0.8];
    /// Text shadow.
    pub const SHADOW: [f32; 4] = [0.0, 0.0, 0.0, 0.9];
    /// Background of the cached (opaque) panel.
    pub const PANEL_BG: [f32; 4] = [0.06, 0.06, 0.08, 1.0];
    /// Labels.
    pub const LABEL: [f32; 4] = [0.70, 0.72, 0.78, 1.0];
    /// Values.
    pub const VALUE: [f32; 4] = [1.00, 1.00, 1.00, 1.0];
}

/// A size in pixels, width then height.
pub type Size = [u32; 2];

/// HUD scale for a window `height` pixels tall: 1 at 720p, 3 at 4K,
/// clamped to 1..=4 and rounded to a quarter so the bitmap font stays sharp.
pub fn hud_scale(height: u32) -> f32 {
    let s = (height as f32 / 720.0).clamp(1.0, 4.0);
    (s * 4.0).round() / 4.0
}

/// The HUD's colours as imgui takes them, computed once per swapchain.
struct Palette {
    bar: ImColor32,
    stutter: ImColor32,
    target: ImColor32,
    graph_bg: ImColor32,
    graph_frame: ImColor32,
    shadow: ImColor32,
    label: [f32; 4],
    value: [f32; 4],
    warn: [f32; 4],
}

impl Palette {
    fn new() -> Palette {
        let c = ImColor32::from;
        Palette {
            bar: c(colors::BAR),
            stutter: c(colors::STUTTER),
            target: c(colors::TARGET),
            graph_bg: c(colors::GRAPH_BG),
            graph_frame: c(colors::GRAPH_FRAME),
            shadow: c(colors::SHADOW),
            label: colors::LABEL,
            value: colors::VALUE,
            warn: colors::STUTTER,
        }
    }
}

/// Layout and colours of one window's HUD.
pub struct View {
    scale: f32,
    position: Position,
    target_fps: u32,
    /// Config `hud_counters`: draw the counter section.
    counters: bool,
    palette: Palette,
    /// Reused text buffer: the present path formats without allocating.
    text: String,
}

impl View {
    /// The view of a window of `extent` pixels.
    pub fn new(config: &Config, extent: Size) -> View {
        View {
            scale: hud_scale(extent[1]),
            position: config.position,
            target_fps: config.target_fps,
            counters: config.hud_counters,
            palette: Palette::new(),
            text: String::with_capacity(64),
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

    /// Sets the imgui style: dark, compact, scaled (sRGB-encoded colours).
    fn apply_style(&self, style: &mut imgui::Style) {
        style.use_dark_colors();
        style.window_rounding = 4.0;
        style.window_border_size = 0.0;
        style.window_padding = [8.0, 6.0];
        style.item_spacing = [6.0, 3.0];
        style.colors[StyleColor::Text as usize] = colors::VALUE;
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
        let (x, y) = match self.position {
            Position::TopLeft => (m, m),
            Position::TopRight => (ew - m - w, m),
            Position::BottomLeft => (m, eh - m - h),
            Position::BottomRight => (ew - m - w, eh - m - h),
        };
        [x.max(0), y.max(0)]
    }

    /// Builds the HUD window for a display of `size` pixels, in the
    /// configured corner, or at (0, 0) with `at_origin` (the cached panel);
    /// returns the window's rectangle `[x0, y0, x1, y1]` (the only pixels
    /// it touches).
    pub fn build(
        &mut self,
        ui: &Ui,
        size: [f32; 2],
        stats: &LiveStats,
        at_origin: bool,
    ) -> [f32; 4] {
        let margin = self.margin();
        let (pos, pivot) = match self.position {
            _ if at_origin => ([0.0, 0.0], [0.0, 0.0]),
            Position::TopLeft => ([margin, margin], [0.0, 0.0]),
            Position::TopRight => ([size[0] - margin, margin], [1.0, 0.0]),
            Position::BottomLeft => ([margin, size[1] - margin], [0.0, 1.0]),
            Position::BottomRight => ([size[0] - margin, size[1] - margin], [1.0, 1.0]),
        };
        // No window background: on a software rasteriser a filled backdrop
        // behind the whole HUD costs as much as the rest of the frame; text
        // gets a drop shadow instead and only the graph a translucent backdrop.
        let flags = WindowFlags::NO_DECORATION
            | WindowFlags::NO_BACKGROUND
            | WindowFlags::NO_INPUTS
            | WindowFlags::NO_MOVE
            | WindowFlags::NO_SAVED_SETTINGS
            | WindowFlags::NO_FOCUS_ON_APPEARING
            | WindowFlags::NO_NAV
            | WindowFlags::ALWAYS_AUTO_RESIZE;
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

    fn contents(&mut self, ui: &Ui, stats: &LiveStats) {
        let p = &self.palette;
        let col_x = ui.calc_text_size(short("mostly_steady_fps"))[0] + 14.0 * self.scale;
        let shadow = self.scale.round().max(1.0);
        let text_at_cursor = |color: [f32; 4], text: &str| {
            let pos = ui.cursor_screen_pos();
            ui.get_window_draw_list()
                .add_text([pos[0] + shadow, pos[1] + shadow], p.shadow, text);
            ui.text_colored(color, text);
        };
        let row = |label: &str, text: &str| {
            text_at_cursor(p.label, label);
            ui.same_line_with_pos(col_x);
            text_at_cursor(p.value, text);
        };
        let text = &mut self.text;
        match &stats.summary {
            Some(s) => {
                let mut line = |label: &str, args: std::fmt::Arguments| {
                    text.clear();
                    let _ = text.write_fmt(args);
                    row(label, text);
                };
                line(short("steady_fps"), format_args!("{} fps", s.steady_fps));
                line(
                    short("mostly_steady_fps"),
                    format_args!("{} fps", s.mostly_steady_fps),
                );
                line(short("typical_fps"), format_args!("{} fps", s.typical_fps));
                line(
                    short("average_fps"),
                    format_args!("{:.1} fps", s.average_fps),
                );
                line("Frame", format_args!("{:.1} ms", stats.last_frame_ms));
                line(short("p99_ms"), format_args!("{:.1} ms", s.p99_ms));
                if stats.fps_cap != 0 {
                    line("Cap", format_args!("{} fps", stats.fps_cap));
                }
                if let Some(g) = stats.gpu {
                    line(
                        "GPU",
                        format_args!("{:.1} ms, {:.0}% bound", g.busy_ms, g.bound_pct),
                    );
                }
            }
            None => text_at_cursor(p.label, "waiting for frames"),
        }
        for r in &stats.sensors {
            row(r.label, &r.text);
        }
        self.graph(ui, stats);
        let text = &mut self.text;
        text.clear();
        let stutters = stats.recent_stutter.iter().filter(|&&s| s).count();
        let _ = write!(
            text,
            "{:.0} s window, {} stutter{}",
            stats.window_s,
            stutters,
            if stutters == 1 { "" } else { "s" }
        );
        text_at_cursor(p.label, text);
        if stats.ring_overflows > 0 {
            text.clear();
            let _ = write!(text, "{} frames lost (ring full)", stats.ring_overflows);
            text_at_cursor(p.warn, text);
        }
        if self.counters && !stats.counters.is_empty() {
            self.counter_section(ui, stats);
        }
    }

    /// The counter section (config `hud_counters`): the last stutter and its
    /// main cause, then per counter a table row (label, newest value, peak
    /// of the history) and a bar graph of its recent per-frame values,
    /// scaled to its own peak.
    fn counter_section(&mut self, ui: &Ui, stats: &LiveStats) {
        let p = &self.palette;
        let shadow = self.scale.round().max(1.0);
        let col_x = ui.calc_text_size("pipeline creation")[0] + 14.0 * self.scale;
        let col2 = col_x + ui.calc_text_size("000.0 ms ")[0];
        let text_at_cursor = |color: [f32; 4], text: &str| {
            let pos = ui.cursor_screen_pos();
            ui.get_window_draw_list()
                .add_text([pos[0] + shadow, pos[1] + shadow], p.shadow, text);
            ui.text_colored(color, text);
        };
        let text = &mut self.text;
        if let Some(last) = &stats.last_stutter {
            text_at_cursor(p.label, "last stutter");
            ui.same_line_with_pos(col_x);
            text.clear();
            let _ = write!(text, "+{:.1} ms", last.excess_ms);
            text_at_cursor(p.warn, text);
            text_at_cursor(p.warn, &last.cause);
        }
        text_at_cursor(p.label, "counter");
        ui.same_line_with_pos(col_x);
        text_at_cursor(p.label, "now");
        ui.same_line_with_pos(col2);
        text_at_cursor(p.label, "peak");
        for c in &stats.counters {
            text_at_cursor(p.label, &c.label);
            for (x, v) in [(col_x, c.last()), (col2, c.peak())] {
                ui.same_line_with_pos(x);
                text.clear();
                let _ = match c.unit {
                    "ms" => write!(text, "{v:.1} ms"),
                    "bytes" => write!(text, "{:.1} MiB", v / (1024.0 * 1024.0)),
                    _ => write!(text, "{v:.0}"),
                };
                text_at_cursor(p.value, text);
            }
            let (w, h) = (GRAPH_W * self.scale, COUNTER_GRAPH_H * self.scale);
            let origin = ui.cursor_screen_pos();
            ui.dummy([w, h]);
            let draw = ui.get_window_draw_list();
            let (x0, y0, x1, y1) = (origin[0], origin[1], origin[0] + w, origin[1] + h);
            draw.add_rect([x0, y0], [x1, y1], p.graph_bg)
                .filled(true)
                .build();
            let peak = c.peak();
            if peak > 0.0 && !c.recent.is_empty() {
                let col_w = (w / c.recent.len() as f32).max(1.0);
                let skip = c.recent.len().saturating_sub((w / col_w) as usize);
                for (k, &v) in c.recent[skip..].iter().enumerate() {
                    if v > 0.0 {
                        let bx = x0 + k as f32 * col_w;
                        let top = y1 - (v / peak) * h;
                        draw.add_rect([bx, top], [bx + col_w, y1], p.bar)
                            .filled(true)
                            .build();
                    }
                }
            }
        }
    }

    /// Frame-time bars over the whole published span (`recent_ms`), newest
    /// on the right; stutters red with a tick above; the target frame time
    /// as a horizontal line.
    fn graph(&self, ui: &Ui, stats: &LiveStats) {
        let p = &self.palette;
        let (w, h) = (GRAPH_W * self.scale, GRAPH_H * self.scale);
        let origin = ui.cursor_screen_pos();
        ui.dummy([w, h]);
        let draw = ui.get_window_draw_list();
        let (x0, y0) = (origin[0], origin[1]);
        let (x1, y1) = (x0 + w, y0 + h);
        draw.add_rect([x0, y0], [x1, y1], p.graph_bg)
            .filled(true)
            .build();
        draw.add_rect([x0 - 1.0, y0 - 1.0], [x1 + 1.0, y1 + 1.0], p.graph_frame)
            .build();

        let target_ms = if self.target_fps > 0 {
            1000.0 / self.target_fps as f32
        } else {
            0.0
        };
        let max_recent = stats.recent_ms.iter().copied().fold(0.0f32, f32::max);
        let top_ms = (target_ms * 2.0).max(max_recent).max(1.0);
        let tick = 3.0 * self.scale;
        let y_of = |ms: f32| y1 - (ms / top_ms).min(1.0) * (h - tick);

        // Columns of 2 px (scaled). With more frames than columns each
        // column shows the longest frame of its bucket and is red when the
        // bucket holds a stutter: spikes never disappear into an average.
        let col_w = (2.0 * self.scale).round().max(1.0);
        let columns = ((w / col_w) as usize).max(1);
        let n = stats.recent_ms.len();
        let per = n.div_ceil(columns).max(1);
        let used = n.div_ceil(per);
        let bucket = |c: usize| {
            let range = c * per..((c + 1) * per).min(n);
            let ms = stats.recent_ms[range.clone()]
                .iter()
                .copied()
                .fold(0.0f32, f32::max);
            let stutter = stats
                .recent_stutter
                .get(range)
                .is_some_and(|s| s.contains(&true));
            (x1 - (used - c) as f32 * col_w, ms, stutter)
        };
        for c in 0..used {
            let (bx0, ms, stutter) = bucket(c);
            if !stutter {
                draw.add_rect([bx0, y_of(ms)], [bx0 + col_w, y1], p.bar)
                    .filled(true)
                    .build();
            }
        }
        // Stutters on top with a tick above the bars, at least 2 px wide.
        let sw = col_w.max(2.0 * self.scale);
        for c in 0..used {
            let (bx0, ms, stutter) = bucket(c);
            if stutter {
                let bx0 = bx0.min(x1 - sw);
                draw.add_rect([bx0, y_of(ms)], [bx0 + sw, y1], p.stutter)
                    .filled(true)
                    .build();
                draw.add_rect(
                    [bx0 - self.scale, y0],
                    [bx0 + sw + self.scale, y0 + tick],
                    p.stutter,
                )
                .filled(true)
                .build();
            }
        }
        if target_ms > 0.0 {
            // A filled rect on whole pixels: crisp at any scale (an
            // anti-aliased line would blend into two rows).
            let t = self.scale.round().max(1.0);
            let y = (y_of(target_ms) - t / 2.0).round();
            draw.add_rect([x0, y], [x1, y + t], p.target)
                .filled(true)
                .build();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_follows_height() {
        assert_eq!(hud_scale(480), 1.0);
        assert_eq!(hud_scale(720), 1.0);
        assert_eq!(hud_scale(1080), 1.5);
        assert_eq!(hud_scale(2160), 3.0);
        assert_eq!(hud_scale(10000), 4.0);
    }

    /// Laid out with imgui for real (no GPU needed): `hud_counters` adds one
    /// row and one graph per counter below the main section; off, nothing.
    #[test]
    fn counter_section_only_when_configured() {
        let stats = LiveStats {
            counters: vec![
                steadyhud_capture::live::LiveCounter {
                    label: "pipeline creation".into(),
                    unit: "ms",
                    recent: vec![0.0, 41.0, 0.5],
                },
                steadyhud_capture::live::LiveCounter {
                    label: "queue submit".into(),
                    unit: "ms",
                    recent: vec![0.2; 3],
                },
            ],
            ..LiveStats::default()
        };
        let height = |on: bool, stats: &LiveStats| {
            let mut ctx = imgui::Context::create();
            ctx.set_ini_filename(None);
            ctx.io_mut().display_size = [1280.0, 720.0];
            ctx.fonts().build_rgba32_texture();
            let cfg = Config {
                hud_counters: on,
                ..Config::default()
            };
            let mut view = View::new(&cfg, [1280, 720]);
            // Auto-resize settles on the second frame.
            let mut r = [0.0; 4];
            for _ in 0..2 {
                r = view.build(ctx.new_frame(), [1280.0, 720.0], stats, true);
                ctx.render();
            }
            r[3] - r[1]
        };
        let (off, on) = (height(false, &stats), height(true, &stats));
        // Header + 2 rows of text and 2 graphs of 18 px at least.
        assert!(
            on > off + 2.0 * COUNTER_GRAPH_H + 3.0 * 13.0,
            "off {off} on {on}"
        );
        // The last stutter and its cause: two more lines.
        let last = steadyhud_capture::live::LastStutter {
            excess_ms: 41.2,
            cause: "pipeline creation 41.0 ms".into(),
        };
        let with_last = LiveStats {
            last_stutter: Some(last),
            ..stats.clone()
        };
        let (off_last, on_last) = (height(false, &with_last), height(true, &with_last));
        assert_eq!(off_last, off, "no counter section, no last-stutter line");
        assert!(
            on_last >= on + 2.0 * 13.0,
            "on {on} with last stutter {on_last}"
        );
    }
}
