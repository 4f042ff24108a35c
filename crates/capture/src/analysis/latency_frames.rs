//! PC latency of one stream on the analysis thread ([`LatencyFrames`]):
//! each decided row's frame and display answer and the input times read on
//! our connections go to the pure [`LatencyTracker`]; rows wait here until
//! their latency is known, then get the log's latency cells, the summary's
//! terms ([`LatencySummary`]) and the HUD's window (docs/metrics.md, "PC
//! latency").
//!
//! A frame's start is the return of the previous present: row k's
//! `cpu_busy_ms` (the frame's time outside the present call and the
//! frame cap) before its present, so FS2P is `cpu_busy_ms`. Nothing here
//! runs on the present path.

use super::gpu_frames::Pending;
use crate::live::LiveLatency;
use std::collections::VecDeque;
use std::fmt::Write;
use steadyhud_log::display::Shown;
use steadyhud_metrics::display::{Seen, ValueKey};
use steadyhud_metrics::latency::{
    InputLimits, InputSource, LatencyRow, LatencySummary, LatencyTracker, Markers, Present,
    Rejection, StartSource, SUMMARY_KEYS, WINDOW_FRAMES,
};
use steadyhud_wayland::input_times::{InputKind, InputTime};

/// How long a row may wait for the inputs up to its start (CPU time after
/// its present, judged by the newest present): a reader that stopped
/// (its display no longer presented to) holds rows back no longer.
pub const LATE_NS: u64 = 1_000_000_000;

/// A decided row waiting for its latency.
struct Held {
    p: Pending,
    shown: Option<Shown>,
}

/// A shown row's PCL and its terms, ns.
struct Terms {
    call_ns: u64,
    pcl: i64,
    i2fs: u64,
    fs2p: u64,
    p2d: i64,
}

/// A row's terms each known or not, ns, for the live terms' window.
struct Known {
    call_ns: u64,
    fs2p: u64,
    p2d: Option<i64>,
    click_to_photon: Option<i64>,
}

/// PC latency of one stream.
pub struct LatencyFrames {
    tracker: LatencyTracker,
    summary: LatencySummary,
    held: VecDeque<Held>,
    /// The session's first present (the log's time origin).
    origin: u64,
    /// Reasons already said once.
    said: [bool; 5],
    /// Inputs the readers lost (their queue was full).
    pub lost: u64,
    /// Inputs whose time came in nanoseconds / milliseconds.
    exact: [u64; 2],
    /// The HUD's window: the shown rows that have a PCL.
    window: VecDeque<Terms>,
    window_ns: u64,
    /// Every row of the same window, for the terms known without a PCL.
    known: VecDeque<Known>,
    /// The I2FS window's mean at the newest row not dropped (`None`: no
    /// input in it).
    window_i2fs: Option<u64>,
}

impl LatencyFrames {
    /// PC latency of a stream whose first present is at `origin`, over an
    /// I2FS and HUD window of `window_ns`.
    pub fn new(origin: u64, window_ns: u64) -> LatencyFrames {
        let mut tracker = LatencyTracker::new(window_ns, InputLimits::default());
        tracker.present(Present {
            id: 0,
            call_ns: origin,
            return_ns: origin,
            markers: Markers::default(),
        });
        LatencyFrames {
            tracker,
            summary: LatencySummary::new(),
            held: VecDeque::new(),
            origin,
            said: [false; 5],
            lost: 0,
            exact: [0; 2],
            window: VecDeque::new(),
            window_ns,
            known: VecDeque::new(),
            window_i2fs: None,
        }
    }

    /// Input times read; `until`: every input up to then is read (`None`:
    /// no reader, nothing will come). `note` gets one line per reason the
    /// first time an input is refused for it (the log's, not the game's
    /// output: a compositor that stamps no real times refuses every key).
    pub fn inputs(&mut self, inputs: &[InputTime], until: Option<u64>, mut note: impl FnMut(&str)) {
        for i in inputs {
            let source = match i.kind {
                InputKind::Key => InputSource::Key,
                InputKind::Button => InputSource::Button,
            };
            self.exact[usize::from(i.exact)] += 1;
            if let Err(r) = self.tracker.input(i.t_ns, source, i.read_ns) {
                let k = Rejection::ALL.iter().position(|&x| x == r).unwrap_or(0);
                if !std::mem::replace(&mut self.said[k], true) {
                    note(&format!(
                        "{} ({}): not counted; more are counted in the summary",
                        r.reason(),
                        r.name()
                    ));
                }
            }
        }
        self.tracker.inputs_until(until.unwrap_or(u64::MAX));
    }

