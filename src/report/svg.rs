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
    body: String,
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
            body: String::new(),
        }
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
        self.top + h - (y - self.y.0) / (self.y.1 - self.y.0) * h
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
        for v in ticks(self.y.0, self.y.1, 6) {
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

    /// A dashed vertical rule at data x with a label at its top.
    pub fn vrule(&mut self, x: f64, colour: &str, label: &str, row: usize) {
        let px = self.px(x);
        let (t, b) = (self.top, self.height - self.bottom);
        let ly = t + 12.0 + 12.0 * row as f64;
        let _ = write!(
            self.body,
            r#"<line class="rule" x1="{px:.1}" y1="{t}" x2="{px:.1}" y2="{b}" stroke="{colour}" stroke-dasharray="4 3"/><text class="rule-label" x="{:.1}" y="{ly:.1}" fill="{colour}">{}</text>"#,
            px + 3.0,
            escape(label)
        );
    }

    /// The finished `<svg>` element.
    pub fn finish(self, id: &str) -> String {
        format!(
            r#"<svg id="{id}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">{}</svg>"#,
            self.body,
            w = self.width,
            h = self.height
        )
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

fn fmt_tick(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
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

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            ticks(0.0, 100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        let t = ticks(3.3, 17.9, 6);
        assert!(t.first().unwrap() >= &3.3 && t.last().unwrap() <= &17.9);
        assert!(t.windows(2).all(|w| w[1] > w[0]));
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
