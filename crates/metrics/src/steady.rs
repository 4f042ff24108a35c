//! SuperTuxKart's time-weighted FPS (seed stk-benchmark-time-weighted-fps):
//! slow(f) and excess(f) and the Steady / Mostly Steady / Typical FPS, the
//! largest integer f meeting both strict bounds.
//!
//! With τ = 1e9/f ns, a frame is slow iff d·f > 1e9. Both bounds are decided
//! exactly by multiplying through by T and f (u128):
//! slow(f) < a/1000 ⇔ 1000·S < a·T, and
//! excess(f) < b/1000 ⇔ 1000·(f·S − 1e9·C) < b·f·T,
//! with C and S the count and sum of the slow frames. Both shares only grow
//! with f, so the metric is found by binary search over f.

use super::options::NS_PER_S;
use super::sorted::SortedDurations;
use serde::{Deserialize, Serialize};

/// One point of the STK curves: slow(f) and excess(f) as shares of total time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StkPoint {
    pub fps: u32,
    pub slow: f64,
    pub excess: f64,
}

/// The two strict bounds of one STK metric, in per mille of total time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StkBound {
    /// slow(f) must be < slow_permille / 1000.
    pub slow_permille: u32,
    /// excess(f) must be < excess_permille / 1000.
    pub excess_permille: u32,
}

/// The largest f in 1..`fails_from` with `meets(f)`, by binary search:
/// `meets(1)` holds, `meets(fails_from)` does not, and `meets` only turns
/// from true to false as f grows (both STK shares only grow with f). Past
/// `u32::MAX`, `u32::MAX`.
pub(crate) fn largest_meeting(fails_from: u64, meets: impl Fn(u64) -> bool) -> u32 {
    let (mut lo, mut hi) = (1u64, fails_from);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    u32::try_from(lo).unwrap_or(u32::MAX)
}

/// `steady_fps`: slow < 1 %, excess < 0.1 %.
pub const STEADY: StkBound = StkBound {
    slow_permille: 10,
    excess_permille: 1,
};
/// `mostly_steady_fps`: slow < 12 %, excess < 2 %.
pub const MOSTLY_STEADY: StkBound = StkBound {
    slow_permille: 120,
    excess_permille: 20,
};
/// `typical_fps`: slow < 50 %, excess < 10 %.
pub const TYPICAL: StkBound = StkBound {
    slow_permille: 500,
    excess_permille: 100,
};

impl StkBound {
    /// The two strict STK inequalities at target `f` fps, in integers: `c`
    /// slow frames taking `s` ns of a run of `t` ns. Slow share: s/t < slow;
    /// excess share: (f·s − 1e9·c)/(f·t) < excess (every slow frame has
    /// d·f > 1e9, so f·s ≥ 1e9·c). The exact metrics and the fleet
    /// histogram both decide with this.
    pub fn met_by(self, f: u128, c: u128, s: u128, t: u128) -> bool {
        let slow_ok = 1000 * s < u128::from(self.slow_permille) * t;
        let excess_num = f.saturating_mul(s).saturating_sub(u128::from(NS_PER_S) * c);
        let excess_ok = excess_num.saturating_mul(1000)
            < u128::from(self.excess_permille)
                .saturating_mul(f)
                .saturating_mul(t);
        slow_ok && excess_ok
    }
}

/// A distribution that can say, for any target f, how many frames are
/// slower than 1/f s and how long they take: the exact sorted durations of
/// a log ([`SortedDurations`]) and the whole-session state of a running
/// game ([`super::whole::WholeSession`]'s histogram). The STK metrics, the
/// curve and the time over budget are computed from it once, here.
pub trait SlowFrames {
    /// Count C and sum S (ns) of the frames with d·f > 1e9.
    fn slow_frames(&self, f: u64) -> (u64, u128);
    /// N.
    fn frame_count(&self) -> u64;
    /// T, ns.
    fn slow_total_ns(&self) -> u128;
    /// The shortest positive duration, ns.
    fn shortest_positive_ns(&self) -> Option<u64>;

    /// Whether target `f` fps (f ≥ 1) meets both strict bounds of `bound`.
    fn meets(&self, f: u64, bound: StkBound) -> bool {
        let t = self.slow_total_ns();
        if t == 0 || f == 0 {
            return false;
        }
        let (c, s) = self.slow_frames(f);
        bound.met_by(u128::from(f), c as u128, s, t)
    }

    /// The largest integer f ≥ 1 meeting `bound`, 0 if f = 1 fails.
    fn stk_fps(&self, bound: StkBound) -> u32 {
        if !self.meets(1, bound) {
            return 0;
        }
        // Past 1e9 / (shortest positive frame) every positive frame is slow,
        // so slow(f) = 1 and f fails: an upper bound that is never reached.
        let Some(min_pos) = self.shortest_positive_ns() else {
            return 0;
        };
        largest_meeting(NS_PER_S / min_pos + 1, |f| self.meets(f, bound))
    }

    /// slow(f) and excess(f) as shares of total time.
    fn stk_point(&self, f: u32) -> StkPoint {
        let t = self.slow_total_ns();
        let (c, s) = self.slow_frames(u64::from(f));
        let ff = u128::from(f);
        let excess_num = ff * s - u128::from(NS_PER_S) * u128::from(c);
        StkPoint {
            fps: f,
            slow: s as f64 / t as f64,
            excess: excess_num as f64 / (ff * t) as f64,
        }
    }

