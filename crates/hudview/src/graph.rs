//! The graphs: frame times over the published span, and the counter
//! section's table with a small graph per counter.

use super::View;
use imgui::Ui;
use std::fmt::Write;
use steadyhud_live::LiveStats;

/// Graph size in unscaled pixels.
const GRAPH_W: f32 = 240.0;
const GRAPH_H: f32 = 56.0;
/// Height of one counter's graph in unscaled pixels.
pub(crate) const COUNTER_GRAPH_H: f32 = 18.0;

impl View {
    /// The counter section (config `hud_counters`): the last stutter and its
    /// main cause, then per counter a table row (label, newest value, peak
    /// of the history) and a bar graph of its recent per-frame values,
    /// scaled to its own peak. In a strip it is one block beside the
    /// other rows.
    pub(crate) fn counter_section(&mut self, ui: &Ui, stats: &LiveStats) {
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
    /// as a horizontal line (shorter and half as wide in a strip).
    /// The graph's width: half as wide in a strip.
    pub(crate) fn graph_width(&self) -> f32 {
        if self.config.horizontal {
            GRAPH_W * self.scale / 2.0
        } else {
            GRAPH_W * self.scale
        }
    }

    pub(crate) fn graph(&self, ui: &Ui, stats: &LiveStats) {
        let p = &self.palette;
        let w = self.graph_width();
        // In a strip as tall as two lines of text: the strip stays a strip.
        let h = if self.config.horizontal {
            2.0 * ui.text_line_height()
        } else {
            GRAPH_H * self.scale
        };
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

        let target_ms = if self.config.target_fps > 0 {
            1000.0 / self.config.target_fps as f32
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
