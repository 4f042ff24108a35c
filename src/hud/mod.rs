//! The HUD: imgui drawn into the swapchain image before the real present.
//!
//! Interface between the layer and the HUD (fixed by the lead; the HUD
//! branch implements it). The layer owns all Vulkan dispatch and hands the
//! HUD a [`HudDevice`] whose `device` table already registers every command
//! buffer it allocates with the loader (`vkSetDeviceLoaderData`).

use crate::config::Config;
use crate::live::LiveStats;
use ash::vk;

/// Why the HUD could not be set up or drawn; the layer logs it once and
/// keeps capturing without a HUD.
#[derive(Debug, thiserror::Error)]
pub enum HudError {
    #[error("HUD not built into this version")]
    NotBuilt,
    #[error("Vulkan call {call} failed: {result}")]
    Vulkan { call: &'static str, result: vk::Result },
}

/// The layer's per-device state, as the HUD sees it.
pub struct HudDevice<'a> {
    pub instance: &'a ash::Instance,
    pub device: &'a ash::Device,
    pub physical_device: vk::PhysicalDevice,
    /// A queue with the graphics bit (registered with the loader) and its family.
    pub graphics_queue: vk::Queue,
    pub graphics_family: u32,
}

/// Per-swapchain HUD resources (render pass, framebuffers, imgui, command buffers).
pub struct SwapchainHud {}

impl SwapchainHud {
    /// Called by the layer right after the real `vkCreateSwapchainKHR`.
    ///
    /// # Safety
    /// `info` describes the swapchain whose `images` are given; `dev` is live.
    pub unsafe fn new(
        _dev: &HudDevice,
        _info: &vk::SwapchainCreateInfoKHR,
        _images: &[vk::Image],
        _config: &Config,
    ) -> Result<Self, HudError> {
        Err(HudError::NotBuilt)
    }

    /// Records and submits the HUD for `image_index` on the graphics queue,
    /// waiting on `wait` (the app's present semaphores). Returns the semaphore
    /// the real present must wait on instead.
    ///
    /// # Safety
    /// Called from the present hook for an image of this swapchain.
    pub unsafe fn draw(
        &mut self,
        _dev: &HudDevice,
        _present_family: u32,
        _image_index: u32,
        _wait: &[vk::Semaphore],
        _stats: &LiveStats,
    ) -> Result<vk::Semaphore, HudError> {
        Err(HudError::NotBuilt)
    }

    /// Frees everything; called before the swapchain is destroyed.
    ///
    /// # Safety
    /// The device must be idle with respect to this HUD's submissions.
    pub unsafe fn destroy(&mut self, _dev: &HudDevice) {}
}
