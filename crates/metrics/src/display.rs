//! What reached the screen: metrics over *display intervals* instead of
//! present-to-present frame times, dropped frames, and animation error and
//! latency weighted by how long each frame was on screen. Definitions and
//! worked examples: docs/metrics.md, "Displayed frames".
//!
//! Input is per presented frame (the frames of the log, in order):
//! whether it was dropped (never shown), the capture's display-interval
//! value for it ([`IntervalKind`] says which one), and optional per-frame
//! values (animation error, latencies) in signed ns.
//!
//! - [`shown_frames`]: each displayed frame with the time it stayed on
//!   screen, D_i. A dropped frame shows nothing, so the frame on screen
//!   before it simply stays longer: its time goes to the previous displayed
//!   frame.
//! - [`DisplayStats::of`]: the summary ([`Summary`],
//!   docs/metrics.md#display-intervals) over the D_i in frame order, dropped
//!   frames (count, share of present time), and per value column the
//!   D-weighted mean and P99.

use super::gpu::NO_DATA;
use super::sorted::PPM;
use super::summary::{summarize, Summary};
use super::Options;
use serde::{Deserialize, Serialize};

/// A per-frame value that is not available (PresentMon's `NA`).
pub const NO_VALUE: i64 = i64::MIN;

/// P99 of the value columns, parts per million (also the live latency
/// block's, `crates/metrics/src/latency.rs`).
pub(crate) const P99_PPM: u64 = 990_000;

/// What a capture's display-interval column holds for a displayed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntervalKind {
    /// How long the *previous* displayed frame stayed on screen before this
    /// one replaced it (`MsBetweenDisplayChange`, 1.x and 2.x).
    SincePrevious,
    /// How long *this* frame stayed on screen (`MsDisplayedTime`,
    /// `DisplayedTime` of the 2.x "v2" metrics).
    OwnTime,
}

/// A per-frame value column besides the display interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueKey {
    /// `MsAnimationError` / `AnimationError`: signed; reported as |error|.
    AnimationError,
    /// `MsPCLatency`: input to display (NVIDIA PC latency).
    PcLatency,
    /// `MsClickToPhotonLatency`.
    ClickToPhoton,
    /// `MsAllInputToPhotonLatency`.
    AllInputToPhoton,
    /// `MsUntilDisplayed`: present to display (the P2D term of PC latency).
    PresentToDisplay,
    /// Derived, not read: `pc_latency − present_to_display` of a frame that
    /// has both, i.e. input to present (I2FS + FS2P of PC latency).
    InputToPresent,
    /// `MsCPUBusy` / `CPUBusy`: the frame's CPU start to its Present() call
    /// (the FS2P term of PC latency; the CPU start is the game's
    /// SIMULATION_START only when the game reports that marker).
    FrameStartToPresent,
    /// Derived, not read: `pc_latency − frame_start_to_present −
    /// present_to_display` of a frame that has all three (the I2FS term).
    InputToFrameStart,
}

impl ValueKey {
    /// The JSON key.
    pub fn name(self) -> &'static str {
        match self {
            ValueKey::AnimationError => "animation_error",
            ValueKey::PcLatency => "pc_latency",
            ValueKey::ClickToPhoton => "click_to_photon",
            ValueKey::AllInputToPhoton => "all_input_to_photon",
            ValueKey::PresentToDisplay => "present_to_display",
            ValueKey::InputToPresent => "input_to_present",
            ValueKey::FrameStartToPresent => "frame_start_to_present",
            ValueKey::InputToFrameStart => "input_to_frame_start",
        }
    }

    /// The table label.
    pub fn label(self) -> &'static str {
        match self {
            ValueKey::AnimationError => "Animation error |e|",
            ValueKey::PcLatency => "PC latency",
            ValueKey::ClickToPhoton => "Click to photon",
            ValueKey::AllInputToPhoton => "All input to photon",
            ValueKey::PresentToDisplay => "Present to display",
            ValueKey::InputToPresent => "Input to present",
            ValueKey::FrameStartToPresent => "Frame start to present (FS2P)",
            ValueKey::InputToFrameStart => "Input to frame start (I2FS)",
        }
    }
}

/// One value column of a capture, per frame of the log.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueColumn {
    pub key: ValueKey,
    /// The column's name in the file.
    pub column: String,
    /// Per frame, ns; [`NO_VALUE`] where the file has `NA` or nothing.
    pub ns: Vec<i64>,
}

