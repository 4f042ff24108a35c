//! One capture stream (a window's presents) on the analysis thread: its
//! ring drained into frame durations, log rows (with counter and GPU
//! columns), the rolling window, live statistics for the HUD and the
//! summary kept current; and its end.
//!
//! A row is written once it is decided: its GPU columns known (GPU
//! timing, [`GpuFrames`]), then its display answer known (displayed-frame
//! timing, [`DisplayFrames`]); a stream with neither writes it at once.

use super::control::MarkPlaced;
use super::counter_columns::{self, CounterTrack};
use super::display_frames::DisplayFrames;
use super::gpu_frames::{GpuFrames, Pending};
use super::latency_frames::LatencyFrames;
use super::sensor_feed::{Recorder, SharedFeed};
use super::session::Log;
use super::stutter_lists::{StutterCauses, StutterLists};
use super::tally;
use super::upkeep::{self, Schedule, Snapshot};
use crate::client_state::ClientState;
use crate::faults::Site;
use crate::gpu_times::GpuTimes;
use crate::guard;
use crate::live::LiveStats;
use crate::rings::{Answer, CounterFrame, Stream};
use ringbuf::traits::Consumer;
use ringbuf::HeapCons;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use steadyhud_config::hud;
use steadyhud_control::replies::{
    WindowDisplay, WindowHistogram, WindowLatency, WindowMetrics, WindowStatus,
};
use steadyhud_log::running_session;
use steadyhud_metrics::{Options, Rolling, WholeSession};

/// Bound on the frames the rolling window holds, whatever the frame rate.
const ROLLING_MAX_FRAMES: usize = 200_000;

/// What a stream's analysis reads: its timestamp ring and, when its device
/// counts, its counter ring and GPU timer, and its display ring when the
/// window has a source of display times.
pub(super) type Feeds = (
    HeapCons<u64>,
    Option<HeapCons<CounterFrame>>,
    Option<Arc<dyn GpuTimes>>,
    Option<HeapCons<Answer>>,
);

/// Analysis state of one stream.
pub(super) struct StreamAnalysis {
    stream: Arc<Stream>,
    cons: HeapCons<u64>,
    last_t: Option<u64>,
    first_t: Option<u64>,
    /// Frames so far (presents − 1).
    frames: u64,
    /// The whole-session statistics of the rows written so far, in fixed
    /// size: every summary write is computed from it.
    whole: WholeSession,
    /// `None` once a panic disabled live statistics for this stream.
    rolling: Option<Rolling>,
    log: Log,
    overflows_logged: u64,
    counter_overflows_logged: u64,
    /// Statistics counters of the stream's device, when it counts.
    counters: Option<CounterTrack>,
    /// GPU timing of the stream's device (needs counters): rows wait here
    /// until their GPU columns are known.
    gpu: Option<GpuFrames>,
    /// Displayed-frame timing: rows wait here (after their GPU columns)
    /// until their display answer is known.
    display: Option<DisplayFrames>,
    /// PC latency: rows wait here (after their display answer) until the
    /// inputs up to their frame's start are read; `None` without a reader
    /// of input times or the present's return (counters).
    latency: Option<LatencyFrames>,
    /// The I2FS and HUD window, ns.
    window_ns: u64,
    client: &'static ClientState,
    /// Windows whose log was opened so far (names the logs).
    windows: Arc<AtomicU64>,
    /// The frame cap last written to the log (`None`: nothing written yet).
    cap_logged: Option<u32>,
    opts: Options,
    /// When the summary JSON is next rewritten while the session runs.
    upkeep: Schedule,
    /// System readings (config `sensor_hz`): the log's sensor columns and
    /// the HUD's sensor rows.
    sensors: Option<SharedFeed>,
    /// The sensor columns this stream's log has (fixed when it opens).
    sensor_columns: bool,
    /// The current row's sensor cells.
    cells: String,
    /// Each written row's readings, for the summary's `sensors` block.
    recorded: Option<Recorder>,
    /// Timestamps `0..tail_fill` were presented before the stream's tail
    /// was attached: this thread puts them there as it drains them.
    tail_fill: u64,
}

impl StreamAnalysis {
    #[cfg(test)]
    pub(super) fn new(
        stream: Arc<Stream>,
        cons: HeapCons<u64>,
        log: Log,
        window_s: f64,
        opts: Options,
    ) -> Self {
        Self::with_counters(
            stream,
            (cons, None, None, None),
            log,
            window_s,
            opts,
            ClientState::for_tests(),
            Arc::default(),
        )
    }

