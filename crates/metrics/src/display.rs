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

/// P99 of the value columns, parts per million.
const P99_PPM: u64 = 990_000;

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
    /// Frames not dropped.
    pub displayed_frames: usize,
    pub dropped_frames: usize,
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
        // The derived terms of PC latency: the total minus the read terms.
        let derived = [
            (ValueKey::InputToPresent, &[ValueKey::PresentToDisplay][..]),
            (
                ValueKey::InputToFrameStart,
                &[ValueKey::FrameStartToPresent, ValueKey::PresentToDisplay][..],
            ),
        ];
        for (key, minus) in derived {
            let minus: Option<Vec<&ValueColumn>> = minus.iter().map(|&k| find(k)).collect();
            if let (Some(pc), Some(minus)) = (find(ValueKey::PcLatency), minus) {
                let (ns, column) = difference(pc, &minus);
                latency.insert(
                    key.name().to_string(),
                    weighted_stats(&shown, &ns, false, &column),
                );
            }
        }
        DisplayStats {
            interval_column: c.interval_column.clone(),
            dropped_column: c.dropped_column.clone(),
            presented_frames: n,
            displayed_frames: n - dropped_frames,
            dropped_frames,
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
            minus.iter().try_fold(total.ns[i], |acc, m| {
                let v = *m.ns.get(i)?;
                (acc != NO_VALUE && v != NO_VALUE).then(|| acc.saturating_sub(v))
            })
        })
        .map(|v| v.unwrap_or(NO_VALUE))
        .collect();
    let mut column = total.column.clone();
    for m in minus {
        column.push_str(" − ");
        column.push_str(&m.column);
    }
    (ns, column)
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
