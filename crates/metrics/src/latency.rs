//! PC latency live (docs/metrics.md, "PC latency"): which frame takes each
//! input, NVIDIA's terms per frame (I2FS, FS2P, P2D, PCL) and click to
//! photon, in fixed memory, and the summary's latency block weighted by
//! time on screen. Pure: the analysis thread feeds it presents, display
//! answers and input times; it reads no clock and no device.
//!
//! - [`frame_start`]: the frame-start rule (the game's marker, else the end
//!   of its previous present call).
//! - [`check_input`]: the input times refused, and why ([`Rejection`]).
//! - [`LatencyTracker`]: the attribution, one [`LatencyRow`] per frame in
//!   frame order once its fate and every input it could take are known.
//! - [`LatencySummary`]: the rows' terms, time-weighted by how long each
//!   frame stayed on screen (the rules of "Displayed frames").
//!
//! Times are CLOCK_MONOTONIC ns (any one clock shared by every argument).
//! Nothing here allocates after `new`: the queues are reserved once and
//! never grow past their capacity.

use super::display::{ValueKey, ValueStats, P99_PPM};
use super::histogram::{bucket_of, bucket_range};
use super::sorted::PPM;
use crate::display::Seen;
use std::collections::VecDeque;

/// Frames awaiting their display answer or their inputs: the oldest is
/// given out as it stands (its fate unknown if none came) when a frame
/// more arrives.
pub const PENDING_FRAMES: usize = 256;
/// Inputs later than every frame start so far, awaiting the frame that
/// takes them: one more is refused ([`Rejection::Overflow`]).
pub const PENDING_INPUTS: usize = 256;
/// Frames that took input held in the I2FS window: the window is the
/// last `window_ns` of frame starts, or these many such frames if fewer.
pub const WINDOW_FRAMES: usize = 4096;
/// An input time may be this much later than the moment it was read (the
/// server's millisecond stamps mapped to CLOCK_MONOTONIC) before it is
/// refused as in the future.
pub const FUTURE_SLACK_NS: u64 = 2_000_000;
/// An input time this much older than the moment it was read is refused as
/// far in the past (a wrong clock mapping, or a reader that stalled).
pub const MAX_INPUT_AGE_NS: u64 = 2_000_000_000;
/// The summary's P99 buckets end at 10 s: longer values share the last one.
const SUMMARY_CAP_NS: u64 = 10_000_000_000;

/// Where a frame's start came from ([`frame_start`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartSource {
    /// The end of the previous present call (PresentMon's rule).
    PresentReturn,
    /// Reflex `SIMULATION_START` (`VK_NV_low_latency2`), NVIDIA's frame start.
    SimulationStart,
    /// Reflex `INPUT_SAMPLE`: when the game sampled input.
    InputSample,
    /// AMD Anti-Lag's input stage (`vkAntiLagUpdateAMD`).
    AntiLagInput,
}

impl StartSource {
    pub const ALL: [StartSource; 4] = [
        StartSource::PresentReturn,
        StartSource::SimulationStart,
        StartSource::InputSample,
        StartSource::AntiLagInput,
    ];

    /// The summary's name.
    pub fn name(self) -> &'static str {
        match self {
            StartSource::PresentReturn => "present_return",
            StartSource::SimulationStart => "simulation_start",
            StartSource::InputSample => "input_sample",
            StartSource::AntiLagInput => "anti_lag_input",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The game's own frame-start markers for one present, as far as it set
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Markers {
    pub simulation_start_ns: Option<u64>,
    pub input_sample_ns: Option<u64>,
    pub anti_lag_input_ns: Option<u64>,
}

/// A frame's start and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameStart {
    pub ns: u64,
    pub source: StartSource,
}

/// The start of the frame a present call at `call_ns` ends: the first of
/// Reflex `SIMULATION_START`, Reflex `INPUT_SAMPLE`, Anti-Lag's input stage
/// and the return of the previous present that lies between the previous
/// frame's start (`previous_start_ns`) and `call_ns`, both included. A
/// marker outside that span is not believed (starts must not go back, and
/// a frame starts before its present). `None`: the session's first present
/// without a marker, which ends no frame.
pub fn frame_start(
    markers: Markers,
    previous_return_ns: Option<u64>,
    previous_start_ns: Option<u64>,
    call_ns: u64,
) -> Option<FrameStart> {
    let fits = |m: u64| m <= call_ns && previous_start_ns.is_none_or(|p| m >= p);
    [
        (markers.simulation_start_ns, StartSource::SimulationStart),
        (markers.input_sample_ns, StartSource::InputSample),
        (markers.anti_lag_input_ns, StartSource::AntiLagInput),
        (previous_return_ns, StartSource::PresentReturn),
    ]
    .into_iter()
    .find_map(|(ns, source)| ns.filter(|&m| fits(m)).map(|ns| FrameStart { ns, source }))
}

/// What an input time came from. Each keeps its own order
/// ([`Rejection::NonMonotonic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputSource {
    Key,
    Button,
    Motion,
}

impl InputSource {
    pub const ALL: [InputSource; 3] = [InputSource::Key, InputSource::Button, InputSource::Motion];

