//! The analysis thread: one per process, started with the first capture
//! stream (first swapchain) and stopped (joined) when the last instance is
//! destroyed or the process exits (the exit hook of the client record
//! that owns it).
//!
//! Every ≤ 50 ms ([`super::pollers::TICK`]; 10 ms while a device times
//! its submits), and at once when a control request comes in
//! ([`super::wake`]), it drains each stream's ring, turns consecutive presents of
//! the stream into frame durations, streams one log row per frame (flushed
//! every 250 ms, so SIGKILL loses at most that), feeds
//! [`steadyhud_metrics::Rolling`] and, while the HUD is visible, publishes
//! [`crate::live::LiveStats`] ~10×/s; it polls the HUD hotkey every 50 ms.
//! While a stream runs, its summary JSON is kept current on disk by
//! [`super::upkeep`] (`"complete": false`). A stream ends when its device is
//! destroyed or at shutdown: the rest of the ring is drained, the CSV gets
//! its `# end: complete` line and the final summary (the keys of
//! docs/metrics.md#the-json-keys + STK curves, `"complete": true`) is
//! written.
//!
//! Logging policy: one session log per stream, i.e. per presented surface
//! (window) of a device. A window keeps its log across swapchain recreation
//! (resize), so for the usual single-window game log rows == frames
//! presented exactly; each further window gets its own log named
//! `<exe>-<n>_…`. Frames of a stream are its consecutive presents.
//! Memory: constant whatever the session's length (issue 52): each stream
//! keeps its whole-session statistics in fixed size
//! ([`steadyhud_metrics::WholeSession`]), from which every summary write is
//! computed; only the stutter list grows (and, for a window with
//! displayed-frame timing, its rows' durations and display answers).

use super::analyzer::Analyzer;
use super::control::Control;
use super::pollers::{self, AfterPanic, Key, KeyAction, Poller};
use super::sensor_feed::SharedFeed;
use super::sensors::Sensors;
use super::session::Log;
use super::stream::StreamAnalysis;
use super::upkeep::{self};
use super::wake::Waker;
use crate::client_state::ClientState;
use crate::gpu_times::GpuTimes;
use crate::guard;
use crate::rings::Stream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;
use steadyhud_metrics::Options;
use steadyhud_sys::lock::Recover;

struct Running {
    analyzer: Arc<Mutex<Analyzer>>,
    stop: Arc<AtomicBool>,
    /// Ends the thread's sleep (shutdown).
    waker: Arc<Waker>,
    /// The shutdown is the process's exit (see [`Poller::leak_at_exit`]).
    exiting: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Process that started the thread (a forked child must not join it).
    pid: u32,
    /// System readings the streams read (columns stay empty with
    /// `sensor_hz=0`).
    feed: SharedFeed,
}

