//! Which present a `CompleteNotify` is about: pure rules, no I/O.
//!
//! **Serials.** A `PresentPixmap` carries a serial the presenter chose;
//! its `CompleteNotify` repeats it. Mesa's X11 WSI numbers the presents
//! of each swapchain 1, 2, 3, … (`++chain->send_sbc`, reset at swapchain
//! creation); GLX DRI3 numbers those of each drawable the same way and
//! never resets. So the layer counts presents per swapchain (a
//! [`Chain`]; for GLX one per drawable), and serial *s* is the *s*-th
//! present of the window's newest chain that has made *s* presents. After
//! a recreation the old chain's last presents may still complete: a
//! serial the new chain has not reached is the old chain's, and the old
//! chain is kept [`KEEP_RETIRED_NS`]. If the newest candidate was made
//! after the complete's `ust` (impossible) and an older chain's was not,
//! the older chain's is taken: a straggler read late, after the new
//! chain's count passed it.
//!
//! **Modes.** `Skip` = never shown (a dropped frame); `Copy`, `Flip`,
//! `SuboptimalCopy` = shown at `ust` (µs of CLOCK_MONOTONIC). The refresh
//! period is Δust/Δmsc of consecutive shown completes.
//!
//! **Guard.** These serial rules are Mesa's. A driver with other rules
//! (NVIDIA's) would give serials that name other presents; a present
//! completing before it was made is the sign. Of the first
//! [`GUARD_FIRST`] matched completes, more than [`GUARD_EARLY_LIMIT`]
//! such ones turn the window off ([`Off::Order`]); the answers of those
//! first completes are held until the guard has decided, so a wrong
//! attribution is never written. Any later complete earlier than its
//! present answers "unknown", never an impossible time.
//!
//! **Silence.** A window whose presents do not go through Present
//! (Mesa's software paths on a server without DRI3 use `PutImage`) never
//! gets a complete: after [`SILENT_AFTER`] presents with none, the window
//! is turned off ([`Off::Silent`]), so its frames are answered "unknown"
//! at once instead of each waiting to be given up.
//!
//! **The hot path.** [`Chain::record`] is all a present does: one slot of
//! a fixed ring and a counter, no allocation, no lock (presents to one
//! swapchain, or swaps of one drawable, come from one thread at a time:
//! Vulkan's external synchronisation, GL's current context).

#![forbid(unsafe_code)]

use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Presents a chain remembers: about a second at 1000 fps. A complete
/// older than that many presents of its chain is not matched.
pub const CHAIN_SLOTS: usize = 1024;

/// How long a replaced chain's presents can still be matched.
pub const KEEP_RETIRED_NS: u64 = 1_000_000_000;

/// Matched completes the guard looks at.
pub const GUARD_FIRST: u32 = 10;

/// Completes earlier than their present, among the first [`GUARD_FIRST`],
/// that are still accepted.
pub const GUARD_EARLY_LIMIT: u32 = 2;

/// Presents of a window with no complete at all before it is turned off.
pub const SILENT_AFTER: u64 = 120;

/// The presents of one swapchain (or GLX drawable), by serial.
pub struct Chain {
    slots: Box<[AtomicU64]>,
    count: AtomicU64,
    /// Cleared when the window is turned off: presents are then not
    /// recorded, and the hook answers them "not asked".
    on: AtomicBool,
}

impl Default for Chain {
    fn default() -> Self {
        Chain::new()
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("count", &self.presents())
            .field("on", &self.is_on())
            .finish()
    }
}

