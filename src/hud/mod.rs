//! The HUD: imgui drawn into the swapchain image before the real present.
//!
//! Interface between the layer and the HUD. The layer owns all Vulkan
//! dispatch and hands the HUD a [`HudDevice`] whose `device` table already
//! registers every command buffer it allocates with the loader
//! (`vkSetDeviceLoaderData`). Per device: one [`HudCache`]. Per swapchain:
//! [`plan::plan`] decides, then [`SwapchainHud::new`] creates (no queue
//! use: the app may be submitting on any queue from another thread).
//!
//! One data flow per present ([`SwapchainHud::draw`]), only ever on the
//! queue the app presents on, inside its `vkQueuePresentKHR`: bounded wait
//! for the slot's previous submission → record → submit, waiting on the
//! app's present semaphores and signalling this image's semaphore → the
//! layer presents waiting on that. Two ways to record:
//! - cached panel (`panel`, when the swapchain images accept
//!   `TRANSFER_DST`, see [`swapchain_usage`]): imgui renders into a small
//!   opaque image only when the live stats changed (~10×/s); every present
//!   copies it into the corner;
//! - direct: imgui draws into the swapchain image in a LOAD_OP_LOAD render
//!   pass limited to the HUD's rectangle.
//!
//! Modules: [`encoding`] (colour encodings), `device` (the device as the
//! layer hands it over, the error type), `swapchain` (one swapchain's
//! HUD), [`plan`] (per-swapchain
//! decision), `cache` (per-device shared objects), `upload` (font upload
//! state), `imgui_vk` + `imgui_mesh` (our imgui renderer), `passes` (render
//! passes), `render` (per-swapchain Vulkan objects), `semaphores` (the
//! present semaphores, kept per device), `panel` (cached panel), `memory` (buffers and images); what it shows (layout and colours) is
//! `steadyhud_hudview`, shared with the GL library.

mod cache;
mod device;
pub mod encoding;
mod imgui_mesh;
mod imgui_vk;
pub(crate) mod memory;
mod panel;
mod passes;
pub mod plan;
mod render;
mod semaphores;
mod swapchain;
mod upload;

pub use cache::HudCache;
pub use device::{HudDevice, HudError};
pub use encoding::{Encoding, HDR_WHITE_NITS};
pub use plan::Plan;
pub use steadyhud_hudview as view;
pub use swapchain::{swapchain_usage, Drawn, SwapchainHud};
