//! What the layer keeps per swapchain: the capture stream it feeds and its
//! HUD. Locked only by presents of this swapchain (which the app
//! serializes) and by its destruction, so never contended.

use super::display_observe::Observed;
use crate::hud::{HudCache, HudDevice, SwapchainHud};
use std::sync::{Arc, Mutex};
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