    /// The STK curves for f = 1..=max_fps (empty for no frame).
    fn stk_curve(&self, max_fps: u32) -> Vec<StkPoint> {
        if self.frame_count() == 0 {
            return Vec::new();
        }
        (1..=max_fps).map(|f| self.stk_point(f)).collect()
    }
}

/// The STK metrics of a log's exact durations, callable without the trait
/// in scope.
impl SortedDurations {
    /// Whether target `f` fps (f ≥ 1) meets both strict bounds of `bound`.
    pub fn meets(&self, f: u64, bound: StkBound) -> bool {
        SlowFrames::meets(self, f, bound)
    }

    /// The largest integer f ≥ 1 meeting `bound`, 0 if f = 1 fails.
    pub fn stk_fps(&self, bound: StkBound) -> u32 {
        SlowFrames::stk_fps(self, bound)
    }

    /// slow(f) and excess(f) as shares of total time.
    pub fn stk_point(&self, f: u32) -> StkPoint {
        SlowFrames::stk_point(self, f)
    }

    /// The STK curves for f = 1..=max_fps.
    pub fn stk_curve(&self, max_fps: u32) -> Vec<StkPoint> {
        SlowFrames::stk_curve(self, max_fps)
    }
}

impl SlowFrames for SortedDurations {
    fn slow_frames(&self, f: u64) -> (u64, u128) {
        SortedDurations::slow_frames(self, f)
    }
    fn frame_count(&self) -> u64 {
        self.len() as u64
    }
    fn slow_total_ns(&self) -> u128 {
        self.total_ns()
    }
    fn shortest_positive_ns(&self) -> Option<u64> {
        self.as_slice().iter().find(|&&d| d > 0).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn three(d: &[u64]) -> (u32, u32, u32) {
        let s = SortedDurations::new(d);
        (
            s.stk_fps(STEADY),
            s.stk_fps(MOSTLY_STEADY),
            s.stk_fps(TYPICAL),
        )
    }

    #[test]
    fn constant_frames_strict_threshold() {
        // 20 ms: 20e6·50 = 1e9 is not > 1e9, so 50 passes; at 51 all are slow.
        assert_eq!(three(&[20 * MS; 100]), (50, 50, 50));
        // 16 666 666 ns ·60 = 999 999 960 ≤ 1e9 → 60 passes, 61 fails.
        assert_eq!(three(&[16_666_666; 100]), (60, 60, 60));
        // 16 666 667 ns (1/60 s rounded up) ·60 = 1 000 000 020 > 1e9 → 59.
        assert_eq!(three(&[16_666_667; 100]), (59, 59, 59));
        // 1 ns frames: every f up to 1e9 passes.
        assert_eq!(
            three(&[1; 10]),
            (1_000_000_000, 1_000_000_000, 1_000_000_000)
        );
    }

    #[test]
    fn slow_share_binds() {
        // 99 × 10 ms + 20 ms, T = 1010 ms. For 51..=100 only the 20 ms frame
        // is slow: slow = 1.98 % (fails steady), excess ≤ 0.99 % (passes the
        // others). At 101 every frame is slow.
        let mut d = vec![10 * MS; 99];
        d.push(20 * MS);
        assert_eq!(three(&d), (50, 100, 100));
    }

    #[test]
    fn excess_share_binds() {
        // 1000 × 10 ms + 30 ms, T = 10.03 s; slow share 0.3 % passes steady.
        // excess(50) = 10 ms / T = 0.0997 % < 0.1 %;
        // excess(51) = (30 − 19.61) ms / T = 0.1036 % ≥ 0.1 %.
        let mut d = vec![10 * MS; 1000];
        d.push(30 * MS);
        assert_eq!(three(&d), (50, 100, 100));
        let s = SortedDurations::new(&d);
        assert!(s.meets(50, STEADY));
        assert!(!s.meets(51, STEADY));
        let p = s.stk_point(51);
        assert!(p.slow < 0.01 && p.excess >= 0.001, "{p:?}");
    }

    #[test]
    fn f1_failing_gives_zero() {
        // One 2 s frame in 2.5 s: at f = 1 slow = 80 % fails all three.
        assert_eq!(three(&[2000 * MS, 500 * MS]), (0, 0, 0));
        assert_eq!(three(&[]), (0, 0, 0));
        assert_eq!(three(&[0, 0]), (0, 0, 0));
    }

    #[test]
    fn curve_values() {
        let s = SortedDurations::new(&[10 * MS, 30 * MS]);
        let c = s.stk_curve(100);
        assert_eq!(c.len(), 100);
        // f = 50: τ = 20 ms, 30 ms frame slow: slow = 0.75, excess = 10/40.
        assert_eq!(
            c[49],
            StkPoint {
                fps: 50,
                slow: 0.75,
                excess: 0.25
            }
        );
        assert_eq!(
            c[0],
            StkPoint {
                fps: 1,
                slow: 0.0,
                excess: 0.0
            }
        );
        // f = 100: τ = 10 ms, 10 ms not slow (strict).
        assert_eq!(c[99].slow, 0.75);
        assert_eq!(c[99].excess, 0.5);
        assert!(SortedDurations::new(&[]).stk_curve(10).is_empty());
    }
}
