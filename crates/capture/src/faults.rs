//! Test-only fault switches, read once with the config and never
//! on the normal present path: when one is set, the entry table hands out
//! the present hook built with faults compiled in (`present::<true>`), and
//! only that one looks at them.
//!
//! * `STEADYHUD_TEST_PANIC=present`: panic once in the present hook, after
//!   the timestamp is queued and before the HUD draws;
//! * `STEADYHUD_TEST_PANIC=after-hud`: panic once after the HUD's submission
//!   consumed the app's semaphores, before the real present (the present
//!   must then wait on the layer's semaphore, not hang on the app's);
//! * `STEADYHUD_TEST_PANIC=analysis`: panic once in the analysis thread's
//!   live-statistics step;
//! * `STEADYHUD_TEST_DEVICE_LOST=1`: from the 10th present on, the HUD's
//!   draw fails with `VK_ERROR_DEVICE_LOST`, as on a lost device (lavapipe
//!   cannot lose one for real).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Sites where a panic can be injected.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Site {
    /// The present hook, after the timestamp is queued, before the HUD draws.
    Present,
    /// The present hook, after the HUD's submission, before the real present.
    AfterHud,
    /// The analysis thread's live-statistics step.
    Analysis,
}

/// The switches of this process.
#[derive(Debug, Default)]
pub struct Faults {
    panic_at: Option<Site>,
    device_lost: bool,
    fired: AtomicBool,
    presents: AtomicU32,
}

impl Faults {
    /// Reads `STEADYHUD_TEST_PANIC` and `STEADYHUD_TEST_DEVICE_LOST`.
    pub fn from_env() -> Faults {
        let panic_at = match std::env::var("STEADYHUD_TEST_PANIC").as_deref() {
            Ok("present") => Some(Site::Present),
            Ok("after-hud") => Some(Site::AfterHud),
            Ok("analysis") => Some(Site::Analysis),
            _ => None,
        };
        let device_lost = std::env::var("STEADYHUD_TEST_DEVICE_LOST").as_deref() == Ok("1");
        Faults {
            panic_at,
            device_lost,
            ..Faults::default()
        }
    }

    /// Whether any switch concerns the present hook.
    pub fn on_present_path(&self) -> bool {
        self.device_lost || matches!(self.panic_at, Some(Site::Present | Site::AfterHud))
    }

    /// Panics once per process at `site` when it is the configured one.
    #[track_caller]
    pub fn inject(&self, site: Site) {
        if self.panic_at == Some(site) && !self.fired.swap(true, Ordering::Relaxed) {
            panic!("injected test panic at {site:?} (STEADYHUD_TEST_PANIC)");
        }
    }

    /// Counts a present; true when the HUD of this present must fail as on
    /// a lost device.
    pub fn device_lost_now(&self) -> bool {
        self.device_lost && self.presents.fetch_add(1, Ordering::Relaxed) >= 9
    }
}
