//! Which capture stream (session log) a new swapchain feeds: one log per
//! window, across every recreation of its swapchain.
//!
//! A window is followed by swapchain lineage: a swapchain created with
//! `oldSwapchain` continues the old one's stream, whatever `VkSurfaceKHR`
//! it uses (a game may recreate the surface of the same window). An app
//! that destroys its swapchain first and creates the next one without
//! `oldSwapchain` is followed by its surface, as long as that surface lives:
//! `vkDestroySurfaceKHR` forgets it, so a surface handle value the driver
//! hands out again later starts a new log instead of merging two windows.

use ash::vk;
use std::collections::HashMap;

/// Streams by swapchain and by live surface.
pub struct Lineage<S> {
    by_swapchain: HashMap<vk::SwapchainKHR, S>,
    by_surface: HashMap<vk::SurfaceKHR, S>,
}

impl<S> Default for Lineage<S> {
    fn default() -> Self {
        Lineage {
            by_swapchain: HashMap::new(),
            by_surface: HashMap::new(),
        }
    }
}

impl<S: Clone> Lineage<S> {
    /// The stream for a swapchain being created from `old` on `surface`,
    /// and whether it continues an earlier one (a recreation); `new` makes
    /// a stream when neither is known.
    pub fn stream_for(
        &self,
        old: vk::SwapchainKHR,
        surface: vk::SurfaceKHR,
        new: impl FnOnce() -> S,
    ) -> (S, bool) {
        if let Some(s) = self
            .by_swapchain
            .get(&old)
            .filter(|_| old != vk::SwapchainKHR::null())
        {
            return (s.clone(), true);
        }
        match self.by_surface.get(&surface) {
            Some(s) => (s.clone(), true),
            None => (new(), false),
        }
    }

    /// Records that `swapchain` on `surface` feeds `stream`.
    pub fn created(&mut self, swapchain: vk::SwapchainKHR, surface: vk::SurfaceKHR, stream: S) {
        self.by_swapchain.insert(swapchain, stream.clone());
        self.by_surface.insert(surface, stream);
    }

    /// Forgets a destroyed swapchain (its surface still leads to its stream).
    pub fn swapchain_destroyed(&mut self, swapchain: vk::SwapchainKHR) {
        self.by_swapchain.remove(&swapchain);
    }

    /// Forgets a destroyed surface: its handle value may come back as
    /// another window.
    pub fn surface_destroyed(&mut self, surface: vk::SurfaceKHR) {
        self.by_surface.remove(&surface);
    }

    /// Drops everything (device teardown).
    pub fn clear(&mut self) {
        self.by_swapchain.clear();
        self.by_surface.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    fn sc(n: u64) -> vk::SwapchainKHR {
        vk::SwapchainKHR::from_raw(n)
    }
    fn sf(n: u64) -> vk::SurfaceKHR {
        vk::SurfaceKHR::from_raw(n)
    }

    #[test]
    fn recreation_with_old_swapchain_keeps_the_stream_even_on_a_new_surface() {
        let mut l = Lineage::default();
        let (a, again) = l.stream_for(vk::SwapchainKHR::null(), sf(1), || "A");
        assert_eq!((a, again), ("A", false));
        l.created(sc(10), sf(1), a);
        // The game recreates the surface of the same window and passes oldSwapchain.
        l.surface_destroyed(sf(1));
        assert_eq!(l.stream_for(sc(10), sf(2), || "B"), ("A", true));
    }

    #[test]
    fn destroy_then_create_on_the_same_live_surface_keeps_the_stream() {
        let mut l = Lineage::default();
        l.created(sc(10), sf(1), "A");
        l.swapchain_destroyed(sc(10));
        assert_eq!(
            l.stream_for(vk::SwapchainKHR::null(), sf(1), || "B"),
            ("A", true)
        );
    }

    #[test]
    fn a_reused_surface_handle_is_a_new_window() {
        let mut l = Lineage::default();
        l.created(sc(10), sf(1), "A");
        l.swapchain_destroyed(sc(10));
        l.surface_destroyed(sf(1));
        // The driver hands out the same handle value for another window.
        assert_eq!(
            l.stream_for(vk::SwapchainKHR::null(), sf(1), || "B"),
            ("B", false)
        );
    }

    #[test]
    fn two_windows_stay_apart() {
        let mut l = Lineage::default();
        l.created(sc(10), sf(1), "A");
        assert_eq!(
            l.stream_for(vk::SwapchainKHR::null(), sf(2), || "B"),
            ("B", false)
        );
    }
}
