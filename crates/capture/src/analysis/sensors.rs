//! System readings on the analysis thread: a [`Poller`] that samples the
//! session's sources (`steadyhud_sensors`, NVML) every `1 / sensor_hz`
//! seconds into the [`super::sensor_feed::Feed`] the streams read. Nothing
//! here runs on the present path.

use super::analyzer::Analyzer;
use super::pollers::{AfterPanic, Poller};
use super::sensor_feed::SharedFeed;
use crate::client_state::ClientState;
use crate::guard;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use steadyhud_sensors::{PciBusId, Root, Sampler};
use steadyhud_sys::clock::now_ns;
use steadyhud_sys::lock::Recover;

/// Environment variable: a folder whose `sys/` the readings use instead
/// of `/sys` (`/proc` stays real) — a documented-format fixture GPU beside
/// a real process, for tests and demos on machines without one.
pub const ENV_SYSFS: &str = "STEADYHUD_SENSORS_SYSFS";
/// Environment variable: the PCI bus id (`0000:03:00.0`) to read when the
/// game's device reports none (with [`ENV_SYSFS`]).
pub const ENV_PCI: &str = "STEADYHUD_SENSORS_PCI";

/// The root and GPU the readings use: `/` and the device's own bus id,
/// unless [`ENV_SYSFS`] / [`ENV_PCI`] say otherwise.
fn stand_in(pci: Option<PciBusId>) -> (Root, Option<PciBusId>) {
    let root = match std::env::var_os(ENV_SYSFS) {
        Some(dir) if !dir.is_empty() => Root::with_sys("/", dir),
        _ => Root::default(),
    };
    let pci = pci.or_else(|| {
        let text = std::env::var(ENV_PCI).ok()?;
        let id = PciBusId::parse(&text);
        if id.is_none() {
            guard::say(format_args!(
                "steadyhud: {ENV_PCI}={text:?} is not a PCI bus id like 0000:03:00.0; ignored"
            ));
        }
        id
    });
    (root, pci)
}

/// The sampling job.
pub(super) struct Sensors {
    sampler: Sampler,
    every: Duration,
    next: Instant,
    feed: SharedFeed,
}

impl Sensors {
    /// Opens the session's sources for the GPU at `pci` (config
    /// `sensor_hz` > 0), fills `feed`'s columns and says in one line what
    /// is not readable.
    pub(super) fn start(
        client: &'static ClientState,
        pci: Option<PciBusId>,
        feed: &SharedFeed,
    ) -> Option<Sensors> {
        let hz = client.config.sensor_hz;
        if hz == 0 {
            return None;
        }
        let (root, pci) = stand_in(pci);
        let (sampler, missing) =
            crate::gpu_source::open(&root, pci, crate::gpu_source::NVML_LIB, now_ns());
        if let Some(m) = missing {
            guard::say(format_args!("steadyhud: system readings: {m}"));
        }
        {
            let mut f = feed.lock_or_recover();
            f.columns = sampler.columns().to_vec();
            f.throttle = sampler.has_throttle();
        }
        let every = Duration::from_secs(1) / hz;
        Some(Sensors {
            sampler,
            every,
            // Rates (loads, watts) are over one whole period from the
            // opening sample.
            next: Instant::now() + every,
            feed: feed.clone(),
        })
    }
}

impl Poller for Sensors {
    fn poll(&mut self, now: Instant, _: &'static ClientState, _: &Mutex<Analyzer>) {
        if now < self.next {
            return;
        }
        // The next sample one period on, without drift, but never a burst
        // to catch up after a stall.
        self.next = (self.next + self.every).max(now);
        let s = self.sampler.sample(now_ns());
        self.feed.lock_or_recover().push(s);
    }
    fn after_panic(&self) -> AfterPanic {
        AfterPanic::Drop(
            "steadyhud: system readings failed; stopped (the log goes on without new values)",
        )
    }
    fn max_sleep(&self, now: Instant) -> Option<Duration> {
        Some(self.next.saturating_duration_since(now))
    }
}