/// The display columns of a capture, one entry per frame of the log (the
/// frames the present-based metrics use, same order).
#[derive(Clone, Debug, PartialEq)]
pub struct DisplayColumns {
    /// Column the display intervals come from.
    pub interval_column: String,
    pub kind: IntervalKind,
    /// Per frame: the interval column's value, ns (0 allowed);
    /// [`NO_DATA`] for a dropped frame or one whose row lacks the field.
    pub interval_ns: Vec<u64>,
    /// Per frame: never shown (`NA` in the interval column, or the 1.x /
    /// OCAT / CapFrameX `Dropped` column = 1).
    pub dropped: Vec<bool>,
    /// Column the dropped flags come from (`Dropped`, or the interval
    /// column's `NA`).
    pub dropped_column: String,
    pub values: Vec<ValueColumn>,
    /// Frames each source answered for (shown or dropped), by its name,
    /// for display times a log took from a source of its own (a steadyhud
    /// session log: [`DisplayColumns::from_seen`]); `None` for a capture's
    /// columns. With it, a frame that is neither dropped nor has an
    /// interval value is *unknown* (no answer), not displayed.
    pub sources: Option<std::collections::BTreeMap<String, usize>>,
}

/// One frame's fate as a source of display times told it: the input of
/// [`DisplayColumns::from_seen`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// On screen at `displayed_ns` (any clock, the same for every frame),
    /// `latency_ns` after the present call that ended the frame
    /// ([`NO_VALUE`]: not known).
    At { displayed_ns: u64, latency_ns: i64 },
    /// Never shown: replaced before a refresh.
    Dropped,
    /// No answer: neither shown nor dropped.
    Unknown,
}

/// The names of the columns [`DisplayColumns::from_seen`]'s frames come
/// from, for the output (`interval_column`, `dropped_column`, the
/// present-to-display value's `column`).
#[derive(Clone, Copy, Debug)]
pub struct SeenColumns<'a> {
    pub displayed: &'a str,
    pub dropped: &'a str,
    pub latency: &'a str,
}

impl DisplayColumns {
    /// Of the first `n` frames, those neither dropped nor with an interval
    /// value: with [`DisplayColumns::sources`], the frames no source
    /// answered for.
    pub fn unknown_frames(&self, n: usize) -> usize {
        (0..n.min(self.dropped.len()))
            .filter(|&i| !self.dropped[i] && self.interval_ns.get(i).is_none_or(|&v| v == NO_DATA))
            .count()
    }

    /// The display columns of frames whose display *times* are known
    /// (docs/metrics.md, "Live displayed-frame timing"), so that
    /// [`DisplayStats::of`] measures them by the captures' definitions:
    ///
    /// - [`IntervalKind::SincePrevious`]: a shown frame's interval is its
    ///   display time − that of the shown frame before it, **0** for the
    ///   first shown frame and the first after an unknown one (0 gives no
    ///   interval but makes the frame the "previous" one of
    ///   [`shown_frames`]);
    /// - a dropped frame is dropped and leaves the chain as it is: its time
    ///   goes to the shown frame before it;
    /// - an unknown frame is not dropped and breaks the chain
    ///   ([`NO_DATA`], as a capture's short row);
    /// - [`ValueKey::PresentToDisplay`] from the latencies.
    ///
    /// `sources`: frames each source answered for
    /// ([`DisplayColumns::sources`]).
    pub fn from_seen(
        frames: &[Seen],
        names: SeenColumns<'_>,
        sources: std::collections::BTreeMap<String, usize>,
    ) -> DisplayColumns {
        let n = frames.len();
        let (mut interval_ns, mut dropped, mut latency) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut previous: Option<u64> = None;
        for f in frames {
            let (iv, drop, lat) = match *f {
                Seen::At {
                    displayed_ns,
                    latency_ns,
                } => {
                    let iv = previous.map_or(0, |p| displayed_ns.saturating_sub(p));
                    previous = Some(displayed_ns);
                    (iv, false, latency_ns)
                }
                Seen::Dropped => (NO_DATA, true, NO_VALUE),
                Seen::Unknown => {
                    previous = None;
                    (NO_DATA, false, NO_VALUE)
                }
            };
            interval_ns.push(iv);
            dropped.push(drop);
            latency.push(lat);
        }
        DisplayColumns {
            interval_column: names.displayed.to_string(),
            kind: IntervalKind::SincePrevious,
            interval_ns,
            dropped,
            dropped_column: names.dropped.to_string(),
            values: vec![ValueColumn {
                key: ValueKey::PresentToDisplay,
                column: names.latency.to_string(),
                ns: latency,
            }],
            sources: Some(sources),
        }
    }
}

