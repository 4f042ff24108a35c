//! Summary upkeep: keeps each stream's `<stem>.summary.json` current while
//! its session runs, so a session that never ends cleanly (SIGTERM,
//! SIGKILL, `_exit`, a crash) still leaves a summary, marked
//! `"complete": false` with `frames_so_far`.
//!
//! Who does what: the analysis thread asks [`Schedule::due`] each tick and,
//! when a write is due, flushes the CSV and computes the summary of every
//! frame so far from the stream's fixed-size whole-session statistics
//! (`steadyhud_metrics::WholeSession`: the same cost whatever the
//! session's length, nothing kept that grows with it) into a [`Snapshot`];
//! the one [`Writer`] thread serializes it and writes it atomically. The
//! rings' drain never waits for the file, and the present path does no
//! new work.
//!
//! When: once when the log opens (`frames_so_far` 0: a watcher sees a
//! running session), then every [`MIN_INTERVAL`], or, when that is longer
//! (long sessions), every [`BUDGET`] × the next write's predicted cost × the
//! streams kept, so upkeep stays under 1 % of one core whatever the session
//! length. Cost is CPU time (the snapshot on the analysis thread plus the
//! writer's), what the budget is about: wall time would count the waits of
//! a loaded machine. The prediction ([`CostModel`]) is a line through the
//! last two writes' (frames, cost): a write's cost no longer grows with
//! the frames (the statistics are fixed-size), and the line, never
//! sloping down, then stays at the last cost.
//!
//! Never over the final summary: [`Schedule::finish`] marks the stream
//! finished under the lock a periodic write holds while it writes, and a
//! periodic write that finds it finished is dropped.

use super::stutter_lists::StutterLists;
use crate::guard;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use steadyhud_log::{write_summary_streamed, Progress, SummaryTarget};
use steadyhud_metrics::{StkPoint, Summary};
use steadyhud_sys::lock::Recover;

/// Shortest time between two periodic writes of one stream.
pub const MIN_INTERVAL: Duration = Duration::from_secs(10);
/// Upkeep aims at 1/BUDGET of one core (0.8 %): the interval is at least
/// BUDGET × the predicted cost (× the streams kept, which share the
/// budget). The margin below 1 % covers what the linear prediction misses
/// of O(n log n) and the noise of one measurement.
pub const BUDGET: u32 = 125;

/// Time between periodic writes when the next one is predicted to cost
/// `predicted` of CPU and `streams` streams are kept.
pub fn interval(predicted: Duration, streams: usize) -> Duration {
    let share = u32::try_from(streams.max(1)).unwrap_or(u32::MAX);
    MIN_INTERVAL.max(predicted.saturating_mul(BUDGET).saturating_mul(share))
}

/// The cost of a write as a line through the last two writes' (frames,
/// CPU cost): a fixed part (JSON, file) plus a per-frame part.
#[derive(Default, Clone, Copy, Debug)]
pub struct CostModel {
    prev: Option<(usize, Duration)>,
    last: Option<(usize, Duration)>,
}

impl CostModel {
    pub fn record(&mut self, frames: usize, cost: Duration) {
        self.prev = self.last;
        self.last = Some((frames, cost));
    }

    /// The cost of a write of `frames` frames: the last cost plus the
    /// per-frame slope (never negative) times the frames gained; the last
    /// cost alone after one write, zero before any.
    pub fn predict(&self, frames: usize) -> Duration {
        let Some((n2, c2)) = self.last else {
            return Duration::ZERO;
        };
        let slope = match self.prev {
            Some((n1, c1)) if n2 > n1 => c2.saturating_sub(c1).as_secs_f64() / (n2 - n1) as f64,
            _ => 0.0,
        };
        let more = frames.saturating_sub(n2) as f64 * slope;
        c2.saturating_add(Duration::try_from_secs_f64(more).unwrap_or(Duration::MAX))
    }

    /// Frames and cost of the last write.
    pub fn last(&self) -> (usize, Duration) {
        self.last.unwrap_or_default()
    }
}

/// CPU time the calling thread has used so far (zero if the clock fails).
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// What the writer needs for one periodic write, computed on the analysis
/// thread right after a flush (so the CSV holds every frame counted here).
pub struct Snapshot {
    pub target: SummaryTarget,
    /// The summary of the rows written (`None`: no frame yet).
    pub summary: Option<Summary>,
    pub stk: Vec<StkPoint>,
    /// Keys beyond the summary's (stream, counters, overflows, histogram,
    /// readings …).
    pub extra: serde_json::Value,
    /// The per-stutter keys, streamed into the file by the writer.
    pub stutters: StutterLists,
}

/// What a stream and the writer share.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
}

#[derive(Default, Clone, Copy)]
struct SlotState {
    /// The final summary is written or being written: no periodic write may land.
    finished: bool,
    /// A snapshot is queued or being written.
    busy: bool,
    /// CPU time (snapshot included) of the last periodic writes.
    cost: CostModel,
    total_cost: Duration,
    writes: u64,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, SlotState> {
        self.state.lock_or_recover()
    }