    fn index(self) -> usize {
        self as usize
    }
}

/// Why an input time was not counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// Later than the moment it was read, by more than [`FUTURE_SLACK_NS`].
    Future,
    /// Older than the moment it was read, by more than [`MAX_INPUT_AGE_NS`].
    Past,
    /// Earlier than the previous input counted from the same source.
    NonMonotonic,
    /// At or before the start of a frame already given out: it came after
    /// the reader said it had read that far, or after the frame was pushed
    /// out by [`PENDING_FRAMES`] more.
    Late,
    /// [`PENDING_INPUTS`] inputs already await their frame.
    Overflow,
}

impl Rejection {
    pub const ALL: [Rejection; 5] = [
        Rejection::Future,
        Rejection::Past,
        Rejection::NonMonotonic,
        Rejection::Late,
        Rejection::Overflow,
    ];

    /// The summary's name.
    pub fn name(self) -> &'static str {
        match self {
            Rejection::Future => "future",
            Rejection::Past => "past",
            Rejection::NonMonotonic => "non_monotonic",
            Rejection::Late => "late",
            Rejection::Overflow => "overflow",
        }
    }

    /// The reason, for the log's one line.
    pub fn reason(self) -> &'static str {
        match self {
            Rejection::Future => "an input time later than when it was read",
            Rejection::Past => "an input time more than 2 s before it was read",
            Rejection::NonMonotonic => "an input time earlier than the one before it",
            Rejection::Late => "an input read after the frame that would take it was written",
            Rejection::Overflow => "too many inputs awaiting a frame",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// How far an input time may stray from the moment it was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputLimits {
    pub future_slack_ns: u64,
    pub max_age_ns: u64,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits {
            future_slack_ns: FUTURE_SLACK_NS,
            max_age_ns: MAX_INPUT_AGE_NS,
        }
    }
}

/// Whether an input at `t_ns`, read at `now_ns`, whose source's previous
/// counted input was at `last_ns`, is believed. Checked in this order:
/// [`Rejection::Future`], [`Rejection::Past`], [`Rejection::NonMonotonic`]
/// (an equal time is in order).
pub fn check_input(
    t_ns: u64,
    now_ns: u64,
    last_ns: Option<u64>,
    limits: InputLimits,
) -> Result<(), Rejection> {
    if t_ns > now_ns.saturating_add(limits.future_slack_ns) {
        Err(Rejection::Future)
    } else if now_ns.saturating_sub(t_ns) > limits.max_age_ns {
        Err(Rejection::Past)
    } else if last_ns.is_some_and(|l| t_ns < l) {
        Err(Rejection::NonMonotonic)
    } else {
        Ok(())
    }
}

/// One present as the layer timed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Present {
    /// Increasing per window; display answers name it.
    pub id: u64,
    /// When the present call was entered.
    pub call_ns: u64,
    /// When it returned to the game.
    pub return_ns: u64,
    pub markers: Markers,
}

/// The inputs one frame took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Taken {
    /// How many (> 0 in a row).
    pub inputs: u32,
    /// The earliest of them.
    pub first_ns: u64,
    /// Σ (frame start − input time), ns.
    pub i2fs_sum_ns: u64,
}

impl Taken {
    fn add(&mut self, start_ns: u64, t_ns: u64) {
        self.first_ns = if self.inputs == 0 {
            t_ns
        } else {
            self.first_ns.min(t_ns)
        };
        self.inputs = self.inputs.saturating_add(1);
        self.i2fs_sum_ns = self
            .i2fs_sum_ns
            .saturating_add(start_ns.saturating_sub(t_ns));
    }

    /// `other`, whose I2FS run to a start `later_ns` earlier than this
    /// frame's, joins this frame (the inputs of a dropped frame).
    fn merge(&mut self, other: Taken, later_ns: u64) {
        if other.inputs == 0 {
            return;
        }
        self.first_ns = if self.inputs == 0 {
            other.first_ns
        } else {
            self.first_ns.min(other.first_ns)
        };
        self.inputs = self.inputs.saturating_add(other.inputs);
        self.i2fs_sum_ns = self.i2fs_sum_ns.saturating_add(
            other
                .i2fs_sum_ns
                .saturating_add(u64::from(other.inputs).saturating_mul(later_ns)),
        );
    }

    /// The mean I2FS of these inputs, ns, rounded to the nearest.
    pub fn i2fs_mean_ns(&self) -> u64 {
        mean_rounded(u128::from(self.i2fs_sum_ns), u64::from(self.inputs))
    }
}

fn mean_rounded(sum: u128, count: u64) -> u64 {
    let c = u128::from(count.max(1));
    ((2 * sum + c) / (2 * c)) as u64
}

/// One frame's latency: what the tracker gives out, in frame order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyRow {
    /// The [`Present::id`] that ended the frame.
    pub id: u64,
    pub start: FrameStart,
    /// The present call that ended it.
    pub call_ns: u64,
    /// Shown (with `latency_ns` = P2D), dropped, or unknown (no answer).
    pub fate: Seen,
    /// The inputs it took: none on a dropped frame (they go to the next
    /// frame not dropped).
    pub taken: Option<Taken>,
    /// The mean I2FS of the inputs taken in the window ending at this
    /// frame's start (`None`: no input in it, or a dropped frame).
    pub window_i2fs_ns: Option<u64>,
}

