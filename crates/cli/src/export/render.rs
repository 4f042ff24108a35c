//! The Prometheus text format (version 0.0.4, which OpenMetrics scrapers
//! and node_exporter's textfile collector read) of the games read, one
//! series per game window labelled `exe`, `pid`, `window`. Counters and
//! the histogram never go down over the export's lifetime: each series
//! keeps the largest value it showed (a game restarted is a new pid, new
//! series; a game that ended is left out).

use super::families::{self as f, Family};
use super::gather::Game;
use std::collections::HashMap;
use std::fmt::Write;
use steadyhud_control::replies::{WindowDisplay, WindowHistogram};
use steadyhud_metrics::histogram::SCHEME;

/// Per series (game window): the largest values shown so far.
#[derive(Default)]
pub struct Monotonic {
    seen: HashMap<(u32, u64), Shown>,
}

/// What one window's series showed last.
#[derive(Clone, Default)]
struct Shown {
    frames: u64,
    time_ns: u64,
    stutters: u64,
    stutter_ns: u64,
    overflows: u64,
    /// Cumulative ns at each `le` bound, and the `_sum` (µs · s).
    buckets: Vec<u64>,
    sum: f64,
}

/// `s` as a label value: backslash, double quote and line feed escaped.
fn label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn head(out: &mut String, fam: &Family) {
    let _ = writeln!(out, "# HELP {} {}", fam.name, fam.help);
    let _ = writeln!(out, "# TYPE {} {}", fam.name, fam.kind.name());
}

/// Seconds from ns, as the text format writes a float.
fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Whole microseconds from ns: the histogram's observations (whole
/// numbers, which node_exporter's textfile collector keeps exactly).
fn micros(ns: u64) -> u64 {
    ns / 1000
}

/// One series (game window) of this scrape: its labels, its game, its
/// place in the game's windows, and what it shows.
type Row<'g> = (String, &'g Game, usize, Shown);

impl Shown {
    /// What window `h` reads now, its histogram cumulative at each of
    /// `bounds` (buckets ascending).
    fn of(h: &WindowHistogram, bounds: &[(u32, u64)]) -> Shown {
        let mut cur = Shown {
            frames: h.frames,
            time_ns: h.time_ns,
            stutters: h.stutters,
            stutter_ns: h.stutter_ns,
            overflows: h.ring_overflows,
            buckets: vec![0; bounds.len()],
            sum: 0.0,
        };
        // Cumulative time up to each bound (buckets ascending).
        let mut acc = 0u64;
        let mut k = 0;
        for &[bucket, frames, ns] in &h.buckets {
            while k < bounds.len() && u64::from(bounds[k].0) < bucket {
                cur.buckets[k] = acc;
                k += 1;
            }
            acc = acc.saturating_add(ns);
            // Each microsecond's frame time: the bucket's time in
            // µs times its mean frame in s (within its 1 %).
            cur.sum += micros(ns) as f64 * secs(ns / frames.max(1));
        }
        while k < bounds.len() {
            cur.buckets[k] = acc;
            k += 1;
        }
        cur
    }

    /// Each value raised to `cur`'s where that is larger.
    fn grow(&mut self, cur: &Shown, buckets: usize) {
        let grow = |a: &mut u64, b: u64| *a = (*a).max(b);
        grow(&mut self.frames, cur.frames);
        grow(&mut self.time_ns, cur.time_ns);
        grow(&mut self.stutters, cur.stutters);
        grow(&mut self.stutter_ns, cur.stutter_ns);
        grow(&mut self.overflows, cur.overflows);
        self.buckets.resize(buckets, 0);
        for (p, c) in self.buckets.iter_mut().zip(&cur.buckets) {
            grow(p, *c);
        }
        self.sum = self.sum.max(cur.sum);
    }
}

