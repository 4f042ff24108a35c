//! A window's totals since its first frame, for the control socket's
//! `histogram` request (what `steadyhud export` serves to Prometheus): the
//! time histogram in the fleet scheme's buckets
//! (`steadyhud_metrics::histogram`), frames, time, and the stutters judged
//! so far with their time. Brought up to date from the stream's durations
//! only when asked, so a game nobody exports pays nothing for it.
//!
//! A frame is judged once the 9 frames after it exist (its 19-frame window
//! is then final: the same verdict the session's summary gives it); the
//! last 9 frames wait for their successors. Every total only grows.

use steadyhud_control::replies::WindowHistogram;
use steadyhud_metrics::histogram::{bucket_count, bucket_of, SCHEME};
use steadyhud_metrics::{shape_at, HALF_WINDOW};

/// Frames and ns per bucket, and how far the durations were taken in.
#[derive(Default)]
pub(super) struct Tally {
    /// Per bucket: frames, ns (allocated at the first request).
    bins: Vec<(u64, u64)>,
    /// Durations counted into `bins`.
    counted: usize,
    /// Frames judged for stutters.
    judged: usize,
    stutters: u64,
    stutter_ns: u64,
    time_ns: u64,
}

impl Tally {
    /// Takes in the `durations` not seen yet; `theta` is the stutter rule's.
    pub fn catch_up(&mut self, durations: &[u64], theta: f64) {
        if self.bins.is_empty() {
            self.bins = vec![(0, 0); bucket_count()];
        }
        for &d in &durations[self.counted.min(durations.len())..] {
            let bin = &mut self.bins[bucket_of(d) as usize];
            bin.0 += 1;
            bin.1 = bin.1.saturating_add(d);
            self.time_ns = self.time_ns.saturating_add(d);
        }
        self.counted = durations.len();
        let n = durations.len();
        let ready = n.saturating_sub(HALF_WINDOW);
        for i in self.judged..ready {
            if shape_at(|j| durations[j], i, n, theta).stutter {
                self.stutters += 1;
                self.stutter_ns = self.stutter_ns.saturating_add(durations[i]);
            }
        }
        self.judged = self.judged.max(ready);
    }

    /// The reply's part for window `stream` (with its ring's overflows).
    pub fn reply(&self, stream: u64, ring_overflows: u64) -> WindowHistogram {
        WindowHistogram {
            stream,
            frames: self.counted as u64,
            time_ns: self.time_ns,
            stutters: self.stutters,
            stutter_ns: self.stutter_ns,
            ring_overflows,
            scheme: SCHEME.to_string(),
            buckets: self
                .bins
                .iter()
                .enumerate()
                .filter(|(_, b)| b.0 > 0)
                .map(|(i, b)| [i as u64, b.0, b.1])
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use steadyhud_metrics::{summarize, Options};

    /// Taken in piece by piece, the totals are the whole session's: the
    /// summary's histogram and (but for the last 9 frames) its stutters.
    #[test]
    fn pieces_add_up_to_the_session() {
        let mut durations: Vec<u64> = (0..400).map(|i| 16_000_000 + (i % 7) * 100_000).collect();
        for i in [50, 120, 121, 300] {
            durations[i] = 60_000_000;
        }
        durations.extend([16_000_000; 9]);
        let mut t = Tally::default();
        for end in [0, 5, 100, 121, 250, durations.len()] {
            t.catch_up(&durations[..end], 0.2);
        }
        let opts = Options::default();
        let s = summarize(&durations, &opts).unwrap();
        let r = t.reply(3, 1);
        assert_eq!(r.frames, durations.len() as u64);
        assert_eq!(r.time_ns, durations.iter().sum::<u64>());
        assert_eq!(r.stutters, s.stutter_count as u64);
        assert_eq!(r.stutter_ns, 4 * 60_000_000);
        let h = steadyhud_metrics::histogram::TimeHistogram::from_durations(&durations);
        let want: Vec<[u64; 3]> = h
            .bins()
            .iter()
            .map(|(b, bin)| [u64::from(*b), bin.frames, bin.time_ns as u64])
            .collect();
        assert_eq!(r.buckets, want);
        // Asked again with nothing new: the same.
        t.catch_up(&durations, 0.2);
        assert_eq!(t.reply(3, 1), r);
    }
}