impl LatencyRow {
    /// FS2P: frame start → present call.
    pub fn fs2p_ns(&self) -> u64 {
        self.call_ns - self.start.ns
    }

    /// P2D: present call → on screen; shown frames only.
    pub fn p2d_ns(&self) -> Option<i64> {
        match self.fate {
            Seen::At { latency_ns, .. } => Some(latency_ns),
            _ => None,
        }
    }

    /// The mean I2FS of the inputs this frame took.
    pub fn i2fs_ns(&self) -> Option<u64> {
        self.taken.map(|t| t.i2fs_mean_ns())
    }

    /// Input → on screen, the mean over the inputs this frame took:
    /// I2FS + FS2P + P2D of this frame.
    pub fn click_to_photon_ns(&self) -> Option<i64> {
        Some(signed(self.i2fs_ns()?) + signed(self.fs2p_ns()) + self.p2d_ns()?)
    }

    /// PCL: the window's mean I2FS + this frame's FS2P + P2D; shown frames
    /// with an input in the window only.
    pub fn pcl_ns(&self) -> Option<i64> {
        Some(signed(self.window_i2fs_ns?) + signed(self.fs2p_ns()) + self.p2d_ns()?)
    }
}

fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// What the tracker counted, for the summary and the log's lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrackerStats {
    /// Inputs counted.
    pub inputs: u64,
    /// Inputs refused, by [`Rejection::ALL`]'s order.
    pub rejected: [u64; 5],
    /// Inputs taken by dropped frames with no later frame to pass them on
    /// to (the session ended).
    pub inputs_unshown: u64,
    /// Frames by where their start came from, [`StartSource::ALL`]'s order.
    pub starts: [u64; 4],
    /// Presents whose id or times went back: not frames here.
    pub presents_refused: u64,
    /// Display answers for frames already given out.
    pub late_answers: u64,
    /// Frames given out before their answer or their inputs were in
    /// ([`PENDING_FRAMES`] more came).
    pub forced_rows: u64,
}

impl TrackerStats {
    pub fn rejected(&self, r: Rejection) -> u64 {
        self.rejected[r.index()]
    }

    pub fn starts(&self, s: StartSource) -> u64 {
        self.starts[s.index()]
    }
}

#[derive(Clone, Copy)]
struct Pending {
    id: u64,
    start: FrameStart,
    call_ns: u64,
    fate: Option<Seen>,
    taken: Taken,
}

#[derive(Clone, Copy)]
struct WindowEntry {
    start_ns: u64,
    inputs: u64,
    i2fs_sum_ns: u64,
}

/// Attributes inputs to frames and gives out one [`LatencyRow`] per frame,
/// in order, in fixed memory (docs/metrics.md, "PC latency").
///
/// Feed it, in any interleaving: [`present`](Self::present) for each
/// present in order, [`fate`](Self::fate) as display answers come (late,
/// out of order), [`input`](Self::input) for each input time read, and
/// [`inputs_until`](Self::inputs_until) once every input up to a time has
/// been read (`u64::MAX` when there is no input reader). A row is ready
/// when its frame's fate is known and inputs are read up to its start;
/// take ready rows with [`next_row`](Self::next_row), and the rest at the
/// end with [`finish`](Self::finish).
pub struct LatencyTracker {
    window_ns: u64,
    limits: InputLimits,
    frames: VecDeque<Pending>,
    /// Times of inputs later than every frame start so far.
    inputs: Vec<u64>,
    window: VecDeque<WindowEntry>,
    window_inputs: u64,
    window_sum_ns: u128,
    /// Inputs of dropped frames on their way to the next frame not dropped,
    /// with I2FS run to the start of the last of them.
    carry: Option<(u64, Taken)>,
    last_start_ns: Option<u64>,
    resolved_start_ns: Option<u64>,
    resolved_id: Option<u64>,
    previous_return_ns: Option<u64>,
    last_id: Option<u64>,
    last_call_ns: Option<u64>,
    last_input: [Option<u64>; 3],
    read_until_ns: u64,
    stats: TrackerStats,
}

impl LatencyTracker {
    /// A tracker whose I2FS window is the last `window_ns` of frame starts.
    pub fn new(window_ns: u64, limits: InputLimits) -> Self {
        LatencyTracker {
            window_ns,
            limits,
            frames: VecDeque::with_capacity(PENDING_FRAMES),
            inputs: Vec::with_capacity(PENDING_INPUTS),
            window: VecDeque::with_capacity(WINDOW_FRAMES),
            window_inputs: 0,
            window_sum_ns: 0,
            carry: None,
            last_start_ns: None,
            resolved_start_ns: None,
            resolved_id: None,
            previous_return_ns: None,
            last_id: None,
            last_call_ns: None,
            last_input: [None; 3],
            read_until_ns: 0,
            stats: TrackerStats::default(),
        }
    }

    pub fn stats(&self) -> &TrackerStats {
        &self.stats
    }

