//! A minimal SVG line-chart writer: axes with "nice" ticks, polylines,
//! markers and labelled vertical rules. Just enough for the report's charts,
//! with no dependency and no script.

use std::fmt::Write;

/// Colours of the overlaid series, in log order (colour-blind-friendly set).
pub const PALETTE: [&str; 6] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
];

/// Colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// One chart: data coordinates mapped into a fixed pixel box.
pub struct Chart {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
    /// y on a log scale (frame times spanning orders of magnitude).
    log_y: bool,
    body: String,
    /// Labels of the vertical rules, placed when the chart is finished
    /// (they need to see each other to stay apart).
    rule_labels: Vec<RuleLabel>,
}

/// A vertical rule's label: its rule's pixel x, colour and text.
struct RuleLabel {
    x: f64,
    colour: String,
    text: String,
}

/// Font size of the rule labels (`.rule-label` in the report's style).
const RULE_FONT_PX: f64 = 11.0;

/// Width `text` may take at `font_px`, whatever font the browser picks:
/// 0.72 em for an ASCII character (DejaVu Sans, the widest common sans,
/// has digits of 0.64 em and capitals up to 0.86 em; Noto and Liberation
/// are narrower) and 1.1 em for anything else (CJK, emoji from a fallback
/// font), plus a pixel of anti-aliasing each side.
pub fn text_width_bound(text: &str, font_px: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| if c.is_ascii() { 0.72 } else { 1.1 })
        .sum();
    em * font_px + 2.0
}

/// Height of one line of text at `font_px` in any common font: Noto Sans'
/// box (ascent to descent) is 1.36 em, DejaVu's 1.16 em; 1.5 em leaves a
/// gap between stacked lines.
pub fn line_height_bound(font_px: f64) -> f64 {
    (font_px * 1.5).ceil()
}

impl Chart {
    /// A chart of `width`×`height` pixels showing `x` and `y` data ranges.
    pub fn new(width: f64, height: f64, x: (f64, f64), y: (f64, f64)) -> Chart {
        let widen = |(lo, hi): (f64, f64)| if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
        Chart {
            width,
            height,
            left: 64.0,
            right: 16.0,
            top: 28.0,
            bottom: 48.0,
            x: widen(x),
            y: widen(y),
            log_y: false,
            body: String::new(),
            rule_labels: Vec::new(),
        }
    }

    /// The same chart with y on a log scale; `y` must be positive (a
    /// non-positive bound is raised to a thousandth of the upper one).
    pub fn log_y(mut self) -> Chart {
        let usable = |v: f64| v > 0.0 && v.is_finite();
        let hi = if usable(self.y.1) { self.y.1 } else { 1.0 };
        let lo = if usable(self.y.0) && self.y.0 < hi {
            self.y.0
        } else {
            hi / 1000.0
        };
        self.y = (lo, hi);
        self.log_y = true;
        self
    }

    /// Pixel x of data x.
    pub fn px(&self, x: f64) -> f64 {
        let w = self.width - self.left - self.right;
        self.left + (x - self.x.0) / (self.x.1 - self.x.0) * w
    }

    /// Pixel y of data y (clamped into the plot box).
    pub fn py(&self, y: f64) -> f64 {
        let h = self.height - self.top - self.bottom;
        let y = y.clamp(self.y.0, self.y.1);
        let share = if self.log_y {
            (y / self.y.0).ln() / (self.y.1 / self.y.0).ln()
        } else {
            (y - self.y.0) / (self.y.1 - self.y.0)
        };
        self.top + h - share * h
    }

