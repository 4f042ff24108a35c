//! The rows of the HUD window: the toast, then each row the preset names
//! (`steadyhud_config::hud::rows`), one under the other with the values
//! in a column, or side by side (`horizontal`).

use super::palette::rating;
use super::{View, ITEM_SPACING};
use imgui::Ui;
use std::fmt::Write;
use std::sync::Arc;
use steadyhud_config::hud::{self, OwnRow, Row};
use steadyhud_live::Toast;
use steadyhud_live::{LiveDisplay, LiveLatency, LiveStats};
use steadyhud_metrics::catalog::{self, Value};

/// Spacing between rows side by side, unscaled pixels.
const STRIP_GAP: f32 = 14.0;
/// Span of the rate the `fps` rows show, ms: the newest frames' average.
const FPS_SPAN_MS: f32 = 500.0;

/// The current rate: frames over the newest [`FPS_SPAN_MS`] of the graph.
pub(crate) fn current_fps(stats: &LiveStats) -> f64 {
    let (mut ms, mut n) = (0.0f32, 0u32);
    for &d in stats.recent_ms.iter().rev() {
        if ms >= FPS_SPAN_MS && n > 0 {
            break;
        }
        ms += d;
        n += 1;
    }
    if ms > 0.0 {
        f64::from(n) * 1000.0 / f64::from(ms)
    } else {
        0.0
    }
}

/// A row's label, where it has one.
fn label_of(row: Row, stats: &LiveStats) -> Option<&'static str> {
    match row {
        Row::Own(own) => match own {
            OwnRow::Fps => Some("FPS"),
            OwnRow::FrameMs => Some("Frame"),
            OwnRow::Cap => Some("Cap"),
            OwnRow::GpuBound => Some("GPU"),
            OwnRow::Display => Some("Display"),
            OwnRow::Latency => Some("Latency"),
            OwnRow::OneLine
            | OwnRow::FpsOnly
            | OwnRow::Graph
            | OwnRow::Window
            | OwnRow::Counters
            | OwnRow::Sensors => None,
        },
        Row::Metric(key) => catalog::metric(key).map(|m| m.short),
        Row::Sensor(name) => stats
            .sensors
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.label),
    }
}

/// Draws text with a one-pixel (scaled) drop shadow.
fn shadowed(ui: &Ui, shadow: f32, shadow_col: imgui::ImColor32, color: [f32; 4], text: &str) {
    let pos = ui.cursor_screen_pos();
    ui.get_window_draw_list()
        .add_text([pos[0] + shadow, pos[1] + shadow], shadow_col, text);
    ui.text_colored(color, text);
}

impl View {
    /// The colour of a value rated against `target_fps` (white with
    /// `hud_colors=0`).
    fn rated(&self, fps: f64) -> [f32; 4] {
        if self.config.hud_colors {
            rating(fps, self.config.target_fps)
        } else {
            self.palette.value
        }
    }