    /// A decided row (its display answer `shown`, `None` without a source
    /// of display times), whose frame's time outside the present call and
    /// the cap was `cpu_busy_ns` and whose game marked its own start at
    /// `markers` (if it did): held until its latency is known.
    pub fn push(&mut self, p: Pending, shown: Option<Shown>, cpu_busy_ns: u64, markers: Markers) {
        self.tracker
            .returned(p.to.saturating_sub(cpu_busy_ns).max(p.from));
        let id = p.index + 1;
        let forced = self.tracker.present(Present {
            id,
            call_ns: p.to,
            return_ns: p.to,
            markers,
        });
        let seen = match shown {
            Some(Shown::At { displayed_ns, .. }) => Seen::At {
                displayed_ns,
                latency_ns: 0,
            },
            Some(Shown::Dropped { .. }) => Seen::Dropped,
            Some(Shown::Unknown) | None => Seen::Unknown,
        };
        self.tracker.fate(id, seen);
        self.held.push_back(Held { p, shown });
        debug_assert!(forced.is_none(), "rows are written as they come");
    }

    /// Rows held.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Hands every row whose latency is known, in order, to `write` with
    /// its display answer, its latency cells and its terms for the
    /// summary's display block ([`steadyhud_log::display::TERMS`]). `newest`: the newest
    /// present (a row waits at most [`LATE_NS`]); `all`: every row (the
    /// stream ends).
    pub fn flush(
        &mut self,
        newest: u64,
        all: bool,
        cells: &mut String,
        mut write: impl FnMut(&Pending, Option<Shown>, &str, [i64; 3]),
    ) {
        while let Some(h) = self.held.front() {
            let late = all || newest.saturating_sub(h.p.to) > LATE_NS;
            let row = match self.tracker.next_row() {
                Some(r) => Some(r),
                None if late => self.tracker.finish(),
                None => break,
            };
            let Some(h) = self.held.pop_front() else {
                break;
            };
            cells.clear();
            let none = steadyhud_metrics::display::NO_VALUE;
            let terms = match row.filter(|r| r.id == h.p.index + 1) {
                Some(r) => {
                    self.summary.push(&r);
                    self.keep(&r);
                    write_cells(&r, self.origin, cells);
                    [
                        r.pcl_ns().unwrap_or(none),
                        r.click_to_photon_ns().unwrap_or(none),
                        i64::try_from(r.fs2p_ns()).unwrap_or(none),
                    ]
                }
                None => {
                    cells.push_str(",,,,,");
                    [none; 3]
                }
            };
            write(&h.p, h.shown, cells, terms);
        }
        if all {
            while self.tracker.finish().is_some() {}
        }
    }

    /// Keeps a row in the live windows: every row in the terms' window,
    /// a shown row with a PCL in the HUD's.
    fn keep(&mut self, r: &LatencyRow) {
        if r.fate != Seen::Dropped {
            self.window_i2fs = r.window_i2fs_ns;
        }
        self.known.push_back(Known {
            call_ns: r.call_ns,
            fs2p: r.fs2p_ns(),
            p2d: r.p2d_ns(),
            click_to_photon: r.click_to_photon_ns(),
        });
        let window_ns = self.window_ns;
        let old = |call_ns: u64| r.call_ns.saturating_sub(call_ns) > window_ns;
        while self.known.len() > WINDOW_FRAMES || self.known.front().is_some_and(|f| old(f.call_ns))
        {
            self.known.pop_front();
        }
        // The HUD's window too, on every row: PCL frames older than the
        // window leave it even when no new one comes (inputs stopped).
        while self.window.front().is_some_and(|f| old(f.call_ns)) {
            self.window.pop_front();
        }
        let (Some(pcl), Some(i2fs), Some(p2d)) = (r.pcl_ns(), r.window_i2fs_ns, r.p2d_ns()) else {
            return;
        };
        self.window.push_back(Terms {
            call_ns: r.call_ns,
            pcl,
            i2fs,
            fs2p: r.fs2p_ns(),
            p2d,
        });
    }