    /// `feeds`: the stream's timestamp ring and, when its device counts,
    /// its counter ring and GPU timer.
    pub(super) fn with_counters(
        stream: Arc<Stream>,
        (cons, vcons, gpu, display): Feeds,
        log: Log,
        window_s: f64,
        opts: Options,
        client: &'static ClientState,
        windows: Arc<AtomicU64>,
    ) -> Self {
        let gpu = gpu.and_then(|timer| {
            let table = stream.counters.as_ref()?;
            let col = |n| table.get(n).map(|id| id.index());
            Some(GpuFrames::new(
                timer,
                col(steadyhud_metrics::gpu::BUSY_COLUMN)?,
                col(steadyhud_metrics::gpu::WAIT_COLUMN)?,
                (window_s.max(0.1) * 1e9) as u64,
                ROLLING_MAX_FRAMES,
            ))
        });
        let display =
            display.map(|d| DisplayFrames::new(d, (window_s.max(0.1) * 1e9) as u64, &opts));
        StreamAnalysis {
            gpu,
            display,
            latency: None,
            window_ns: (window_s.max(0.1) * 1e9) as u64,
            counters: CounterTrack::new(
                &stream,
                vcons,
                opts.stutter_threshold,
                &client.config.hud_counter_names,
            ),
            client,
            windows,
            stream,
            cons,
            last_t: None,
            first_t: None,
            frames: 0,
            whole: WholeSession::new(&opts),
            rolling: Some(Rolling::new(
                (window_s.max(0.1) * 1e9) as u64,
                ROLLING_MAX_FRAMES,
                opts,
            )),
            log,
            overflows_logged: 0,
            counter_overflows_logged: 0,
            cap_logged: None,
            opts,
            upkeep: Schedule::default(),
            sensors: None,
            sensor_columns: false,
            recorded: None,
            cells: String::new(),
            tail_fill: 0,
        }
    }

    /// The stream with the system readings of `feed`.
    pub(super) fn with_sensors(mut self, feed: SharedFeed) -> Self {
        self.sensors = Some(feed);
        self
    }

