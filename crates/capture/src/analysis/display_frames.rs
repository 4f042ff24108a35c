//! The analysis thread's side of displayed-frame timing for one stream
//! ([`DisplayFrames`]): each row's answer (when its frame reached the
//! screen, that it never did, or nothing), the session's counts and the
//! HUD's window.
//!
//! Row k is the frame that present k+1 ends, so its answer is that
//! present's ([`crate::rings::Answer::present_t`] = the row's `to`). A row
//! waits until its answer is in, or [`LATE_NS`] of presents passed; it is
//! then written as unknown. Answers do not come in present order: Weston
//! answers a frame `presented` when the repaint that took it ends, and the
//! next frames may be `discarded` before that (MAILBOX), so a later
//! answer says nothing of an earlier one. Presents the hook did not ask
//! about are answered "unknown" at once ([`Stream::not_asked`]), so only
//! an answer that never comes (a compositor that never answers, a game
//! that stopped reading its socket) holds rows back, by [`LATE_NS`].
//!
//! [`Stream::not_asked`]: crate::rings::Stream::not_asked

use super::gpu_frames::Pending;
use crate::live::LiveDisplay;
use crate::rings::Answer;
use ringbuf::traits::Consumer;
use ringbuf::HeapCons;
use std::collections::{BTreeMap, VecDeque};
use steadyhud_log::display::{RunningAnswers, Shown, Source};
use steadyhud_metrics::Options;

/// How long a row may wait for its answer (CPU time after its present,
/// judged by the newest present). Longer than GPU timing's second: a
/// compositor on a loaded machine was seen to show a new window's first
/// frame 1.16 s after its present (Weston headless, a 2-core machine
/// running two builds); a compositor that never answers then holds rows
/// back this long, never more (its feedbacks stop being asked once 64 are
/// out, and a present not asked about is answered at once).
pub const LATE_NS: u64 = 3_000_000_000;

/// One written row's answer, kept for the summary and the HUD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decided {
    /// The present that ends the frame (CLOCK_MONOTONIC).
    pub present_t: u64,
    pub shown: Shown,
}

/// Display timing of one stream on the analysis thread.
pub struct DisplayFrames {
    cons: HeapCons<Answer>,
    /// Answers not yet matched to a row, by present.
    pending: BTreeMap<u64, Shown>,
    held: VecDeque<Pending>,
    /// Every written row's answer, in fixed size: the summary's displayed
    /// metrics ([`RunningAnswers::summary_keys`]); the stream adds each
    /// row's as it writes it (after its PC latency terms, when it has
    /// them).
    pub answers: RunningAnswers,
    /// The HUD's window.
    window: VecDeque<Decided>,
    window_ns: u64,
    /// Rows written unknown because their answer was late.
    pub late: u64,
    /// The source that answered last.
    source: Option<Source>,
}

impl DisplayFrames {
    /// `opts`: the session's stutter rule, for the displayed intervals'.
    pub fn new(cons: HeapCons<Answer>, window_ns: u64, opts: &Options) -> DisplayFrames {
        DisplayFrames {
            cons,
            pending: BTreeMap::new(),
            held: VecDeque::new(),
            answers: RunningAnswers::new(opts),
            window: VecDeque::new(),
            window_ns,
            late: 0,
            source: None,
        }
    }

    /// Holds a row until its answer is in.
    pub fn push(&mut self, p: Pending) {
        self.held.push_back(p);
    }

    /// Rows held back.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Reads new answers and hands every decided row, in order, to
    /// `write` with its answer. `newest`: the newest present; `all`:
    /// decide every row (the stream ends).
    pub fn flush(&mut self, newest: u64, all: bool, mut write: impl FnMut(&Pending, Shown)) {
        while let Some(a) = self.cons.try_pop() {
            self.pending.insert(a.present_t, a.shown);
        }
        while let Some(&p) = self.held.front() {
            let t = p.to;
            let shown = match self.pending.remove(&t) {
                Some(s) => s,
                None if all => Shown::Unknown,
                None if newest.saturating_sub(t) > LATE_NS => {
                    self.late += 1;
                    Shown::Unknown
                }
                None => break,
            };
            self.held.pop_front();
            // Answers to presents no row ends (the first present's, rows
            // lost to a full ring) go with the rows after them.
            while let Some((&k, _)) = self.pending.first_key_value() {
                if k > t {
                    break;
                }
                self.pending.remove(&k);
            }
            if let Shown::At { source, .. } | Shown::Dropped { source } = shown {
                self.source = Some(source);
            }
            let d = Decided {
                present_t: t,
                shown,
            };
            self.window.push_back(d);
            while self
                .window
                .front()
                .is_some_and(|f| t.saturating_sub(f.present_t) > self.window_ns)
            {
                self.window.pop_front();
            }
            write(&p, shown);
        }
    }

