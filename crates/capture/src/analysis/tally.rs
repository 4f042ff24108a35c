//! A window's totals since its first frame, for the control socket's
//! `histogram` request (what `steadyhud export` serves to Prometheus): the
//! time histogram in the fleet scheme's buckets
//! (`steadyhud_metrics::histogram`), frames, time, and the stutters judged
//! so far with their time, all read off the stream's fixed-size
//! whole-session statistics ([`WholeSession`]), so a reply costs the same
//! whatever the session's length.
//!
//! The frames are the rows written; a frame's stutter verdict counts once
//! the 9 frames after it exist (its 19-frame window is then final: the
//! same verdict the session's summary gives it); the last 9 frames wait
//! for their successors. Every total only grows.

use steadyhud_control::replies::WindowHistogram;
use steadyhud_metrics::histogram::SCHEME;
use steadyhud_metrics::WholeSession;

/// The reply's part for window `stream` (with its ring's overflows).
pub(super) fn reply(whole: &WholeSession, stream: u64, ring_overflows: u64) -> WindowHistogram {
    let (_, stutters, stutter_ns) = whole.stutters().final_so_far();
    WindowHistogram {
        stream,
        frames: whole.frames(),
        time_ns: u64::try_from(whole.distribution().total_ns()).unwrap_or(u64::MAX),
        stutters: stutters as u64,
        stutter_ns: u64::try_from(stutter_ns).unwrap_or(u64::MAX),
        ring_overflows,
        scheme: SCHEME.to_string(),
        buckets: whole
            .fleet_bins()
            .map(|(b, frames, time)| [u64::from(b), frames, time])
            .collect(),
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
        let opts = Options::default();
        let mut w = WholeSession::new(&opts);
        let mut last = None;
        for &d in &durations {
            w.push(d);
            let r = reply(&w, 3, 1);
            if let Some(l) = last.as_ref() {
                let l: &WindowHistogram = l;
                assert!(r.frames > l.frames && r.time_ns > l.time_ns && r.stutters >= l.stutters);
            }
            last = Some(r);
        }
        let s = summarize(&durations, &opts).unwrap();
        let r = reply(&w, 3, 1);
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
        assert_eq!(reply(&w, 3, 1), r);
    }
}
