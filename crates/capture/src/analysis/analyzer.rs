//! Everything the analysis thread works on: the streams, stepped every
//! tick, answered to the control socket, ended with their device.

use super::control::MarkPlaced;
use super::stream::StreamAnalysis;
use super::upkeep::{self};
use crate::client_state::ClientState;
use crate::rings::Stream;
use std::time::{Duration, Instant};
use steadyhud_control::replies::{WindowHistogram, WindowStatus};
use steadyhud_wayland::input_times::{InputKind, InputTime};
use steadyhud_x11::inputs::InputKind as X11Kind;

/// How often the logs are flushed (a killed game loses at most this).
const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// How often live statistics are published while the HUD is shown.
const LIVE_EVERY: Duration = Duration::from_millis(100);

/// Everything the thread works on; shared with the hooks that end streams.
pub(super) struct Analyzer {
    pub(super) streams: Vec<StreamAnalysis>,
    pub(super) client: &'static ClientState,
    pub(super) window_s: f64,
    pub(super) buf: Vec<u64>,
    pub(super) last_flush: Instant,
    pub(super) last_live: Instant,
    /// Thread that rewrites the streams' summaries while they run.
    pub(super) writer: upkeep::Writer,
    /// Input times taken from our connections (reused).
    pub(super) inputs: Vec<steadyhud_wayland::input_times::InputTime>,
}

impl super::control::ControlStreams for Analyzer {
    fn mark(&mut self, text: &str) -> Vec<MarkPlaced> {
        let mut placed = Vec::new();
        for s in &mut self.streams {
            // Up to date first: the mark goes after every frame presented
            // before the request.
            s.drain(&mut self.buf);
            placed.extend(s.mark(text));
        }
        placed
    }

    fn catch_up(&mut self) {
        for s in &mut self.streams {
            s.drain(&mut self.buf);
        }
    }

    fn histograms(&mut self) -> Vec<WindowHistogram> {
        self.streams
            .iter_mut()
            .map(|s| {
                s.drain(&mut self.buf);
                s.histogram()
            })
            .collect()
    }

    fn status(&mut self) -> Vec<WindowStatus> {
        let window_s = self.window_s;
        self.streams
            .iter_mut()
            .map(|s| {
                s.drain(&mut self.buf);
                s.status(window_s)
            })
            .collect()
    }
}

impl Analyzer {
    /// One step of every stream at `now`.
    pub(super) fn tick(&mut self, now: Instant) {
        // Live statistics only feed the HUD: skip them while it is hidden.
        let live = now.duration_since(self.last_live) >= LIVE_EVERY
            && self.client.hud.drawn(steadyhud_sys::clock::now_ns());
        let flush = now.duration_since(self.last_flush) >= FLUSH_EVERY;
        let streams = self.streams.len();
        // X11 Present's completes, read before the rows they answer.
        self.client
            .x11present
            .poll(&self.client.x11, steadyhud_sys::clock::now_ns());
        self.feed_inputs();
        for s in &mut self.streams {
            s.drain(&mut self.buf);
            if live {
                s.publish_live(self.window_s);
            }
            if flush {
                s.flush_log();
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

    /// The input times read on our connections, to every stream (a
    /// process's windows share its seat; each counts them only while it
    /// presents).
    fn feed_inputs(&mut self) {
        let mut lost = 0;
        self.inputs.clear();
        let inputs = &mut self.inputs;
        let mut until = self
            .client
            .wayland
            .take_inputs(|i| inputs.push(i), &mut lost);
        // X11: every press the server sent before now is on our socket,
        // read by this take.
        if self.client.x11inputs.any() {
            let now = steadyhud_sys::clock::now_ns();
            let left = self.client.x11inputs.take(&self.client.x11, now, |i| {
                inputs.push(InputTime {
                    t_ns: i.t_ns,
                    read_ns: now,
                    kind: match i.kind {
                        X11Kind::Key => InputKind::Key,
                        X11Kind::Button => InputKind::Button,
                    },
                    exact: false,
                })
            });
            lost += left.over;
            until = Some(until.map_or(now, |u| u.min(now)));
            for note in self.client.x11inputs.take_notes() {
                steadyhud_sys::guard::say(format_args!("steadyhud: {note}"));
            }
        }
        for s in &mut self.streams {
            s.inputs(&self.inputs, until, lost);
            lost = 0;
        }
    }

    /// When the streams have work due next: live statistics while the HUD
    /// is shown, the next flush (which also checks the summary's upkeep).
    pub(super) fn next_due(&self) -> Instant {
        let flush = self.last_flush + FLUSH_EVERY;
        // GPU timing's results are read at every turn.
        if self.times_gpu() {
            return Instant::now();
        }
        if self.client.hud.drawn(steadyhud_sys::clock::now_ns()) {
            flush.min(self.last_live + LIVE_EVERY)
        } else {
            flush
        }
    }

    /// Whether a stream's device times its submits (GPU timing).
    pub(super) fn times_gpu(&self) -> bool {
        self.streams.iter().any(StreamAnalysis::times_gpu)
    }

    pub(super) fn finish_where(&mut self, pred: impl Fn(&Stream) -> bool) {
        // The inputs read so far reach the ending streams' last rows.
        self.feed_inputs();
        let (done, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.streams)
            .into_iter()
            .partition(|s| pred(s.stream()));
        self.streams = keep;
        let streams = self.streams.len() + done.len();
        if !done.is_empty() {
            // X11 Present's completes that came since the last tick reach
            // these streams' last rows.
            self.client
                .x11present
                .poll(&self.client.x11, steadyhud_sys::clock::now_ns());
        }
        for s in done {
            s.finish(&mut self.buf, streams);
        }
    }
}