/// A displayed frame and how long it stayed on screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown {
    /// Index of the frame in the log.
    pub frame: usize,
    /// D, ns (> 0).
    pub ns: u64,
}

/// Every displayed frame whose time on screen the capture gives, in order.
///
/// - [`IntervalKind::OwnTime`]: frame i (not dropped, value v > 0) has D = v.
/// - [`IntervalKind::SincePrevious`]: the value v of displayed frame j is
///   the time on screen of the displayed frame p before j in the log: D_p
///   = v. The first displayed frame's value belongs to a frame before the
///   capture and the last displayed frame has no later change: neither
///   gives an interval. A frame with no interval field (short row) breaks
///   the chain: the next displayed frame's value is not attributed.
///
/// Values of 0 (two display changes at once) give no interval.
pub fn shown_frames(c: &DisplayColumns) -> Vec<Shown> {
    let mut out = Vec::new();
    let mut previous: Option<usize> = None;
    for (i, (&v, &dropped)) in c.interval_ns.iter().zip(&c.dropped).enumerate() {
        if dropped {
            continue;
        }
        if v == NO_DATA {
            previous = None;
            continue;
        }
        let owner = match c.kind {
            IntervalKind::OwnTime => Some(i),
            IntervalKind::SincePrevious => previous,
        };
        if let Some(frame) = owner.filter(|_| v > 0) {
            out.push(Shown { frame, ns: v });
        }
        previous = Some(i);
    }
    out
}

/// D-weighted statistics of one value column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueStats {
    /// Column read (for the derived `input_to_present` and
    /// `input_to_frame_start`: the columns they are derived from).
    pub column: String,
    /// Displayed frames with both a D and a value: the samples.
    pub frames: usize,
    /// Σ D of those frames, s: the time the statistics cover.
    pub time_s: f64,
    /// Σ v·D / Σ D, ms (v = |error| for the animation error).
    pub mean_ms: f64,
    /// Time-weighted P99 of v, ms: the smallest sample v such that the
    /// samples ≤ v cover at least 99 % of Σ D.
    pub p99_ms: f64,
}

/// The display block of `analyze --display --json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DisplayStats {
    pub interval_column: String,
    pub dropped_column: String,
    /// Frames of the log (presents).
    pub presented_frames: usize,
    /// Frames not dropped (and, with [`DisplayColumns::sources`], not
    /// unknown either).
    pub displayed_frames: usize,
    pub dropped_frames: usize,
    /// Frames no source answered for (only with
    /// [`DisplayColumns::sources`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_frames: Option<usize>,
    /// Frames each source answered for (only with
    /// [`DisplayColumns::sources`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<std::collections::BTreeMap<String, usize>>,
    /// Σ present durations of dropped frames / Σ all present durations × 100.
    pub dropped_time_pct: f64,
    /// The keys of docs/metrics.md#the-json-keys over the display intervals D
    /// (`frames` = number of intervals); absent when the capture gives none.
    #[serde(flatten)]
    pub intervals: Option<Summary>,
    /// |animation error|; `null` when the column is there without a value,
    /// absent without the column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub animation_error: Option<Option<ValueStats>>,
    /// Latency columns the capture has, by [`ValueKey::name`]; `null` for a
    /// column without a single value.
    pub latency: std::collections::BTreeMap<String, Option<ValueStats>>,
}