    /// The window's means for the HUD: PCL and its terms over the shown
    /// frames that have a PCL (`None` before one).
    pub fn live(&self) -> Option<LiveLatency> {
        if self.window.is_empty() {
            return None;
        }
        let n = self.window.len() as f64;
        let mean = |f: fn(&Terms) -> f64| (self.window.iter().map(f).sum::<f64>() / n / 1e6) as f32;
        Some(LiveLatency {
            pcl_ms: mean(|w| w.pcl as f64),
            i2fs_ms: mean(|w| w.i2fs as f64),
            fs2p_ms: mean(|w| w.fs2p as f64),
            p2d_ms: mean(|w| w.p2d as f64),
        })
    }

    /// The live terms for `ctl status` and the exporter, ms, in the order
    /// of [`SUMMARY_KEYS`], `None` where unknown (docs/metrics.md, "PC
    /// latency", live): where the window has shown frames with a PCL, PCL
    /// and its terms are the HUD's ([`LatencyFrames::live`]: they add up);
    /// else each term known on its own (I2FS the window's mean over its
    /// inputs, FS2P over its frames, P2D over its shown frames) and PCL
    /// unknown. Click to photon: the mean over the window's frames that
    /// have one.
    pub fn terms(&self) -> [Option<f64>; 5] {
        fn mean<I: Iterator<Item = f64>>(values: I) -> Option<f64> {
            let (n, sum) = values.fold((0u64, 0.0), |(n, s), v| (n + 1, s + v));
            (n > 0).then(|| sum / n as f64 / 1e6)
        }
        let live = self.live();
        let known = &self.known;
        SUMMARY_KEYS.map(|key| match (key, &live) {
            (ValueKey::PcLatency, l) => l.map(|l| f64::from(l.pcl_ms)),
            (ValueKey::InputToFrameStart, Some(l)) => Some(f64::from(l.i2fs_ms)),
            (ValueKey::FrameStartToPresent, Some(l)) => Some(f64::from(l.fs2p_ms)),
            (ValueKey::PresentToDisplay, Some(l)) => Some(f64::from(l.p2d_ms)),
            (ValueKey::InputToFrameStart, None) => self.window_i2fs.map(|ns| ns as f64 / 1e6),
            (ValueKey::FrameStartToPresent, None) => mean(known.iter().map(|k| k.fs2p as f64)),
            (ValueKey::PresentToDisplay, None) => {
                mean(known.iter().filter_map(|k| Some(k.p2d? as f64)))
            }
            (ValueKey::ClickToPhoton, _) => {
                mean(known.iter().filter_map(|k| Some(k.click_to_photon? as f64)))
            }
            _ => None,
        })
    }

    /// The summary's latency keys: each term's time-weighted statistics by
    /// its [`steadyhud_metrics::display::ValueKey`] name (`null` without a
    /// sample), and `inputs`: how the input times fared.
    pub fn summary_keys(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut map = serde_json::Map::new();
        let column = |k: steadyhud_metrics::display::ValueKey| {
            use steadyhud_metrics::display::ValueKey as K;
            let c = match k {
                K::PcLatency => "pc_latency_ms",
                K::ClickToPhoton => "click_to_photon_ms",
                K::FrameStartToPresent => "frame_start_to_present_ms",
                K::PresentToDisplay => "display_latency_ms",
                _ => "pc_latency_ms − frame_start_to_present_ms − display_latency_ms",
            };
            c.to_string()
        };
        for (key, stats) in self.summary.stats(column) {
            map.insert(
                key.name().into(),
                serde_json::to_value(stats).unwrap_or_default(),
            );
        }
        let s = self.tracker.stats();
        let rejected: serde_json::Map<String, serde_json::Value> = Rejection::ALL
            .iter()
            .map(|&r| (r.name().to_string(), s.rejected(r).into()))
            .collect();
        let starts: serde_json::Map<String, serde_json::Value> = StartSource::ALL
            .iter()
            .map(|&k| (k.name().to_string(), s.starts(k).into()))
            .collect();
        map.insert(
            "inputs".into(),
            serde_json::json!({
                "counted": s.inputs,
                "ns_times": self.exact[1],
                "ms_times": self.exact[0],
                "rejected": rejected,
                "lost": self.lost,
                "unshown": s.inputs_unshown,
            }),
        );
        map.insert("frame_starts".into(), starts.into());
        map
    }
}

