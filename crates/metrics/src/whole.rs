//! A running session's whole-session statistics in fixed size
//! ([`WholeSession`]): what the game keeps instead of every frame
//! duration, from which each summary write is computed (docs/metrics.md,
//! "The summary of a running session").
//!
//! - the durations' distribution as a [`FineHistogram`] (the order-free
//!   metrics, the STK curve, the time over budget);
//! - the stutter rule and OSC judged as frames arrive ([`StutterStream`]):
//!   the last 19 durations, each frame judged once the 9 after it exist
//!   (its window is then final), the stutter frames and their time, and
//!   the one-pass P90 deciders of the OSC rule; the last 9 frames are
//!   judged as if the session ended at the write, as `analyze` judges the
//!   log's rows so far;
//! - the mergeable time histogram (`histogram` key; 4,153 buckets).
//!
//! - with system readings, their running sums ([`SensorSums`]) and the
//!   readings of the last [`RECENT_ROWS`] frames, enough to name the
//!   readings' causes of each stutter as it is judged.
//!
//! Only the stutter frames' list (and their causes) grows: the summary
//! lists them. The list is a [`SharedList`] (8 bytes a stutter), which a
//! write on another thread reads without copying it
//! ([`WholeSession::summary_shared`]).

use super::fine::FineHistogram;
use super::histogram::{bucket_count, bucket_of, Bin, TimeHistogram};
use super::options::Options;
use super::sensor_causes::{sensor_causes, SensorCause, BASELINE_FRAMES};
use super::sensors::{
    Readings, Reasons, Sensor, SensorColumn, SensorColumns, SensorSummary, SensorSums,
};
use super::shared_list::{Shared, SharedList};
use super::steady::{SlowFrames, StkPoint};
use super::stutter::{shape_at, P90Above, HALF_WINDOW, OSC_MIN_RATIO, OSC_MIN_SPREAD_NS, WINDOW};
use super::summary::{assemble_from, Summary};

/// The stutter rule and the OSC flag over a stream of frames, keeping the
/// last [`WINDOW`] durations.
#[derive(Clone, Debug)]
pub struct StutterStream {
    theta: f64,
    recent: [u64; WINDOW],
    /// Frames pushed.
    n: usize,
    /// Frames judged for good (their window is final).
    judged: usize,
    frames: SharedList<usize>,
    stutter_ns: u128,
    spread: P90Above,
    ratio: P90Above,
}

/// The stutters and OSC of the frames so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Stutters {
    pub frames: Vec<usize>,
    pub time_ns: u128,
    pub osc: bool,
}

impl StutterStream {
    /// With the stutter rule's θ.
    pub fn new(theta: f64) -> Self {
        StutterStream {
            theta,
            recent: [0; WINDOW],
            n: 0,
            judged: 0,
            frames: SharedList::new(),
            stutter_ns: 0,
            spread: P90Above::new(OSC_MIN_SPREAD_NS),
            ratio: P90Above::new(OSC_MIN_RATIO),
        }
    }

    fn at(&self, j: usize) -> u64 {
        self.recent[j % WINDOW]
    }

    /// Judges frame `i` among `n` frames into the given deciders.
    fn judge(&self, i: usize, n: usize, (spread, ratio): (&mut P90Above, &mut P90Above)) -> bool {
        let s = shape_at(|j| self.at(j), i, n, self.theta);
        spread.push(s.spread);
        ratio.push(s.ratio);
        s.stutter
    }

    pub fn push(&mut self, d: u64) {
        self.recent[self.n % WINDOW] = d;
        self.n += 1;
        while self.judged + HALF_WINDOW < self.n {
            let i = self.judged;
            let (mut spread, mut ratio) = (self.spread, self.ratio);
            if self.judge(i, self.n, (&mut spread, &mut ratio)) {
                self.frames.push(i);
                self.stutter_ns += u128::from(self.at(i));
            }
            (self.spread, self.ratio) = (spread, ratio);
            self.judged += 1;
        }
    }

    /// Frames judged for good, the stutters among them and their time
    /// (what the control socket's `histogram` reports: totals that only
    /// grow).
    pub fn final_so_far(&self) -> (usize, usize, u128) {
        (self.judged, self.frames.len(), self.stutter_ns)
    }

    /// The stutters and OSC as if the session ended now. OSC is false when
    /// a window quartile was 0 (a frame of 0 ns, which a capture never
    /// has; `analyze` decides that case from the frames).
    pub fn so_far(&self) -> Stutters {
        let mut s = self.last_so_far();
        let last = std::mem::take(&mut s.frames);
        s.frames = self.frames.iter().copied().chain(last).collect();
        s
    }

    /// The [`Summary`] of `dist`, the distribution of the frames this judge
    /// was given, as if the session ended now (the stutter frames copied);
    /// `None` for no frame.
    pub fn summary_of(&self, dist: &FineHistogram, opts: &Options) -> Option<Summary> {
        let s = self.so_far();
        assemble_from(dist, s.frames, s.time_ns, s.osc, opts)
    }