    pub(crate) fn contents(&mut self, ui: &Ui, stats: &LiveStats) {
        let shadow = self.scale.round().max(1.0);
        if let Some(t) = stats.toast {
            self.toast(ui, t);
        }
        if stats.hidden {
            return;
        }
        let preset = stats.preset.unwrap_or(self.config.preset);
        let horizontal = self.config.horizontal;
        // Shared, so the rows iterate it while they draw with `self`.
        let config = Arc::clone(&self.config);
        let sensor_rows = || {
            config
                .hud_sensor_rows
                .iter()
                .filter_map(|n| stats.sensors.iter().find(|r| r.name == n))
        };
        // The value column: right of the widest label shown.
        let mut col_x = 0.0f32;
        if !horizontal {
            for row in hud::rows(&config, preset) {
                if row == Row::Own(OwnRow::Sensors) {
                    for r in sensor_rows() {
                        col_x = col_x.max(ui.calc_text_size(r.label)[0]);
                    }
                } else if let Some(l) = label_of(row, stats) {
                    col_x = col_x.max(ui.calc_text_size(l)[0]);
                }
            }
            col_x += 14.0 * self.scale;
        }
        let mut first = true;
        let mut waiting_said = false;
        for row in hud::rows(&config, preset) {
            if needs_summary(row) && stats.summary.is_none() {
                if !waiting_said {
                    let w = ui.calc_text_size("waiting for frames")[0];
                    self.place(ui, &mut first, w);
                    let p = &self.palette;
                    shadowed(ui, shadow, p.shadow, p.label, "waiting for frames");
                    waiting_said = true;
                }
                continue;
            }
            match row {
                Row::Own(OwnRow::Sensors) => {
                    for r in sensor_rows() {
                        let w = self.pair_width(ui, r.label, &r.text);
                        self.place(ui, &mut first, w);
                        self.row(ui, col_x, r.label, self.palette.value, &r.text);
                    }
                }
                Row::Own(OwnRow::Graph) => {
                    self.place(ui, &mut first, self.graph_width());
                    self.graph(ui, stats);
                }
                Row::Own(OwnRow::Counters) if !stats.counters.is_empty() => {
                    self.place(ui, &mut first, self.graph_width());
                    // A block of its own beside the other rows in a strip.
                    ui.group(|| self.counter_section(ui, stats));
                }
                Row::Own(OwnRow::Counters) => {}
                Row::Own(OwnRow::OneLine) => {
                    let w = ui.calc_text_size("Steady 000 \u{b7} 0000 fps")[0];
                    self.place(ui, &mut first, w);
                    self.one_line(ui, stats);
                }
                Row::Own(OwnRow::Window) => {
                    let w = ui.calc_text_size("10 s window, 00 stutters")[0];
                    self.place(ui, &mut first, w);
                    self.window_line(ui, stats);
                }
                Row::Own(
                    OwnRow::Fps
                    | OwnRow::FpsOnly
                    | OwnRow::FrameMs
                    | OwnRow::GpuBound
                    | OwnRow::Display
                    | OwnRow::Latency
                    | OwnRow::Cap,
                )
                | Row::Metric(_)
                | Row::Sensor(_) => {
                    if self.value(row, stats) {
                        let label = label_of(row, stats);
                        let w = self.pair_width(ui, label.unwrap_or(""), &self.text);
                        self.place(ui, &mut first, w);
                        let color = self.value_color(row, stats);
                        match label {
                            Some(l) => self.row(ui, col_x, l, color, &self.text),
                            None => shadowed(ui, shadow, self.palette.shadow, color, &self.text),
                        }
                    }
                }
            }
        }
    }

    /// The toast: its words on a coloured backdrop, first in the window.
    fn toast(&mut self, ui: &Ui, toast: Toast) {
        self.text.clear();
        let _ = toast.write(&mut self.text);
        let pad = 3.0 * self.scale;
        let pos = ui.cursor_screen_pos();
        let size = ui.calc_text_size(&self.text);
        ui.get_window_draw_list()
            .add_rect(
                [pos[0] - pad, pos[1] - pad / 2.0],
                [pos[0] + size[0] + pad, pos[1] + size[1] + pad / 2.0],
                self.palette.toast_bg,
            )
            .filled(true)
            .build();
        ui.text_colored(self.palette.value, &self.text);
        if self.config.horizontal {
            ui.same_line_with_spacing(0.0, STRIP_GAP * self.scale);
        }
    }

    /// The rolling window's length and stutter count, and the frames the
    /// ring lost (in the warning colour) if any.
    fn window_line(&mut self, ui: &Ui, stats: &LiveStats) {
        let shadow = self.scale.round().max(1.0);
        let stutters = stats.recent_stutter.iter().filter(|&&s| s).count();
        self.text.clear();
        let _ = write!(
            self.text,
            "{:.0} s window, {} stutter{}",
            stats.window_s,
            stutters,
            if stutters == 1 { "" } else { "s" }
        );
        let p = &self.palette;
        shadowed(ui, shadow, p.shadow, p.label, &self.text);
        if stats.ring_overflows > 0 {
            self.text.clear();
            let _ = write!(
                self.text,
                "{} frames lost (ring full)",
                stats.ring_overflows
            );
            if self.config.horizontal {
                ui.same_line_with_spacing(0.0, STRIP_GAP * self.scale);
            }
            shadowed(ui, shadow, p.shadow, p.warn, &self.text);
        }
    }

    /// Moves to where the next row, `width` pixels wide, goes: below the
    /// last, or beside it in a strip, which goes on in a new line where
    /// the row would pass the window's edge.
    fn place(&self, ui: &Ui, first: &mut bool, width: f32) {
        if self.config.horizontal && !*first {
            let gap = STRIP_GAP * self.scale;
            // Decided before moving: a new line after a same-line move
            // would count the moved-to point in the window's width.
            let x = ui.item_rect_max()[0] - ui.window_pos()[0] + gap;
            if x + width <= self.strip_width {
                ui.same_line_with_spacing(0.0, gap);
            }
        }
        *first = false;
    }