impl Monotonic {
    /// The text for `games`; `errors`: games not read since the start;
    /// `accept_errors`: connections the endpoint could not accept.
    pub fn render(&mut self, games: &[Game], errors: u64, accept_errors: u64) -> String {
        let bounds = f::le_bounds();
        let rows = self.rows(games, bounds);
        let mut out = String::with_capacity(4096 + rows.len() * 24 * 1024);
        export_families(&mut out, games, errors, accept_errors);
        counters(&mut out, &rows);
        histogram(&mut out, &rows, bounds);
        window_gauges(&mut out, &rows);
        display(&mut out, &rows);
        latency(&mut out, &rows);
        readings(&mut out, &rows);
        out
    }

    /// This scrape's series, each value at least the last one shown; the
    /// series of windows gone are forgotten.
    fn rows<'g>(&mut self, games: &'g [Game], bounds: &[(u32, u64)]) -> Vec<Row<'g>> {
        let mut rows = Vec::new();
        let mut live = Vec::new();
        for g in games {
            for (i, (_, h)) in g.windows.iter().enumerate() {
                if h.scheme != SCHEME {
                    continue;
                }
                let key = (g.pid, h.stream);
                live.push(key);
                let cur = Shown::of(h, bounds);
                let prev = self.seen.entry(key).or_default();
                prev.grow(&cur, bounds.len());
                let labels = format!(
                    "exe=\"{}\",pid=\"{}\",window=\"{}\"",
                    label(&g.exe),
                    g.pid,
                    h.stream
                );
                rows.push((labels, g, i, prev.clone()));
            }
        }
        self.seen.retain(|k, _| live.contains(k));
        rows
    }
}

/// The export's own families: build info, errors, and which games are up.
fn export_families(out: &mut String, games: &[Game], errors: u64, accept_errors: u64) {
    head(out, &f::BUILD_INFO);
    let _ = writeln!(
        out,
        "{}{{version=\"{}\"}} 1",
        f::BUILD_INFO.name,
        env!("CARGO_PKG_VERSION")
    );
    head(out, &f::EXPORT_ERRORS);
    let _ = writeln!(out, "{} {errors}", f::EXPORT_ERRORS.name);
    head(out, &f::ACCEPT_ERRORS);
    let _ = writeln!(out, "{} {accept_errors}", f::ACCEPT_ERRORS.name);
    head(out, &f::UP);
    for g in games {
        let _ = writeln!(
            out,
            "{}{{exe=\"{}\",pid=\"{}\"}} 1",
            f::UP.name,
            label(&g.exe),
            g.pid
        );
    }
}

/// The counters of each series.
fn counters(out: &mut String, rows: &[Row<'_>]) {
    type Pick = fn(&Shown) -> f64;
    let counters: [(&Family, Pick); 5] = [
        (&f::FRAMES, |s| s.frames as f64),
        (&f::PLAY_SECONDS, |s| secs(s.time_ns)),
        (&f::STUTTERS, |s| s.stutters as f64),
        (&f::STUTTER_SECONDS, |s| secs(s.stutter_ns)),
        (&f::RING_OVERFLOWS, |s| s.overflows as f64),
    ];
    for (fam, pick) in counters {
        head(out, fam);
        for (labels, _, _, s) in rows {
            let _ = writeln!(out, "{}{{{labels}}} {}", fam.name, pick(s));
        }
    }
}

/// The frame-time histogram of each series, at `bounds`.
fn histogram(out: &mut String, rows: &[Row<'_>], bounds: &[(u32, u64)]) {
    head(out, &f::FRAME_TIME);
    let name = f::FRAME_TIME.name;
    for (labels, _, _, s) in rows {
        for (&(_, ns), &cum) in bounds.iter().zip(&s.buckets) {
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels},le=\"{}\"}} {}",
                secs(ns),
                micros(cum)
            );
        }
        let total = micros(s.time_ns.max(s.buckets.last().copied().unwrap_or(0)));
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {total}");
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", s.sum);
        let _ = writeln!(out, "{name}_count{{{labels}}} {total}");
    }
}

