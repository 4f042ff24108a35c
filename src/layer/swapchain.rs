//! What the layer keeps per swapchain: the capture stream it feeds and its
//! HUD. Locked only by presents of this swapchain (which the app
//! serializes) and by its destruction, so never contended.

use super::display_observe::Observed;
use crate::hud::{HudCache, HudDevice, SwapchainHud};
use std::sync::{Arc, Mutex};
use steadyhud_capture::analysis::Settings;
use steadyhud_capture::rings::Stream;
use steadyhud_sys::lock::Recover;
use steadyhud_x11present::matcher::Chain;

/// One live swapchain.
pub struct Swapchain {
    /// The surface it presents to (its raw handle).
    pub surface: u64,
    /// Capture stream of the swapchain's lineage (window).
    pub stream: Arc<Stream>,
    /// The HUD, when it could be set up and has not failed since.
    pub hud: Mutex<Option<SwapchainHud>>,
    /// A HUD whose draw failed: drawn no more, but freed only with the
    /// swapchain, since a present the app made a frame ago may still wait
    /// on its semaphores.
    pub failed: Mutex<Option<SwapchainHud>>,
    /// The app's present ids and refresh, when the device observes the
    /// app's display timing ([`super::display_observe`]).
    pub observed: Option<Box<Observed>>,
    /// X11 Present: this swapchain's presents by serial, when its window
    /// is followed (its stream then has a display ring).
    pub x11: Option<Arc<Chain>>,
}

impl Swapchain {
    /// Displayed-frame timing for the present keyed `k` (its stream has a
    /// display ring), before it goes down: an X11 window's present is
    /// recorded by serial (its complete is read on the analysis thread),
    /// a Wayland surface's asks for feedback on the commit the present
    /// makes. Returns whether an answer will come.
    #[inline]
    pub fn display_asked(&self, settings: &Settings, k: u64) -> bool {
        match self.x11.as_ref() {
            Some(chain) => chain.record(k),
            None => settings
                .presentation
                .on_present(self.surface, &self.stream, k),
        }
    }

    /// Takes this swapchain's HUD out of service after a failed draw.
    pub fn retire_hud(&self, hud: SwapchainHud) {
        *self.failed.lock_or_recover() = Some(hud);
    }

    /// Frees the HUD (before the swapchain or device goes away). Returns
    /// false when a bounded wait ran out and the HUD's objects were leaked
    /// rather than freed under the GPU.
    pub fn destroy_hud(&self, dev: &HudDevice, cache: &HudCache) -> bool {
        let live = self.hud.lock_or_recover().take();
        let failed = self.failed.lock_or_recover().take();
        let mut freed = true;
        for mut hud in live.into_iter().chain(failed) {
            // SAFETY: the swapchain and device are still alive; destroy
            // waits (bounded) for the HUD's own submissions.
            freed &= unsafe { hud.destroy(dev, cache) };
        }
        freed
    }
}