/// A row's five latency cells (`,input_ns,i2fs,click_to_photon,fs2p,pcl`).
fn write_cells(r: &LatencyRow, origin: u64, out: &mut String) {
    let ms = |out: &mut String, v: Option<i128>| {
        out.push(',');
        if let Some(ns) = v {
            let sign = if ns < 0 { "-" } else { "" };
            let a = ns.unsigned_abs();
            let _ = write!(out, "{sign}{}.{:06}", a / 1_000_000, a % 1_000_000);
        }
    };
    out.push(',');
    if let Some(t) = r.taken {
        let _ = write!(out, "{}", i128::from(t.first_ns) - i128::from(origin));
    }
    ms(out, r.i2fs_ns().map(i128::from));
    ms(out, r.click_to_photon_ns().map(i128::from));
    ms(out, Some(i128::from(r.fs2p_ns())));
    ms(out, r.pcl_ns().map(i128::from));
}

#[cfg(test)]
mod tests {
    use super::*;
    use steadyhud_log::display::Source;

    const MS: u64 = 1_000_000;

    fn pending(index: u64, from: u64, to: u64) -> Pending {
        Pending {
            index,
            present_ns: to,
            duration_ns: to - from,
            from,
            to,
            values: [0; steadyhud_counters::MAX_COUNTERS],
        }
    }

    /// Frames 0 and 1 of 10 ms from 100 ms, 6 ms outside the present call,
    /// shown 10 ms after their present.
    fn two_shown_frames() -> LatencyFrames {
        let mut l = LatencyFrames::new(100 * MS, 1000 * MS);
        for (k, at) in [(0, 100), (1, 110)] {
            let frame = pending(k, at * MS, (at + 10) * MS);
            l.push(frame, shown(at + 20), 6 * MS, Markers::default());
        }
        l
    }

    /// Shown at `at` ms.
    fn shown(at: u64) -> Option<Shown> {
        Some(Shown::At {
            source: Source::Wayland,
            displayed_ns: at * MS,
            refresh_ns: 0,
        })
    }

    fn input(t_ns: u64, read_ns: u64) -> InputTime {
        InputTime {
            t_ns,
            read_ns,
            kind: InputKind::Key,
            exact: false,
        }
    }

    /// Frames of 10 ms from 100 ms, 6 ms outside the present call; a key at
    /// 113 ms is taken by frame 1 (start 114 = 120 − 6): I2FS 1 ms; the
    /// frame is shown at 130: P2D 10, click to photon 17.
    #[test]
    fn rows_get_their_cells_once_inputs_are_read_past_their_start() {
        let mut l = two_shown_frames();
        let mut out = Vec::new();
        let mut cells = String::new();
        l.inputs(&[], Some(100 * MS), |_| {});
        l.flush(120 * MS, false, &mut cells, |p, _, c, _| {
            out.push((p.index, c.to_string()))
        });
        assert!(out.is_empty(), "inputs are read only up to 100 ms");
        l.inputs(&[input(113 * MS, 125 * MS)], Some(125 * MS), |_| {});
        l.flush(120 * MS, false, &mut cells, |p, _, c, _| {
            out.push((p.index, c.to_string()))
        });
        assert_eq!(
            out,
            [
                (0, ",,,,6.000000,".to_string()),
                (
                    1,
                    ",13000000,1.000000,17.000000,6.000000,17.000000".to_string()
                ),
            ]
        );
        let live = l.live().unwrap();
        assert_eq!((live.pcl_ms, live.i2fs_ms), (17.0, 1.0));
        let keys = l.summary_keys();
        assert_eq!(keys["inputs"]["counted"], 1);
    }

