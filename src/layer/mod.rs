//! The implicit Vulkan layer `VK_LAYER_STEADYHUD_overlay`.
//!
//! One flow per present (as in Mesa's overlay layer, see [`present`]):
//! timestamp on entry → push into the window's ring
//! ([`steadyhud_capture::rings`]) → HUD draw on the present queue (waits on
//! the app's semaphores, signals ours) → real present waits on ours. The
//! analysis thread ([`steadyhud_capture::analysis`]) drains the rings, feeds
//! the rolling metrics, publishes live stats for the HUD and streams the
//! session log.
//!
//! The records, one per Vulkan object, each in its file: the process's one
//! [`state::Layer`] (handle maps, config, HUD visibility, fault switches,
//! Wayland keys, analysis thread) → [`instance::Instance`] per `VkInstance`
//! → [`device::Device`] per `VkDevice` (with [`counters::DeviceCounters`]
//! and its GPU timer) → [`queue::QueueInfo`] per queue the layer fetched →
//! [`swapchain::Swapchain`] per swapchain (its stream by [`lineage`], its
//! HUD). The next layer's functions: one table per object ([`next`]). Every
//! entry point: [`hooks`], thin functions from one table that look the
//! object up and delegate; `impl Device` is split by job: [`device`]
//! (create, swapchains), [`present`], [`submit`] (with [`gpu_timing`]),
//! [`observe`] (the app's display timing queries, with [`display_observe`]).
//!
//! The cdylib exports one symbol under a Vulkan name:
//! `vkNegotiateLoaderLayerInterfaceVersion`; gipa/gdpa are handed over
//! through the negotiation struct.

#![deny(unsafe_op_in_unsafe_fn)]

mod anti_lag;
mod chain;
mod counters;
mod device;
pub mod display_observe;
pub mod display_timing;
pub mod gpu_timing;
mod handles;
mod hooks;
mod instance;
mod lineage;
pub mod loader;
mod next;
mod observe;
mod passthrough;
mod pci;
mod present;
mod queue;
mod regions;
mod state;
mod submit;
mod swapchain;

pub use steadyhud_config::LAYER_NAME;