    /// Width of a label and its value side by side.
    fn pair_width(&self, ui: &Ui, label: &str, value: &str) -> f32 {
        let gap = if label.is_empty() {
            0.0
        } else {
            ITEM_SPACING[0] * self.scale
        };
        ui.calc_text_size(label)[0] + gap + ui.calc_text_size(value)[0]
    }

    /// A label, then its value at `col_x` (beside it in a strip).
    fn row(&self, ui: &Ui, col_x: f32, label: &str, color: [f32; 4], text: &str) {
        let shadow = self.scale.round().max(1.0);
        shadowed(ui, shadow, self.palette.shadow, self.palette.label, label);
        if self.config.horizontal {
            ui.same_line();
        } else {
            ui.same_line_with_pos(col_x);
        }
        shadowed(ui, shadow, self.palette.shadow, color, text);
    }

    /// `Steady 58 · 60 fps`, each number in its rating's colour.
    fn one_line(&mut self, ui: &Ui, stats: &LiveStats) {
        let Some(s) = &stats.summary else { return };
        let shadow = self.scale.round().max(1.0);
        let (p, fps) = (&self.palette, current_fps(stats));
        shadowed(
            ui,
            shadow,
            p.shadow,
            p.label,
            catalog::metric("steady_fps").map_or("Steady", |m| m.short),
        );
        ui.same_line();
        self.text.clear();
        let _ = write!(self.text, "{}", s.steady_fps);
        shadowed(
            ui,
            shadow,
            p.shadow,
            self.rated(f64::from(s.steady_fps)),
            &self.text,
        );
        ui.same_line();
        shadowed(ui, shadow, p.shadow, p.label, "\u{b7}");
        ui.same_line();
        self.text.clear();
        let _ = write!(self.text, "{fps:.0} fps");
        shadowed(ui, shadow, p.shadow, self.rated(fps), &self.text);
    }

    /// Writes a row's value into `self.text`; whether the row shows now
    /// (the cap without a cap, GPU time without GPU timing, a sensor
    /// without a reading do not).
    fn value(&mut self, row: Row, stats: &LiveStats) -> bool {
        let text = &mut self.text;
        text.clear();
        let _ = match row {
            Row::Own(own) => match own {
                OwnRow::Fps => write!(text, "{:.0} fps", current_fps(stats)),
                OwnRow::FpsOnly => write!(text, "{:.0}", current_fps(stats)),
                OwnRow::FrameMs => write!(text, "{:.1} ms", stats.last_frame_ms),
                OwnRow::Cap if stats.fps_cap != 0 => write!(text, "{} fps", stats.fps_cap),
                OwnRow::GpuBound => match stats.gpu {
                    Some(g) => write!(text, "{:.1} ms, {:.0}% bound", g.busy_ms, g.bound_pct),
                    None => return false,
                },
                OwnRow::Display => match &stats.display {
                    Some(d) => display_text(d, text),
                    None => return false,
                },
                OwnRow::Latency => match &stats.latency {
                    Some(l) => latency_text(l, text),
                    None => return false,
                },
                // Drawn by `contents` itself, or not shown now.
                OwnRow::Cap
                | OwnRow::OneLine
                | OwnRow::Sensors
                | OwnRow::Graph
                | OwnRow::Window
                | OwnRow::Counters => return false,
            },
            Row::Metric(key) => match (catalog::metric(key), &stats.summary) {
                (Some(m), Some(s)) => match m.of(s) {
                    Value::Int(v) if m.unit.is_empty() => write!(text, "{v}"),
                    Value::Int(v) => write!(text, "{v} {}", m.unit),
                    Value::Float(v) if m.unit.is_empty() => write!(text, "{v:.1}"),
                    Value::Float(v) if m.unit == "%" => write!(text, "{v:.1}%"),
                    Value::Float(v) => write!(text, "{v:.1} {}", m.unit),
                    Value::Bool(b) => write!(text, "{}", if b { "yes" } else { "no" }),
                },
                _ => return false,
            },
            Row::Sensor(name) => match stats.sensors.iter().find(|r| r.name == name) {
                Some(r) => write!(text, "{}", r.text),
                None => return false,
            },
        };
        !text.is_empty()
    }