impl Chain {
    /// No present yet; every slot written once (no first-touch page fault
    /// on a present).
    pub fn new() -> Chain {
        Chain {
            slots: (0..CHAIN_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            on: AtomicBool::new(true),
        }
    }

    /// The present hook's part: the next serial's present was made at
    /// `present_t` (its stream key). Returns false when the window is off
    /// (nothing recorded: no answer will come). One writer at a time
    /// (module docs).
    #[inline]
    pub fn record(&self, present_t: u64) -> bool {
        if !self.on.load(Ordering::Relaxed) {
            return false;
        }
        let n = self.count.load(Ordering::Relaxed);
        self.slots[(n % CHAIN_SLOTS as u64) as usize].store(present_t, Ordering::Relaxed);
        self.count.store(n + 1, Ordering::Release);
        true
    }

    /// Presents recorded so far (the newest serial).
    pub fn presents(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// Whether presents are still followed.
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Stops recording: the window cannot be followed.
    pub fn turn_off(&self) {
        self.on.store(false, Ordering::Relaxed);
    }

    /// The time of the present with `serial` (the newest such present: a
    /// 32-bit serial wraps), if it was made and is still remembered.
    pub fn present(&self, serial: u32) -> Option<u64> {
        let count = self.count.load(Ordering::Acquire);
        // Presents made since the one numbered `serial` (1-based).
        let back = u64::from((count as u32).wrapping_sub(serial));
        let margin = CHAIN_SLOTS as u64 - 1;
        if back >= count || back >= margin {
            return None;
        }
        let i = count - back; // 1-based
        let t = self.slots[((i - 1) % CHAIN_SLOTS as u64) as usize].load(Ordering::Relaxed);
        // The writer may have lapped the slot meanwhile (a second of
        // presents between two loads: in practice never); check.
        fence(Ordering::Acquire);
        let now = self.count.load(Ordering::Relaxed);
        (now - i < margin).then_some(t)
    }
}

/// `PresentCompleteKindPixmap`: the completion of a `PresentPixmap`
/// (`NotifyMSC` completes are kind 1).
pub const KIND_PIXMAP: u8 = 0;

/// A `CompleteNotify`'s mode (presenttokens.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Copy,
    Flip,
    Skip,
    SuboptimalCopy,
    Other(u8),
}

impl Mode {
    pub fn from_wire(mode: u8) -> Mode {
        match mode {
            0 => Mode::Copy,
            1 => Mode::Flip,
            2 => Mode::Skip,
            3 => Mode::SuboptimalCopy,
            m => Mode::Other(m),
        }
    }

    /// The protocol's name, for notes and tests.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Copy => "copy",
            Mode::Flip => "flip",
            Mode::Skip => "skip",
            Mode::SuboptimalCopy => "suboptimal-copy",
            Mode::Other(_) => "other",
        }
    }
}

/// The fields of a `CompleteNotify` the matcher reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Complete {
    pub kind: u8,
    pub mode: Mode,
    pub serial: u32,
    /// µs of CLOCK_MONOTONIC.
    pub ust_us: u64,
    pub msc: u64,
}

/// What became of one present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// On screen at `displayed_ns` (CLOCK_MONOTONIC), refresh period
    /// `refresh_ns` (0: not known yet).
    Shown { displayed_ns: u64, refresh_ns: u64 },
    /// `Skip`: replaced before it was shown.
    Skipped,
    /// The complete cannot be this present's (it came before the present
    /// was made): no answer but "unknown".
    Unknown,
}

/// Why a window was turned off (one line each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Off {
    #[error(
        "{early} of the first {of} Present completes came before their present: \
         the serials do not follow Mesa's rules (one count per swapchain or drawable); \
         no display timing for this window"
    )]
    Order { early: u32, of: u32 },
    #[error(
        "no Present complete after {presents} presents: this window's frames do not go \
         through X11 Present (a software present with PutImage, as on a server without \
         DRI3); no display timing for this window"
    )]
    Silent { presents: u64 },
}

struct Held<T> {
    chain: Arc<Chain>,
    /// The caller's tag for the chain's answers (where they go).
    tag: T,
    /// When a newer chain replaced it (`None`: the current one).
    retired_at: Option<u64>,
}

/// The matching state of one window (the analysis thread's); each
/// chain carries a tag `T` its answers are given with (the stream they go
/// to: a recreation may start a new one).
pub struct Matcher<T = ()> {
    /// Oldest first; the last is the current chain.
    chains: Vec<Held<T>>,
    /// Last shown complete's (ust ns, msc), for the refresh period.
    last_shown: Option<(u64, u64)>,
    refresh_ns: u64,
    /// Guard: matched completes looked at, and how many were early.
    checked: u32,
    early: u32,
    /// Answers held while the guard decides.
    held: Vec<(T, u64, Outcome)>,
    /// Pixmap completes seen at all.
    completes: u64,
    off: Option<Off>,
}

impl<T: Clone> Default for Matcher<T> {
    fn default() -> Self {
        Matcher {
            chains: Vec::new(),
            last_shown: None,
            refresh_ns: 0,
            checked: 0,
            early: 0,
            held: Vec::new(),
            completes: 0,
            off: None,
        }
    }
}