    /// [`StutterStream::so_far`] without copying the stutters judged for
    /// good: those shared, and the stutters' time and OSC with the last
    /// frames' stutters (the only frames in the `Stutters` returned).
    pub fn so_far_shared(&self) -> (Shared<usize>, Stutters) {
        (self.frames.shared(), self.last_so_far())
    }

    /// The stutters' time and OSC as if the session ended now, and the
    /// stutters among the frames not judged for good.
    fn last_so_far(&self) -> Stutters {
        let (mut spread, mut ratio) = (self.spread, self.ratio);
        let mut frames = Vec::new();
        let mut time_ns = self.stutter_ns;
        for i in self.judged..self.n {
            if self.judge(i, self.n, (&mut spread, &mut ratio)) {
                frames.push(i);
                time_ns += u128::from(self.at(i));
            }
        }
        let osc = match (spread.decide(self.n), ratio.decide(self.n)) {
            (Some(s), Some(r)) => s && r,
            _ => false,
        };
        Stutters {
            frames,
            time_ns,
            osc,
        }
    }
}

/// A running session's stutter frames for one summary write, read without
/// copying the list ([`WholeSession::summary_shared`]): those judged for
/// good, then the last frames'. Serialized as the list of frames.
#[derive(Clone, Debug, Default)]
pub struct StutterFrames {
    judged: Shared<usize>,
    last: Vec<usize>,
}

impl StutterFrames {
    pub fn len(&self) -> usize {
        self.judged.len() + self.last.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.judged.iter().chain(&self.last).copied()
    }

    /// The stutters among the frames not judged for good when it was taken.
    pub fn last(&self) -> &[usize] {
        &self.last
    }
}

impl serde::Serialize for StutterFrames {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// A running session's readings' causes for one summary write
/// ([`WholeSession::sensor_causes`]): those of the stutters judged for
/// good, shared, then the last frames'. Serialized as the summary's
/// `sensor_causes`: each cause with its text ([`SensorCause::json`]),
/// one at a time through its own `serde_json::Value` (the text a value
/// of them all gave).
#[derive(Clone, Debug, Default)]
pub struct SensorCauses {
    judged: Shared<SensorCause>,
    last: Vec<SensorCause>,
}

impl SensorCauses {
    pub fn iter(&self) -> impl Iterator<Item = &SensorCause> + '_ {
        self.judged.iter().chain(&self.last)
    }
}

