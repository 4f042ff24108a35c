//! What every part of the HUD works with: the device as the layer hands
//! it over ([`HudDevice`]) and the one error type ([`HudError`]).

use ash::vk;

/// Why the HUD could not be set up or drawn; the layer logs it once and
/// keeps capturing without a HUD.
#[derive(Debug, thiserror::Error)]
pub enum HudError {
    #[error("Vulkan call {call} failed: {result}")]
    Vulkan {
        call: &'static str,
        result: vk::Result,
    },
    #[error("HUD unsupported here: {0}")]
    Unsupported(&'static str),
    #[error(transparent)]
    Imgui(#[from] steadyhud_hudview::driver::ImguiBusy),
}

/// Maps a failed Vulkan call to a [`HudError`].
pub(crate) fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> HudError {
    move |result| HudError::Vulkan { call, result }
}

/// The layer's per-device state, as the HUD sees it.
pub struct HudDevice<'a> {
    pub instance: &'a ash::Instance,
    pub device: &'a ash::Device,
    pub physical_device: vk::PhysicalDevice,
}