    /// A present, in order. It ends a frame that starts by [`frame_start`]
    /// (the session's first present without a marker ends none). A present
    /// whose id or call goes back, or that returns before its call, is
    /// refused. When [`PENDING_FRAMES`] frames are pending, the oldest is
    /// given out as it stands and returned.
    pub fn present(&mut self, p: Present) -> Option<LatencyRow> {
        if self.last_id.is_some_and(|l| p.id <= l)
            || self.last_call_ns.is_some_and(|c| p.call_ns < c)
            || p.return_ns < p.call_ns
        {
            self.stats.presents_refused += 1;
            return None;
        }
        let start = frame_start(
            p.markers,
            self.previous_return_ns,
            self.last_start_ns,
            p.call_ns,
        );
        self.previous_return_ns = Some(p.return_ns);
        self.last_id = Some(p.id);
        self.last_call_ns = Some(p.call_ns);
        let start = start?;
        let forced = if self.frames.len() >= PENDING_FRAMES {
            self.stats.forced_rows += 1;
            self.resolve_front()
        } else {
            None
        };
        let mut taken = Taken::default();
        self.inputs.retain(|&t| {
            let mine = t <= start.ns;
            if mine {
                taken.add(start.ns, t);
            }
            !mine
        });
        self.stats.starts[start.source.index()] += 1;
        self.frames.push_back(Pending {
            id: p.id,
            start,
            call_ns: p.call_ns,
            fate: None,
            taken,
        });
        self.last_start_ns = Some(start.ns);
        forced
    }

    /// The return of the last present given, learnt after it (the layer
    /// books the time a present spent in its call with the next frame's
    /// counters): replaces the `return_ns` it came with, and so the start
    /// of the next frame. A return before that present's call is ignored.
    pub fn returned(&mut self, return_ns: u64) {
        if self.last_call_ns.is_some_and(|c| return_ns >= c) {
            self.previous_return_ns = Some(return_ns);
        }
    }

    /// The display answer for present `id`: the first answer for a frame
    /// counts. `Seen::At`'s `latency_ns` is ignored (P2D is measured from
    /// the call this tracker saw).
    pub fn fate(&mut self, id: u64, seen: Seen) {
        if self.resolved_id.is_some_and(|r| id <= r) {
            self.stats.late_answers += 1;
            return;
        }
        let i = self.frames.partition_point(|f| f.id < id);
        if let Some(f) = self.frames.get_mut(i).filter(|f| f.id == id) {
            if f.fate.is_none() {
                f.fate = Some(match seen {
                    Seen::At { displayed_ns, .. } => Seen::At {
                        displayed_ns,
                        latency_ns: i64::try_from(i128::from(displayed_ns) - i128::from(f.call_ns))
                            .unwrap_or(i64::MIN + 1),
                    },
                    other => other,
                });
            }
        }
    }

    /// An input at `t_ns` from `source`, read at `now_ns`: counted towards
    /// the first frame whose start is at or after it, or refused.
    pub fn input(&mut self, t_ns: u64, source: InputSource, now_ns: u64) -> Result<(), Rejection> {
        let r = self.take_input(t_ns, source, now_ns);
        match r {
            Ok(()) => {
                self.stats.inputs += 1;
                self.last_input[source.index()] = Some(t_ns);
            }
            Err(e) => self.stats.rejected[e.index()] += 1,
        }
        r
    }

    fn take_input(&mut self, t_ns: u64, source: InputSource, now_ns: u64) -> Result<(), Rejection> {
        check_input(t_ns, now_ns, self.last_input[source.index()], self.limits)?;
        if self.resolved_start_ns.is_some_and(|s| t_ns <= s) {
            return Err(Rejection::Late);
        }
        if self.last_start_ns.is_some_and(|s| t_ns <= s) {
            // A pending frame starts at or after it (every frame given out
            // starts before it).
            let i = self.frames.partition_point(|f| f.start.ns < t_ns);
            let f = self.frames.get_mut(i).ok_or(Rejection::Late)?;
            f.taken.add(f.start.ns, t_ns);
            return Ok(());
        }
        if self.inputs.len() >= PENDING_INPUTS {
            return Err(Rejection::Overflow);
        }
        self.inputs.push(t_ns);
        Ok(())
    }

    /// Every input at or before `t_ns` has been given to [`input`](Self::input).
    pub fn inputs_until(&mut self, t_ns: u64) {
        self.read_until_ns = self.read_until_ns.max(t_ns);
    }

    /// The oldest frame's row, if its fate is known and inputs are read up
    /// to its start.
    pub fn next_row(&mut self) -> Option<LatencyRow> {
        let f = self.frames.front()?;
        if f.fate.is_none() || self.read_until_ns < f.start.ns {
            return None;
        }
        self.resolve_front()
    }

    /// The oldest frame's row as it stands (fate unknown if no answer
    /// came): call until `None` when the session ends. Inputs of dropped
    /// frames with no frame after them count in
    /// [`TrackerStats::inputs_unshown`].
    pub fn finish(&mut self) -> Option<LatencyRow> {
        let row = self.resolve_front();
        if row.is_none() {
            if let Some((_, c)) = self.carry.take() {
                self.stats.inputs_unshown += u64::from(c.inputs);
            }
        }
        row
    }