impl serde::Serialize for SensorCauses {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(None)?;
        for c in self.iter() {
            seq.serialize_element(&serde_json::to_value(c.json()).map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

/// Frames of readings kept: a stutter judged for good is 9 frames old and
/// its causes read the 30 frames before it and the one after.
pub const RECENT_ROWS: usize = BASELINE_FRAMES + WINDOW + 2;

/// The readings' part of a running session.
#[derive(Clone, Debug)]
struct SensorRows {
    sums: SensorSums,
    /// Where the GPU and CPU clocks are among a row's values.
    clocks: [Option<usize>; 2],
    throttle: bool,
    /// The last rows' clocks (GPU, CPU) and throttle reasons, by row % RECENT_ROWS.
    recent: Vec<([f64; 2], String)>,
    /// The causes of the stutters judged for good.
    causes: SharedList<SensorCause>,
}

impl SensorRows {
    /// The readings' causes of stutter `i` among `rows` rows, from the
    /// rows kept (the same rule as `analyze`'s, over the same rows).
    fn cause_of(&self, i: usize, rows: usize) -> Option<SensorCause> {
        let start = i.saturating_sub(BASELINE_FRAMES);
        let end = (i + 2).min(rows);
        let row = |k: usize| &self.recent[k % RECENT_ROWS];
        let clock = |c: usize| -> Readings { (start..end).map(|k| row(k).0[c]).collect() };
        let sensors = [Sensor::GpuMhz, Sensor::CpuMhz];
        let columns = (0..2)
            .filter(|&c| self.clocks[c].is_some())
            .map(|c| SensorColumn {
                sensor: sensors[c],
                source: String::new(),
                values: clock(c),
            })
            .collect();
        let throttle: Option<Reasons> = self
            .throttle
            .then(|| (start..end).map(|k| row(k).1.clone()).collect());
        let cols = SensorColumns {
            columns,
            throttle,
            throttle_source: None,
        };
        let mut c = sensor_causes(&[i - start], &cols).pop()?;
        c.frame = i;
        Some(c)
    }
}

/// Everything a summary write needs of a session's frames, in fixed size
/// (module doc).
#[derive(Clone, Debug)]
pub struct WholeSession {
    dist: FineHistogram,
    stutters: StutterStream,
    /// Frames and ns per bucket of the mergeable histogram.
    fleet: Vec<(u64, u64)>,
    sensors: Option<SensorRows>,
}

impl WholeSession {
    /// With the stutter rule's θ of `opts`.
    pub fn new(opts: &Options) -> Self {
        WholeSession {
            dist: FineHistogram::new(),
            stutters: StutterStream::new(opts.stutter_threshold),
            fleet: vec![(0, 0); bucket_count()],
            sensors: None,
        }
    }

    /// With system readings of `sensors` (with their source columns, the
    /// order of each row's values) and a throttle column when `throttle`.
    pub fn with_sensors<'a>(
        mut self,
        sensors: impl IntoIterator<Item = (Sensor, &'a str)> + Clone,
        throttle: bool,
    ) -> Self {
        let at = |s: Sensor| sensors.clone().into_iter().position(|(x, _)| x == s);
        self.sensors = Some(SensorRows {
            clocks: [at(Sensor::GpuMhz), at(Sensor::CpuMhz)],
            sums: SensorSums::new(sensors, throttle),
            throttle,
            recent: vec![([f64::NAN; 2], String::new()); RECENT_ROWS],
            causes: SharedList::new(),
        });
        self
    }

    /// Adds the next frame, of `d` ns.
    pub fn push(&mut self, d: u64) {
        self.push_with(d, &[], "");
    }

    /// Adds the next frame, of `d` ns, with its readings (`values` in the
    /// order of [`WholeSession::with_sensors`], NaN: none) and throttle
    /// reasons.
    pub fn push_with(&mut self, d: u64, values: &[f64], throttle: &str) {
        let row = self.dist.frames() as usize;
        self.dist.push(d);
        let stutters = self.stutters.final_so_far().1;
        self.stutters.push(d);
        let b = &mut self.fleet[bucket_of(d) as usize];
        b.0 += 1;
        b.1 = b.1.saturating_add(d);
        let Some(s) = self.sensors.as_mut() else {
            return;
        };
        s.sums.push(d, values, throttle);
        let slot = &mut s.recent[row % RECENT_ROWS];
        for (c, at) in s.clocks.iter().enumerate() {
            slot.0[c] = at.and_then(|i| values.get(i).copied()).unwrap_or(f64::NAN);
        }
        slot.1.clear();
        slot.1.push_str(throttle);
        if let Some(&i) = self.stutters.frames.get(stutters) {
            if let Some(c) = s.cause_of(i, row + 1) {
                s.causes.push(c);
            }
        }
    }

    /// The readings' summary of the frames so far (`None` without
    /// readings, or when they have no value; as `analyze`'s `sensors`).
    pub fn sensor_summary(&self) -> Option<SensorSummary> {
        self.sensors.as_ref()?.sums.summary()
    }

    /// Whether the session has readings.
    pub fn has_sensors(&self) -> bool {
        self.sensors.is_some()
    }

    /// The readings' causes of `stutters` (the summary's stutter frames):
    /// those judged for good as they were (shared, not copied), the last
    /// frames' from the rows kept.
    pub fn sensor_causes(&self, stutters: &[usize]) -> SensorCauses {
        let Some(s) = self.sensors.as_ref() else {
            return SensorCauses::default();
        };
        let (judged, _, _) = self.stutters.final_so_far();
        let rows = self.dist.frames() as usize;
        let last = stutters
            .iter()
            .filter(|&&i| i >= judged)
            .filter_map(|&i| s.cause_of(i, rows))
            .collect();
        SensorCauses {
            judged: s.causes.shared(),
            last,
        }
    }

    /// Frames so far.
    pub fn frames(&self) -> u64 {
        self.dist.frames()
    }

    /// The durations' distribution.
    pub fn distribution(&self) -> &FineHistogram {
        &self.dist
    }

    /// The stutter judge.
    pub fn stutters(&self) -> &StutterStream {
        &self.stutters
    }

    /// The summary of the frames so far (the target of `opts`); `None`
    /// for no frame.
    pub fn summary(&self, opts: &Options) -> Option<Summary> {
        self.stutters.summary_of(&self.dist, opts)
    }

    /// [`WholeSession::summary`] without a copy of the stutter list: the
    /// summary's `stutter_frames` are left empty (its `stutter_count` is
    /// theirs) and come apart, shared, for a write to stream
    /// ([`Summary::keys_with`]).
    pub fn summary_shared(&self, opts: &Options) -> Option<(Summary, StutterFrames)> {
        let (judged, s) = self.stutters.so_far_shared();
        let frames = StutterFrames {
            judged,
            last: s.frames,
        };
        let mut summary = assemble_from(&self.dist, Vec::new(), s.time_ns, s.osc, opts)?;
        summary.stutter_count = frames.len();
        Some((summary, frames))
    }

    /// slow(f) and excess(f) for f = 1..=max_fps.
    pub fn stk_curve(&self, max_fps: u32) -> Vec<StkPoint> {
        self.dist.stk_curve(max_fps)
    }

    /// The mergeable time histogram of the frames so far.
    pub fn histogram(&self) -> TimeHistogram {
        TimeHistogram::from_sorted_bins(
            self.fleet_bins()
                .map(|(b, frames, time)| {
                    (
                        b,
                        Bin {
                            frames,
                            time_ns: u128::from(time),
                        },
                    )
                })
                .collect(),
        )
    }

    /// The non-empty buckets of the mergeable histogram: (bucket, frames,
    /// ns), ascending.
    pub fn fleet_bins(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        self.fleet
            .iter()
            .enumerate()
            .filter(|(_, b)| b.0 > 0)
            .map(|(i, b)| (i as u32, b.0, b.1))
    }
}