    /// Title, axes, grid lines and tick labels.
    pub fn axes(&mut self, title: &str, x_label: &str, y_label: &str) {
        let (l, t) = (self.left, self.top);
        let (r, b) = (self.width - self.right, self.height - self.bottom);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<text class="title" x="{l}" y="18">{}</text>"#,
            escape(title)
        );
        let y_ticks = if self.log_y {
            log_ticks(self.y.0, self.y.1)
        } else {
            ticks(self.y.0, self.y.1, 6)
        };
        for v in y_ticks {
            let y = self.py(v);
            let _ = write!(
                s,
                r##"<line class="grid" x1="{l}" y1="{y:.1}" x2="{r}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                l - 6.0,
                y + 4.0,
                fmt_tick(v)
            );
        }
        for v in ticks(self.x.0, self.x.1, 8) {
            let x = self.px(v);
            let _ = write!(
                s,
                r##"<line class="grid" x1="{x:.1}" y1="{t}" x2="{x:.1}" y2="{b}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                b + 16.0,
                fmt_tick(v)
            );
        }
        let _ = write!(
            s,
            r#"<rect class="frame" x="{l}" y="{t}" width="{:.1}" height="{:.1}"/><text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="label" transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            r - l,
            b - t,
            (l + r) / 2.0,
            self.height - 8.0,
            escape(x_label),
            (t + b) / 2.0,
            escape(y_label)
        );
        self.body.push_str(&s);
    }

    /// A polyline through `points` (data coordinates).
    pub fn line(&mut self, points: &[(f64, f64)], colour: &str, class: &str) {
        if points.is_empty() {
            return;
        }
        let mut d = String::with_capacity(points.len() * 14);
        for (i, &(x, y)) in points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { "L" },
                self.px(x),
                self.py(y)
            );
        }
        let _ = write!(
            self.body,
            r#"<path class="{class}" d="{d}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#
        );
    }

    /// Small triangles pointing down at `points`, with a tooltip each.
    pub fn markers(&mut self, points: &[(f64, f64, String)], colour: &str) {
        for (x, y, tip) in points {
            let (x, y) = (self.px(*x), self.py(*y) - 3.0);
            let _ = write!(
                self.body,
                r#"<path class="stutter" d="M{:.1},{:.1}L{:.1},{:.1}L{x:.1},{y:.1}Z" fill="{colour}" stroke="black" stroke-width="0.5"><title>{}</title></path>"#,
                x - 4.0,
                y - 7.0,
                x + 4.0,
                y - 7.0,
                escape(tip)
            );
        }
    }

    /// A dashed vertical rule at data x, labelled near the top of the plot
    /// (the labels are placed by [`Chart::finish`], apart from each other).
    pub fn vrule(&mut self, x: f64, colour: &str, label: &str) {
        let px = self.px(x);
        let (t, b) = (self.top, self.height - self.bottom);
        let _ = write!(
            self.body,
            r#"<line class="rule" x1="{px:.1}" y1="{t}" x2="{px:.1}" y2="{b}" stroke="{colour}" stroke-dasharray="4 3"/>"#
        );
        self.rule_labels.push(RuleLabel {
            x: px,
            colour: colour.to_string(),
            text: label.to_string(),
        });
    }

    /// The finished `<svg>` element, then (only when some rule labels found
    /// no room in the plot) a line of text under it naming them.
    pub fn finish(mut self, id: &str) -> String {
        let left_over = self.place_rule_labels();
        let mut out = format!(
            r#"<svg id="{id}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">{}</svg>"#,
            self.body,
            w = self.width,
            h = self.height
        );
        if !left_over.is_empty() {
            out.push_str(r#"<p class="note rule-legend">Also marked: "#);
            for (k, l) in left_over.iter().enumerate() {
                let _ = write!(
                    out,
                    r#"{}<span style="color:{}">{}</span>"#,
                    if k == 0 { "" } else { " · " },
                    l.colour,
                    escape(&l.text)
                );
            }
            out.push_str("</p>");
        }
        out
    }

    /// Writes the rule labels into the plot without overlap, whatever the
    /// font: each label is a box as wide as [`text_width_bound`] and as
    /// tall as [`line_height_bound`]; left to right, each goes to the
    /// first row from the top where its box meets no other (right of its
    /// rule, or left of it where the right side would leave the plot).
    /// Returns the labels no row of the plot had room for.
    fn place_rule_labels(&mut self) -> Vec<RuleLabel> {
        let mut labels = std::mem::take(&mut self.rule_labels);
        labels.sort_by(|a, b| a.x.total_cmp(&b.x));
        let (l, r) = (self.left, self.width - self.right);
        let (t, b) = (self.top, self.height - self.bottom);
        let pitch = line_height_bound(RULE_FONT_PX);
        let rows = ((b - t - 4.0) / pitch).floor().max(0.0) as usize;
        // Boxes taken in each row: (x0, x1).
        let mut taken: Vec<Vec<(f64, f64)>> = vec![Vec::new(); rows];
        let mut left_over = Vec::new();
        for label in labels {
            let w = text_width_bound(&label.text, RULE_FONT_PX);
            let x0 = if label.x + 3.0 + w <= r {
                label.x + 3.0
            } else {
                (label.x - 3.0 - w).max(l + 1.0)
            };
            let x1 = x0 + w;
            let free = taken
                .iter()
                .position(|row| row.iter().all(|&(a, z)| x1 + 4.0 <= a || z + 4.0 <= x0));
            let Some(k) = free else {
                left_over.push(label);
                continue;
            };
            taken[k].push((x0, x1));
            // The baseline sits 0.8 of a row below the row's top, where any
            // common font's ascent ends.
            let y = t + 2.0 + pitch * (k as f64 + 0.8);
            let _ = write!(
                self.body,
                r#"<text class="rule-label" x="{x0:.1}" y="{y:.1}" fill="{}">{}</text>"#,
                label.colour,
                escape(&label.text)
            );
        }
        left_over
    }
}