    fn resolve_front(&mut self) -> Option<LatencyRow> {
        let f = self.frames.pop_front()?;
        let fate = f.fate.unwrap_or(Seen::Unknown);
        self.resolved_start_ns = Some(f.start.ns);
        self.resolved_id = Some(f.id);
        let mut row = LatencyRow {
            id: f.id,
            start: f.start,
            call_ns: f.call_ns,
            fate,
            taken: None,
            window_i2fs_ns: None,
        };
        let mut taken = f.taken;
        if let Some((from_ns, c)) = self.carry.take() {
            taken.merge(c, f.start.ns - from_ns);
        }
        if fate == Seen::Dropped {
            // The seed's rule: a dropped frame's inputs wait for the next
            // frame that is not dropped.
            if taken.inputs > 0 {
                self.carry = Some((f.start.ns, taken));
            }
            return Some(row);
        }
        self.slide_window(f.start.ns, taken);
        row.taken = (taken.inputs > 0).then_some(taken);
        row.window_i2fs_ns =
            (self.window_inputs > 0).then(|| mean_rounded(self.window_sum_ns, self.window_inputs));
        Some(row)
    }

    /// The window ending at a frame starting at `start_ns` that took `taken`.
    fn slide_window(&mut self, start_ns: u64, taken: Taken) {
        if taken.inputs > 0 {
            if self.window.len() >= WINDOW_FRAMES {
                self.evict_oldest();
            }
            self.window.push_back(WindowEntry {
                start_ns,
                inputs: u64::from(taken.inputs),
                i2fs_sum_ns: taken.i2fs_sum_ns,
            });
            self.window_inputs += u64::from(taken.inputs);
            self.window_sum_ns += u128::from(taken.i2fs_sum_ns);
        }
        while self
            .window
            .front()
            .is_some_and(|e| e.start_ns.saturating_add(self.window_ns) <= start_ns)
        {
            self.evict_oldest();
        }
    }

    fn evict_oldest(&mut self) {
        if let Some(e) = self.window.pop_front() {
            self.window_inputs -= e.inputs;
            self.window_sum_ns -= u128::from(e.i2fs_sum_ns);
        }
    }
}

/// The terms of the summary's latency block, in its order: what
/// [`LatencySummary::stats`] gives.
pub const SUMMARY_KEYS: [ValueKey; 5] = [
    ValueKey::PcLatency,
    ValueKey::ClickToPhoton,
    ValueKey::InputToFrameStart,
    ValueKey::FrameStartToPresent,
    ValueKey::PresentToDisplay,
];

/// One term's time-weighted sums: exact mean, P99 by buckets.
struct Weighted {
    frames: u64,
    weight_ns: u128,
    value_weight: i128,
    /// Per bucket of the value ([`bucket_of`], negative values in bucket
    /// 0, values past 10 s in the last): Σ D and Σ v·D.
    buckets: Box<[(u64, f64)]>,
}

impl Weighted {
    fn new(n: usize) -> Self {
        Weighted {
            frames: 0,
            weight_ns: 0,
            value_weight: 0,
            buckets: vec![(0, 0.0); n].into_boxed_slice(),
        }
    }

    fn add(&mut self, v: i64, d: u64) {
        self.frames += 1;
        self.weight_ns += u128::from(d);
        self.value_weight += i128::from(v) * i128::from(d);
        let b = (bucket_of(u64::try_from(v).unwrap_or(0)) as usize).min(self.buckets.len() - 1);
        let bin = &mut self.buckets[b];
        bin.0 = bin.0.saturating_add(d);
        bin.1 += v as f64 * d as f64;
    }

    fn stats(&self, column: String) -> Option<ValueStats> {
        if self.frames == 0 {
            return None;
        }
        let w = self.weight_ns;
        let target = u128::from(P99_PPM) * w;
        let mut acc: u128 = 0;
        let mut p99 = 0.0;
        for &(d, vd) in self.buckets.iter().filter(|b| b.0 > 0) {
            acc += u128::from(d);
            p99 = (vd / d as f64).round();
            if acc * u128::from(PPM) >= target {
                break;
            }
        }
        Some(ValueStats {
            column,
            frames: self.frames as usize,
            time_s: w as f64 / 1e9,
            mean_ms: self.value_weight as f64 / w as f64 / 1e6,
            p99_ms: p99 / 1e6,
        })
    }
}

/// The summary's latency block over a session's rows, in fixed memory: per
/// term of [`SUMMARY_KEYS`], the mean and P99 time-weighted by how long
/// each shown frame stayed on screen, by the rules of docs/metrics.md
/// ("Animation error and latency, time-weighted"). The mean is exact; the
/// P99 is the mean of the values in its bucket of the histogram scheme
/// (exact when they are equal, else within 1 %; values past 10 s share
/// one bucket).
pub struct LatencySummary {
    terms: [Weighted; 5],
    /// The last shown frame since the chain began, awaiting the next
    /// shown frame's display time for its D: its display time and values.
    previous: Option<(u64, [Option<i64>; 5])>,
}