impl<T: Clone> Matcher<T> {
    pub fn new() -> Matcher<T> {
        Matcher::default()
    }

    /// A new chain (a new swapchain of the window) becomes the current
    /// one at `now`, its answers given with `tag`; the previous one is
    /// kept [`KEEP_RETIRED_NS`].
    pub fn add_chain(&mut self, chain: Arc<Chain>, tag: T, now: u64) {
        if self.off.is_some() {
            chain.turn_off();
        }
        for h in &mut self.chains {
            h.retired_at.get_or_insert(now);
        }
        self.chains.push(Held {
            chain,
            tag,
            retired_at: None,
        });
        self.prune(now);
    }

    /// The current chain.
    pub fn current(&self) -> Option<&Arc<Chain>> {
        self.chains.last().map(|h| &h.chain)
    }

    /// Why the window is off, if it is.
    pub fn off(&self) -> Option<Off> {
        self.off
    }

    fn prune(&mut self, now: u64) {
        self.chains.retain(|h| {
            h.retired_at
                .is_none_or(|r| now.saturating_sub(r) <= KEEP_RETIRED_NS)
        });
    }

    /// The present `c` completes: the newest chain that made its serial,
    /// unless that present came after `ust` and an older one did not.
    fn find(&self, serial: u32, ust_ns: u64) -> Option<(T, u64)> {
        let mut found = None;
        for h in self.chains.iter().rev() {
            if let Some(t) = h.chain.present(serial) {
                if t <= ust_ns {
                    return Some((h.tag.clone(), t));
                }
                found.get_or_insert_with(|| (h.tag.clone(), t));
            }
        }
        found
    }

    fn turn_off(&mut self, why: Off, answer: &mut impl FnMut(&T, u64, Outcome)) -> Off {
        self.off = Some(why);
        for h in &self.chains {
            h.chain.turn_off();
        }
        for (tag, t, _) in self.held.drain(..) {
            answer(&tag, t, Outcome::Unknown);
        }
        why
    }

    /// One `CompleteNotify` for this window, read at `now`: its answer (if
    /// it is a present's) goes to `answer` (present time, outcome), now or,
    /// while the guard decides, later. Returns why the window was just
    /// turned off, once.
    pub fn complete(
        &mut self,
        c: &Complete,
        now: u64,
        answer: &mut impl FnMut(&T, u64, Outcome),
    ) -> Option<Off> {
        self.prune(now);
        if self.off.is_some() || c.kind != KIND_PIXMAP {
            return None;
        }
        self.completes += 1;
        let ust_ns = c.ust_us.saturating_mul(1000);
        let shown = !matches!(c.mode, Mode::Skip);
        let (tag, t) = self.find(c.serial, ust_ns)?;
        let mut outcome = if shown {
            if let Some((u0, m0)) = self.last_shown {
                if c.msc > m0 && ust_ns > u0 {
                    self.refresh_ns = (ust_ns - u0) / (c.msc - m0);
                }
            }
            if ust_ns > 0 {
                self.last_shown = Some((ust_ns, c.msc));
            }
            Outcome::Shown {
                displayed_ns: ust_ns,
                refresh_ns: self.refresh_ns,
            }
        } else {
            Outcome::Skipped
        };
        // A skip's time says nothing of the match (a server may give 0).
        let early = shown && ust_ns < t;
        if early {
            outcome = Outcome::Unknown;
        }
        if self.checked < GUARD_FIRST {
            self.checked += 1;
            self.early += u32::from(early);
            self.held.push((tag, t, outcome));
            if self.early > GUARD_EARLY_LIMIT {
                let why = Off::Order {
                    early: self.early,
                    of: self.checked,
                };
                return Some(self.turn_off(why, answer));
            }
            if self.checked == GUARD_FIRST {
                for (tag, t, o) in self.held.drain(..) {
                    answer(&tag, t, o);
                }
            }
            return None;
        }
        answer(&tag, t, outcome);
        None
    }

    /// After the window's completes were read: a window with
    /// [`SILENT_AFTER`] presents and no complete at all is turned off.
    /// Returns why, once.
    pub fn check_silence(&mut self, answer: &mut impl FnMut(&T, u64, Outcome)) -> Option<Off> {
        if self.off.is_some() || self.completes > 0 {
            return None;
        }
        let presents: u64 = self.chains.iter().map(|h| h.chain.presents()).sum();
        (presents >= SILENT_AFTER).then(|| self.turn_off(Off::Silent { presents }, answer))
    }

