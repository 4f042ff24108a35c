//! The analysis thread: one per process, started with the first capture
//! stream (first swapchain) and stopped (joined) when the last instance is
//! destroyed or the process exits (see `on_unload` in `layer/mod.rs`).
//!
//! Every ≤ 5 ms it drains each stream's ring, turns consecutive presents of
//! the stream into frame durations, streams one log row per frame (flushed
//! every 250 ms, so SIGKILL loses at most that), feeds [`Rolling`] and,
//! while the HUD is visible, publishes [`LiveStats`] ~10×/s; it polls the
//! HUD hotkey every 50 ms. While a stream runs, its summary JSON is kept
//! current on disk by [`super::upkeep`] (`"complete": false`). A stream
//! ends when its device is destroyed or at shutdown: the rest of the ring
//! is drained, the CSV gets its `# end: complete` line and the final
//! summary (METRICS.md keys + STK curves, `"complete": true`) is written.
//!
//! Logging policy: one session log per stream, i.e. per presented surface
//! (window) of a device. A window keeps its log across swapchain recreation
//! (resize), so for the usual single-window game log rows == frames
//! presented exactly; each further window gets its own log named
//! `<exe>-<n>_…`. Frames of a stream are its consecutive presents.
//! Memory: all durations are kept for the exact final summary, 8 bytes per
//! frame (8 MB per million frames), plus one copy while a periodic summary
//! rewrite computes.

use super::capture::{CounterFrame, Stream};
use super::control::{Control, MarkPlaced, StreamStatus};
use super::counter_columns::{self, CounterTrack};
use super::faults::{Faults, Site};
use super::gpu_frames::{GpuFrames, Pending};
use super::gpu_timing::GpuTimer;
use super::guard;
use super::limiter::FpsLimit;
use super::session::Log;
use super::upkeep::{self, Schedule, Snapshot};
use crate::live::LiveStats;
use ringbuf::traits::Consumer;
use ringbuf::HeapCons;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};
use steadyhud_config::Config;
use steadyhud_metrics::histogram::TimeHistogram;
use steadyhud_metrics::{self as metrics, Options, Rolling, StkPoint, Summary};
use steadyhud_sys::lock::Recover;

const TICK: Duration = Duration::from_millis(5);
const FLUSH_EVERY: Duration = Duration::from_millis(250);
const LIVE_EVERY: Duration = Duration::from_millis(100);
const HOTKEY_EVERY: Duration = Duration::from_millis(50);
/// Bound on the frames the rolling window holds, whatever the frame rate.
const ROLLING_MAX_FRAMES: usize = 200_000;

/// What the analysis thread reads of the layer's state (which lives for the
/// whole process, hence `'static`).
#[derive(Clone, Copy)]
pub struct Settings {
    pub config: &'static Config,
    /// HUD visibility: live statistics are built only while it is shown;
    /// the hotkey flips it.
    pub hud_visible: &'static AtomicBool,
    /// The frame cap in force; its hotkey cycles it.
    pub limit: &'static FpsLimit,
    pub faults: &'static Faults,
}

#[cfg(test)]
impl Settings {
    /// Default config, HUD shown, no faults.
    fn for_tests() -> Settings {
        static CONFIG: std::sync::LazyLock<Config> = std::sync::LazyLock::new(Config::default);
        static VISIBLE: AtomicBool = AtomicBool::new(true);
        static FAULTS: std::sync::LazyLock<Faults> = std::sync::LazyLock::new(Faults::default);
        static LIMIT: std::sync::LazyLock<FpsLimit> =
            std::sync::LazyLock::new(|| FpsLimit::new(&[]));
        Settings {
            config: &CONFIG,
            hud_visible: &VISIBLE,
            limit: &LIMIT,
            faults: &FAULTS,
        }
    }
}

/// Analysis state of one stream.
struct StreamAnalysis {
    stream: Arc<Stream>,
    cons: HeapCons<u64>,
    last_t: Option<u64>,
    first_t: Option<u64>,
    /// Every frame duration of the session (for the exact final summary).
    durations: Vec<u64>,
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
    settings: Settings,
    /// Windows whose log was opened so far (names the logs).
    windows: Arc<AtomicU64>,
    /// The frame cap last written to the log (`None`: nothing written yet).
    cap_logged: Option<u32>,
    opts: Options,
    /// When the summary JSON is next rewritten while the session runs.
    upkeep: Schedule,
}