/// The rolling window's metrics (one gauge per catalog metric), the
/// GPU-bound share and the frame cap.
fn window_gauges(out: &mut String, rows: &[Row<'_>]) {
    for gauge in f::metric_gauges() {
        head(out, &gauge.family);
        for (labels, g, i, _) in rows {
            let metrics = g.windows[*i].0.metrics.as_ref();
            let Some(v) = metrics.and_then(|m| m.number(gauge.metric.key)) else {
                continue;
            };
            let v = v * gauge.factor;
            if v.is_finite() {
                let _ = writeln!(out, "{}{{{labels}}} {v}", gauge.family.name);
            }
        }
    }
    type Gauge = fn(&Game, usize) -> Option<f64>;
    let gauges: [(&Family, Gauge); 2] = [
        (&f::GPU_BOUND, |g, i| {
            g.windows[i].0.gpu_bound_pct.map(|p| f64::from(p) / 100.0)
        }),
        (&f::FRAME_CAP, |g, _| Some(f64::from(g.fps_limit))),
    ];
    for (fam, pick) in gauges {
        head(out, fam);
        for (labels, g, i, _) in rows {
            if let Some(v) = pick(g, *i).filter(|v| v.is_finite()) {
                let _ = writeln!(out, "{}{{{labels}}} {v}", fam.name);
            }
        }
    }
}

/// Displayed-frame timing over the rolling window, labelled with who
/// answered; none for a window without a source.
fn display(out: &mut String, rows: &[Row<'_>]) {
    type DisplayPick = fn(&WindowDisplay) -> Option<f64>;
    let display: [(&Family, DisplayPick); 5] = [
        (&f::DISPLAYED_FPS, |d| d.displayed_fps.map(f64::from)),
        (&f::WINDOW_DROPPED, |d| Some(f64::from(d.dropped))),
        (&f::WINDOW_UNKNOWN, |d| Some(f64::from(d.unknown))),
        (&f::DISPLAY_LATENCY, |d| {
            d.latency_ms.map(|v| f64::from(v) / 1e3)
        }),
        (&f::DISPLAY_REFRESH, |d| {
            d.refresh_ms.map(|v| f64::from(v) / 1e3)
        }),
    ];
    for (fam, pick) in display {
        head(out, fam);
        for (labels, g, i, _) in rows {
            let Some(d) = &g.windows[*i].0.display else {
                continue;
            };
            if let Some(v) = pick(d).filter(|v| v.is_finite()) {
                let _ = writeln!(
                    out,
                    "{}{{{labels},source=\"{}\"}} {v}",
                    fam.name,
                    label(&d.source)
                );
            }
        }
    }
}

/// PC latency's terms over the rolling window, in seconds; a term
/// unknown has no sample, a window without a reader of input times none.
fn latency(out: &mut String, rows: &[Row<'_>]) {
    for gauge in f::latency_gauges() {
        head(out, &gauge.family);
        for (labels, g, i, _) in rows {
            let latency = g.windows[*i].0.latency.as_ref();
            let Some(ms) = latency.and_then(|l| l.get(gauge.key)) else {
                continue;
            };
            let v = ms / 1e3;
            if v.is_finite() {
                let _ = writeln!(out, "{}{{{labels}}} {v}", gauge.family.name);
            }
        }
    }
}

/// Readings in base units, one family per unit.
fn readings(out: &mut String, rows: &[Row<'_>]) {
    for fam in &f::READINGS {
        head(out, fam);
        for (labels, g, i, _) in rows {
            for (column, v) in &g.windows[*i].0.readings {
                let Some((_, sensor, factor)) = f::reading(column).filter(|r| r.0.name == fam.name)
                else {
                    continue;
                };
                let v = v * factor;
                if v.is_finite() {
                    let _ = writeln!(out, "{}{{{labels},sensor=\"{sensor}\"}} {v}", fam.name);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use steadyhud_control::replies::{WindowHistogram, WindowMetrics, WindowStatus};

    fn game(pid: u32, durations: &[u64], stutters: u64) -> Game {
        let h = steadyhud_metrics::TimeHistogram::from_durations(durations);
        Game {
            pid,
            exe: "a \"quoted\" game".into(),
            fps_limit: 60,
            windows: vec![(
                WindowStatus {
                    stream: 1,
                    ..WindowStatus::default()
                },
                WindowHistogram {
                    stream: 1,
                    frames: durations.len() as u64,
                    time_ns: durations.iter().sum(),
                    stutters,
                    stutter_ns: 0,
                    ring_overflows: 0,
                    scheme: SCHEME.into(),
                    buckets: h
                        .bins()
                        .iter()
                        .map(|(b, bin)| [u64::from(*b), bin.frames, bin.time_ns as u64])
                        .collect(),
                },
            )],
        }
    }

    fn value(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
    }

    /// The series one game launch (one window) adds, as docs/fleet.md
    /// states them: `up`, 5 counters, the histogram's 195 bounds, `+Inf`,
    /// `_sum` and `_count`, the frame cap (the rolling gauges come with
    /// live metrics: one per catalog metric, 17, and the GPU-bound ratio
    /// with GPU timing; displayed-frame timing's 5 with a source of display
    /// times) and a reading per sensor.
    #[test]
    fn a_game_launch_is_245_series_at_most() {
        let mut g = game(7, &[10_000_000; 30], 0);
        for s in steadyhud_metrics::sensors::Sensor::ALL {
            g.windows[0].0.readings.insert(s.column().into(), 1.0);
        }
        let count = |text: &str| {
            text.lines()
                .filter(|l| !l.starts_with('#') && l.contains("pid=\"7\""))
                .count()
        };
        let text = Monotonic::default().render(std::slice::from_ref(&g), 0, 0);
        let series = count(&text);
        assert_eq!(f::le_bounds().len(), 195);
        // Without the rolling gauges, the GPU-bound ratio (no live
        // metrics, no GPU timing here) and displayed-frame timing.
        assert_eq!(series, 1 + 5 + 195 + 3 + 1 + 17);
        assert_eq!(steadyhud_metrics::catalog::METRICS.len(), 17);
        // With a source of display times that gave every number.
        g.windows[0].0.display = Some(wayland());
        let with_display = count(&Monotonic::default().render(&[g], 0, 0));
        assert_eq!(with_display, series + f::DISPLAY.len());
        assert_eq!(with_display + 17 + 1, 245);
        // Exporter-wide: the build, the two error counters.
        let global = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.contains("pid="))
            .count();
        assert_eq!(global, 3, "{text}");
    }

    /// With PC latency's five gauges (a reader of input times, every term
    /// known), one launch is 250 series at most, as docs/fleet.md says;
    /// a further window adds 249.
    #[test]
    fn a_game_launch_with_latency_is_250_series_at_most() {
        use steadyhud_control::replies::WindowLatency;
        let d = [10_000_000u64; 30];
        let mut g = game(7, &d, 0);
        for s in steadyhud_metrics::sensors::Sensor::ALL {
            g.windows[0].0.readings.insert(s.column().into(), 1.0);
        }
        let summary = steadyhud_metrics::summarize(&d, &Default::default()).unwrap();
        g.windows[0].0.metrics = Some(WindowMetrics::from(&summary));
        g.windows[0].0.gpu_bound_pct = Some(10.0);
        g.windows[0].0.display = Some(wayland());
        g.windows[0].0.latency = Some(WindowLatency::new([Some(20.0); 5]));
        let count = |text: &str| {
            text.lines()
                .filter(|l| !l.starts_with('#') && l.contains("pid=\"7\""))
                .count()
        };
        let text = Monotonic::default().render(std::slice::from_ref(&g), 0, 0);
        assert_eq!(count(&text), 250, "{text}");
        let mut second = g.windows[0].clone();
        second.0.stream = 2;
        second.1.stream = 2;
        g.windows.push(second);
        let text = Monotonic::default().render(&[g], 0, 0);
        assert_eq!(count(&text), 250 + 249, "{text}");
    }

    fn wayland() -> steadyhud_control::replies::WindowDisplay {
        steadyhud_control::replies::WindowDisplay {
            source: "wayland".into(),
            displayed_fps: Some(50.0),
            dropped: 3,
            unknown: 1,
            latency_ms: Some(24.5),
            refresh_ms: Some(16.0),
        }
    }

    /// A window's display numbers are gauges in base units labelled with
    /// their source; a number the source did not give has no sample, and
    /// a window without a source has none of them.
    #[test]
    fn display_numbers_are_gauges_by_source() {
        let mut g = game(7, &[10_000_000; 30], 0);
        g.windows[0].0.display = Some(wayland());
        let text = Monotonic::default().render(std::slice::from_ref(&g), 0, 0);
        let l = "exe=\"a \\\"quoted\\\" game\",pid=\"7\",window=\"1\",source=\"wayland\"";
        for (name, want) in [
            ("steadyhud_displayed_fps", 50.0),
            ("steadyhud_window_dropped_frames", 3.0),
            ("steadyhud_window_unknown_frames", 1.0),
            ("steadyhud_display_latency_seconds", 0.0245),
            ("steadyhud_display_refresh_seconds", 0.016),
        ] {
            assert!(text.contains(&format!("# TYPE {name} gauge\n")), "{name}");
            let got = value(&text, &format!("{name}{{{l}}}"));
            assert!((got - want).abs() < 1e-6, "{name}: {got} vs {want}");
        }
        g.windows[0].0.display.as_mut().unwrap().latency_ms = None;
        let text = Monotonic::default().render(std::slice::from_ref(&g), 0, 0);
        assert!(
            !text.contains("steadyhud_display_latency_seconds{"),
            "{text}"
        );
        assert!(text.contains("steadyhud_displayed_fps{"));
        g.windows[0].0.display = None;
        let text = Monotonic::default().render(&[g], 0, 0);
        assert!(!text.contains("source=\""), "{text}");
    }

    /// PC latency's terms are gauges in seconds; an unknown term has no
    /// sample (as a display number the source did not give), and a window
    /// without a reader of input times has none.
    #[test]
    fn latency_terms_are_gauges_unknown_ones_absent() {
        use steadyhud_control::replies::WindowLatency;
        let mut g = game(7, &[10_000_000; 30], 0);
        g.windows[0].0.latency = Some(WindowLatency::new([
            None,
            None,
            Some(3.25),
            Some(1.5),
            Some(f64::NAN),
        ]));
        let text = Monotonic::default().render(std::slice::from_ref(&g), 0, 0);
        let l = "exe=\"a \\\"quoted\\\" game\",pid=\"7\",window=\"1\"";
        for g in f::latency_gauges() {
            let name = g.family.name;
            assert!(text.contains(&format!("# TYPE {name} gauge\n")), "{name}");
        }
        let got = value(
            &text,
            &format!("steadyhud_input_to_frame_start_seconds{{{l}}}"),
        );
        assert!((got - 0.00325).abs() < 1e-12, "{got}");
        let got = value(
            &text,
            &format!("steadyhud_frame_start_to_present_seconds{{{l}}}"),
        );
        assert!((got - 0.0015).abs() < 1e-12, "{got}");
        for unknown in [
            "steadyhud_pc_latency_seconds{",
            "steadyhud_click_to_photon_seconds{",
            "steadyhud_present_to_display_seconds{",
        ] {
            assert!(!text.contains(unknown), "{unknown}: {text}");
        }
        g.windows[0].0.latency = None;
        let text = Monotonic::default().render(&[g], 0, 0);
        assert!(!text.contains("_to_frame_start_seconds{"), "{text}");
    }

    /// Every metric of the catalog is exported: a game window with live
    /// metrics has one sample of each one's gauge, in base units.
    #[test]
    fn every_catalog_metric_is_a_gauge() {
        let d = [16_666_667u64, 16_666_667, 40_000_000, 16_666_667];
        let summary = steadyhud_metrics::summarize(&d, &Default::default()).unwrap();
        let mut g = game(7, &d, 0);
        g.windows[0].0.metrics = Some(WindowMetrics::from(&summary));
        let text = Monotonic::default().render(&[g], 0, 0);
        let l = "exe=\"a \\\"quoted\\\" game\",pid=\"7\",window=\"1\"";
        for m in steadyhud_metrics::catalog::METRICS {
            let gauge = f::metric_gauges()
                .iter()
                .find(|g| g.metric.key == m.key)
                .unwrap_or_else(|| panic!("no gauge for {}", m.key));
            let name = gauge.family.name;
            assert!(
                text.contains(&format!("# TYPE {name} gauge\n")),
                "{}: no {name} family",
                m.key
            );
            let got = value(&text, &format!("{name}{{{l}}}"));
            let want = m.of(&summary).number() * gauge.factor;
            assert!(
                (got - want).abs() <= 1e-12 * want.abs(),
                "{name}: {got} vs {want}"
            );
        }
        assert_eq!(
            value(&text, &format!("steadyhud_time_over_budget_ratio{{{l}}}")),
            summary.time_over_budget_pct / 100.0
        );
    }

    #[test]
    fn buckets_are_cumulative_time_and_counters_never_go_down() {
        let mut m = Monotonic::default();
        let d = [10_000_000u64, 10_000_000, 50_000_000];
        let text = m.render(&[game(7, &d, 2)], 0, 0);
        let l = "exe=\"a \\\"quoted\\\" game\",pid=\"7\",window=\"1\"";
        assert_eq!(value(&text, &format!("steadyhud_frames_total{{{l}}}")), 3.0);
        let count = value(&text, &format!("steadyhud_frame_time_seconds_count{{{l}}}"));
        assert_eq!(count, 70_000.0, "microseconds of play");
        let inf = value(
            &text,
            &format!("steadyhud_frame_time_seconds_bucket{{{l},le=\"+Inf\"}}"),
        );
        assert_eq!(inf, count);
        // Below 10 ms nothing; from just past 50 ms, all 70 ms.
        let at = |le: f64| {
            let (_, ns) = f::le_bounds()
                .iter()
                .copied()
                .find(|&(_, ns)| ns as f64 / 1e9 >= le)
                .unwrap();
            value(
                &text,
                &format!(
                    "steadyhud_frame_time_seconds_bucket{{{l},le=\"{}\"}}",
                    secs(ns)
                ),
            )
        };
        assert_eq!(at(0.009), 0.0);
        assert_eq!(at(0.0106), 20_000.0);
        assert_eq!(at(0.053), 70_000.0);
        let sum = value(&text, &format!("steadyhud_frame_time_seconds_sum{{{l}}}"));
        let mean = sum / count; // time-weighted: (2·10·10 + 50·50) / 70 ms
        assert!((mean - 0.0385714).abs() < 1e-6, "{mean}");
        // A smaller number next time (a re-judged stutter) shows the old one.
        let text = m.render(&[game(7, &d, 1)], 0, 0);
        assert_eq!(
            value(&text, &format!("steadyhud_stutters_total{{{l}}}")),
            2.0
        );
        // A game that ended is gone; back with the same pid, it starts anew.
        let text = m.render(&[], 1, 0);
        assert!(!text.contains("pid=\"7\""));
        assert_eq!(value(&text, "steadyhud_export_errors_total"), 1.0);
        let text = m.render(&[game(7, &d[..1], 0)], 1, 0);
        assert_eq!(value(&text, &format!("steadyhud_frames_total{{{l}}}")), 1.0);
    }
}