    /// The answers held by the guard, given as they are (the window is
    /// going away: fewer than [`GUARD_FIRST`] completes came).
    pub fn release(&mut self, answer: &mut impl FnMut(&T, u64, Outcome)) {
        let trusted = self.early * GUARD_FIRST <= GUARD_EARLY_LIMIT * self.checked.max(1);
        for (tag, t, o) in self.held.drain(..) {
            answer(&tag, t, if trusted { o } else { Outcome::Unknown });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn complete(serial: u32, ust_ns: u64, msc: u64, mode: Mode) -> Complete {
        Complete {
            kind: KIND_PIXMAP,
            mode,
            serial,
            ust_us: ust_ns / 1000,
            msc,
        }
    }

    /// Runs `c` at `now` and returns the answers it gave.
    fn run(m: &mut Matcher<()>, c: Complete, now: u64) -> (Vec<(u64, Outcome)>, Option<Off>) {
        let mut got = Vec::new();
        let off = m.complete(&c, now, &mut |_: &(), t, o| got.push((t, o)));
        (got, off)
    }

    /// A chain with presents at `ts` (ns).
    fn chain(ts: &[u64]) -> Arc<Chain> {
        let c = Arc::new(Chain::new());
        for &t in ts {
            assert!(c.record(t));
        }
        c
    }

    fn shown(at: u64, refresh: u64) -> Outcome {
        Outcome::Shown {
            displayed_ns: at,
            refresh_ns: refresh,
        }
    }

    /// Presents every 16 ms, each shown 10 ms later at msc 100 + k, in
    /// order: every answer is its own present's, held until the guard's
    /// tenth, and the refresh is Δust/Δmsc.
    #[test]
    fn in_order() {
        let ts: Vec<u64> = (0..20).map(|k| 1000 * MS + k * 16 * MS).collect();
        let c = chain(&ts);
        let mut m = Matcher::<()>::new();
        m.add_chain(c, (), 0);
        let mut all = Vec::new();
        for (k, &t) in ts.iter().enumerate() {
            let (got, off) = run(
                &mut m,
                complete(k as u32 + 1, t + 10 * MS, 100 + k as u64, Mode::Flip),
                t + 11 * MS,
            );
            assert_eq!(off, None);
            if k < 9 {
                assert!(got.is_empty(), "held while the guard decides");
            }
            all.extend(got);
        }
        assert_eq!(all.len(), 20);
        for (k, (t, o)) in all.iter().enumerate() {
            assert_eq!(*t, ts[k]);
            let refresh = if k == 0 { 0 } else { 16 * MS };
            assert_eq!(*o, shown(ts[k] + 10 * MS, refresh));
        }
    }

    /// Skip is a dropped frame; NotifyMSC completes are ignored; a serial
    /// not yet presented matches nothing.
    #[test]
    fn skip_and_other_kinds() {
        let ts: Vec<u64> = (0..12).map(|k| 1000 * MS + k * 5 * MS).collect();
        let mut m = Matcher::<()>::new();
        m.add_chain(chain(&ts), (), 0);
        let mut all = Vec::new();
        let notify_msc = Complete {
            kind: 1,
            ..complete(1, 2000 * MS, 1, Mode::Copy)
        };
        assert_eq!(run(&mut m, notify_msc, 0), (vec![], None));
        assert_eq!(
            run(&mut m, complete(13, 2000 * MS, 1, Mode::Copy), 0).0,
            vec![]
        );
        for k in 0..12u32 {
            let mode = if k % 3 == 1 { Mode::Skip } else { Mode::Copy };
            let (got, off) = run(
                &mut m,
                complete(k + 1, ts[k as usize] + 20 * MS, 200 + u64::from(k), mode),
                0,
            );
            assert_eq!(off, None);
            all.extend(got);
        }
        assert_eq!(all.len(), 12);
        for (k, (t, o)) in all.iter().enumerate() {
            assert_eq!(*t, ts[k]);
            if k % 3 == 1 {
                assert_eq!(*o, Outcome::Skipped);
            } else {
                assert!(matches!(o, Outcome::Shown { displayed_ns, .. }
                    if *displayed_ns == ts[k] + 20 * MS));
            }
        }
    }

    /// A recreation: the old chain made 50 presents, the new one starts at
    /// serial 1. Serials 47 and 48 complete after the new chain made two
    /// presents (more than 2: the old chain's). Serial 49 is read only
    /// after the new chain made 60: its ust is before the new chain's
    /// 49th present, so it is still the old chain's. The new chain's own
    /// serials 1 and 2 are its own. A second later the old chain is
    /// forgotten: serial 50 is then the new chain's.
    #[test]
    fn recreation_with_old_chain_stragglers() {
        let old_ts: Vec<u64> = (0..50).map(|k| 1000 * MS + k * 10 * MS).collect();
        let old = chain(&old_ts);
        let mut m = Matcher::<()>::new();
        m.add_chain(old.clone(), (), 0);
        let mut all = Vec::new();
        let mut feed = |m: &mut Matcher<()>, c: Complete, now: u64| {
            let (got, off) = run(m, c, now);
            assert_eq!(off, None);
            all.extend(got);
        };
        for k in 0..46u32 {
            let t = old_ts[k as usize];
            feed(
                &mut m,
                complete(k + 1, t + 5 * MS, u64::from(k), Mode::Copy),
                t,
            );
        }
        let t_new0 = old_ts[49] + 3 * MS;
        let new = Arc::new(Chain::new());
        m.add_chain(new.clone(), (), t_new0);
        let new_ts: Vec<u64> = (0..60).map(|k| t_new0 + 1 + k * 2 * MS).collect();
        new.record(new_ts[0]);
        new.record(new_ts[1]);
        // Serials 47, 48 (> 2 presents of the new chain): the old chain's.
        feed(
            &mut m,
            complete(47, old_ts[46] + 5 * MS, 46, Mode::Copy),
            t_new0,
        );
        feed(
            &mut m,
            complete(48, old_ts[47] + 5 * MS, 47, Mode::Skip),
            t_new0,
        );
        for &t in &new_ts[2..] {
            new.record(t);
        }
        // Serial 49 read late: the new chain made 60 presents, but its 49th
        // was made after this complete's ust.
        let ust49 = old_ts[48] + 5 * MS;
        assert!(new_ts[48] > ust49);
        feed(&mut m, complete(49, ust49, 48, Mode::Copy), new_ts[59]);
        // The new chain's own serial 1 and 2.
        feed(
            &mut m,
            complete(1, new_ts[0] + 4 * MS, 60, Mode::Copy),
            new_ts[59],
        );
        feed(
            &mut m,
            complete(2, new_ts[1] + 4 * MS, 61, Mode::Copy),
            new_ts[59],
        );
        let keys: Vec<u64> = all.iter().map(|a| a.0).collect();
        let mut want: Vec<u64> = old_ts[..49].to_vec();
        want.extend(&new_ts[..2]);
        assert_eq!(keys, want);
        assert_eq!(all[47].1, Outcome::Skipped);
        let late = (new_ts[59] + KEEP_RETIRED_NS) / 1000 * 1000; // µs on the wire
        let (got, _) = run(
            &mut m,
            complete(50, late, 70, Mode::Copy),
            t_new0 + KEEP_RETIRED_NS + 1,
        );
        assert_eq!(
            got,
            vec![(new_ts[49], shown(late, 0).with_refresh(m.refresh_ns))]
        );
    }

    impl Outcome {
        fn with_refresh(self, r: u64) -> Outcome {
            match self {
                Outcome::Shown { displayed_ns, .. } => shown(displayed_ns, r),
                o => o,
            }
        }
    }

    /// Completes come in any order (old-chain stragglers interleaved with
    /// the new chain's, a later serial first): each still finds its own
    /// present.
    #[test]
    fn out_of_order() {
        let ts: Vec<u64> = (0..14).map(|k| 1000 * MS + k * 8 * MS).collect();
        let mut m = Matcher::<()>::new();
        m.add_chain(chain(&ts), (), 0);
        let order = [2u32, 1, 4, 3, 5, 7, 6, 9, 8, 10, 12, 11, 14, 13];
        let mut all = Vec::new();
        for (i, &s) in order.iter().enumerate() {
            let (got, off) = run(
                &mut m,
                complete(s, ts[s as usize - 1] + 12 * MS, 50 + i as u64, Mode::Copy),
                0,
            );
            assert_eq!(off, None);
            all.extend(got);
        }
        assert_eq!(all.len(), 14);
        for (t, o) in all {
            let k = ts.iter().position(|&x| x == t).expect("a recorded present");
            assert!(
                matches!(o, Outcome::Shown { displayed_ns, .. } if displayed_ns == ts[k] + 12 * MS)
            );
        }
    }

    /// A driver whose serials start elsewhere (a process-wide count at 5):
    /// complete "1" is about the 5th present, made after it completed.
    /// The guard turns the window off before anything is written; held
    /// answers become "unknown", and the chain records no more.
    #[test]
    fn non_mesa_serials_trip_the_guard() {
        let ts: Vec<u64> = (0..40).map(|k| 1000 * MS + k * 16 * MS).collect();
        let c = chain(&ts);
        let mut m = Matcher::<()>::new();
        m.add_chain(c.clone(), (), 0);
        let mut all = Vec::new();
        let mut off = None;
        for k in 0..10u32 {
            // The k-th present (0-based) got serial k + 5.
            let ust = ts[k as usize] + 2 * MS;
            let (got, o) = run(&mut m, complete(k + 5, ust, u64::from(k), Mode::Flip), 0);
            all.extend(got);
            if o.is_some() {
                off = o;
                break;
            }
        }
        assert_eq!(off, Some(Off::Order { early: 3, of: 3 }));
        assert!(all.iter().all(|(_, o)| *o == Outcome::Unknown), "{all:?}");
        assert_eq!(all.len(), 3);
        assert!(!c.record(99));
        assert_eq!(m.off(), off);
        // Later completes answer nothing.
        assert_eq!(
            run(&mut m, complete(20, ts[30], 30, Mode::Copy), 0),
            (vec![], None)
        );
    }

    /// One early complete in the first ten is tolerated (a clock
    /// glitch), answered "unknown", and the rest are written.
    #[test]
    fn guard_tolerates_two() {
        let ts: Vec<u64> = (0..12).map(|k| 1000 * MS + k * 16 * MS).collect();
        let mut m = Matcher::<()>::new();
        m.add_chain(chain(&ts), (), 0);
        let mut all = Vec::new();
        for (k, &t) in ts.iter().enumerate() {
            let ust = if k == 3 || k == 7 { t - MS } else { t + MS };
            let (got, off) = run(&mut m, complete(k as u32 + 1, ust, k as u64, Mode::Copy), 0);
            assert_eq!(off, None);
            all.extend(got);
        }
        assert_eq!(all.len(), 12);
        assert_eq!(all[3].1, Outcome::Unknown);
        assert_eq!(all[7].1, Outcome::Unknown);
        assert!(matches!(all[4].1, Outcome::Shown { .. }));
    }

    /// No complete after SILENT_AFTER presents: off, once; not before.
    #[test]
    fn silence_turns_off() {
        let c = Arc::new(Chain::new());
        let mut m = Matcher::<()>::new();
        m.add_chain(c.clone(), (), 0);
        let mut none = |_: &(), _: u64, _: Outcome| panic!("no answer expected");
        for k in 0..SILENT_AFTER - 1 {
            c.record(k + 1);
        }
        assert_eq!(m.check_silence(&mut none), None);
        c.record(SILENT_AFTER);
        assert_eq!(
            m.check_silence(&mut none),
            Some(Off::Silent {
                presents: SILENT_AFTER
            })
        );
        assert!(!c.record(1000));
        assert_eq!(m.check_silence(&mut none), None);
        // A chain added to an off window starts off.
        let d = Arc::new(Chain::new());
        m.add_chain(d.clone(), (), 1);
        assert!(!d.record(1));
    }

    /// Serials wrap at 2^32 (Mesa keeps a 64-bit count and sends its low
    /// 32 bits); a serial older than the ring matches nothing.
    #[test]
    fn chain_lookup_limits() {
        let c = Chain::new();
        for t in 1..=3000u64 {
            c.record(t);
        }
        assert_eq!(c.present(3000), Some(3000));
        assert_eq!(c.present(2000), Some(2000));
        assert_eq!(c.present(1000), None, "overwritten");
        assert_eq!(c.present(3001), None, "not made yet");
        assert_eq!(c.present(0), None);
    }
}