impl Default for LatencySummary {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencySummary {
    pub fn new() -> Self {
        let n = bucket_of(SUMMARY_CAP_NS) as usize + 1;
        debug_assert!(bucket_range(n as u32 - 1).is_some());
        LatencySummary {
            terms: std::array::from_fn(|_| Weighted::new(n)),
            previous: None,
        }
    }

    /// The next row, in frame order. A shown frame's D is the time to the
    /// next shown frame's display; a dropped frame leaves the chain as it
    /// is, an unknown one breaks it (the frame before it gets no D).
    pub fn push(&mut self, row: &LatencyRow) {
        match row.fate {
            Seen::At { displayed_ns, .. } => {
                if let Some((prev_ns, values)) = self.previous.take() {
                    let d = displayed_ns.saturating_sub(prev_ns);
                    if d > 0 {
                        for (term, v) in self.terms.iter_mut().zip(values) {
                            if let Some(v) = v {
                                term.add(v, d);
                            }
                        }
                    }
                }
                let pcl = row.pcl_ns();
                self.previous = Some((
                    displayed_ns,
                    [
                        pcl,
                        row.click_to_photon_ns(),
                        pcl.and(row.window_i2fs_ns.map(signed)),
                        Some(signed(row.fs2p_ns())),
                        row.p2d_ns(),
                    ],
                ));
            }
            Seen::Dropped => {}
            Seen::Unknown => self.previous = None,
        }
    }