impl StreamAnalysis {
    #[cfg(test)]
    fn new(
        stream: Arc<Stream>,
        cons: HeapCons<u64>,
        log: Log,
        window_s: f64,
        opts: Options,
    ) -> Self {
        Self::with_counters(
            stream,
            (cons, None, None),
            log,
            window_s,
            opts,
            Settings::for_tests(),
            Arc::default(),
        )
    }

    /// `feeds`: the stream's timestamp ring and, when its device counts,
    /// its counter ring and GPU timer.
    fn with_counters(
        stream: Arc<Stream>,
        (cons, vcons, gpu): (
            HeapCons<u64>,
            Option<HeapCons<CounterFrame>>,
            Option<Arc<GpuTimer>>,
        ),
        log: Log,
        window_s: f64,
        opts: Options,
        settings: Settings,
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
        StreamAnalysis {
            gpu,
            counters: CounterTrack::new(
                &stream,
                vcons,
                opts.stutter_threshold,
                &settings.config.hud_counter_names,
            ),
            settings,
            windows,
            stream,
            cons,
            last_t: None,
            first_t: None,
            durations: Vec::new(),
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
        }
    }

    fn drain(&mut self, buf: &mut [u64]) {
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

    fn on_present(&mut self, t: u64) {
        match self.last_t {
            None => {
                self.first_t = Some(t);
                let ordinal = self.windows.fetch_add(1, Ordering::Relaxed) + 1;
                match self.counters.as_mut() {
                    Some(c) => {
                        c.take(t); // work before the first present belongs to no frame
                        let columns = c.columns();
                        self.log.open_with_columns(
                            ordinal,
                            SystemTime::now(),
                            &columns,
                            counter_columns::ABOUT,
                        );
                    }
                    None => self.log.open(ordinal, SystemTime::now()),
                }
            }
            Some(prev) => {
                let d = t - prev; // ring is strictly increasing (capture.rs)
                let index = self.durations.len() as u64;
                self.durations.push(d);
                let present_ns = t - self.first_t.unwrap_or(prev);
                match (self.counters.as_mut(), self.gpu.as_mut()) {
                    (Some(c), Some(g)) => g.push(Pending {
                        index,
                        present_ns,
                        duration_ns: d,
                        from: prev,
                        to: t,
                        values: c.take(t),
                    }),
                    (Some(c), None) => {
                        let values = c.take(t);
                        let row = c.on_frame(d, &values);
                        self.log.write_frame_with(index, present_ns, d, row);
                    }
                    (None, _) => self.log.write_frame(index, present_ns, d),
                }
                if let Some(r) = self.rolling.as_mut() {
                    r.push(d);
                }
            }
        }
        self.last_t = Some(t);
    }

    /// Writes `# fps_limit: N at frame M` when the cap in force changed
    /// (and at the start of a capped session).
    fn note_cap(&mut self) {
        if self.last_t.is_none() {
            return; // the log opens at the first present
        }
        let cap = self.settings.limit.fps();
        if self.cap_logged != Some(cap) && (cap != 0 || self.cap_logged.is_some()) {
            // The cap a session starts with holds from its first frame.
            let frame = match self.cap_logged {
                None => 0,
                Some(_) => self.durations.len() as u64,
            };
            self.log.note_fps_limit(cap, frame);
        }
        self.cap_logged = Some(cap);
    }

    /// Writes the rows whose GPU columns are known (`all`: every row, the
    /// stream ends).
    fn flush_gpu(&mut self, all: bool) {
        let (Some(g), Some(c)) = (self.gpu.as_mut(), self.counters.as_mut()) else {
            return;
        };
        // Before the first present nothing waits, but results are still read.
        let newest = self.last_t.unwrap_or(0);
        let log = &mut self.log;
        g.flush(newest, all, |p| {
            let row = c.on_frame(p.duration_ns, &p.values);
            log.write_frame_with(p.index, p.present_ns, p.duration_ns, row);
        });
    }

    fn publish_live(&mut self, window_s: f64) {
        let Some(rolling) = self.rolling.as_ref() else {
            return;
        };
        let built = guard::try_run(|| {
            self.settings.faults.inject(Site::Analysis);
            let frames = rolling.frames();
            let (summary, flags) = match rolling.summary_and_flags() {
                Some((s, f)) => (Some(s), f),
                None => (None, vec![false; frames.len()]),
            };
            LiveStats {
                summary,
                window_s,
                last_frame_ms: frames.last().map_or(0.0, |&d| d as f32 / 1e6),
                recent_ms: frames.iter().map(|&d| d as f32 / 1e6).collect(),
                recent_stutter: flags,
                ring_overflows: self.stream.overflows(),
                counters: match self.counters.as_ref() {
                    Some(c) if self.settings.config.hud_counters => c.live(),
                    _ => Vec::new(),
                },
                last_stutter: match self.counters.as_ref() {
                    Some(c) if self.settings.config.hud_counters => c.last_stutter(),
                    _ => None,
                },
                gpu: self.gpu.as_ref().and_then(GpuFrames::live),
                fps_cap: self.settings.limit.fps(),
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
    fn extra_keys(&mut self, final_write: bool, streams: usize) -> serde_json::Value {
        let overflows = if final_write {
            self.stream.overflows()
        } else {
            self.overflows_logged
        };
        let mut extra = serde_json::json!({
            "ring_overflows": overflows,
            "stream": self.stream.id,
            "stutter_threshold": self.opts.stutter_threshold,
            "summary_upkeep": self.upkeep.stats(streams, self.durations.len()),
        });
        if let (Some(c), Some(map)) = (self.counters.as_mut(), extra.as_object_mut()) {
            let keys = if final_write {
                c.finish()
            } else {
                c.keys_so_far()
            };
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
        extra
    }

    /// Frames whose CSV rows are written.
    fn rows_written(&self) -> usize {
        let held = self.gpu.as_ref().map_or(0, GpuFrames::held);
        self.durations.len().saturating_sub(held)
    }

    /// Hands a snapshot to the summary writer when one is due (see
    /// [`super::upkeep`]); `streams` share the upkeep budget.
    fn keep_summary(&mut self, now: Instant, writer: &mut upkeep::Writer, streams: usize) {
        if !matches!(self.log, Log::Open(_))
            || !self.upkeep.due(now, streams, self.durations.len())
            || !writer.ready()
        {
            return;
        }
        let cpu = upkeep::thread_cpu();
        let Some(target) = self.log.flushed_summary_target() else {
            return;
        };
        let snapshot = Snapshot {
            target,
            // Only the frames whose rows are written (GPU timing holds rows
            // back a frame or two), so the summary matches the CSV's prefix.
            durations: self.durations[..self.rows_written()].to_vec(),
            opts: self.opts,
            extra: self.extra_keys(false, streams),
        };
        let snapshot_cpu = upkeep::thread_cpu().saturating_sub(cpu);
        self.upkeep.send(snapshot, now, snapshot_cpu, writer);
    }

    fn finish(mut self, buf: &mut [u64], streams: usize) {
        self.drain(buf);
        // From here no periodic write may replace the final summary.
        self.upkeep.finish();
        self.flush_gpu(true);
        let durations = std::mem::take(&mut self.durations);
        let log = std::mem::replace(&mut self.log, Log::disabled());
        guard::contain((), move || {
            let mut extra = self.extra_keys(true, streams);
            let (summary, stk) = whole_session(&durations, &self.opts, &mut extra);
            log.finish(summary.as_ref(), &stk, extra);
        });
    }
}

/// The whole-session numbers of `durations`, as every summary write (final
/// or periodic) computes them: the summary (`None` for no frame) and the
/// STK curve. O(n log n): the cost [`upkeep`] budgets.
pub(super) fn whole_session(
    durations: &[u64],
    opts: &Options,
    extra: &mut serde_json::Value,
) -> (Option<Summary>, Vec<StkPoint>) {
    let summary = metrics::summarize(durations, opts);
    let stk = metrics::stk_curve(durations, stk_max_fps(durations));
    // The mergeable time histogram: summed over sessions it gives fleet-wide
    // metrics (`steadyhud merge` reads a summary's `histogram` key).
    if let (Some(map), Ok(h)) = (
        extra.as_object_mut(),
        serde_json::to_value(TimeHistogram::from_durations(durations)),
    ) {
        map.insert("histogram".into(), h);
    }
    (summary, stk)
}

/// Upper end of the STK curves: just past the fastest frame's rate (beyond
/// it slow(f) = 1), capped at 2000 fps.
fn stk_max_fps(durations: &[u64]) -> u32 {
    let min = durations.iter().copied().min().unwrap_or(metrics::NS_PER_S);
    (metrics::NS_PER_S.div_ceil(min.max(1)) + 1).clamp(1, 2000) as u32
}

/// Everything the thread works on; shared with the hooks that end streams.
struct Analyzer {
    streams: Vec<StreamAnalysis>,
    settings: Settings,
    window_s: f64,
    buf: Vec<u64>,
    last_flush: Instant,
    last_live: Instant,
    /// Thread that rewrites the streams' summaries while they run.
    writer: upkeep::Writer,
}

impl super::control::Streams for Analyzer {
    fn mark(&mut self, text: &str) -> Vec<MarkPlaced> {
        let mut placed = Vec::new();
        for s in &mut self.streams {
            // Up to date first: the mark goes after every frame presented
            // before the request.
            s.drain(&mut self.buf);
            let frame = s.durations.len() as u64;
            if s.log.note_mark(text, frame) {
                s.log.flush();
                if let Some(log) = s.log.csv_path() {
                    placed.push(MarkPlaced {
                        log: log.to_path_buf(),
                        frame,
                    });
                }
            }
        }
        placed
    }

    fn catch_up(&mut self) {
        for s in &mut self.streams {
            s.drain(&mut self.buf);
        }
    }

    fn status(&mut self) -> Vec<StreamStatus> {
        let window_s = self.window_s;
        self.streams
            .iter_mut()
            .map(|s| {
                s.drain(&mut self.buf);
                StreamStatus {
                    stream: s.stream.id,
                    log: s.log.csv_path().map(Into::into),
                    frames: s.durations.len() as u64,
                    window_s,
                    summary: s.rolling.as_ref().and_then(Rolling::summary),
                    gpu: s.gpu.as_ref().and_then(GpuFrames::live),
                }
            })
            .collect()
    }
}

impl Analyzer {
    fn tick(&mut self) {
        let now = Instant::now();
        // Live statistics only feed the HUD: skip them while it is hidden.
        let live = now.duration_since(self.last_live) >= LIVE_EVERY
            && self.settings.hud_visible.load(Ordering::Relaxed);
        let flush = now.duration_since(self.last_flush) >= FLUSH_EVERY;
        let streams = self.streams.len();
        for s in &mut self.streams {
            s.drain(&mut self.buf);
            if live {
                s.publish_live(self.window_s);
            }
            if flush {
                s.log.flush();
            }
            s.keep_summary(now, &mut self.writer, streams);
        }
        if live {
            self.last_live = now;
        }
        if flush {
            self.last_flush = now;
        }
    }

    fn finish_where(&mut self, pred: impl Fn(&Stream) -> bool) {
        let (done, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.streams)
            .into_iter()
            .partition(|s| pred(&s.stream));
        self.streams = keep;
        let streams = self.streams.len() + done.len();
        for s in done {
            s.finish(&mut self.buf, streams);
        }
    }
}

struct Running {
    analyzer: Arc<Mutex<Analyzer>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Process that started the thread (a forked child must not join it).
    pid: u32,
}

/// The analysis thread of the layer: started with the first capture stream,
/// joined by [`Analysis::shutdown`].
#[derive(Default)]
pub struct Analysis {
    running: Mutex<Option<Running>>,
    next_stream: AtomicU64,
    /// Windows whose log was opened since the thread (re)started: names logs.
    windows: Arc<AtomicU64>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock_or_recover()
}

impl Analysis {
    fn start(&self, settings: Settings) -> Running {
        self.windows.store(0, Ordering::Relaxed);
        let cfg = settings.config;
        let analyzer = Arc::new(Mutex::new(Analyzer {
            streams: Vec::new(),
            settings,
            window_s: cfg.window_seconds,
            buf: vec![0; 4096],
            last_flush: Instant::now(),
            last_live: Instant::now(),
            writer: upkeep::Writer::default(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, s) = (analyzer.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("steadyhud-analysis".into())
            .spawn(move || run(a, s, settings))
            .map_err(|e| {
                guard::say(format_args!(
                    "steadyhud: cannot start the analysis thread: {e}; no log or live stats"
                ))
            })
            .ok();
        Running {
            analyzer,
            stop,
            thread,
            pid: std::process::id(),
        }
    }

    /// Creates the capture stream of a newly created swapchain lineage
    /// (window) of `device_key` and hands its ring to the analysis thread
    /// (starting it if needed).
    pub fn new_stream(
        &self,
        settings: Settings,
        device_key: usize,
        counters: Option<Arc<steadyhud_counters::Counters>>,
        gpu: Option<Arc<GpuTimer>>,
    ) -> Arc<Stream> {
        let id = self.next_stream.fetch_add(1, Ordering::Relaxed) + 1;
        let (stream, cons, vcons) = Stream::with_counters(id, device_key, counters);
        let cfg = settings.config;
        let log = if cfg.log {
            Log::pending(cfg.log_dir.clone())
        } else {
            Log::disabled()
        };
        let opts = Options {
            stutter_threshold: cfg.stutter_threshold,
        };
        let analysis = StreamAnalysis::with_counters(
            stream.clone(),
            (cons, vcons, gpu),
            log,
            cfg.window_seconds,
            opts,
            settings,
            self.windows.clone(),
        );
        let mut running = lock(&self.running);
        if running
            .as_ref()
            .is_some_and(|r| r.pid != std::process::id())
        {
            // A forked child inherited the parent's state but not its thread.
            // Forget it (without joining or finishing the parent's logs).
            std::mem::forget(running.take());
        }
        let r = running.get_or_insert_with(|| self.start(settings));
        lock(&r.analyzer).streams.push(analysis);
        stream
    }

    /// Ends the streams of a device being destroyed: final rows and summary.
    pub fn finish_device(&self, device_key: usize) {
        let running = lock(&self.running);
        if let Some(r) = running.as_ref() {
            if r.pid == std::process::id() {
                lock(&r.analyzer).finish_where(|s| s.device_key == device_key);
            }
        }
    }

    /// Stops and joins the thread and finishes every stream. Idempotent;
    /// does nothing in a forked child.
    pub fn shutdown(&self) {
        let Some(mut r) = lock(&self.running).take() else {
            return;
        };
        if r.pid != std::process::id() {
            std::mem::forget(r);
            return;
        }
        r.stop.store(true, Ordering::Release);
        if let Some(t) = r.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        let mut analyzer = lock(&r.analyzer);
        analyzer.finish_where(|_| true);
        analyzer.writer.stop();
    }
}

fn run(analyzer: Arc<Mutex<Analyzer>>, stop: Arc<AtomicBool>, settings: Settings) {
    let toggle_key = &settings.config.toggle_key;
    let mut hotkey = match guard::try_run(|| crate::hud::keys::KeyWatch::new(toggle_key)) {
        Some(Ok(h)) => Some(h),
        Some(Err(e)) => {
            guard::say(format_args!("steadyhud: HUD hotkey unavailable: {e}"));
            None
        }
        None => None,
    };
    let mut limit_key = if settings.limit.cycles() {
        let combo = &settings.config.toggle_fps_limit;
        match guard::try_run(|| crate::hud::keys::KeyWatch::new(combo)) {
            Some(Ok(h)) => Some(h),
            Some(Err(e)) => {
                guard::say(format_args!("steadyhud: frame cap hotkey unavailable: {e}"));
                None
            }
            None => None,
        }
    } else {
        None
    };
    let mut control = guard::try_run(|| Control::start(&settings)).flatten();
    let mut last_key = Instant::now();
    while !stop.load(Ordering::Acquire) {
        if guard::try_run(|| lock(&analyzer).tick()).is_none() {
            guard::say(format_args!("steadyhud: analysis step failed; retrying"));
        }
        if let Some(c) = control.as_mut() {
            if guard::try_run(|| c.poll(&settings, &analyzer)).is_none() {
                guard::say(format_args!(
                    "steadyhud: control socket failed; closed (the game keeps running)"
                ));
                control = None;
            }
        }
        if let Some(h) = hotkey.as_mut() {
            if last_key.elapsed() >= HOTKEY_EVERY {
                last_key = Instant::now();
                if guard::try_run(|| h.poll()).unwrap_or(false) {
                    settings.hud_visible.fetch_xor(true, Ordering::Relaxed);
                }
            }
        }
        if let Some(h) = limit_key.as_mut() {
            if guard::try_run(|| h.poll()).unwrap_or(false) {
                settings.limit.cycle();
            }
        }
        std::thread::park_timeout(TICK);
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
        let (stream, cons, vcons) = Stream::with_counters(1, 0, Some(table));
        let a = StreamAnalysis::with_counters(
            stream.clone(),
            (cons, vcons, None),
            Log::pending(Some(dir.to_path_buf())),
            10.0,
            Options::default(),
            Settings::for_tests(),
            Arc::default(),
        );
        (stream, a)
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
        let frames = a.durations.len();
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

    /// Frames whose counters a full counter ring dropped are not silent: a
    /// note where it happened and `counter_ring_overflows` in the summary;
    /// every frame still has its row.
    #[test]
    fn counter_ring_overflow_is_logged() {
        use crate::layer::capture::COUNTER_RING_CAPACITY;
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
        super::super::capture::RING_CAPACITY
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
        assert_eq!(
            a.durations.len(),
            4,
            "capture and statistics go on without a log"
        );
    }

    #[test]
    fn stk_range_covers_fastest_frame() {
        assert_eq!(stk_max_fps(&[16_666_667, 33_333_333]), 61);
        assert_eq!(stk_max_fps(&[]), 2);
        assert_eq!(stk_max_fps(&[1]), 2000);
    }
}