/// About `n` round tick values covering [lo, hi].
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 && out.len() < 100 {
        out.push(v);
        v += step;
    }
    out
}

/// Ticks of a log axis over [lo, hi] (lo > 0): 1, 2 and 5 times the powers
/// of ten, thinned to 1 and 10 per decade when the range spans more than
/// four decades, so labels keep apart.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return vec![lo];
    }
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let steps: &[f64] = if last - first > 4 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut out = Vec::new();
    for e in first..=last {
        for m in steps {
            let v = m * 10f64.powi(e);
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                out.push(v);
            }
        }
    }
    out
}

/// A tick value with as many decimals as its size needs.
pub fn fmt_tick(v: f64) -> String {
    // "100k", not "100000": a log axis reaching a minute-long frame keeps
    // its labels clear of the axis title.
    if v.abs() >= 10_000.0 && (v / 1000.0).fract() == 0.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Columns `c` takes in a monospace font, counted conservatively: ASCII is
/// one column, anything else (accents, CJK, emoji from a fallback font) two.
fn columns(c: char) -> usize {
    if c.is_ascii() {
        1
    } else {
        2
    }
}

/// `s` cut to at most `max` columns (see [`columns`]) with `…` in the
/// middle: run names of a series usually differ at their end (`-run07`,
/// the extension), so the tail is kept as well as the head. SVG text does
/// not wrap, so labels are cut to the width their layout reserves.
pub fn truncate_middle(s: &str, max: usize) -> String {
    let width: usize = s.chars().map(columns).sum();
    if width <= max {
        return s.to_string();
    }
    let budget = max.saturating_sub(1);
    let head_budget = budget * 2 / 5;
    let mut head = String::new();
    let mut used = 0;
    for c in s.chars() {
        if used + columns(c) > head_budget {
            break;
        }
        used += columns(c);
        head.push(c);
    }
    let mut tail: Vec<char> = Vec::new();
    for c in s.chars().rev() {
        if used + columns(c) > budget {
            break;
        }
        used += columns(c);
        tail.push(c);
    }
    head.push('…');
    head.extend(tail.into_iter().rev());
    head
}

/// Escapes text for SVG/HTML content and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `<text class="rule-label">` boxes of a finished chart (by the
    /// bounds the placement uses) and the text after the `</svg>`.
    fn rule_boxes(html: &str) -> (Vec<(f64, f64, f64, f64)>, &str) {
        let pitch = line_height_bound(RULE_FONT_PX);
        let boxes = html
            .split(r#"<text class="rule-label" x=""#)
            .skip(1)
            .map(|t| {
                let x: f64 = t[..t.find('"').unwrap()].parse().unwrap();
                let y_at = t.find(r#"y=""#).unwrap() + 3;
                let y: f64 = t[y_at..y_at + t[y_at..].find('"').unwrap()]
                    .parse()
                    .unwrap();
                let text = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
                let w = text_width_bound(text, RULE_FONT_PX);
                (x, y - 0.8 * pitch, x + w, y + 0.2 * pitch)
            })
            .collect();
        (boxes, &html[html.find("</svg>").unwrap() + 6..])
    }

    /// Rules close together, and more labels than the plot has rows for:
    /// no two label boxes meet, every box stays inside the plot, and the
    /// labels left over are named under the chart, none lost.
    #[test]
    fn rule_labels_never_meet_and_none_is_lost() {
        // (rules, their spread in data units: 1 is 3 px)
        for (rules, spread) in [(6, 10.0), (18, 200.0), (60, 0.5)] {
            let mut c = Chart::new(960.0, 320.0, (1.0, 300.0), (0.0, 100.0));
            for k in 0..rules {
                let x = 290.0 - spread * k as f64 / rules as f64;
                c.vrule(x, colour(k), &format!("Typical {k:03}"));
            }
            let html = c.finish("t");
            let (boxes, after) = rule_boxes(&html);
            for (i, a) in boxes.iter().enumerate() {
                assert!(
                    a.0 >= 64.0 && a.2 <= 944.0 && a.1 >= 28.0 && a.3 <= 272.0,
                    "{a:?} leaves the plot"
                );
                for b in &boxes[i + 1..] {
                    // (Boxes of adjacent rows touch: 0.01 px for rounding.)
                    let e = 0.01;
                    let apart =
                        a.2 <= b.0 + e || b.2 <= a.0 + e || a.3 <= b.1 + e || b.3 <= a.1 + e;
                    assert!(apart, "{rules} rules: {a:?} meets {b:?}");
                }
            }
            let listed = after.matches("<span").count();
            assert_eq!(boxes.len() + listed, rules, "{rules} rules: {after}");
            assert_eq!(listed > 0, rules == 60, "{rules} rules: {after}");
        }
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            ticks(0.0, 100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        let t = ticks(3.3, 17.9, 6);
        assert!(t.first().unwrap() >= &3.3 && t.last().unwrap() <= &17.9);
        assert!(t.windows(2).all(|w| w[1] > w[0]));
        assert_eq!(
            [0.25, 2.5, 40.0, 1500.0, 100_000.0].map(fmt_tick),
            ["0.25", "2.5", "40", "1500", "100k"]
        );
    }

    #[test]
    fn truncate_middle_keeps_head_and_tail_within_the_width() {
        assert_eq!(truncate_middle("short.csv", 20), "short.csv");
        let t = truncate_middle("rtx4090-ultra-raytracing-on-dlss-quality-run-07.csv", 24);
        assert_eq!(t.chars().count(), 24);
        assert!(t.starts_with("rtx4090-") && t.ends_with("run-07.csv") && t.contains('…'));
        // Wide characters count double, so the cut text still fits.
        let w = truncate_middle(&"日本".repeat(20), 11);
        let wide = w.chars().filter(|&c| c != '…').count();
        assert_eq!(wide * 2 + 1, 11, "{w}");
    }

    #[test]
    fn log_axis_puts_decades_at_equal_steps() {
        assert_eq!(log_ticks(3.0, 60.0), vec![5.0, 10.0, 20.0, 50.0]);
        assert_eq!(log_ticks(0.5, 5000.0), vec![1.0, 10.0, 100.0, 1000.0]);
        let c = Chart::new(400.0, 200.0, (0.0, 1.0), (1.0, 100.0)).log_y();
        assert_eq!(c.py(1.0), 200.0 - 48.0);
        assert_eq!(c.py(100.0), 28.0);
        assert!((c.py(10.0) - (28.0 + 152.0) / 2.0).abs() < 1e-9);
    }

    #[test]
    fn escape_closes_markup() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    }

    #[test]
    fn mapping_puts_range_ends_on_the_plot_box() {
        let c = Chart::new(400.0, 200.0, (0.0, 10.0), (0.0, 1.0));
        assert_eq!(c.px(0.0), 64.0);
        assert_eq!(c.px(10.0), 400.0 - 16.0);
        assert_eq!(c.py(0.0), 200.0 - 48.0);
        assert_eq!(c.py(1.0), 28.0);
    }
}