    /// The colour of a row's value: Steady, Typical, the frame time and
    /// the current rate rated against `target_fps`; the rest white.
    fn value_color(&self, row: Row, stats: &LiveStats) -> [f32; 4] {
        let s = stats.summary.as_ref();
        match row {
            Row::Metric("steady_fps") => {
                s.map_or(self.palette.value, |s| self.rated(f64::from(s.steady_fps)))
            }
            Row::Metric("typical_fps") => {
                s.map_or(self.palette.value, |s| self.rated(f64::from(s.typical_fps)))
            }
            Row::Own(OwnRow::FrameMs) if stats.last_frame_ms > 0.0 => {
                self.rated(1000.0 / f64::from(stats.last_frame_ms))
            }
            Row::Own(OwnRow::Fps | OwnRow::FpsOnly) => self.rated(current_fps(stats)),
            Row::Own(OwnRow::Display) => stats
                .display
                .and_then(|d| d.displayed_fps)
                .map_or(self.palette.value, |f| self.rated(f64::from(f))),
            _ => self.palette.value,
        }
    }
}

/// The `display` row's value: `59.9 fps · 3 dropped · 24.1 ms`, then
/// `· 2 unanswered` when some frames had no answer; `n/a` for a number the
/// source has not given (yet).
pub(crate) fn display_text(d: &LiveDisplay, out: &mut String) -> std::fmt::Result {
    match d.displayed_fps {
        Some(f) => write!(out, "{f:.1} fps")?,
        None => out.push_str("n/a fps"),
    }
    write!(out, " \u{b7} {} dropped \u{b7} ", d.dropped)?;
    match d.latency_ms {
        Some(ms) => write!(out, "{ms:.1} ms")?,
        None => out.push_str("n/a ms"),
    }
    if d.unknown > 0 {
        write!(out, " \u{b7} {} unanswered", d.unknown)?;
    }
    Ok(())
}

/// The `latency` row's value: PCL and its three terms,
/// `23.4 ms (I2FS 4.1 · FS2P 6.3 · P2D 13.0)`.
pub(crate) fn latency_text(l: &LiveLatency, out: &mut String) -> std::fmt::Result {
    write!(
        out,
        "{:.1} ms (I2FS {:.1} \u{b7} FS2P {:.1} \u{b7} P2D {:.1})",
        l.pcl_ms, l.i2fs_ms, l.fs2p_ms, l.p2d_ms
    )
}

/// Whether a row shows numbers of the rolling window's summary.
fn needs_summary(row: Row) -> bool {
    matches!(row, Row::Own(OwnRow::OneLine) | Row::Metric(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_display_row_says_fps_dropped_and_latency() {
        let text = |d: LiveDisplay| {
            let mut s = String::new();
            display_text(&d, &mut s).unwrap();
            s
        };
        let d = LiveDisplay {
            source: "wayland",
            displayed_fps: Some(59.94),
            dropped: 3,
            unknown: 0,
            latency_ms: Some(24.06),
            refresh_ms: Some(16.7),
        };
        assert_eq!(text(d), "59.9 fps \u{b7} 3 dropped \u{b7} 24.1 ms");
        let d = LiveDisplay {
            displayed_fps: None,
            latency_ms: None,
            unknown: 2,
            ..d
        };
        assert_eq!(
            text(d),
            "n/a fps \u{b7} 3 dropped \u{b7} n/a ms \u{b7} 2 unanswered"
        );
    }

    #[test]
    fn the_latency_row_says_pcl_and_its_terms() {
        let mut s = String::new();
        let l = LiveLatency {
            pcl_ms: 23.44,
            i2fs_ms: 4.1,
            fs2p_ms: 6.3,
            p2d_ms: 13.04,
        };
        latency_text(&l, &mut s).unwrap();
        assert_eq!(s, "23.4 ms (I2FS 4.1 \u{b7} FS2P 6.3 \u{b7} P2D 13.0)");
    }

    #[test]
    fn the_current_rate_is_the_newest_half_second() {
        let mut stats = LiveStats {
            recent_ms: vec![100.0; 20],
            ..LiveStats::default()
        };
        stats.recent_ms.extend([10.0; 50]);
        assert!((current_fps(&stats) - 100.0).abs() < 1e-9);
        stats.recent_ms = vec![250.0; 3];
        assert!(
            (current_fps(&stats) - 4.0).abs() < 1e-9,
            "one slow frame still counts"
        );
        assert_eq!(current_fps(&LiveStats::default()), 0.0);
    }
}