    /// The sensor cells of the row whose frame ends at present `t`,
    /// recorded for the summary.
    fn sensor_cells<'a>(
        sensors: &Option<SharedFeed>,
        on: bool,
        t: u64,
        cells: &'a mut String,
        recorded: &mut Option<Recorder>,
    ) -> &'a str {
        cells.clear();
        if let (true, Some(f)) = (on, sensors) {
            use steadyhud_sys::lock::Recover;
            f.lock_or_recover().cells(t, cells);
            if let Some(r) = recorded.as_mut() {
                r.push(cells);
            }
        }
        cells
    }

    /// The capture stream this analysis reads.
    pub(super) fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Whether the stream's device times its submits.
    pub(super) fn times_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// Writes `# mark: TEXT at frame N` (N: the frames so far) into the
    /// log and flushes it; where it went, when the log is open.
    pub(super) fn mark(&mut self, text: &str) -> Option<MarkPlaced> {
        let frame = self.frames;
        if !self.log.note_mark(text, frame) {
            return None;
        }
        self.log.flush();
        Some(MarkPlaced {
            log: self.log.csv_path()?.to_path_buf(),
            frame,
        })
    }

    /// The `histogram` request's view of this stream: its totals and time
    /// histogram since its first frame, brought up to date.
    pub(super) fn histogram(&mut self) -> WindowHistogram {
        tally::reply(&self.whole, self.stream.id, self.stream.overflows())
    }

    /// The control socket's view of this stream over a `window_s` window.
    pub(super) fn status(&self, window_s: f64) -> WindowStatus {
        let gpu = self.gpu.as_ref().and_then(GpuFrames::live);
        WindowStatus {
            stream: self.stream.id,
            log: self.log.csv_path().map(|l| l.display().to_string()),
            frames: self.frames,
            window_s,
            metrics: self
                .rolling
                .as_ref()
                .and_then(Rolling::summary)
                .as_ref()
                .map(WindowMetrics::from),
            gpu_busy_ms: gpu.map(|g| g.busy_ms),
            gpu_bound_pct: gpu.map(|g| g.bound_pct),
            display: self
                .display
                .as_ref()
                .and_then(DisplayFrames::live)
                .as_ref()
                .map(WindowDisplay::from),
            latency: self.latency.as_ref().map(|l| WindowLatency::new(l.terms())),
            readings: self.sensors.as_ref().map_or_else(Default::default, |f| {
                use steadyhud_sys::lock::Recover;
                f.lock_or_recover().latest()
            }),
        }
    }

    /// Hands the log's buffered rows to the file.
    pub(super) fn flush_log(&mut self) {
        self.log.flush();
    }

    pub(super) fn drain(&mut self, buf: &mut [u64]) {
        loop {
            let n = self.cons.pop_slice(buf);
            for &t in &buf[..n] {
                self.on_present(t);
            }
            if n < buf.len() {
                break;
            }
        }
        self.flush_gpu(false);
        if self.display.is_some() {
            let x11 = self.client.x11present.take_notes();
            for note in self.client.wayland.take_notes().into_iter().chain(x11) {
                guard::say(format_args!("steadyhud: {note}"));
            }
        }
        self.note_cap();
        let o = self.stream.overflows();
        if o > self.overflows_logged {
            self.log.note_overflow(o - self.overflows_logged);
            self.overflows_logged = o;
        }
        let c = self.stream.counter_overflows();
        if c > self.counter_overflows_logged {
            self.log
                .note_counter_overflow(c - self.counter_overflows_logged);
            self.counter_overflows_logged = c;
        }
    }

    pub(super) fn on_present(&mut self, t: u64) {
        // This timestamp's number in the stream (the first is 0).
        let index = self.last_t.map_or(0, |_| self.frames + 1);
        match self.last_t {
            None => {
                self.first_t = Some(t);
                let ordinal = self.windows.fetch_add(1, Ordering::Relaxed) + 1;
                let (columns, about) = match self.counters.as_mut() {
                    Some(c) => {
                        c.take(t); // work before the first present belongs to no frame
                        (c.columns(), counter_columns::ABOUT)
                    }
                    None => (Vec::new(), ""),
                };
                let (names, recorder) = match self.sensors.as_ref() {
                    Some(f) => {
                        use steadyhud_sys::lock::Recover;
                        let f = f.lock_or_recover();
                        (f.names(), Some(f.recorder()))
                    }
                    None => (Vec::new(), None),
                };
                self.sensor_columns = !names.is_empty();
                let display_columns = self.display.is_some();
                // PC latency needs the present's return (the counters) and
                // a reader of input times (our Wayland or X connection).
                if self.counters.is_some() && self.client.reads_input() {
                    self.latency = Some(LatencyFrames::new(t, self.window_ns));
                }
                let text_columns: Vec<&str> = display_columns
                    .then_some(steadyhud_log::columns::DISPLAY.map(|c| c.name))
                    .into_iter()
                    .flatten()
                    .chain(
                        self.latency
                            .is_some()
                            .then_some(steadyhud_log::columns::LATENCY.map(|c| c.name))
                            .into_iter()
                            .flatten(),
                    )
                    .chain(names.iter().copied())
                    .collect();
                self.recorded = recorder.filter(|_| self.sensor_columns);
                if let Some(r) = self.recorded.as_ref() {
                    self.whole = WholeSession::new(&self.opts)
                        .with_sensors(r.sensors().iter().copied(), r.has_throttle());
                }
                let sensors_about = if self.sensor_columns {
                    super::sensor_feed::ABOUT
                } else {
                    ""
                };
                self.log.open(
                    &self.client.name,
                    ordinal,
                    SystemTime::now(),
                    steadyhud_log::Layout {
                        api: self.client.api,
                        target_fps: Some(self.opts.target_fps),
                        origin_ns: Some(t),
                        columns: &columns,
                        text_columns: &text_columns,
                        abouts: &[about, sensors_about],
                        ..Default::default()
                    },
                );
                self.open_tail(t);
            }
            Some(prev) => {
                let d = t - prev; // ring is strictly increasing (capture.rs)
                let index = self.frames;
                self.frames += 1;
                let present_ns = t - self.first_t.unwrap_or(prev);
                let mut p = Pending {
                    index,
                    present_ns,
                    duration_ns: d,
                    from: prev,
                    to: t,
                    values: [0; steadyhud_counters::MAX_COUNTERS],
                };
                if let Some(c) = self.counters.as_mut() {
                    p.values = c.take(t);
                }
                match self.gpu.as_mut() {
                    Some(g) if self.counters.is_some() => g.push(p),
                    _ => self.decided(p),
                }
                if let Some(r) = self.rolling.as_mut() {
                    r.push(d);
                }
            }
        }
        self.last_t = Some(t);
        if index < self.tail_fill {
            if let Some(tail) = self.stream.tail() {
                tail.fill(index, t);
            }
        }
    }

    /// Gives the stream a tail beside its open log, whose first timestamp
    /// is `origin` ([`steadyhud_sys::tail`]). Without one (no writable
    /// folder) a killed game loses its last frames, as before: one line.
    fn open_tail(&mut self, origin: u64) {
        use steadyhud_sys::tail::{self, Tail};
        let Some(csv) = self.log.csv_path() else {
            return;
        };
        let stem = csv.file_stem().unwrap_or_default().to_string_lossy();
        let pid = std::process::id();
        let path = tail::folder().join(tail::file_name(pid, &stem));
        match Tail::create(&path, csv, pid, origin) {
            Ok(t) => self.tail_fill = self.stream.attach_tail(t).unwrap_or(0),
            Err(e) => guard::say(format_args!(
                "steadyhud: no present tail at {}: {e}; if the game is killed, its last frames are not logged",
                path.display()
            )),
        }
    }

    /// Writes `# fps_limit: N at frame M` when the cap in force changed
    /// (and at the start of a capped session).
    pub(super) fn note_cap(&mut self) {
        if self.last_t.is_none() {
            return; // the log opens at the first present
        }
        let cap = self.client.limit.fps();
        if self.cap_logged != Some(cap) && (cap != 0 || self.cap_logged.is_some()) {
            // The cap a session starts with holds from its first frame.
            let frame = match self.cap_logged {
                None => 0,
                Some(_) => self.frames,
            };
            self.log.note_fps_limit(cap, frame);
        }
        self.cap_logged = Some(cap);
    }

    /// Writes the rows whose GPU columns and display answers are known
    /// (`all`: every row, the stream ends).
    pub(super) fn flush_gpu(&mut self, all: bool) {
        // Before the first present nothing waits, but results are still read.
        let newest = self.last_t.unwrap_or(0);
        if let (Some(g), Some(_)) = (self.gpu.as_mut(), self.counters.as_ref()) {
            let mut decided = Vec::new();
            g.flush(newest, all, |p| decided.push(*p));
            for p in decided {
                self.decided(p);
            }
        }
        if let Some(d) = self.display.as_mut() {
            let mut rows = Vec::new();
            d.flush(newest, all, |p, shown| rows.push((*p, shown)));
            for (p, shown) in rows {
                self.write(&p, Some(shown));
            }
        }
        self.flush_latency(all);
    }

    /// Input times read on our connections (`until`: read up to then;
    /// `None`: no reader), for the stream's PC latency.
    pub(super) fn inputs(
        &mut self,
        inputs: &[steadyhud_wayland::input_times::InputTime],
        until: Option<u64>,
        lost: u64,
    ) {
        if let Some(l) = self.latency.as_mut() {
            let log = &mut self.log;
            l.inputs(inputs, until, |line| log.note_latency(line));
            l.lost += lost;
        }
    }

    /// Writes the rows whose latency is known (`all`: every row).
    fn flush_latency(&mut self, all: bool) {
        let newest = self.last_t.unwrap_or(0);
        let Some(l) = self.latency.as_mut() else {
            return;
        };
        let mut rows = Vec::new();
        let mut cells = String::new();
        l.flush(newest, all, &mut cells, |p, shown, c, terms| {
            rows.push((*p, shown, c.to_string(), terms))
        });
        for (p, shown, c, terms) in rows {
            self.write_out(&p, shown, &c, Some(terms));
        }
    }

    /// A row whose GPU columns are known: written, or held for its display
    /// answer.
    fn decided(&mut self, p: Pending) {
        match self.display.as_mut() {
            Some(d) => d.push(p),
            None => self.write(&p, None),
        }
    }

    /// A decided row: written, or held for its latency.
    fn write(&mut self, p: &Pending, shown: Option<steadyhud_log::display::Shown>) {
        match (self.latency.as_mut(), self.counters.as_ref()) {
            (Some(l), Some(c)) => {
                let starts = c.frame_starts(p.to, &p.values);
                l.push(*p, shown, c.cpu_busy(p.duration_ns, &p.values), starts);
                self.flush_latency(false);
            }
            _ => self.write_out(p, shown, "", None),
        }
    }

    /// Writes a row: the counters' columns, the display cells (when the
    /// log has them), the latency cells `latency` (its PC latency `terms`
    /// for the display block), the readings.
    fn write_out(
        &mut self,
        p: &Pending,
        shown: Option<steadyhud_log::display::Shown>,
        latency: &str,
        terms: Option<[i64; 3]>,
    ) {
        let row = match self.counters.as_mut() {
            Some(c) => c.on_frame(p.duration_ns, &p.values),
            None => &[],
        };
        let sensors = Self::sensor_cells(
            &self.sensors,
            self.sensor_columns,
            p.to,
            &mut self.cells,
            &mut self.recorded,
        );
        match self.recorded.as_ref() {
            Some(r) => self
                .whole
                .push_with(p.duration_ns, r.values(), r.throttle()),
            None => self.whole.push(p.duration_ns),
        }
        if let (Some(d), Some(shown)) = (self.display.as_mut(), shown) {
            d.answers.push(shown, p.to, p.duration_ns, terms);
        }
        if shown.is_some() || !latency.is_empty() {
            let mut cells = String::with_capacity(48 + latency.len() + sensors.len());
            if let Some(shown) = shown {
                shown.write_cells(self.first_t.unwrap_or(0), p.to, &mut cells);
            }
            cells.push_str(latency);
            cells.push_str(sensors);
            self.log
                .write_row(p.index, p.present_ns, p.duration_ns, row, &cells);
        } else {
            self.log
                .write_row(p.index, p.present_ns, p.duration_ns, row, sensors);
        }
    }

    pub(super) fn publish_live(&mut self, window_s: f64) {
        let Some(rolling) = self.rolling.as_ref() else {
            return;
        };
        let built = guard::try_run(|| {
            self.client.faults.inject(Site::Analysis);
            let cfg = &self.client.config;
            let (summary, flags) = match rolling.summary_and_flags() {
                Some((s, f)) => (Some(s), f),
                None => (None, vec![false; rolling.len()]),
            };
            LiveStats {
                summary,
                window_s,
                last_frame_ms: rolling.last().map_or(0.0, |d| d as f32 / 1e6),
                // Straight from the window: no copy of its durations.
                recent_ms: rolling.iter().map(|d| d as f32 / 1e6).collect(),
                recent_stutter: flags,
                ring_overflows: self.stream.overflows(),
                counters: match self.counters.as_ref() {
                    Some(c) if hud::shows_counters(cfg, self.client.hud.preset()) => c.live(),
                    _ => Vec::new(),
                },
                last_stutter: match self.counters.as_ref() {
                    Some(c) if hud::shows_counters(cfg, self.client.hud.preset()) => {
                        c.last_stutter()
                    }
                    _ => None,
                },
                gpu: self.gpu.as_ref().and_then(GpuFrames::live),
                display: self.display.as_ref().and_then(DisplayFrames::live),
                latency: self.latency.as_ref().and_then(LatencyFrames::live),
                sensors: match self.sensors.as_ref() {
                    Some(f) => {
                        use steadyhud_sys::lock::Recover;
                        // Every row: the preset picks (the key may change it).
                        f.lock_or_recover().hud_rows(&steadyhud_sensors::ROW_NAMES)
                    }
                    None => Vec::new(),
                },
                fps_cap: self.client.limit.fps(),
                hidden: !self.client.hud.visible(),
                preset: Some(self.client.hud.preset()),
                toast: self.client.hud.toast(steadyhud_sys::clock::now_ns()),
                generation: 0, // set by publish
            }
        });
        match built {
            Some(stats) => self.stream.live.publish(stats),
            None => {
                guard::say(format_args!("steadyhud: live statistics stopped for this window after an internal error; the log continues"));
                self.rolling = None;
                // No frozen numbers on the HUD: it shows "no data" from now on.
                self.stream.live.publish(LiveStats {
                    window_s,
                    ..LiveStats::default()
                });
            }
        }
    }

    /// Keys of the summary JSON beyond the metrics: `final_write` ends the
    /// counters' stutter judging; otherwise they are judged as if the
    /// session ended now, as `analyze` judges the CSV's rows so far.
    /// The counters' stutter causes come apart, for the write to stream.
    pub(super) fn extra_keys(
        &mut self,
        final_write: bool,
        streams: usize,
    ) -> (serde_json::Value, Option<StutterCauses>) {
        let overflows = if final_write {
            self.stream.overflows()
        } else {
            self.overflows_logged
        };
        let mut extra = serde_json::json!({
            "pid": std::process::id(),
            "ring_overflows": overflows,
            "stream": self.stream.id,
            "stutter_threshold": self.opts.stutter_threshold,
            "target_fps": self.opts.target_fps,
            "summary_upkeep": self.upkeep.stats(streams, self.frames as usize),
        });
        let mut causes = None;
        if let (Some(c), Some(map)) = (self.counters.as_mut(), extra.as_object_mut()) {
            let (keys, kept) = if final_write {
                c.finish()
            } else {
                c.keys_so_far()
            };
            causes = Some(kept);
            if let serde_json::Value::Object(keys) = keys {
                map.extend(keys);
            }
            let lost = if final_write {
                self.stream.counter_overflows()
            } else {
                self.counter_overflows_logged
            };
            map.insert("counter_ring_overflows".into(), lost.into());
        }
        if let (Some(g), Some(map)) = (self.gpu.as_ref(), extra.as_object_mut()) {
            if let serde_json::Value::Object(keys) = g.summary() {
                map.extend(keys);
            }
        }
        if let Some(map) = extra.as_object_mut() {
            let present_to_display = match self.display.as_ref() {
                Some(d) => {
                    let keys = d.answers.summary_keys(&self.opts);
                    let mean = keys[steadyhud_log::display::SUMMARY_KEY]["latency"]
                        ["present_to_display"]["mean_ms"]
                        .clone();
                    if let serde_json::Value::Object(keys) = keys {
                        map.extend(keys);
                    }
                    map.insert(
                        "display_timing".into(),
                        d.summary(self.stream.display_overflows()),
                    );
                    if mean.is_number() {
                        mean
                    } else {
                        "n/a (no frame of this window was shown yet)".into()
                    }
                }
                None => "n/a (no source of display times for this window: Wayland presentation feedback, config display_feedback; or the app's own VK_GOOGLE_display_timing / VK_EXT_present_timing, config display_timing)".into(),
            };
            if let Some(latency) = map.get_mut("latency").and_then(|l| l.as_object_mut()) {
                latency.insert("present_to_display_ms".into(), present_to_display);
                if let Some(l) = self.latency.as_ref() {
                    latency.extend(l.summary_keys());
                }
            }
        }
        (extra, causes)
    }

    /// Frames whose CSV rows are written.
    pub(super) fn rows_written(&self) -> usize {
        let held = self.gpu.as_ref().map_or(0, GpuFrames::held)
            + self.display.as_ref().map_or(0, DisplayFrames::held)
            + self.latency.as_ref().map_or(0, LatencyFrames::held);
        (self.frames as usize).saturating_sub(held)
    }

    /// Hands a snapshot to the summary writer when one is due (see
    /// [`super::upkeep`]); `streams` share the upkeep budget.
    pub(super) fn keep_summary(
        &mut self,
        now: Instant,
        writer: &mut upkeep::Writer,
        streams: usize,
    ) {
        if !matches!(self.log, Log::Open(_))
            || !self.upkeep.due(now, streams, self.frames as usize)
            || !writer.ready()
        {
            return;
        }
        let cpu = upkeep::thread_cpu();
        let Some(target) = self.log.flushed_summary_target() else {
            return;
        };
        // The statistics hold the rows written (GPU timing and display
        // answers hold rows back), so the summary matches the CSV's prefix;
        // computed here from the fixed-size state (a few ms), written by
        // the writer thread.
        debug_assert_eq!(self.whole.frames(), self.rows_written() as u64);
        let (mut extra, causes) = self.extra_keys(false, streams);
        let r = running_session(&self.whole, &self.opts, &mut extra);
        let snapshot = Snapshot {
            target,
            summary: r.summary,
            stk: r.stk,
            extra,
            stutters: StutterLists {
                frames: r.frames,
                causes,
                sensors: r.sensor_causes,
            },
        };
        let snapshot_cpu = upkeep::thread_cpu().saturating_sub(cpu);
        self.upkeep.send(snapshot, now, snapshot_cpu, writer);
    }

    pub(super) fn finish(mut self, buf: &mut [u64], streams: usize) {
        self.drain(buf);
        // From here no periodic write may replace the final summary.
        self.upkeep.finish();
        self.flush_gpu(true);
        let log = std::mem::replace(&mut self.log, Log::disabled());
        let stream = self.stream.clone();
        guard::contain((), move || {
            let (mut extra, causes) = self.extra_keys(true, streams);
            let r = running_session(&self.whole, &self.opts, &mut extra);
            let lists = StutterLists {
                frames: r.frames,
                causes,
                sensors: r.sensor_causes,
            };
            log.finish(r.summary.as_ref(), &r.stk, extra, &lists);
        });
        // Ended cleanly: nothing left to recover.
        if let Some(tail) = stream.tail() {
            let _ = std::fs::remove_file(tail.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(p: &std::path::Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    /// The session log a finished analysis left in `dir`: its path, its
    /// text and its summary JSON.
    fn written_log(dir: &std::path::Path) -> (std::path::PathBuf, String, serde_json::Value) {
        let csv = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "csv"))
            .expect("csv written");
        let summary = serde_json::from_str(&read(&steadyhud_log::summary_path_for(&csv))).unwrap();
        let text = read(&csv);
        (csv, text, summary)
    }

    /// The whole analysis path of one stream without Vulkan: ring → rows →
    /// live stats → summary, with a ring overflow recorded in the log.
    /// A stream with counter table `table` and its analysis, logging into
    /// `dir`, with the default options.
    fn with_counters(
        dir: &std::path::Path,
        table: Arc<steadyhud_counters::Counters>,
    ) -> (Arc<Stream>, StreamAnalysis) {
        super::super::memory_test::counted_stream(dir, &table)
    }

    #[test]
    fn stream_rows_overflow_note_live_stats_and_summary() {
        let dir = tempfile::tempdir().unwrap();
        let (stream, cons) = Stream::new(1, 0);
        let opts = Options::default();
        let log = Log::pending(Some(dir.path().to_path_buf()));
        let mut a = StreamAnalysis::new(stream.clone(), cons, log, 10.0, opts);
        let mut buf = vec![0u64; 7]; // smaller than a batch: exercises the drain loop
        let ms = 1_000_000u64;
        let mut t = 1_000 * ms;
        for i in 0..30u64 {
            t += if i == 20 { 50 * ms } else { 10 * ms };
            stream.record(t);
        }
        a.drain(&mut buf);
        a.publish_live(10.0);
        let live = stream.live.latest();
        assert_eq!(live.recent_ms.len(), 29);
        assert_eq!(live.summary.as_ref().unwrap().frames, 29);
        assert_eq!(live.recent_stutter.iter().filter(|&&f| f).count(), 1);
        // Fill the ring past capacity without draining: the excess is lost and noted.
        for _ in 0..capture_capacity() + 3 {
            t += 10 * ms;
            stream.record(t);
        }
        a.drain(&mut buf);
        let frames = a.frames as usize;
        assert_eq!(frames, 29 + capture_capacity());
        a.finish(&mut buf, 1);

        let (_, text, summary) = written_log(dir.path());
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("frame"))
            .collect();
        assert_eq!(rows.len(), frames);
        assert_eq!(rows[0], "0,10000000,10.000000");
        assert_eq!(rows[19], "19,240000000,50.000000");
        assert!(
            text.contains("# ring overflow: 3 timestamps lost"),
            "{text}"
        );
        assert_eq!(summary["frames"], frames);
        assert_eq!(summary["ring_overflows"], 3);
        assert_eq!(summary["stutter_frames"], serde_json::json!([19]));
        assert!(summary["stk_curve"]
            .as_array()
            .is_some_and(|c| c.len() == 101));
    }

    /// Counters ride with their present: CSV columns per counter and
    /// cpu_busy, and the summary names pipeline creation for the stutter it
    /// caused and nothing for a plain slow frame.
    #[test]
    fn counters_become_columns_and_stutter_causes() {
        use steadyhud_counters::{Counters, Unit, MAX_COUNTERS};
        let dir = tempfile::tempdir().unwrap();
        let table = Arc::new(Counters::new());
        let pipe = table
            .register("pipeline_create_ms", "pipeline creation", Unit::Nanos)
            .unwrap();
        let inp = table
            .register("in_present_ms", "time in present", Unit::Nanos)
            .unwrap();
        let (stream, mut a) = with_counters(dir.path(), table.clone());
        let ms = 1_000_000u64;
        let mut t = 1_000 * ms;
        let mut vals = [0u64; MAX_COUNTERS];
        for i in 0..60u64 {
            // Work of frame i-1 is latched at present i.
            if i == 21 {
                table.add(pipe, 40 * ms);
            }
            table.add(inp, ms / 2);
            table.latch(&mut vals);
            stream.record_with(t, Some(&vals));
            t += match i {
                20 => 50 * ms,
                40 => 60 * ms,
                _ => 10 * ms,
            };
        }
        let mut buf = vec![0u64; 64];
        a.drain(&mut buf);
        a.finish(&mut buf, 1);
        let (csv, text, summary) = written_log(dir.path());
        assert!(
            text.contains(
                "\nframe,present_ns,frametime_ms,pipeline_create_ms,in_present_ms,cpu_busy_ms\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\n20,250000000,50.000000,40.000000,0.500000,49.500000\n"),
            "{text}"
        );
        let log = steadyhud_formats::read_path(&csv, &Default::default()).unwrap();
        assert_eq!(log.durations_ns.len(), 59);
        let causes = summary["stutter_causes_text"].as_array().unwrap();
        assert_eq!(causes.len(), 2, "{summary}");
        assert_eq!(causes[0], "frame 20 +40.0 ms: pipeline creation 40.0 ms");
        assert_eq!(causes[1], "frame 40 +50.0 ms: no counter spiked");
        assert_eq!(
            summary["stutter_causes"][0]["counters"][0]["name"],
            "pipeline_create_ms"
        );
        assert_eq!(summary["counters"][0]["total"], 40.0);
        assert_eq!(summary["latency"]["in_present_ms_avg"], 0.5);
    }

    /// What a write streams from the stutter lists is, byte for byte, what
    /// the summary was when every stutter's keys were built as a
    /// `serde_json::Value` (issue 52): a session whose stutters have one,
    /// two or no counter spiking, written both ways from the same state,
    /// while it runs and at its end (with the same `wall_s`); the causes
    /// are frame health's over the frames so far
    /// (`steadyhud_counters::attribute`, as `analyze` judges a log).
    #[test]
    fn streamed_stutters_write_what_their_values_wrote() {
        use steadyhud_counters::{attribute, Cause, Counters, HealthRule, Unit, MAX_COUNTERS};
        use steadyhud_log::{write_summary, Progress, SummaryTarget};
        let dir = tempfile::tempdir().unwrap();
        let table = Arc::new(Counters::new());
        let pipe = table
            .register("pipeline_create_ms", "pipeline creation", Unit::Nanos)
            .unwrap();
        let subs = table
            .register("submits", "queue submits", Unit::Count)
            .unwrap();
        let (stream, mut a) = with_counters(dir.path(), table.clone());
        let ms = 1_000_000u64;
        let mut t = 1_000 * ms;
        let mut vals = [0u64; MAX_COUNTERS];
        let target = SummaryTarget::reopened(
            dir.path().join("reference.csv"),
            "reference".into(),
            Default::default(),
            ("2026-01-01T00:00:00".into(), 1.0),
            (0, 0),
        );
        let both_ways = |a: &mut StreamAnalysis, final_write: bool| {
            let (mut extra, causes) = a.extra_keys(final_write, 1);
            extra["wall_s"] = 12.5.into();
            let r = running_session(&a.whole, &a.opts, &mut extra);
            let (summary, frames, stk) = (r.summary, r.frames, r.stk);
            let causes = causes.unwrap();
            let all: Vec<Cause> = causes.causes().collect();
            let mut values = extra.clone();
            values["stutter_causes"] = serde_json::to_value(&all).unwrap();
            values["stutter_causes_text"] =
                all.iter().map(|c| c.to_string()).collect::<Vec<_>>().into();
            let full = summary.clone().map(|s| steadyhud_metrics::Summary {
                stutter_frames: frames.iter().collect(),
                ..s
            });
            let progress = Progress::Running;
            let path = write_summary(&target, full.as_ref(), &stk, values, progress).unwrap();
            let want = read(&path);
            let lists = StutterLists {
                frames,
                causes: Some(causes),
                sensors: None,
            };
            lists.streamed(|s| {
                steadyhud_log::write_summary_streamed(
                    &target,
                    summary.as_ref(),
                    &stk,
                    extra,
                    s,
                    progress,
                )
                .unwrap()
            });
            let got = read(&path);
            assert_eq!(got, want);
            let v: serde_json::Value = serde_json::from_str(&got).unwrap();
            (v["stutter_causes"].as_array().unwrap().len(), all)
        };
        let (mut durations, mut values) = (Vec::new(), Vec::new());
        let judged = |d: &[u64], v: &[[u64; MAX_COUNTERS]]| {
            let rule = HealthRule {
                stutter_threshold: Options::default().stutter_threshold,
                ..HealthRule::default()
            };
            attribute(d, v, &table.infos(), &rule)
        };
        for i in 0..1_000u64 {
            // Work of frame i-1 is latched at present i.
            match (i % 20, i / 20 % 3) {
                (11, 0) => table.add(pipe, 20 * ms),
                (11, 1) => {
                    table.add(pipe, 20 * ms);
                    table.add(subs, 12);
                }
                _ => table.add(subs, 2),
            }
            table.add(pipe, ms / 10);
            table.latch(&mut vals);
            stream.record_with(t, Some(&vals));
            if i > 0 {
                values.push(vals);
            }
            durations.push(if i % 20 == 10 { 30 * ms } else { ms });
            t += durations[i as usize];
            if i == 595 {
                let mut buf = vec![0u64; 64];
                a.drain(&mut buf);
                // 30 stutters, the last one (frame 590) not judged for
                // good: its cause is judged for this write only.
                let (n, all) = both_ways(&mut a, false);
                assert_eq!(n, 30);
                assert_eq!(all, judged(&durations[..595], &values));
                assert_eq!(all[0].counters.len(), 1);
                assert_eq!(all[1].counters.len(), 2);
                assert!(all[2].counters.is_empty());
                assert_eq!(all[29].frame, 590);
            }
        }
        let mut buf = vec![0u64; 64];
        a.drain(&mut buf);
        let (n, all) = both_ways(&mut a, true);
        assert_eq!(n, 50);
        assert_eq!(all, judged(&durations[..999], &values));
    }

    /// Frames whose counters a full counter ring dropped are not silent: a
    /// note where it happened and `counter_ring_overflows` in the summary;
    /// every frame still has its row.
    #[test]
    fn counter_ring_overflow_is_logged() {
        use crate::rings::COUNTER_RING_CAPACITY;
        use steadyhud_counters::{Counters, Unit, MAX_COUNTERS};
        let dir = tempfile::tempdir().unwrap();
        let table = Arc::new(Counters::new());
        table.register("submits", "submits", Unit::Count).unwrap();
        let (stream, mut a) = with_counters(dir.path(), table);
        let frames = COUNTER_RING_CAPACITY as u64 + 10;
        let vals = [1u64; MAX_COUNTERS];
        for i in 0..frames {
            stream.record_with(1_000_000_000 + i * 10_000_000, Some(&vals));
        }
        let mut buf = vec![0u64; 256];
        a.drain(&mut buf);
        a.finish(&mut buf, 1);
        let (csv, text, summary) = written_log(dir.path());
        assert!(
            text.contains("\n# counter ring overflow: 10 frames' counters lost (written as 0)\n"),
            "{text}"
        );
        let log = steadyhud_formats::read_path(&csv, &Default::default()).unwrap();
        assert_eq!(log.durations_ns.len() as u64, frames - 1);
        assert_eq!(summary["counter_ring_overflows"], 10);
        assert_eq!(summary["ring_overflows"], 0);
    }

    /// While the stream runs the summary is rewritten (`complete: false`,
    /// after a flush, so the CSV holds every frame it counts) once at the
    /// log's opening and then after the interval; the final write says
    /// `complete: true` and the CSV ends with `# end: complete`.
    #[test]
    fn summary_is_kept_current_then_final() {
        let dir = tempfile::tempdir().unwrap();
        let (stream, cons) = Stream::new(1, 0);
        let log = Log::pending(Some(dir.path().to_path_buf()));
        let mut a = StreamAnalysis::new(stream.clone(), cons, log, 10.0, Options::default());
        let mut w = upkeep::Writer::default();
        let mut buf = vec![0u64; 64];
        let mut t = 1_000_000_000u64;
        let mut present = |n: u64| {
            for _ in 0..n {
                t += 10_000_000;
                stream.record(t);
            }
        };
        present(31);
        a.drain(&mut buf);
        a.keep_summary(Instant::now(), &mut w, 1);
        w.stop();
        let (csv, text, summary) = written_log(dir.path());
        assert_eq!(summary["complete"], false);
        assert_eq!(summary["frames_so_far"], 30);
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
                .count(),
            30,
            "flushed before the summary"
        );
        present(10);
        a.drain(&mut buf);
        a.keep_summary(Instant::now() + upkeep::MIN_INTERVAL / 2, &mut w, 1);
        w.stop();
        assert_eq!(
            written_log(dir.path()).2["frames_so_far"],
            30,
            "not due yet"
        );
        a.keep_summary(Instant::now() + upkeep::MIN_INTERVAL, &mut w, 1);
        w.stop();
        assert_eq!(written_log(dir.path()).2["frames_so_far"], 40);
        a.finish(&mut buf, 1);
        let (_, text, summary) = written_log(dir.path());
        assert_eq!(summary["complete"], true);
        assert_eq!(summary["frames_so_far"], 40);
        assert_eq!(summary["frames"], 40);
        assert_eq!(summary["summary_upkeep"]["writes"], 2);
        assert!(text.ends_with("\n# end: complete\n"), "{text}");
        let log = steadyhud_formats::read_path(&csv, &Default::default()).unwrap();
        assert!(
            !log.meta
                .notes
                .iter()
                .any(|n| n.contains("did not end cleanly")),
            "{:?}",
            log.meta.notes
        );
    }

    fn capture_capacity() -> usize {
        crate::rings::RING_CAPACITY
    }

    #[test]
    fn unwritable_folder_disables_the_log_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let (stream, cons) = Stream::new(1, 0);
        let mut a = StreamAnalysis::new(
            stream.clone(),
            cons,
            Log::pending(Some(file.join("logs"))),
            10.0,
            Options::default(),
        );
        for i in 1..=5u64 {
            stream.record(i * 10_000_000);
        }
        let mut buf = vec![0u64; 64];
        a.drain(&mut buf);
        assert!(matches!(a.log, Log::Disabled));
        assert_eq!(a.frames, 4, "capture and statistics go on without a log");
    }
}