impl DisplayStats {
    /// The statistics of `c` for a log of `durations_ns` (present to
    /// present). Frames past either length are ignored.
    pub fn of(durations_ns: &[u64], c: &DisplayColumns, opts: &Options) -> DisplayStats {
        let n = durations_ns.len().min(c.dropped.len());
        let dropped_frames = c.dropped[..n].iter().filter(|&&d| d).count();
        let total: u128 = durations_ns[..n].iter().map(|&d| u128::from(d)).sum();
        let dropped_ns: u128 = durations_ns[..n]
            .iter()
            .zip(&c.dropped)
            .filter(|(_, &d)| d)
            .map(|(&d, _)| u128::from(d))
            .sum();
        let shown: Vec<Shown> = shown_frames(c)
            .into_iter()
            .filter(|s| s.frame < n)
            .collect();
        let d: Vec<u64> = shown.iter().map(|s| s.ns).collect();
        let mut animation_error = None;
        let mut latency = std::collections::BTreeMap::new();
        for col in &c.values {
            let abs = col.key == ValueKey::AnimationError;
            let stats = weighted_stats(&shown, &col.ns, abs, &col.column);
            if abs {
                animation_error = Some(stats);
            } else {
                latency.insert(col.key.name().to_string(), stats);
            }
        }
        let find = |k: ValueKey| c.values.iter().find(|v| v.key == k);
        for (key, minus) in DERIVED {
            let minus: Option<Vec<&ValueColumn>> = minus.iter().map(|&k| find(k)).collect();
            if let (Some(pc), Some(minus)) = (find(ValueKey::PcLatency), minus) {
                let (ns, column) = difference(pc, &minus);
                latency.insert(
                    key.name().to_string(),
                    weighted_stats(&shown, &ns, false, &column),
                );
            }
        }
        let unknown_frames = c.sources.as_ref().map(|_| c.unknown_frames(n));
        DisplayStats {
            interval_column: c.interval_column.clone(),
            dropped_column: c.dropped_column.clone(),
            presented_frames: n,
            displayed_frames: n
                .saturating_sub(dropped_frames)
                .saturating_sub(unknown_frames.unwrap_or(0)),
            dropped_frames,
            unknown_frames,
            sources: c.sources.clone(),
            dropped_time_pct: if total == 0 {
                0.0
            } else {
                dropped_ns as f64 * 100.0 / total as f64
            },
            intervals: summarize(&d, opts),
            animation_error,
            latency,
        }
    }
}

/// The derived terms of PC latency: each the total (`pc_latency`) minus
/// the read terms listed, of a frame that has them all.
pub const DERIVED: [(ValueKey, &[ValueKey]); 2] = [
    (ValueKey::InputToPresent, &[ValueKey::PresentToDisplay]),
    (
        ValueKey::InputToFrameStart,
        &[ValueKey::FrameStartToPresent, ValueKey::PresentToDisplay],
    ),
];

/// The display intervals D in frame order (what [`DisplayStats`]
/// summarises), for charts.
pub fn intervals_ns(c: &DisplayColumns) -> Vec<u64> {
    shown_frames(c).into_iter().map(|s| s.ns).collect()
}

/// Per frame, `total` minus every column of `minus` ([`NO_VALUE`] where
/// any of them has none), and the name of that difference.
fn difference(total: &ValueColumn, minus: &[&ValueColumn]) -> (Vec<i64>, String) {
    let ns = (0..total.ns.len())
        .map(|i| {
            minus
                .iter()
                .try_fold(total.ns[i], |acc, m| less(acc, *m.ns.get(i)?))
        })
        .map(|v| v.unwrap_or(NO_VALUE))
        .collect();
    let column = difference_column(&total.column, minus.iter().map(|m| m.column.as_str()));
    (ns, column)
}

/// One frame's `acc − v` of a derived term; `None` when either is
/// [`NO_VALUE`].
pub(crate) fn less(acc: i64, v: i64) -> Option<i64> {
    (acc != NO_VALUE && v != NO_VALUE).then(|| acc.saturating_sub(v))
}

/// The name of a derived term: `total − a − b`.
pub(crate) fn difference_column<'a>(total: &str, minus: impl Iterator<Item = &'a str>) -> String {
    let mut column = total.to_string();
    for m in minus {
        column.push_str(" − ");
        column.push_str(m);
    }
    column
}