    /// Per term of [`SUMMARY_KEYS`]: its statistics, `None` without a
    /// sample; `column` names each term's source for the output.
    pub fn stats(
        &self,
        column: impl Fn(ValueKey) -> String,
    ) -> [(ValueKey, Option<ValueStats>); 5] {
        std::array::from_fn(|i| {
            let key = SUMMARY_KEYS[i];
            (key, self.terms[i].stats(column(key)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn present(id: u64, call_ms: f64, return_ms: f64) -> Present {
        Present {
            id,
            call_ns: (call_ms * MS as f64) as u64,
            return_ns: (return_ms * MS as f64) as u64,
            markers: Markers::default(),
        }
    }

    fn shown(ms: u64) -> Seen {
        Seen::At {
            displayed_ns: ms * MS,
            latency_ns: 0,
        }
    }

    #[test]
    fn the_frame_start_is_the_games_marker_else_the_previous_return() {
        let m = Markers {
            simulation_start_ns: Some(5),
            input_sample_ns: Some(6),
            anti_lag_input_ns: Some(7),
        };
        let at = |m, prev_start| frame_start(m, Some(4), prev_start, 10);
        assert_eq!(
            at(m, Some(1)),
            Some(FrameStart {
                ns: 5,
                source: StartSource::SimulationStart
            })
        );
        // A marker after the call, or before the previous frame's start,
        // is not believed: the next one is taken.
        let late = Markers {
            simulation_start_ns: Some(11),
            ..m
        };
        assert_eq!(at(late, Some(1)).unwrap().source, StartSource::InputSample);
        let only_anti_lag = Markers {
            anti_lag_input_ns: Some(9),
            ..Markers::default()
        };
        assert_eq!(
            at(only_anti_lag, Some(1)).unwrap().source,
            StartSource::AntiLagInput
        );
        let back = Markers {
            simulation_start_ns: Some(2),
            ..Markers::default()
        };
        assert_eq!(
            at(back, Some(3)),
            Some(FrameStart {
                ns: 4,
                source: StartSource::PresentReturn
            })
        );
        // The first present without a marker ends no frame.
        assert_eq!(frame_start(Markers::default(), None, None, 10), None);
    }

    #[test]
    fn input_times_in_the_future_the_far_past_or_backwards_are_refused() {
        let l = InputLimits::default();
        let now = 10_000 * MS;
        assert_eq!(check_input(now + 2 * MS, now, None, l), Ok(()));
        assert_eq!(
            check_input(now + 2 * MS + 1, now, None, l),
            Err(Rejection::Future)
        );
        assert_eq!(check_input(now - 2000 * MS, now, None, l), Ok(()));
        assert_eq!(
            check_input(now - 2000 * MS - 1, now, None, l),
            Err(Rejection::Past)
        );
        assert_eq!(check_input(now - 5, now, Some(now - 5), l), Ok(()));
        assert_eq!(
            check_input(now - 6, now, Some(now - 5), l),
            Err(Rejection::NonMonotonic)
        );
        // Through the tracker: counted by reason, the order kept per source.
        let mut t = LatencyTracker::new(10_000 * MS, l);
        assert_eq!(t.input(now - 5, InputSource::Key, now), Ok(()));
        assert_eq!(
            t.input(now - 6, InputSource::Key, now),
            Err(Rejection::NonMonotonic)
        );
        assert_eq!(t.input(now - 6, InputSource::Button, now), Ok(()));
        assert_eq!(
            t.input(now + 3 * MS, InputSource::Motion, now),
            Err(Rejection::Future)
        );
        assert_eq!(t.stats().inputs, 2);
        assert_eq!(t.stats().rejected(Rejection::NonMonotonic), 1);
        assert_eq!(t.stats().rejected(Rejection::Future), 1);
    }

    /// The seed's example: input 2.5 ms before dropped frame X's start, X+1
    /// (dropped) 5 ms after, X+2 (shown) 4.5 ms after that: I2FS 12 ms.
    #[test]
    fn a_dropped_frame_passes_its_input_to_the_next_shown_frame() {
        let mut t = LatencyTracker::new(1000 * MS, InputLimits::default());
        t.inputs_until(u64::MAX);
        assert!(t.present(present(0, 0.0, 10.0)).is_none());
        t.present(present(1, 14.0, 15.0)); // X starts at 10
        t.present(present(2, 19.0, 19.5)); // X+1 at 15
        t.present(present(3, 25.0, 26.0)); // X+2 at 19.5
        t.input(7_500_000, InputSource::Button, 20 * MS).unwrap();
        t.fate(3, shown(40));
        // Answers out of order: nothing before X's answer.
        assert!(t.next_row().is_none());
        t.fate(2, Seen::Dropped);
        assert!(t.next_row().is_none());
        t.fate(1, Seen::Dropped);
        let x = t.next_row().unwrap();
        assert_eq!((x.id, x.taken, x.pcl_ns()), (1, None, None));
        assert_eq!(t.next_row().unwrap().taken, None);
        let x2 = t.next_row().unwrap();
        let taken = x2.taken.unwrap();
        assert_eq!((taken.inputs, taken.first_ns), (1, 7_500_000));
        assert_eq!(x2.i2fs_ns(), Some(12 * MS));
        // FS2P 25 − 19.5, P2D 40 − 25: click to photon 40 − 7.5.
        assert_eq!(x2.fs2p_ns(), 5_500_000);
        assert_eq!(x2.p2d_ns(), Some(15 * MS as i64));
        assert_eq!(x2.click_to_photon_ns(), Some(32_500_000));
        assert_eq!(x2.pcl_ns(), Some(32_500_000));
        assert!(t.next_row().is_none());
        // A late answer for a frame given out is counted, not applied.
        t.fate(1, shown(50));
        assert_eq!(t.stats().late_answers, 1);
    }

    #[test]
    fn a_row_waits_for_its_answer_and_for_the_inputs_up_to_its_start() {
        let mut t = LatencyTracker::new(1000 * MS, InputLimits::default());
        t.present(present(0, 0.0, 1.0));
        t.present(present(1, 9.0, 10.0)); // starts at 1
        t.present(present(2, 19.0, 20.0)); // starts at 10
        t.fate(1, shown(30));
        t.fate(2, Seen::Unknown);
        assert!(t.next_row().is_none(), "inputs not read up to 1 ms yet");
        t.inputs_until(5 * MS);
        let r = t.next_row().unwrap();
        assert_eq!(
            (r.id, r.taken, r.window_i2fs_ns, r.pcl_ns()),
            (1, None, None, None)
        );
        assert!(t.next_row().is_none());
        // An input read late for frame 2 still counts: it is pending.
        t.input(6 * MS, InputSource::Key, 21 * MS).unwrap();
        t.inputs_until(21 * MS);
        let r = t.next_row().unwrap();
        // Unknown fate: I2FS and the window are known, P2D, PCL and click
        // to photon are not.
        assert_eq!(r.i2fs_ns(), Some(4 * MS));
        assert_eq!(r.window_i2fs_ns, Some(4 * MS));
        assert_eq!(
            (r.p2d_ns(), r.pcl_ns(), r.click_to_photon_ns()),
            (None, None, None)
        );
        // Too late now: frame 2 is out.
        assert_eq!(
            t.input(9 * MS, InputSource::Button, 22 * MS),
            Err(Rejection::Late)
        );
        assert_eq!(t.stats().rejected(Rejection::Late), 1);
    }

    #[test]
    fn the_window_forgets_inputs_older_than_its_length() {
        let mut t = LatencyTracker::new(25 * MS, InputLimits::default());
        t.inputs_until(u64::MAX);
        t.present(present(0, 0.0, 0.0));
        let mut rows = Vec::new();
        for k in 1..=5u64 {
            // Frame k starts at 10·(k−1) ms; inputs at 6 and 14.
            if k <= 2 {
                let s = 10 * (k - 1) * MS;
                t.input(
                    s + 10 * MS - 2 * (k + 1) * MS,
                    InputSource::Key,
                    s + 10 * MS,
                )
                .unwrap();
            }
            t.present(present(k, (10 * k) as f64 - 1.0, (10 * k) as f64));
            t.fate(k, shown(10 * k + 5));
            rows.extend(std::iter::from_fn(|| t.next_row()));
        }
        let w: Vec<Option<u64>> = rows
            .iter()
            .map(|r| r.window_i2fs_ns.map(|v| v / MS))
            .collect();
        // Inputs at 6 (→ frame 2, start 10: 4) and 14 (→ frame 3, start 20:
        // 6); frame 4 starts at 30 (window (5, 30]: both); frame 5 at 40
        // (window (15, 40]: only frame 3's).
        assert_eq!(w, [None, Some(4), Some(5), Some(5), Some(6)]);
    }

    #[test]
    fn a_full_queue_gives_out_the_oldest_frame_unknown() {
        let mut t = LatencyTracker::new(1000 * MS, InputLimits::default());
        t.present(present(0, 0.0, 0.0));
        let mut forced = 0;
        for k in 1..=(PENDING_FRAMES as u64 + 3) {
            if let Some(r) = t.present(present(k, k as f64, k as f64)) {
                assert_eq!(r.fate, Seen::Unknown);
                forced += 1;
            }
        }
        assert_eq!(forced, 3);
        assert_eq!(t.stats().forced_rows, 3);
        assert_eq!(t.frames.capacity(), PENDING_FRAMES);
        let mut rest = 0;
        while t.finish().is_some() {
            rest += 1;
        }
        assert_eq!(rest, PENDING_FRAMES);
    }

    #[test]
    fn inputs_past_the_queue_are_refused_and_unshown_ones_counted() {
        let mut t = LatencyTracker::new(1000 * MS, InputLimits::default());
        t.inputs_until(u64::MAX);
        t.present(present(0, 0.0, 1.0));
        let now = 10 * MS;
        for i in 0..PENDING_INPUTS as u64 {
            t.input(2 * MS + i, InputSource::Motion, now).unwrap();
        }
        assert_eq!(
            t.input(3 * MS, InputSource::Motion, now),
            Err(Rejection::Overflow)
        );
        // Frame 1 (start 1) takes none, frame 2 (start 5) all; frame 2 is
        // dropped and nothing follows: they were never shown.
        t.present(present(1, 4.0, 5.0));
        t.present(present(2, 9.0, 9.5));
        t.fate(1, shown(12));
        t.fate(2, Seen::Dropped);
        let rows: Vec<LatencyRow> = std::iter::from_fn(|| t.next_row()).collect();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.taken.is_none()));
        assert!(t.finish().is_none());
        let s = t.stats();
        assert_eq!(
            (s.inputs, s.rejected(Rejection::Overflow), s.inputs_unshown),
            (PENDING_INPUTS as u64, 1, PENDING_INPUTS as u64)
        );
        assert_eq!(s.starts(StartSource::PresentReturn), 2);
    }

    /// Time on screen weighs each shown frame; an unknown frame breaks the
    /// chain (the frame before it gets no D), a dropped one does not.
    #[test]
    fn the_summary_weighs_by_time_on_screen() {
        let mut t = LatencyTracker::new(1000 * MS, InputLimits::default());
        t.inputs_until(u64::MAX);
        t.present(present(0, 0.0, 0.0));
        // Frames 1..=5 start at 0, 10, 20, 30, 40, calls 2 ms later.
        for k in 1..=5u64 {
            t.present(present(k, (10 * k - 8) as f64, (10 * k) as f64));
        }
        let fates = [
            shown(10),
            Seen::Dropped,
            shown(40),
            Seen::Unknown,
            shown(60),
        ];
        for (k, f) in fates.into_iter().enumerate() {
            t.fate(k as u64 + 1, f);
        }
        let mut s = LatencySummary::new();
        std::iter::from_fn(|| t.next_row()).for_each(|r| s.push(&r));
        let st = s.stats(|k| k.name().to_string());
        // Only frame 1 has a D (40 − 10 = 30 ms: frame 2 was dropped);
        // frame 3's chain is broken by frame 4, frame 5 is the last.
        let (key, fs2p) = &st[3];
        assert_eq!(*key, ValueKey::FrameStartToPresent);
        let fs2p = fs2p.as_ref().unwrap();
        assert_eq!((fs2p.frames, fs2p.time_s, fs2p.mean_ms), (1, 0.03, 2.0));
        // No input: no PCL, click to photon or I2FS.
        assert!(st[..3].iter().all(|(_, v)| v.is_none()));
    }

    #[test]
    fn a_return_learnt_later_starts_the_next_frame() {
        let mut t = LatencyTracker::new(1000 * MS, InputLimits::default());
        t.present(present(0, 0.0, 0.0));
        t.returned(2 * MS);
        t.present(present(1, 10.0, 10.0));
        t.returned(9 * MS); // before present 1's call: ignored
        t.present(present(2, 20.0, 20.0));
        let starts: Vec<u64> = std::iter::from_fn(|| t.finish())
            .map(|r| r.start.ns)
            .collect();
        assert_eq!(starts, [2 * MS, 10 * MS]);
    }

    #[test]
    fn presents_that_go_back_are_refused() {
        let mut t = LatencyTracker::new(1000 * MS, InputLimits::default());
        t.present(present(5, 10.0, 11.0));
        assert!(t.present(present(5, 20.0, 21.0)).is_none());
        assert!(t.present(present(6, 9.0, 21.0)).is_none());
        assert!(t.present(present(7, 30.0, 29.0)).is_none());
        assert_eq!(t.stats().presents_refused, 3);
        t.present(present(8, 40.0, 41.0));
        let r = t.finish().unwrap();
        assert_eq!((r.id, r.start.ns), (8, 11 * MS));
    }
}
