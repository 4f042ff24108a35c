//! The ranked bar chart of the many-runs report: one row per run, best
//! first, with its Steady, Mostly Steady and Typical FPS as nested bars.
//!
//! The three metrics are nested by definition (Steady ≤ Mostly Steady ≤
//! Typical: the bounds loosen and slow(f), excess(f) grow with f), so one
//! row draws them over each other, longest first, and every segment stays
//! visible. Labels are monospace and cut to the columns reserved for them:
//! SVG text neither wraps nor measures itself, and a 100-run chart must not
//! overlap.

use super::svg::{escape, fmt_tick, ticks, truncate_middle};
use std::fmt::Write;

/// Colours of the Steady, Mostly Steady and Typical segments (dark to light:
/// the strictest metric is the strongest colour).
pub const COLOURS: [&str; 3] = ["#0072b2", "#56b4e9", "#c6dbef"];

/// Chart width in pixels.
const WIDTH: f64 = 960.0;
/// Height of one run's row; the bar fills [`BAR`] of it.
const ROW: f64 = 15.0;
const BAR: f64 = 10.0;
/// Monospace label size and the advance of one column at that size, with
/// margin: DejaVu Sans Mono and Liberation Mono advance 0.6 em.
const FONT: f64 = 11.0;
const COLUMN: f64 = FONT * 0.62;
/// Left label: rank (4 columns), a space, role and name (38 columns).
const RANK_COLS: usize = 4;
const NAME_COLS: usize = 38;
/// Right label: "steady mostly typical", the values right-aligned under it.
const VALUE_COLS: usize = 21;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 24.0;

/// One run's row.
pub struct BarRow<'a> {
    pub rank: usize,
    pub name: &'a str,
    /// Steady, Mostly Steady, Typical FPS.
    pub fps: [u32; 3],
    /// `best`, `median`, `worst`, `baseline`, joined by spaces: row tint
    /// (CSS class) and the words shown before the name.
    pub roles: Vec<&'static str>,
}

/// The chart as an `<svg id="ranking">`, rows in the given order.
pub fn ranked_bars(rows: &[BarRow]) -> String {
    let left = 8.0 + (RANK_COLS + 1 + NAME_COLS) as f64 * COLUMN + 8.0;
    let right = 12.0 + VALUE_COLS as f64 * COLUMN + 8.0;
    let plot_w = WIDTH - left - right;
    let height = TOP + ROW * rows.len() as f64 + BOTTOM;
    let bottom = height - BOTTOM;
    let max = rows
        .iter()
        .flat_map(|r| r.fps)
        .max()
        .map_or(10.0, |m| (m as f64 * 1.05).max(10.0));
    let px = |v: f64| left + v / max * plot_w;
    let value_x = WIDTH - 8.0;

    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg id="ranking" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}"><text class="title" x="8" y="18">Steady / Mostly Steady / Typical FPS per run, best first</text>"#
    );
    // FPS ticks above and below the rows, so a long chart keeps its scale
    // in view; grid lines through all rows.
    for v in ticks(0.0, max, 8) {
        let x = px(v);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{bottom}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{t}</text><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{t}</text>"#,
            TOP - 6.0,
            bottom + 14.0,
            t = fmt_tick(v)
        );
    }
    let _ = write!(
        s,
        r#"<text class="mono" xml:space="preserve" x="8" y="{y:.1}">{:>4} run</text><text class="mono" xml:space="preserve" x="{value_x}" y="{y:.1}" text-anchor="end">steady mostly typical</text>"#,
        "#",
        y = TOP - 6.0,
    );
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let roles = r.roles.join(" ");
        if !r.roles.is_empty() {
            let _ = write!(
                s,
                r#"<rect class="row {roles}" x="0" y="{y:.1}" width="{WIDTH}" height="{ROW}"/>"#
            );
        }
        // Draw the longest bar first so the shorter ones stay on top.
        let mut order = [0usize, 1, 2];
        order.sort_by_key(|&k| std::cmp::Reverse(r.fps[k]));
        for k in order {
            let _ = write!(
                s,
                r#"<rect class="bar" x="{left:.1}" y="{:.1}" width="{:.1}" height="{BAR}" fill="{}"/>"#,
                y + (ROW - BAR) / 2.0,
                px(r.fps[k] as f64) - left,
                COLOURS[k]
            );
        }
        let shown = if roles.is_empty() {
            truncate_middle(r.name, NAME_COLS)
        } else {
            let prefix = format!("[{roles}] ");
            let name_cols = NAME_COLS.saturating_sub(prefix.len());
            format!("{prefix}{}", truncate_middle(r.name, name_cols))
        };
        let baseline = y + ROW - 4.0;
        let _ = write!(
            s,
            r#"<text class="mono" xml:space="preserve" x="8" y="{baseline:.1}"><title>{}</title>{:>4} {}</text><text class="mono" xml:space="preserve" x="{value_x}" y="{baseline:.1}" text-anchor="end">{:>6} {:>6} {:>7}</text>"#,
            escape(r.name),
            r.rank,
            escape(&shown),
            r.fps[0],
            r.fps[1],
            r.fps[2],
        );
    }
    let _ = write!(
        s,
        r#"<rect class="frame" x="{left:.1}" y="{TOP}" width="{plot_w:.1}" height="{:.1}"/></svg>"#,
        bottom - TOP
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_their_order_and_long_names_are_cut_to_their_columns() {
        let long = "x".repeat(200);
        let rows = [
            BarRow {
                rank: 1,
                name: "fast.csv",
                fps: [120, 130, 144],
                roles: vec!["best"],
            },
            BarRow {
                rank: 2,
                name: &long,
                fps: [30, 55, 60],
                roles: vec![],
            },
        ];
        let svg = ranked_bars(&rows);
        assert!(svg.find("[best] fast.csv").unwrap() < svg.find('…').unwrap());
        let cut = svg.split('>').find(|t| t.contains('…')).unwrap();
        let label = &cut[..cut.find('<').unwrap()];
        assert_eq!(label.chars().count(), RANK_COLS + 1 + NAME_COLS, "{label}");
        // Three bars per row, the widest (Typical) drawn first.
        assert_eq!(svg.matches("class=\"bar\"").count(), 6);
        let first_bar = svg.find(COLOURS[2]).unwrap();
        assert!(first_bar < svg.find(COLOURS[0]).unwrap());
    }
}