/// D-weighted mean and P99 of `values` over the `shown` frames that have a
/// value; `None` when none has.
fn weighted_stats(shown: &[Shown], values: &[i64], abs: bool, column: &str) -> Option<ValueStats> {
    let mut samples: Vec<(i128, u64)> = shown
        .iter()
        .filter_map(|s| {
            let v = *values.get(s.frame)?;
            (v != NO_VALUE).then(|| {
                let v = i128::from(v);
                (if abs { v.abs() } else { v }, s.ns)
            })
        })
        .collect();
    if samples.is_empty() {
        return None;
    }
    let w: u128 = samples.iter().map(|&(_, d)| u128::from(d)).sum();
    let vw: i128 = samples.iter().map(|&(v, d)| v * i128::from(d)).sum();
    samples.sort_unstable();
    let target = u128::from(P99_PPM) * w;
    let mut acc: u128 = 0;
    let mut p99 = samples[samples.len() - 1].0;
    for &(v, d) in &samples {
        acc += u128::from(d);
        if acc * u128::from(PPM) >= target {
            p99 = v;
            break;
        }
    }
    Some(ValueStats {
        column: column.to_string(),
        frames: samples.len(),
        time_s: w as f64 / 1e9,
        mean_ms: vw as f64 / w as f64 / 1e6,
        p99_ms: p99 as f64 / 1e6,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn cols(kind: IntervalKind, iv: &[u64], dropped: &[bool]) -> DisplayColumns {
        DisplayColumns {
            interval_column: "x".into(),
            kind,
            interval_ns: iv.to_vec(),
            dropped: dropped.to_vec(),
            dropped_column: "x".into(),
            values: Vec::new(),
            sources: None,
        }
    }

    #[test]
    fn since_previous_gives_each_interval_to_the_frame_before() {
        // Frames 0..5; frame 2 dropped; frame 4 a short row.
        let c = cols(
            IntervalKind::SincePrevious,
            &[
                16 * MS,
                17 * MS,
                NO_DATA,
                33 * MS,
                NO_DATA,
                16 * MS,
                15 * MS,
            ],
            &[false, false, true, false, false, false, false],
        );
        assert_eq!(
            shown_frames(&c),
            vec![
                Shown {
                    frame: 0,
                    ns: 17 * MS
                },
                Shown {
                    frame: 1,
                    ns: 33 * MS
                },
                Shown {
                    frame: 5,
                    ns: 15 * MS
                },
            ]
        );
    }

    #[test]
    fn own_time_is_the_frames_own_and_zero_gives_nothing() {
        let c = cols(
            IntervalKind::OwnTime,
            &[16 * MS, NO_DATA, 0, 20 * MS],
            &[false, true, false, false],
        );
        let f: Vec<usize> = shown_frames(&c).iter().map(|s| s.frame).collect();
        assert_eq!(f, vec![0, 3]);
    }

    proptest::proptest! {
        /// The two kinds of interval column describe the same screen:
        /// `MsBetweenDisplayChange` moved onto the displayed frame before
        /// (what `DisplayedTime` holds) gives the same intervals.
        #[test]
        fn both_interval_kinds_agree(
            frames in proptest::collection::vec((1u64..50_000_000, proptest::bool::weighted(0.3)), 1..200)
        ) {
            let iv: Vec<u64> = frames.iter().map(|&(v, d)| if d { NO_DATA } else { v }).collect();
            let dropped: Vec<bool> = frames.iter().map(|&(_, d)| d).collect();
            let since = cols(IntervalKind::SincePrevious, &iv, &dropped);
            let shown: Vec<usize> = (0..iv.len()).filter(|&i| !dropped[i]).collect();
            let mut own_iv = vec![NO_DATA; iv.len()];
            for w in shown.windows(2) {
                own_iv[w[0]] = iv[w[1]];
            }
            // The last displayed frame's own time is unknown: as a short row.
            let own = cols(IntervalKind::OwnTime, &own_iv, &dropped);
            proptest::prop_assert_eq!(shown_frames(&since), shown_frames(&own));
            let total: u64 = shown_frames(&own).iter().map(|s| s.ns).sum();
            let expected: u64 = shown.iter().skip(1).map(|&i| iv[i]).sum();
            proptest::prop_assert_eq!(total, expected);
        }
    }

    #[test]
    fn the_pc_latency_split_needs_every_term_on_the_frame() {
        // Three displayed frames, D = 10, 20, 30 ms (OwnTime): PCL 50, 60,
        // 70; CPU busy 5, NA, 8; until 20, 25, NA.
        let mut c = cols(
            IntervalKind::OwnTime,
            &[10 * MS, 20 * MS, 30 * MS],
            &[false, false, false],
        );
        let col = |key, column: &str, ms: [i64; 3]| ValueColumn {
            key,
            column: column.into(),
            ns: ms
                .iter()
                .map(|&v| if v < 0 { NO_VALUE } else { v * MS as i64 })
                .collect(),
        };
        c.values = vec![
            col(ValueKey::PcLatency, "pcl", [50, 60, 70]),
            col(ValueKey::FrameStartToPresent, "busy", [5, -1, 8]),
            col(ValueKey::PresentToDisplay, "until", [20, 25, -1]),
        ];
        let s = DisplayStats::of(&[10 * MS; 3], &c, &Options::default());
        let get = |k: ValueKey| s.latency[k.name()].clone().unwrap();
        // I2FS: only frame 0 has all three: 50 − 5 − 20 = 25.
        let i2fs = get(ValueKey::InputToFrameStart);
        assert_eq!((i2fs.frames, i2fs.mean_ms), (1, 25.0));
        assert_eq!(i2fs.column, "pcl − busy − until");
        // Input to present: frames 0 and 1: (30·10 + 35·20) / 30.
        let i2p = get(ValueKey::InputToPresent);
        assert_eq!(i2p.frames, 2);
        assert!((i2p.mean_ms - 1000.0 / 30.0).abs() < 1e-12);
        // FS2P is read: frames 0 and 2, (5·10 + 8·30) / 40.
        let fs2p = get(ValueKey::FrameStartToPresent);
        assert_eq!((fs2p.frames, fs2p.mean_ms), (2, 7.25));
        // Without the PC latency column neither derived key exists.
        c.values.remove(0);
        let s = DisplayStats::of(&[10 * MS; 3], &c, &Options::default());
        let keys: Vec<&str> = s.latency.keys().map(String::as_str).collect();
        assert_eq!(keys, ["frame_start_to_present", "present_to_display"]);
    }

    const NAMES: SeenColumns<'static> = SeenColumns {
        displayed: "displayed_ns",
        dropped: "display_source",
        latency: "display_latency_ms",
    };

    /// docs/metrics.md's worked example as display times: frame k presented
    /// at 10·k ms, shown at `at[k]` ms (`None`: dropped).
    fn worked_example() -> Vec<Seen> {
        let at = [
            Some(20),
            Some(30),
            None,
            Some(50),
            Some(80),
            Some(90),
            None,
            Some(100),
            Some(110),
            None,
        ];
        at.iter()
            .enumerate()
            .map(|(k, a)| match a {
                Some(a) => Seen::At {
                    displayed_ns: a * MS,
                    latency_ns: (a - 10 * k as u64) as i64 * MS as i64,
                },
                None => Seen::Dropped,
            })
            .collect()
    }

    fn wayland(n: usize) -> std::collections::BTreeMap<String, usize> {
        [("wayland".to_string(), n)].into()
    }

    /// The numbers docs/metrics.md works out for the capture, from the
    /// same screen told as display times.
    #[test]
    fn display_times_give_the_worked_examples_numbers() {
        let c = DisplayColumns::from_seen(&worked_example(), NAMES, wayland(10));
        assert_eq!(c.kind, IntervalKind::SincePrevious);
        assert_eq!(
            c.interval_ns,
            [0, 10, NO_DATA, 20, 30, 10, NO_DATA, 10, 10, NO_DATA].map(|v| if v == NO_DATA {
                v
            } else {
                v * MS
            })
        );
        let s = DisplayStats::of(&[10 * MS; 10], &c, &Options::default());
        assert_eq!(
            (s.presented_frames, s.displayed_frames, s.dropped_frames),
            (10, 7, 3)
        );
        assert_eq!(s.unknown_frames, Some(0));
        assert_eq!(s.sources, Some(wayland(10)));
        assert!((s.dropped_time_pct - 30.0).abs() < 1e-12);
        let d = s.intervals.as_ref().unwrap();
        assert_eq!(d.frames, 6);
        assert!((d.duration_s - 0.09).abs() < 1e-12);
        assert!((d.average_fps - 6.0 / 0.09).abs() < 1e-9);
        assert!((d.low_1pct_fps - 1.0 / 0.03).abs() < 1e-9);
        assert_eq!((d.p50_ms, d.p90_ms, d.p99_9_ms), (20.0, 30.0, 30.0));
        assert_eq!(
            (d.steady_fps, d.mostly_steady_fps, d.typical_fps),
            (33, 33, 47)
        );
        assert_eq!((d.stutter_count, d.stutter_frames.clone()), (2, vec![1, 2]));
        assert!(d.osc);
        let p2d = s.latency["present_to_display"].clone().unwrap();
        assert_eq!(p2d.column, "display_latency_ms");
        assert_eq!(p2d.frames, 6);
        assert!((p2d.mean_ms - 2300.0 / 90.0).abs() < 1e-12);
        assert_eq!(p2d.p99_ms, 40.0);
        assert!(s.animation_error.is_none());
    }

    /// The capture's columns of the worked example (`MsBetweenDisplayChange`,
    /// `MsUntilDisplayed`) and its display times give the same statistics:
    /// one set of definitions.
    #[test]
    fn display_times_and_the_captures_columns_agree() {
        let iv = [10, 10, 0, 20, 30, 10, 0, 10, 10, 0];
        let dropped = [
            false, false, true, false, false, false, true, false, false, true,
        ];
        let mut capture = cols(
            IntervalKind::SincePrevious,
            &iv.map(|v| if v == 0 { NO_DATA } else { v * MS }),
            &dropped,
        );
        let until = [20, 20, -1, 20, 40, 40, -1, 30, 30, -1];
        capture.values = vec![ValueColumn {
            key: ValueKey::PresentToDisplay,
            column: "display_latency_ms".into(),
            ns: until
                .iter()
                .map(|&v| if v < 0 { NO_VALUE } else { v * MS as i64 })
                .collect(),
        }];
        let seen = DisplayColumns::from_seen(&worked_example(), NAMES, wayland(10));
        let opts = Options::default();
        let (a, b) = (
            DisplayStats::of(&[10 * MS; 10], &capture, &opts),
            DisplayStats::of(&[10 * MS; 10], &seen, &opts),
        );
        assert_eq!(a.intervals, b.intervals);
        assert_eq!(a.latency, b.latency);
        assert_eq!(
            (a.displayed_frames, a.dropped_frames, a.dropped_time_pct),
            (b.displayed_frames, b.dropped_frames, b.dropped_time_pct)
        );
        assert_eq!((a.unknown_frames, a.sources), (None, None));
    }

    /// An unknown frame is neither shown nor dropped and breaks the chain:
    /// the shown frame before it gets no interval, the one after it starts
    /// a new chain.
    #[test]
    fn an_unknown_frame_breaks_the_chain() {
        let mut f = worked_example();
        f[5] = Seen::Unknown;
        let c = DisplayColumns::from_seen(&f, NAMES, wayland(9));
        // Frame 7 is the first shown after the unknown 5: interval 0.
        assert_eq!(c.interval_ns[5], NO_DATA);
        assert_eq!(c.interval_ns[7], 0);
        assert!(!c.dropped[5]);
        let d: Vec<(usize, u64)> = shown_frames(&c)
            .iter()
            .map(|s| (s.frame, s.ns / MS))
            .collect();
        // Frame 4 (before the gap) has no D; 7 gets 10 from frame 8.
        assert_eq!(d, [(0, 10), (1, 20), (3, 30), (7, 10)]);
        let s = DisplayStats::of(&[10 * MS; 10], &c, &Options::default());
        assert_eq!(
            (s.displayed_frames, s.dropped_frames, s.unknown_frames),
            (6, 3, Some(1))
        );
        // A log that ends before the columns do counts only its frames.
        let s = DisplayStats::of(&[10 * MS; 5], &c, &Options::default());
        assert_eq!((s.presented_frames, s.unknown_frames), (5, Some(0)));
    }

    #[test]
    fn weighted_mean_and_p99_weigh_by_time_on_screen() {
        // D = 10, 10, 80 ms; values 1, 2, -5 ms (abs 5): mean |v| =
        // (10 + 20 + 400) / 100 = 4.3 ms; P99 target 99 ms is reached only
        // with the 80 ms frame: 5 ms.
        let shown = [
            Shown {
                frame: 0,
                ns: 10 * MS,
            },
            Shown {
                frame: 1,
                ns: 10 * MS,
            },
            Shown {
                frame: 2,
                ns: 80 * MS,
            },
        ];
        let v = [MS as i64, 2 * MS as i64, -5 * MS as i64];
        let s = weighted_stats(&shown, &v, true, "e").unwrap();
        assert_eq!((s.frames, s.mean_ms, s.p99_ms), (3, 4.3, 5.0));
        let s = weighted_stats(&shown, &v, false, "e").unwrap();
        assert_eq!((s.mean_ms, s.p99_ms), (-3.7, 2.0));
        assert!(weighted_stats(&shown, &[NO_VALUE; 3], false, "e").is_none());
    }
}
