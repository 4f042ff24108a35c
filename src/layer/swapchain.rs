//! What the layer keeps per swapchain: the capture stream it feeds and its
//! HUD. Locked only by presents of this swapchain (which the app
//! serializes) and by its destruction, so never contended.

use super::capture::Stream;
use crate::hud::{HudCache, HudDevice, SwapchainHud};
use std::sync::{Arc, Mutex};

/// One live swapchain.
pub struct Swapchain {
    /// Capture stream of the swapchain's lineage (window).
    pub stream: Arc<Stream>,
    /// The HUD, when it could be set up and has not failed since.
    pub hud: Mutex<Option<SwapchainHud>>,
}

impl Swapchain {
    /// Frees the HUD (before the swapchain or device goes away).
    pub fn destroy_hud(&self, dev: &HudDevice, cache: &HudCache) {
        let taken = self.hud.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut hud) = taken {
            // SAFETY: the swapchain and device are still alive; destroy waits
            // (bounded) for the HUD's own submissions.
            unsafe { hud.destroy(dev, cache) };
        }
    }
}