/// What a client asks of a new capture stream ([`Analysis::new_stream`]).
#[derive(Default)]
pub struct StreamSpec {
    /// The stream's owner: its device (Vulkan) or window (GL); ends with
    /// [`Analysis::finish_device`].
    pub device_key: usize,
    /// The device's counters, when it counts.
    pub counters: Option<Arc<steadyhud_counters::Counters>>,
    /// The device's GPU timer, when it times.
    pub gpu: Option<Arc<dyn GpuTimes>>,
    /// The device's PCI address (the GPU the system readings read).
    pub pci: Option<steadyhud_sensors::PciBusId>,
    /// The window has a source of display times (its presents get
    /// answers: [`Stream::not_asked`] or the source's), so its rows carry
    /// the display columns.
    pub display: bool,
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
    fn start(
        &self,
        client: &'static ClientState,
        pci: Option<steadyhud_sensors::PciBusId>,
    ) -> Running {
        self.windows.store(0, Ordering::Relaxed);
        let cfg = &client.config;
        let analyzer = Arc::new(Mutex::new(Analyzer {
            streams: Vec::new(),
            client,
            window_s: cfg.window_seconds,
            buf: vec![0; 4096],
            last_flush: Instant::now(),
            last_live: Instant::now(),
            writer: upkeep::Writer::default(),
            inputs: Vec::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let exiting = Arc::new(AtomicBool::new(false));
        let waker = Arc::new(Waker::new());
        let feed = SharedFeed::default();
        let (a, f) = (analyzer.clone(), feed.clone());
        let ends = (stop.clone(), exiting.clone(), waker.clone());
        let thread = std::thread::Builder::new()
            .name("steadyhud-analysis".into())
            .spawn(move || run(a, ends, client, (pci, f)))
            .map_err(|e| {
                guard::say(format_args!(
                    "steadyhud: cannot start the analysis thread: {e}; no log or live stats"
                ))
            })
            .ok();
        Running {
            analyzer,
            stop,
            waker,
            exiting,
            thread,
            pid: std::process::id(),
            feed,
        }
    }

    /// Creates the capture stream `spec` asks for (a newly created
    /// swapchain lineage or GL window) and hands its ring to the analysis
    /// thread (starting it if needed; the first stream's device, at
    /// `spec.pci`, is the GPU the system readings read). Clients call it
    /// through the client record's `new_stream`.
    pub fn new_stream(&self, client: &'static ClientState, spec: StreamSpec) -> Arc<Stream> {
        let StreamSpec {
            device_key,
            counters,
            gpu,
            pci,
            display,
        } = spec;
        let id = self.next_stream.fetch_add(1, Ordering::Relaxed) + 1;
        let (stream, (cons, vcons, dcons)) =
            Stream::with_display(id, device_key, counters, display);
        let cfg = &client.config;
        let log = if cfg.log {
            Log::pending(cfg.log_dir.clone())
        } else {
            Log::disabled()
        };
        let opts = Options {
            stutter_threshold: cfg.stutter_threshold,
            target_fps: cfg.target_fps,
        };
        let analysis = StreamAnalysis::with_counters(
            stream.clone(),
            (cons, vcons, gpu, dcons),
            log,
            cfg.window_seconds,
            opts,
            client,
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
        let r = running.get_or_insert_with(|| self.start(client, pci));
        let analysis = analysis.with_sensors(r.feed.clone());
        lock(&r.analyzer).streams.push(analysis);
        stream
    }

    /// Ends the streams of a device being destroyed: final rows and summary
    /// (waited for at most [`FINISH_BOUND`]).
    pub fn finish_device(&self, device_key: usize) {
        let analyzer = match lock(&self.running).as_ref() {
            Some(r) if r.pid == std::process::id() => r.analyzer.clone(),
            _ => return,
        };
        within_bound(move || lock(&analyzer).finish_where(|s| s.device_key == device_key));
    }

    /// Stops and joins the thread and finishes every stream. Idempotent;
    /// does nothing in a forked child.
    pub fn shutdown(&self) {
        self.shutdown_as(false);
    }

    /// [`Analysis::shutdown`] at the process's exit: what the pollers hold
    /// of other libraries is left to the OS ([`Poller::leak_at_exit`]).
    pub fn shutdown_at_exit(&self) {
        self.shutdown_as(true);
    }

    fn shutdown_as(&self, exiting: bool) {
        let Some(mut r) = lock(&self.running).take() else {
            return;
        };
        if r.pid != std::process::id() {
            std::mem::forget(r);
            return;
        }
        r.exiting.store(exiting, Ordering::Release);
        r.stop.store(true, Ordering::Release);
        // The join and the final writes, waited for at most FINISH_BOUND: a
        // log folder on a hung mount (a write that never returns) must not
        // hold the game's exit.
        within_bound(move || {
            if let Some(t) = r.thread.take() {
                r.waker.wake();
                let _ = t.join();
            }
            let mut analyzer = lock(&r.analyzer);
            analyzer.finish_where(|_| true);
            analyzer.writer.stop();
        });
    }
}

/// The longest a game's exit or device destruction waits for our threads
/// to finish its logs.
pub const FINISH_BOUND: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `work` (joining our threads, the final writes) on a thread of its
/// own and waits for it at most [`FINISH_BOUND`]. Past that, one line (once
/// per process) says what is not written and the game goes on: the work
/// carries on as long as the process lives, and the present tail, which a
/// clean end would have removed, keeps every frame for the next session's
/// or command's recovery. Without a thread to spare, `work` runs here.
fn within_bound(work: impl FnOnce() + Send + 'static) {
    static SAID: AtomicBool = AtomicBool::new(false);
    let slot = Arc::new(Mutex::new(Some(work)));
    // A flag and a condition variable, not a channel: this runs from
    // `.fini_array` at exit, after the thread's TLS may be gone, and a
    // channel's wait reaches for it (a futex-based wait does not).
    let done = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let theirs = slot.clone();
    let told = done.clone();
    // At `.fini_array` a thread's start can meet TLS already gone (seen on
    // i686): then, as without a thread to spare, the work runs here.
    let spawned = guard::try_run(move || {
        std::thread::Builder::new()
            .name("steadyhud-finish".into())
            .spawn(move || {
                let work = lock(&theirs).take();
                if let Some(work) = work {
                    guard::contain((), work);
                }
                let (flag, cv) = &*told;
                *lock(flag) = true;
                cv.notify_all();
            })
    });
    if !matches!(spawned, Some(Ok(_))) {
        let work = lock(&slot).take();
        if let Some(work) = work {
            guard::contain((), work);
        }
        return;
    }
    let (flag, cv) = &*done;
    let (finished, _) = cv
        .wait_timeout_while(lock(flag), FINISH_BOUND, |d| !*d)
        .unwrap_or_else(|e| e.into_inner());
    if !*finished && !SAID.swap(true, Ordering::Relaxed) {
        guard::say(format_args!(
            "steadyhud: the session log's last rows and final summary were not written within {} s \
             (a write to the log folder does not return: a hung mount?); not waiting longer. \
             The next session or steadyhud command recovers the frames from the present tail",
            FINISH_BOUND.as_secs()
        ));
    }
}

/// The thread: each poller's turn (a panic in one contained and answered
/// as that poller says), then a sleep until a socket a poller waits for is
/// ready, or the shortest [`Poller::max_sleep`] passes.
fn run(
    analyzer: Arc<Mutex<Analyzer>>,
    (stop, exiting, waker): (Arc<AtomicBool>, Arc<AtomicBool>, Arc<Waker>),
    client: &'static ClientState,
    sensors: (Option<steadyhud_sensors::PciBusId>, SharedFeed),
) {
    // Logs of killed sessions, made whole before this one adds its own,
    // quietly: this game's output is not the place to report another's
    // log (the CLI's commands say it); only a failure costs a line.
    // Memory stays bounded whatever the log's length (a long log's summary
    // is left to the CLI); only logs in this game's log folder.
    guard::contain((), || {
        let logs: Vec<_> = (client.config.log_dir.clone())
            .or_else(steadyhud_log::default_log_dir)
            .into_iter()
            .collect();
        use steadyhud_log::recover::{recover_dead, Within};
        for r in recover_dead(&logs, Within::Game) {
            if let Err(e) = r {
                guard::say(format_args!("steadyhud: {e}"));
            }
        }
    });
    let mut pollers = pollers(client, sensors);
    let mut fds = Vec::new();
    let epoch = Instant::now();
    while !stop.load(Ordering::Acquire) {
        let now = Instant::now();
        pollers.retain_mut(|p| {
            if guard::try_run(|| p.poll(now, client, &analyzer)).is_some() {
                return true;
            }
            match p.after_panic() {
                AfterPanic::Retry(line) => guard::say(format_args!("{line}")),
                AfterPanic::Drop(line) => {
                    guard::say(format_args!("{line}"));
                    return false;
                }
                AfterPanic::Ignore => {}
            }
            true
        });
        fds.clear();
        let busy = pollers
            .iter()
            .fold(false, |busy, p| p.interest(&mut fds) | busy);
        let now = Instant::now();
        let due = pollers
            .iter()
            .filter_map(|p| p.max_sleep(now))
            .min()
            .unwrap_or(pollers::MAX_SLEEP);
        let grid = pollers
            .iter()
            .map(|p| p.grid())
            .min()
            .unwrap_or(pollers::TICK);
        if !stop.load(Ordering::Acquire) {
            waker.sleep(on_grid(epoch, now, due, grid), busy, &mut fds);
        }
    }
    if exiting.load(Ordering::Acquire) {
        for p in pollers {
            if p.leak_at_exit() {
                std::mem::forget(p);
            }
        }
    }
}

/// How long to sleep from `now` for work `due` later: to the first point
/// of the `grid` (counted from `epoch`) after `now` and at or after the
/// work (taken as at most [`pollers::MAX_SLEEP`] away), so that jobs due
/// close together share a wake-up.
fn on_grid(
    epoch: Instant,
    now: Instant,
    due: std::time::Duration,
    grid: std::time::Duration,
) -> std::time::Duration {
    let due = due
        .min(pollers::MAX_SLEEP)
        .max(std::time::Duration::from_nanos(1));
    let tick = grid.as_nanos().max(1);
    let at = (now - epoch + due).as_nanos();
    let grid = at.div_ceil(tick) * tick;
    let wait = grid - (now - epoch).as_nanos();
    std::time::Duration::from_nanos(wait.min(u64::MAX as u128) as u64)
}

/// The thread's jobs: the system readings (opened before any stream's log,
/// which needs their columns), the streams (so the others see this tick's
/// frames), then the control socket and the keys the config asks for.
fn pollers(
    client: &'static ClientState,
    (pci, feed): (Option<steadyhud_sensors::PciBusId>, SharedFeed),
) -> Vec<Box<dyn Poller>> {
    // The socket is served as early as before the readings existed; the
    // readings open next, still before the first tick drains a stream.
    let control = guard::try_run(|| Control::start(client)).flatten();
    let mut list: Vec<Box<dyn Poller>> = Vec::new();
    if let Some(s) = guard::try_run(|| Sensors::start(client, pci, &feed)).flatten() {
        list.push(Box::new(s));
    }
    list.push(Box::<pollers::Streams>::default());
    if let Some(c) = control {
        list.push(Box::new(c));
    }
    let cfg = &client.config;
    let keys = [
        (true, &cfg.toggle_key, KeyAction::ToggleHud),
        (true, &cfg.preset_key, KeyAction::CyclePreset),
        (
            client.limit.cycles(),
            &cfg.toggle_fps_limit,
            KeyAction::CycleCap,
        ),
    ];
    // Keys that cannot be watched for the same reason (no libX11, no
    // display) cost one line together; `ctl` still reaches what they do.
    let mut failed: Vec<(String, Vec<&str>)> = Vec::new();
    for (_, combo, action) in keys.into_iter().filter(|k| k.0) {
        match Key::watch(combo, action, client) {
            Ok(k) => list.push(Box::new(k)),
            Err(e) => match failed.iter_mut().find(|f| f.0 == e) {
                Some(f) => f.1.push(action.name()),
                None => failed.push((e, vec![action.name()])),
            },
        }
    }
    for (e, names) in failed {
        guard::say(format_args!(
            "steadyhud: {} hotkey{} unavailable: {e} (steadyhud ctl still works)",
            names.join(", "),
            if names.len() == 1 { "" } else { "s" }
        ));
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Wake-ups fall on the grid, at or after the work due and no later
    /// than the next grid point after it (work due later than the longest
    /// sleep counts as due then).
    #[test]
    fn sleeps_end_on_the_grid() {
        let epoch = Instant::now();
        let ms = Duration::from_millis;
        let at = |now: Duration, due: Duration| on_grid(epoch, epoch + now, due, ms(50));
        assert_eq!(at(ms(0), ms(100)), ms(100));
        assert_eq!(at(ms(30), ms(100)), ms(120), "to 150, the point after 130");
        assert_eq!(at(ms(30), ms(0)), ms(20), "due now: the next point");
        assert_eq!(at(ms(50), ms(0)), ms(50), "on a point: the one after it");
        assert_eq!(at(ms(10), ms(10_000)), pollers::MAX_SLEEP + ms(40));
        assert_eq!(on_grid(epoch, epoch + ms(3), ms(1), ms(10)), ms(7));
    }
}