    /// The window's numbers for the HUD (`None` before any answer).
    pub fn live(&self) -> Option<LiveDisplay> {
        let source = self.source?;
        let mut shown = self.window.iter().filter_map(|d| match d.shown {
            Shown::At {
                displayed_ns,
                refresh_ns,
                ..
            } => Some((d.present_t, displayed_ns, refresh_ns)),
            _ => None,
        });
        let first = shown.next();
        let (mut n, mut last, mut latency, mut refresh) = (0u32, first, 0i128, 0u64);
        if let Some((t, at, r)) = first {
            n = 1;
            latency = at as i128 - t as i128;
            refresh = r;
        }
        for s in shown {
            n += 1;
            latency += s.1 as i128 - s.0 as i128;
            refresh = s.2;
            last = Some(s);
        }
        let span = match (first, last) {
            (Some(a), Some(b)) if b.1 > a.1 => Some(b.1 - a.1),
            _ => None,
        };
        let count =
            |f: fn(&Shown) -> bool| self.window.iter().filter(|d| f(&d.shown)).count() as u32;
        Some(LiveDisplay {
            source: source.name(),
            displayed_fps: span.map(|s| (n - 1) as f32 / (s as f32 / 1e9)),
            dropped: count(|s| matches!(s, Shown::Dropped { .. })),
            unknown: count(|s| matches!(s, Shown::Unknown)),
            latency_ms: (n > 0).then(|| (latency as f64 / f64::from(n) / 1e6) as f32),
            refresh_ms: (refresh > 0).then(|| refresh as f32 / 1e6),
        })
    }

    /// How the answers came (`display_timing`; the displayed metrics
    /// themselves are the summary's `display`): rows written unknown
    /// because their answer was a second late, answers lost to a full
    /// ring.
    pub fn summary(&self, ring_full: u64) -> serde_json::Value {
        serde_json::json!({
            "late_frames": self.late,
            "ring_full_answers": ring_full,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rings::Stream;
    use steadyhud_wayland::presentation::{Outcome, Sink};

    fn pending(to: u64) -> Pending {
        Pending {
            index: 0,
            present_ns: 0,
            duration_ns: 10,
            from: to - 10,
            to,
            values: [0; steadyhud_counters::MAX_COUNTERS],
        }
    }

    fn shown(at: u64) -> Outcome {
        Outcome::Presented {
            displayed_ns: at,
            refresh_ns: 16,
            msc: 0,
            flags: 0,
        }
    }

    /// Rows wait for their own answers, which come in any order (the
    /// present hook's "not asked" at once, a frame's `presented` after
    /// the next frames' `discarded`).
    #[test]
    fn rows_take_their_own_answers() {
        let (s, (_, _, d)) = Stream::with_display(1, 0, None, true);
        let mut f = DisplayFrames::new(d.unwrap(), 1_000, &Options::default());
        let mut out = Vec::new();
        for t in [110, 120, 130, 140] {
            f.push(pending(t));
        }
        s.feedback(100, shown(105)); // the first present: no row
        s.not_asked(130);
        s.feedback(120, Outcome::Discarded);
        f.flush(140, false, |p, sh| out.push((p.to, sh)));
        assert!(
            out.is_empty(),
            "110 waits for its answer: 120's says nothing of it"
        );
        s.feedback(110, shown(125));
        f.flush(140, false, |p, sh| out.push((p.to, sh)));
        let w = Source::Wayland;
        assert_eq!(
            out,
            [
                (
                    110,
                    Shown::At {
                        source: w,
                        displayed_ns: 125,
                        refresh_ns: 16
                    }
                ),
                (120, Shown::Dropped { source: w }),
                (130, Shown::Unknown),
            ]
        );
        assert_eq!(f.held(), 1, "140 waits for its answer");
        s.feedback(140, shown(160));
        f.flush(140, false, |p, sh| out.push((p.to, sh)));
        assert_eq!(out.len(), 4);
        let live = f.live().unwrap();
        assert_eq!((live.dropped, live.unknown), (1, 1));
        let mean_ms = ((125 - 110) + (160 - 140)) as f32 / 2.0 / 1e6;
        assert_eq!(live.latency_ms, Some(mean_ms));
        assert_eq!(live.displayed_fps, Some(1.0 / (35.0 / 1e9)));
        assert_eq!(f.late, 0);
    }

    #[test]
    fn a_row_without_an_answer_is_late_after_late_ns() {
        let (_s, (_, _, d)) = Stream::with_display(1, 0, None, true);
        let mut f = DisplayFrames::new(d.unwrap(), 1_000, &Options::default());
        f.push(pending(100));
        let mut n = 0;
        f.flush(100 + LATE_NS, false, |_, _| n += 1);
        assert_eq!(n, 0);
        f.flush(101 + LATE_NS, false, |_, sh| {
            assert_eq!(sh, Shown::Unknown);
            n += 1
        });
        assert_eq!((n, f.late), (1, 1));
    }
}