    /// The state, or `None` while the writer holds the lock (it is writing
    /// the file): the analysis thread never waits for the writer.
    fn peek(&self) -> Option<SlotState> {
        match self.state.try_lock() {
            Ok(s) => Some(*s),
            Err(TryLockError::Poisoned(e)) => Some(*e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }
}

/// A stream's upkeep: when it last took a snapshot, and its slot.
#[derive(Default)]
pub struct Schedule {
    slot: Arc<Slot>,
    last_sent: Option<Instant>,
}

impl Schedule {
    /// Whether a snapshot of `frames` frames should be taken at `now`,
    /// `streams` streams being kept.
    pub fn due(&self, now: Instant, streams: usize, frames: usize) -> bool {
        let Some(s) = self.slot.peek() else {
            return false;
        };
        if s.finished || s.busy {
            return false;
        }
        self.last_sent.is_none_or(|t| {
            now.saturating_duration_since(t) >= interval(s.cost.predict(frames), streams)
        })
    }

    /// Hands `snapshot`, taken at `now` for `snapshot_cpu` of the analysis
    /// thread's CPU time, to `writer`.
    pub fn send(
        &mut self,
        snapshot: Snapshot,
        now: Instant,
        snapshot_cpu: Duration,
        writer: &mut Writer,
    ) {
        self.last_sent = Some(now);
        self.slot.lock().busy = true;
        let job = Job {
            slot: self.slot.clone(),
            snapshot,
            snapshot_cpu,
        };
        if !writer.send(job) {
            self.slot.lock().busy = false;
        }
    }

    /// The `summary_upkeep` key: periodic writes so far, their total and
    /// last CPU cost, and the interval that gives at `frames` frames.
    pub fn stats(&self, streams: usize, frames: usize) -> serde_json::Value {
        let s = *self.slot.lock();
        let (last_frames, last_cost) = s.cost.last();
        serde_json::json!({
            "writes": s.writes,
            "total_cpu_ms": s.total_cost.as_secs_f64() * 1e3,
            "last_cpu_ms": last_cost.as_secs_f64() * 1e3,
            "last_frames": last_frames,
            "interval_s": interval(s.cost.predict(frames), streams).as_secs_f64(),
        })
    }

    /// Marks the stream finished before its final summary is written: a
    /// periodic write in progress completes first, later ones are dropped.
    pub fn finish(&self) {
        self.slot.lock().finished = true;
    }
}

/// One periodic write.
struct Job {
    slot: Arc<Slot>,
    snapshot: Snapshot,
    /// The analysis thread's CPU time for the snapshot.
    snapshot_cpu: Duration,
}

impl Job {
    fn run(self) {
        let Job {
            slot,
            snapshot: s,
            snapshot_cpu,
        } = self;
        let cpu = thread_cpu();
        let frames = s.summary.as_ref().map_or(0, |x| x.frames);
        // A finished stream's summary is about to be final: skip the write.
        let written = !slot.lock().finished
            && guard::try_run(|| {
                let state = slot.lock();
                if state.finished {
                    return false;
                }
                // Errors are not reported here: they are the CSV's (same
                // folder, reported once by the log), and the final write
                // reports its own.
                let Snapshot {
                    target,
                    summary,
                    stk,
                    extra,
                    stutters,
                } = s;
                let _ = stutters.streamed(|streamed| {
                    write_summary_streamed(
                        &target,
                        summary.as_ref(),
                        &stk,
                        extra,
                        streamed,
                        Progress::Running,
                    )
                });
                true
            })
            .unwrap_or(false);
        let cost = snapshot_cpu + thread_cpu().saturating_sub(cpu);
        let mut state = slot.lock();
        state.busy = false;
        if written {
            state.writes += 1;
            state.cost.record(frames, cost);
            state.total_cost += cost;
        }
    }
}

/// The writer thread, started with the first snapshot and joined by
/// [`Writer::stop`] (the layer's library may be unmapped after shutdown).
#[derive(Default)]
pub struct Writer {
    thread: Option<(Sender<Job>, JoinHandle<()>)>,
    /// The thread could not be started: no periodic writes this session.
    unavailable: bool,
}

impl Writer {
    /// Whether snapshots can be handed over (starts the thread if needed).
    pub fn ready(&mut self) -> bool {
        if self.thread.is_none() && !self.unavailable {
            let (tx, rx) = channel::<Job>();
            let spawned = std::thread::Builder::new()
                .name("steadyhud-summary".into())
                .spawn(move || {
                    for job in rx {
                        job.run();
                    }
                });
            match spawned {
                Ok(t) => self.thread = Some((tx, t)),
                Err(e) => {
                    guard::say(format_args!("steadyhud: cannot start the summary writer thread: {e}; the summary is written only at a clean exit"));
                    self.unavailable = true;
                }
            }
        }
        self.thread.is_some()
    }

    /// Queues `job`; false if there is no writer thread to take it.
    fn send(&mut self, job: Job) -> bool {
        match &self.thread {
            Some((tx, _)) => tx.send(job).is_ok(),
            None => false,
        }
    }

    /// Lets the thread finish what it has and joins it.
    pub fn stop(&mut self) {
        if let Some((tx, t)) = self.thread.take() {
            drop(tx);
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_is_ten_seconds_until_writes_cost_over_a_budget_of_it() {
        let ms = Duration::from_millis;
        assert_eq!(interval(Duration::ZERO, 1), MIN_INTERVAL);
        assert_eq!(interval(ms(80), 1), MIN_INTERVAL);
        assert_eq!(interval(ms(200), 1), Duration::from_secs(25));
        // Two streams share the budget.
        assert_eq!(interval(ms(200), 2), Duration::from_secs(50));
        assert_eq!(interval(Duration::MAX, usize::MAX), Duration::MAX);
    }

    #[test]
    fn cost_is_predicted_on_the_line_through_the_last_two_writes() {
        let ms = Duration::from_millis;
        let mut m = CostModel::default();
        assert_eq!(m.predict(1000), Duration::ZERO);
        // One tiny write: its cost is overhead, not per frame.
        m.record(25, ms(2));
        assert_eq!(m.predict(50_000), ms(2));
        m.record(50_025, ms(52));
        // 1 ms per 1000 frames on top of the last cost.
        assert_eq!(m.predict(100_025), ms(102));
        assert_eq!(m.predict(10), ms(52), "never below the last cost");
        // A cheaper write than the one before (noise): no negative slope.
        m.record(60_025, ms(40));
        assert_eq!(m.predict(1_000_000), ms(40));
    }

    #[test]
    fn thread_cpu_counts_this_threads_work() {
        let before = thread_cpu();
        let mut x = 1u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        assert!(thread_cpu() > before);
    }

    fn read_json(p: &std::path::Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    /// One write in flight at a time, then none before the interval; after
    /// `finish` nothing is due and a write already queued is dropped.
    #[test]
    fn a_periodic_write_never_lands_after_the_final_one() {
        let dir = tempfile::tempdir().unwrap();
        let log = steadyhud_log::SessionLog::create(
            dir.path(),
            "t",
            std::time::SystemTime::now(),
            &steadyhud_log::Layout::default(),
        )
        .unwrap();
        let snap = |frames: usize| {
            let opts = steadyhud_metrics::Options::default();
            let mut w = steadyhud_metrics::WholeSession::new(&opts);
            for _ in 0..frames {
                w.push(10_000_000);
            }
            let mut extra = serde_json::json!({"stream": 1});
            let r = steadyhud_log::running_session(&w, &opts, &mut extra);
            Snapshot {
                target: log.summary_target(),
                summary: r.summary,
                stk: r.stk,
                extra,
                stutters: StutterLists {
                    frames: r.frames,
                    ..StutterLists::default()
                },
            }
        };
        let (mut s, mut w) = (Schedule::default(), Writer::default());
        let now = Instant::now();
        assert!(s.due(now, 1, 5), "the first write is due at once");
        assert!(w.ready());
        s.send(snap(5), now, Duration::ZERO, &mut w);
        w.stop();
        let path = log.summary_target().path();
        let v = read_json(&path);
        assert_eq!(
            (
                &v["complete"],
                &v["frames_so_far"],
                &v["frames"],
                &v["stream"]
            ),
            (
                &serde_json::json!(false),
                &serde_json::json!(5),
                &serde_json::json!(5),
                &serde_json::json!(1)
            )
        );
        assert!(!s.due(Instant::now(), 1, 6));
        assert!(s.due(now + MIN_INTERVAL, 1, 6));
        assert_eq!(s.stats(1, 6)["writes"], 1);
        assert_eq!(s.stats(1, 6)["last_frames"], 5);

        assert!(w.ready(), "the writer starts again after a stop");
        // The writer's queue held here, so that the job is surely still
        // queued at the finish (a writer thread may run it at once, on a
        // machine where this thread is preempted).
        w.stop();
        let (tx, queued) = channel::<Job>();
        w.thread = Some((tx, std::thread::spawn(|| {})));
        s.send(snap(6), now + MIN_INTERVAL, Duration::ZERO, &mut w);
        assert!(
            !s.due(now + 3 * MIN_INTERVAL, 1, 6),
            "a write is queued or running"
        );
        s.finish();
        for job in queued.try_iter() {
            job.run();
        }
        w.stop();
        assert!(!s.due(now + 3 * MIN_INTERVAL, 1, 6));
        assert_eq!(
            read_json(&path)["frames_so_far"],
            5,
            "queued before the finish, dropped after it"
        );
        assert!(!path.with_extension("json.tmp").exists());
    }
}