    /// The live terms: without display times, I2FS (the window's inputs)
    /// and FS2P (every frame) are known, PCL, click to photon and P2D
    /// unknown; with them, PCL and its terms are the HUD's, which add up.
    /// Frames older than the window leave both windows, so the HUD does
    /// not keep a PCL once the inputs stopped.
    #[test]
    fn live_terms_are_known_each_on_its_own_and_leave_with_the_window() {
        let mut l = LatencyFrames::new(100 * MS, 1000 * MS);
        l.push(
            pending(0, 100 * MS, 110 * MS),
            None,
            6 * MS,
            Markers::default(),
        );
        l.push(
            pending(1, 110 * MS, 120 * MS),
            None,
            4 * MS,
            Markers::default(),
        );
        l.inputs(&[input(113 * MS, 125 * MS)], Some(125 * MS), |_| {});
        l.flush(120 * MS, false, &mut String::new(), |_, _, _, _| {});
        // Frame 1 starts at 116 (120 − 4): I2FS 3; FS2P 6 and 4.
        assert_eq!(l.terms(), [None, None, Some(3.0), Some(5.0), None]);
        assert!(l.live().is_none());

        let mut l = two_shown_frames();
        l.inputs(&[input(113 * MS, 125 * MS)], Some(125 * MS), |_| {});
        l.flush(120 * MS, false, &mut String::new(), |_, _, _, _| {});
        // Frame 1 (start 114, present 120, on screen at 130): PCL 1 + 6 + 10.
        assert_eq!(
            l.terms(),
            [Some(17.0), Some(17.0), Some(1.0), Some(6.0), Some(10.0)]
        );
        // 2 s of frames later, no input since: the window holds neither
        // the PCL nor the input.
        for k in 2..=210 {
            let at = 100 + 10 * k;
            l.push(
                pending(k, at * MS, (at + 10) * MS),
                shown(at + 20),
                6 * MS,
                Markers::default(),
            );
        }
        l.inputs(&[], Some(2300 * MS), |_| {});
        l.flush(2300 * MS, false, &mut String::new(), |_, _, _, _| {});
        assert!(l.live().is_none());
        assert_eq!(l.terms(), [None, None, None, Some(6.0), Some(10.0)]);
    }

    #[test]
    fn a_reader_that_stops_holds_rows_back_no_longer_than_late_ns() {
        let mut l = LatencyFrames::new(0, 1000 * MS);
        l.inputs(&[], Some(0), |_| {});
        l.push(pending(0, 0, 10 * MS), None, 4 * MS, Markers::default());
        let mut n = 0;
        let mut cells = String::new();
        l.flush(10 * MS + LATE_NS, false, &mut cells, |_, _, _, _| n += 1);
        assert_eq!(n, 0);
        l.flush(10 * MS + LATE_NS + 1, false, &mut cells, |_, _, c, _| {
            assert_eq!(c, ",,,,4.000000,");
            n += 1
        });
        assert_eq!((n, l.held()), (1, 0));
    }

    /// The game's own start of frame 1 (Reflex SIMULATION_START at 112, 8 ms
    /// before its present at 120) is its start, not the previous present's
    /// return (114): a key at 111 is taken by frame 1 (I2FS 1, FS2P 8), one
    /// at 113 by frame 2 (start 124 = 130 − 6: I2FS 11).
    #[test]
    fn a_frame_the_game_marked_starts_at_its_marker() {
        let mut l = LatencyFrames::new(100 * MS, 1000 * MS);
        let marked = Markers {
            simulation_start_ns: Some(112 * MS),
            ..Markers::default()
        };
        l.push(
            pending(0, 100 * MS, 110 * MS),
            None,
            6 * MS,
            Markers::default(),
        );
        l.push(pending(1, 110 * MS, 120 * MS), None, 6 * MS, marked);
        l.push(
            pending(2, 120 * MS, 130 * MS),
            None,
            6 * MS,
            Markers::default(),
        );
        l.inputs(
            &[input(111 * MS, 125 * MS), input(113 * MS, 125 * MS)],
            Some(130 * MS),
            |_| {},
        );
        let mut out = Vec::new();
        let mut cells = String::new();
        l.flush(130 * MS, false, &mut cells, |p, _, c, _| {
            out.push((p.index, c.to_string()))
        });
        assert_eq!(
            out,
            [
                (0, ",,,,6.000000,".to_string()),
                (1, ",11000000,1.000000,,8.000000,".to_string()),
                (2, ",13000000,11.000000,,6.000000,".to_string()),
            ]
        );
    }
}
